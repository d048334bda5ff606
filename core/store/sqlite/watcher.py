"""Following commits made to a SQLite file by other processes: :class:`ChangeWatcher` polls the file's
``PRAGMA data_version`` and reads the ``changes`` log past the last id it delivered (PostgreSQL's counterpart
listens: :class:`~limbic.core.store.postgres.listen.ChangeListener`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import apsw

from limbic.core.models import Changes
from limbic.core.store import reads
from limbic.core.store.schema import LANDED_OP
from limbic.core.store.sqlite.connection import connect

log = logging.getLogger(__name__)

WATCHER_THREAD_NAME = "limbic-change-watcher"


class ChangeWatcher:
    """Poll a database file for commits made through other connections.

    Args:
        db_path: the database file (it must exist and be migrated).
        callback: called on the watcher thread with the list of new :class:`Changes`, oldest first.
        interval: seconds between polls (a foreign write shows within about one interval).
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
        self._conn = connect(self._path, read_only=True)
        self.last_seen = reads.last_change_id(self._conn) if start_after is None else start_after
        self._version = self._data_version()

    def _data_version(self) -> int:
        """``PRAGMA data_version``: changes whenever another connection commits to the file."""
        return int(self._conn.pragma("data_version"))

    def poll(self) -> list[Changes]:
        """Check once; returns (and passes to the callback) the changes committed since the last poll."""
        version = self._data_version()
        if version == self._version:
            return []
        self._version = version
        logged = reads.changes_since(self._conn, self.last_seen)
        if not logged:
            return []
        self.last_seen = logged[-1].change_id
        new = [change for change in logged if change.op != LANDED_OP]  # only vectors landed: no data changed
        if new:
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
        self._thread = threading.Thread(target=self._run, name=WATCHER_THREAD_NAME, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and close its connection (idempotent)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._thread = None
        self._conn.close()
