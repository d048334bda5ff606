"""A memory on a PostgreSQL server: connections, migrations and the one write transaction.

The same contract as the SQLite :class:`~limbic.core.store.database.Database` (docs/architecture.md "Storage
backends"): each thread reads on a connection leased from a bounded ``psycopg_pool`` pool for as long as the
thread lives; every mutation runs in :meth:`PgDatabase.write`, one transaction that appends its ``changes``
row and commits, or rolls back leaving nothing. Writers take turns through a transaction-scoped advisory
lock (``pg_advisory_xact_lock``), across every process and machine on the memory, as SQLite's
``BEGIN IMMEDIATE`` makes them take turns on one file: the store's read-then-write steps stay correct, and
change ids grow in commit order, so a follower reading ``id > last seen`` misses nothing. Each commit
sends ``NOTIFY limbic_changes`` with its change id (:mod:`limbic.core.store.postgres.listen`).

Files that belong to one machine (the KNN graph, the turn locks of the embedder) live under
``cache_dir()/servers/<hash of the address without its password>/``, made only once the server answered.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from pathlib import Path
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from limbic.core.errors import DatabaseClosedError, DatabaseUnavailableError, StoreBusyError
from limbic.core.paths import cache_dir
from limbic.core.store.postgres import address as pg_address
from limbic.core.store.postgres.connection import PgConnection
from limbic.core.store.postgres.schema import migrate
from limbic.core.store.postgres.text_index import flush_pending_text
from limbic.core.store.transactions import Transactions

CHANNEL = "limbic_changes"
WRITE_LOCK_KEY = 0x6C696D626963  # "limbic": the advisory lock writers take turns on
CONNECT_TIMEOUT_SECONDS = 10
READ_POOL_SIZE = 16  # read connections at most (threads beyond wait for one, then StoreBusyError)
LOCK_TIMEOUT_MS = 10_000


class _Lease:
    __slots__ = ("__weakref__", "conn")

    def __init__(self, conn: PgConnection) -> None:
        self.conn = conn


def connect(address: str, *, autocommit: bool = True) -> psycopg.Connection[Any]:
    """A new psycopg connection to ``address`` (credentials from the URL, ``PGPASSWORD``, ``.pgpass`` or
    ``PG*`` variables, as libpq reads them).

    Raises:
        DatabaseUnavailableError: the server could not be reached or refused the login; the message names the
            address without its password and never repeats the server's text verbatim when it might hold it.
    """
    try:
        return psycopg.connect(address, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_SECONDS,
                               application_name="limbic")
    except psycopg.Error as exc:
        raise DatabaseUnavailableError(pg_address.explain(address, exc)) from None


class PgDatabase(Transactions):
    """One memory in a PostgreSQL database (created tables and migrated on open).

    Args:
        address: ``postgresql://user@host:port/database`` (see :mod:`limbic.core.store.postgres.address`).
    Raises:
        DatabaseUnavailableError: the server cannot be reached, refused the login, or lacks pgvector.
        MigrationError: a schema migration failed (nothing of it was applied).
    """

    backend = "postgresql"

    def __init__(self, address: str) -> None:
        self.address = address
        self.display_address = pg_address.masked(address)
        self._init_transactions()
        self._local = threading.local()
        self._closed = False
        self._writer = PgConnection(connect(address))
        try:
            migrate(self._writer, self.display_address)
        except BaseException:
            self._closed = True
            self._writer.close()
            raise
        self.path = _local_folder(address) / "memory"
        self._pool = ConnectionPool(address, min_size=1, max_size=READ_POOL_SIZE, open=True, timeout=30,
                                    kwargs={"autocommit": True, "application_name": "limbic",
                                            "connect_timeout": CONNECT_TIMEOUT_SECONDS},
                                    name="limbic-read")
        self._leased: set[PgConnection] = set()
        self._leased_lock = threading.Lock()

    # --- connections ---------------------------------------------------------------------------

    def read(self) -> PgConnection:
        """This thread's read connection (leased from the pool until the thread ends); the write connection
        inside this thread's write transaction.

        Raises:
            DatabaseClosedError: :meth:`close` was called.
            StoreBusyError: every pooled connection stayed leased for 30 s.
        """
        if self._closed:
            raise DatabaseClosedError("the database is closed")
        if self._owner == threading.get_ident():
            return self._writer
        lease: _Lease | None = getattr(self._local, "lease", None)
        if lease is None:
            try:
                raw = self._pool.getconn()
            except PoolTimeout as exc:
                raise StoreBusyError("every connection to the database server is in use; try again") from exc
            conn = PgConnection(raw)
            lease = _Lease(conn)
            with self._leased_lock:
                self._leased.add(conn)
            weakref.finalize(lease, self._checkin, conn)
            self._local.lease = lease
        return lease.conn

    def _checkin(self, conn: PgConnection) -> None:
        with self._leased_lock:
            if conn not in self._leased:
                return
            self._leased.discard(conn)
        if not self._closed:
            self._pool.putconn(conn.raw)

    def open_read_connections(self) -> int:
        with self._leased_lock:
            return len(self._leased)

    def close(self) -> None:
        """Close the pool and the write connection."""
        if self._closed:
            return
        self._closed = True
        with self._leased_lock:
            self._leased.clear()
        self._pool.close()
        with self._write_lock:
            self._writer.close()

    # --- writing -------------------------------------------------------------------------------

    def _begin(self, conn: PgConnection) -> None:
        try:
            conn.execute("BEGIN")
            conn.raw.execute(f"SET LOCAL lock_timeout = {LOCK_TIMEOUT_MS}")
            conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
        except psycopg.errors.LockNotAvailable as exc:
            conn.raw.execute("ROLLBACK")
            raise StoreBusyError("another writer held the memory for more than 10 s; try again") from exc
        except psycopg.OperationalError as exc:
            raise DatabaseUnavailableError(pg_address.explain(self.address, exc)) from None

    def _before_commit(self, conn: PgConnection) -> None:
        flush_pending_text(conn.raw)

    def _announce(self, conn: PgConnection, change_id: int) -> None:
        conn.raw.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(change_id)))

    @property
    def schema_version(self) -> int:
        return int(self.read().execute("SELECT coalesce(max(version), 0) FROM limbic_schema").get)

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        row = self.read().execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default


def _local_folder(address: str) -> Path:
    """This machine's folder for the memory at ``address`` (KNN graph, turn locks), made on first use."""
    digest = hashlib.sha256(pg_address.identity(address).encode("utf-8")).hexdigest()[:16]
    folder = cache_dir() / "servers" / digest
    folder.mkdir(parents=True, exist_ok=True)
    return folder
