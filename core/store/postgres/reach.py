"""Whether a memory's PostgreSQL server answers, and the way back when it stops.

A :class:`Reachability` is told when a connection was lost and the server did not answer a new one
(:meth:`Reachability.lost`); from then on every call fails at once with one clear message (:meth:`check`:
"the database at host:port is unreachable; retrying") instead of waiting on a connection, while one thread
tries to connect again, waiting :data:`FIRST_RETRY_SECONDS` and then twice as long each time up to
:data:`MAX_RETRY_SECONDS`. When the server answers again, ``on_back`` runs (the database renews its read
pool) and calls go through again. The log gets one line when the server stops answering and one when it is
back, with how long it was away; psycopg_pool's own line per failed attempt is not shown (its logger is set
to errors only).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable

import psycopg

from limbic.core.errors import DatabaseUnavailableError
from limbic.core.store.postgres import address as pg_address

log = logging.getLogger(__name__)
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)  # one line per outage is ours (module docstring)

FIRST_RETRY_SECONDS = 0.1
MAX_RETRY_SECONDS = 0.5
"""Longest wait between two attempts to reconnect: the server serves again at most this long (plus one
connection) after its database is back."""
PROBE_TIMEOUT_SECONDS = 2  # libpq's shortest connect_timeout
_REFUSAL = re.compile(r"sorry, too many clients already|remaining connection slots are reserved[^\n]*|"
                      r"too many connections for (role|database)[^\n]*", re.IGNORECASE)


class Reachability:
    """The state of one server (module docstring).

    Args:
        address: the memory's ``postgresql://`` address (only its ``host:port`` is ever shown).
        on_back: called on the retrying thread once the server answers again, before calls go through.
    """

    def __init__(self, address: str, on_back: Callable[[], None] | None = None) -> None:
        self._address = address
        self.where = pg_address.host_port(address)
        self.on_back = on_back
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._closed = threading.Event()
        self._retrying: threading.Thread | None = None
        self._last_failure: BaseException | None = None  # why the last attempt to connect failed

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def error(self) -> DatabaseUnavailableError:
        return DatabaseUnavailableError(f"the database at {self.where} is unreachable; retrying")

    def check(self) -> None:
        """Return at once while the server is taken to answer.

        Raises:
            DatabaseUnavailableError: the server stopped answering and has not answered again yet.
        """
        if self._down_since is not None:
            raise self.error()

    def answers(self) -> bool:
        """Whether the server takes a new connection now (one attempt, closed again at once)."""
        try:
            psycopg.connect(self._address, connect_timeout=PROBE_TIMEOUT_SECONDS, application_name="limbic").close()
        except psycopg.Error as exc:
            self._last_failure = exc
            return False
        return True

    def unavailable(self, exc: BaseException | None = None) -> DatabaseUnavailableError:
        """The error for a connection that could not be made (``exc``, else the last failed :meth:`answers`):
        the server's own refusal when it answered but refused (its connection limit reached: the server is
        there, so nothing is marked away), else :meth:`lost`."""
        failure = exc if exc is not None else self._last_failure
        found = _REFUSAL.search(pg_address.scrub(str(failure), self._address)) if failure is not None else None
        if found:
            return DatabaseUnavailableError(f"the database at {self.where} refuses connections ({found.group(0)}); "
                                            "try again")
        return self.lost()

    def lost(self) -> DatabaseUnavailableError:
        """Record that the server stopped answering (the first time: one warning, and the retrying thread
        starts); returns the error to raise."""
        with self._lock:
            if self._down_since is None and not self._closed.is_set():
                self._down_since = time.monotonic()
                log.warning("the database at %s is unreachable; retrying", self.where)
                self._retrying = threading.Thread(target=self._retry, name="limbic-pg-reconnect", daemon=True)
                self._retrying.start()
        return self.error()

    def _retry(self) -> None:
        delay = FIRST_RETRY_SECONDS
        while not self._closed.wait(delay):
            if self.answers():
                if self.on_back is not None:
                    try:
                        self.on_back()
                    except Exception:  # noqa: BLE001 - the next call finds out again what is wrong
                        log.debug("renewing connections after the database came back failed", exc_info=True)
                with self._lock:
                    since, self._down_since = self._down_since, None
                away = time.monotonic() - since if since is not None else 0.0
                log.warning("the database at %s answers again (unreachable for %.1f s)", self.where, away)
                return
            delay = min(delay * 2, MAX_RETRY_SECONDS)

    def close(self) -> None:
        """Stop retrying (the database is closing)."""
        self._closed.set()
        thread = self._retrying
        if thread is not None and thread is not threading.current_thread():
            thread.join(PROBE_TIMEOUT_SECONDS + 1)
