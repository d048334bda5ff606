"""A memory in a SQLite file: connections, pragmas, and the one write transaction.

apsw with sqlite-vec loaded into every connection (docs/architecture.md "Threads and processes"): apsw bundles a current
SQLite with extension loading on every platform. One write connection guarded by a lock; each thread reads
on a connection leased from a small pool for as long as the thread lives (datasette's ``database.py`` shape): when the thread ends, its
connection goes back to the pool (at most :data:`READ_POOL_SIZE` idle ones are kept, the rest are
closed), so short-lived worker threads (Qt pool threads expire after 30 s, the MCP SDK's after 10 s)
never leave connections behind. A pooled connection keeps what lives per connection (the search's
``temp`` fts5vocab table) for the next thread. Every mutation runs in ``SqliteDatabase.write``
(:mod:`limbic.core.store.transactions`): ``BEGIN IMMEDIATE`` … append to ``changes`` … ``COMMIT``, or a
rollback that leaves nothing behind. The migrations are applied by :mod:`limbic.core.store.sqlite.schema`.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path

import apsw

from limbic.core.errors import DatabaseClosedError, StoreBusyError
from limbic.core.models import Changes
from limbic.core.store.sqlite.connection import BUSY_TIMEOUT_MS, SqliteConnection, connect
from limbic.core.store.sqlite.schema import migrate
from limbic.core.store.sqlite.watcher import ChangeWatcher
from limbic.core.store.transactions import Transactions

__all__ = ["READ_POOL_SIZE", "SqliteDatabase"]

BUSY_POLL_SECONDS = 0.001
READ_POOL_SIZE = 4  # idle read connections kept for the next thread
WRITE_CACHE_KIB = 16_000
"""Page cache of the write connection (KiB). Each recorded search appends its log row, whose pages no write reads
again; a 64 MB cache filled with them, 8 MB per 1,000 searches. Writes at 10k keep 16–25 MB of pages and cost the
same CPU with 16 MB as with 64 (docs/performance.md "Memory")."""


class _BusyWait:
    """The write connection's busy handler: wait for another process's write lock in steps of
    ``BUSY_POLL_SECONDS`` up to ``BUSY_TIMEOUT_MS``. SQLite's own handler sleeps ever longer (up to
    100 ms a try), so a writer behind a 2 ms transaction could wait 50 ms; four concurrent MCP writers'
    p99 fell with this (tests/bench/bench_writes.py)."""

    def __init__(self) -> None:
        self.started = 0.0

    def __call__(self, tries: int) -> bool:
        now = time.monotonic()
        if tries == 0:
            self.started = now
        if (now - self.started) * 1000 >= BUSY_TIMEOUT_MS:
            return False
        time.sleep(BUSY_POLL_SECONDS)
        return True


class _Lease:
    """A thread's hold on one read connection, kept in the thread's ``threading.local``.

    The thread's locals are dropped when the thread ends; the finalizer attached to the lease then
    hands the connection back to the pool.
    """

    __slots__ = ("__weakref__", "conn")

    def __init__(self, conn: SqliteConnection) -> None:
        self.conn = conn


class SqliteDatabase(Transactions[SqliteConnection]):
    """One SQLite database file (created and migrated on open): a :class:`~limbic.core.store.database.Database`.

    Args:
        path: file path; parent directories are created. ``":memory:"`` is refused because
            readers on other threads could not see the data — use a temporary file.
    Raises:
        StoreBusyError: the file stayed locked by another process for more than 10 s.
        MigrationError: a schema migration failed (nothing of it was applied).
    """

    nearest_index = None  # no server: a large vector copy gets its HNSW graph in the process (core/vectors)

    def __init__(self, path: str | Path) -> None:
        if str(path) == ":memory:":
            raise ValueError("Database needs a file path; use a temporary file for tests")
        self.path = Path(path).expanduser().resolve()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._init_transactions()
        self._local = threading.local()
        self._readers: set[SqliteConnection] = set()  # every open read connection, leased or idle
        self._idle: list[SqliteConnection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        self._writer = self._connect()
        self._writer.execute(f"PRAGMA cache_size = -{WRITE_CACHE_KIB}")
        self._writer.set_busy_handler(_BusyWait())
        try:
            self._writer.execute("PRAGMA journal_mode = WAL")
            migrate(self._writer, self.path)
        except BaseException:
            self._closed = True
            self._writer.close()
            raise

    def follow(self, deliver: Callable[[list[Changes]], None], *, interval: float) -> ChangeWatcher:
        """Poll this file every ``interval`` seconds for other processes' commits (:class:`ChangeWatcher`)."""
        return ChangeWatcher(self.path, deliver, interval=interval).start()

    # --- connections ---------------------------------------------------------------------------

    def _connect(self) -> SqliteConnection:
        return connect(str(self.path))

    def read(self) -> SqliteConnection:
        """This thread's read connection: leased from the pool on first use, returned when the thread ends.

        A thread inside a write transaction gets the write connection, so it reads its own writes.

        Raises:
            DatabaseClosedError: :meth:`close` was called.
        """
        if self._closed:
            raise DatabaseClosedError("the database is closed")
        if self._owner == threading.get_ident():
            return self._writer
        lease: _Lease | None = getattr(self._local, "lease", None)
        if lease is None:
            lease = _Lease(self._checkout())
            weakref.finalize(lease, self._checkin, lease.conn)
            self._local.lease = lease
        return lease.conn

    def open_read_connections(self) -> int:
        """Read connections open now, leased to living threads or idle in the pool."""
        with self._readers_lock:
            return len(self._readers)

    def _checkout(self) -> SqliteConnection:
        with self._readers_lock:
            if self._idle:
                return self._idle.pop()
        conn = self._connect()
        with self._readers_lock:
            self._readers.add(conn)
        return conn

    def release_cache(self) -> None:
        """Empty the page cache of this thread's read connection (``PRAGMA shrink_memory``), after a one-off bulk
        read whose pages will not be read again soon (the vector copy's load: up to 64 MB)."""
        self.read().execute("PRAGMA shrink_memory")

    def _checkin(self, conn: SqliteConnection) -> None:
        """Called when the leasing thread ended: keep the connection for the next thread, or close it."""
        with self._readers_lock:
            if conn not in self._readers:  # closed with the database meanwhile
                return
            if not self._closed and not conn.in_transaction and len(self._idle) < READ_POOL_SIZE:
                self._idle.append(conn)
                return
            self._readers.discard(conn)
        conn.close()

    def close(self) -> None:
        """Close every connection this object opened (readers of all threads, then the writer)."""
        if self._closed:
            return
        self._closed = True
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()
            self._idle.clear()
        with self._write_lock:
            self._writer.close()

    # --- writing -------------------------------------------------------------------------------

    def _begin(self, conn: SqliteConnection) -> None:
        """``BEGIN IMMEDIATE``: other processes' writers wait for this one (the busy handler waits up to 10 s)."""
        try:
            conn.execute("BEGIN IMMEDIATE")
        except apsw.BusyError as exc:
            raise StoreBusyError(f"the database {self.path} is locked by another process; try again") from exc

    @property
    def schema_version(self) -> int:
        return self.read().execute("PRAGMA user_version").get

    # --- settings and vectors ------------------------------------------------------------------

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        row = self.read().execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    # --- addresses -----------------------------------------------------------------------------

    @property
    def shown_address(self) -> str:
        """The file's path."""
        return str(self.path)

    @property
    def shareable_address(self) -> str:
        """The file's path."""
        return str(self.path)
