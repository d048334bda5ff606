"""Following other processes' commits on a PostgreSQL memory: ``LISTEN limbic_changes``.

Every write transaction sends ``NOTIFY limbic_changes, '<change id>'`` as it commits
(:class:`~limbic.core.store.postgres.database.PgDatabase`); a :class:`ChangeListener` waits for those on a
connection of its own and then reads the ``changes`` log past the last id it delivered, so a notification
lost to a dropped connection is made up by the next one (or by the poll every ``interval`` seconds). Another
machine's write reaches the callback within milliseconds. A lost connection is made again every ``interval``
seconds, with one log line when it is lost and one when it is back (not one per attempt).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import psycopg

from limbic.core.errors import LimbicError
from limbic.core.models import Changes
from limbic.core.store import reads
from limbic.core.store.postgres.connection import CHANNEL, PgConnection, connect
from limbic.core.store.schema import LANDED_OP

log = logging.getLogger(__name__)
LISTENER_THREAD_NAME = "limbic-change-listener"


class ChangeListener:
    """The PostgreSQL counterpart of :class:`~limbic.core.store.sqlite.watcher.ChangeWatcher` (same methods).

    Nothing touches the network before :meth:`start`, and then only the listener's own thread does (it may
    be started from the app's UI thread): it connects, listens, and delivers what is committed from then on
    (or after ``start_after``). A dropped connection is made again every ``interval`` seconds.

    Args:
        address: the memory's ``postgresql://`` address.
        callback: called on the listener thread with the new :class:`Changes`, oldest first.
        interval: seconds between checks when no notification comes (a safety net, not the path).
        start_after: change id already known (default: the newest when the listener connects).
    """

    def __init__(self, address: str, callback: Callable[[list[Changes]], None], *,
                 interval: float = 1.0, start_after: int | None = None) -> None:
        self._address = address
        self._callback = callback
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._raw: psycopg.Connection[Any] | None = None
        self._conn: PgConnection | None = None
        self.last_seen = start_after
        self.listening = threading.Event()
        """Set once the listener is connected and listening (tests wait on it)."""

    def poll(self) -> list[Changes]:
        """Read the changes committed since the last delivery; returns (and passes on) the new ones. Connects
        first when not yet connected (then what was committed before counts as seen)."""
        if self._conn is None:
            self._connect()
        assert self._conn is not None and self.last_seen is not None
        logged = reads.changes_since(self._conn, self.last_seen)
        if not logged:
            return []
        self.last_seen = logged[-1].change_id
        new = [change for change in logged if change.op != LANDED_OP]
        if new:
            self._callback(new)
        return new

    def _connect(self) -> None:
        self._close()
        self._raw = connect(self._address)
        self._conn = PgConnection(self._raw)
        self._raw.execute(f"LISTEN {CHANNEL}")
        if self.last_seen is None:
            self.last_seen = reads.last_change_id(self._conn)
        self.listening.set()

    def _close(self) -> None:
        if self._raw is not None:
            self._raw.close()
        self._raw = self._conn = None

    def _run(self) -> None:
        away = False
        try:
            while not self._stop.is_set():
                try:
                    if self._raw is None:
                        self._connect()
                        if away:
                            log.info("change listener connected again")
                            away = False
                    assert self._raw is not None
                    for _ in self._raw.notifies(timeout=self._interval, stop_after=1):
                        pass
                    if not self._stop.is_set():
                        self.poll()
                except (psycopg.OperationalError, LimbicError) as exc:  # the server is away: try again later
                    if not away:
                        log.info("change listener waiting for the server: %s", type(exc).__name__)
                        away = True
                    self._close()
                    self._stop.wait(self._interval)
                except Exception:
                    if self._stop.is_set():
                        return
                    log.exception("change listener failed")
                    self._stop.wait(self._interval)
        finally:
            self._close()

    def start(self) -> ChangeListener:
        self._thread = threading.Thread(target=self._run, name=LISTENER_THREAD_NAME, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread, which closes its connection (idempotent)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=self._interval + 5)
        self._thread = None
