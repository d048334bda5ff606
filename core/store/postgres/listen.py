"""Following other processes' commits on a PostgreSQL memory: ``LISTEN limbic_changes``.

Every write transaction sends ``NOTIFY limbic_changes, '<change id>'`` as it commits
(:class:`~limbic.core.store.postgres.database.PgDatabase`); a :class:`ChangeListener` waits for those on a
connection of its own and then reads the ``changes`` log past the last id it delivered, so a notification
lost to a dropped connection is made up by the next one (or by the poll every ``interval`` seconds). Another
machine's write reaches the callback within milliseconds.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import psycopg

from limbic.core.models import Changes
from limbic.core.store import reads
from limbic.core.store.postgres.connection import PgConnection
from limbic.core.store.postgres.database import CHANNEL, connect
from limbic.core.store.schema import LANDED_OP

log = logging.getLogger(__name__)
LISTENER_THREAD_NAME = "limbic-change-listener"


class ChangeListener:
    """The PostgreSQL counterpart of :class:`~limbic.core.service.changes.ChangeWatcher` (same methods).

    Args:
        address: the memory's ``postgresql://`` address.
        callback: called on the listener thread with the new :class:`Changes`, oldest first.
        interval: seconds between checks when no notification comes (a safety net, not the path).
        start_after: change id already known (default: the newest at start).
    Raises:
        DatabaseUnavailableError: the server could not be reached.
    """

    def __init__(self, address: str, callback: Callable[[list[Changes]], None], *,
                 interval: float = 1.0, start_after: int | None = None) -> None:
        self._address = address
        self._callback = callback
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._raw: psycopg.Connection[Any] = connect(address)
        self._conn = PgConnection(self._raw)
        self._raw.execute(f"LISTEN {CHANNEL}")
        self.last_seen = reads.last_change_id(self._conn) if start_after is None else start_after  # type: ignore[arg-type]

    def poll(self) -> list[Changes]:
        """Read the changes committed since the last delivery; returns (and passes on) the new ones."""
        logged = reads.changes_since(self._conn, self.last_seen)  # type: ignore[arg-type]
        if not logged:
            return []
        self.last_seen = logged[-1].change_id
        new = [change for change in logged if change.op != LANDED_OP]
        if new:
            self._callback(new)
        return new

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for _ in self._raw.notifies(timeout=self._interval, stop_after=1):
                    pass
                if not self._stop.is_set():
                    self.poll()
            except psycopg.OperationalError:
                if self._stop.wait(self._interval):
                    return
                self._reconnect()
            except Exception:
                if self._stop.is_set():
                    return
                log.exception("change listener failed")

    def _reconnect(self) -> None:
        try:
            self._raw.close()
            self._raw = connect(self._address)
            self._conn = PgConnection(self._raw)
            self._raw.execute(f"LISTEN {CHANNEL}")
        except Exception as exc:  # the server is away: try again after the next interval
            log.info("change listener cannot reconnect yet: %s", type(exc).__name__)

    def start(self) -> ChangeListener:
        self._thread = threading.Thread(target=self._run, name=LISTENER_THREAD_NAME, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and close its connection (idempotent)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=self._interval + 5)
        self._thread = None
        self._raw.close()
