"""Notice writes made by other processes on the same database file (DESIGN.md §6).

A thread polls ``PRAGMA data_version`` on its own connection; when it changes, it reads the
``changes`` log since the last id it saw and hands the new rows to a plain callback. The GUI bridges
that callback to a Qt signal; nothing here knows about Qt.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import apsw

from limbic.core.models import Changes
from limbic.core.store import reads
from limbic.core.store.database import BUSY_TIMEOUT_MS

log = logging.getLogger(__name__)


class ChangeWatcher:
    """Poll a database file for commits by other connections.

    Args:
        db_path: the database file (it must exist and be migrated).
        callback: called on the watcher thread with the list of new :class:`Changes`, oldest first.
        interval: seconds between polls (default 0.2 s, so a foreign write shows within ~0.2 s).
        start_after: change id already known (default: the newest at start, so history is not replayed).
    """

    def __init__(
        self, db_path: str | Path, callback: Callable[[list[Changes]], None], *,
        interval: float = 0.2, start_after: int | None = None,
    ) -> None:
        self._path = str(db_path)
        self._callback = callback
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn = apsw.Connection(self._path, flags=apsw.SQLITE_OPEN_READONLY)
        self._conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        self.last_seen = reads.last_change_id(self._conn) if start_after is None else start_after
        self._version = self._conn.execute("PRAGMA data_version").fetchone()[0]

    def poll(self) -> list[Changes]:
        """Check once; returns (and passes to the callback) the changes committed since the last poll."""
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if version == self._version:
            return []
        self._version = version
        new = reads.changes_since(self._conn, self.last_seen)
        if new:
            self.last_seen = new[-1].change_id
            self._callback(new)
        return new

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.poll()
            except apsw.BusyError:
                continue
            except Exception:
                log.exception("change watcher poll failed")

    def start(self) -> ChangeWatcher:
        self._thread = threading.Thread(target=self._run, name="limbic-change-watcher", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and close the connection (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._conn.close()
