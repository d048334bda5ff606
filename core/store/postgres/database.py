"""A memory on a PostgreSQL server: connections, migrations and the one write transaction.

The same contract as the SQLite :class:`~limbic.core.store.database.Database` (docs/architecture.md "Storage
backends"): reads run on a connection leased from a bounded ``psycopg_pool`` pool for one request (the lease
goes back when the last reference to the connection :meth:`PgDatabase.read` returned is dropped, so calls
nested in one request share it); every mutation runs in :meth:`PgDatabase.write`, one transaction that appends
its ``changes`` row and commits, or rolls back leaving nothing. Writers take turns through a
transaction-scoped advisory lock (``pg_advisory_xact_lock``), across every process and machine on the memory,
as SQLite's ``BEGIN IMMEDIATE`` makes them take turns on one file: the store's read-then-write steps stay
correct, and change ids grow in commit order, so a follower reading ``id > last seen`` misses nothing. Each
commit sends ``NOTIFY limbic_changes`` with its change id (:mod:`limbic.core.store.postgres.listen`).

Every connection is checked before use and replaced when the server ended it (a restart, an idle timeout, a
proxy, ``pg_terminate_backend``, a failover). A leased read connection answers an empty query first when it
lay idle for more than :data:`IDLE_CHECK_SECONDS` or the server sent it something unasked (the message a
server sends as it ends a connection, or its socket closing: read from the socket without a round trip);
one used a moment ago goes straight to work, and when it fails at its first statement because it was lost
meanwhile, that statement runs once more on a checked connection (a read, or the ``BEGIN`` of a snapshot:
nothing was done yet). The write connection is opened again when it was lost, or when its ``BEGIN`` fails
because it was. When the server does not answer at all, calls fail at once
with "the database at host:port is unreachable; retrying" until it answers again
(:mod:`limbic.core.store.postgres.reach`). A write whose connection was lost while it committed is looked up
by its change id once the server answers: found, it is reported as stored.

Files that belong to one machine (the KNN graph, the turn locks of the embedder) live under
``cache_dir()/servers/<hash of the address without its password>/``, made only once the server answered.
"""

from __future__ import annotations

import hashlib
import logging
import select
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from limbic.core.errors import (
    MAY_BE_STORED,
    CommitUnknownError,
    DatabaseClosedError,
    DatabaseUnavailableError,
    StoreBusyError,
    nothing_stored,
)
from limbic.core.models import Changes
from limbic.core.paths import cache_dir
from limbic.core.store.postgres import address as pg_address
from limbic.core.store.postgres.connection import (
    CHANNEL,
    CONNECT_TIMEOUT_SECONDS,
    PgConnection,
    connect,
    prepare,
    watch,
)
from limbic.core.store.postgres.listen import ChangeListener
from limbic.core.store.postgres.nearest import HnswIndexes
from limbic.core.store.postgres.reach import Reachability
from limbic.core.store.postgres.schema import migrate
from limbic.core.store.postgres.text_index import flush_pending_text
from limbic.core.store.transactions import Transactions

log = logging.getLogger(__name__)

WRITE_LOCK_KEY = 0x6C696D626963  # "limbic": the advisory lock writers take turns on
COMMIT_CHECK_SECONDS = 15.0
"""How long a write whose connection was lost as it committed waits for the database to answer whether it was
stored, before it is answered "may be stored" (a restart of the server usually takes a few seconds)."""
READ_POOL_SIZE = 24
"""Read connections at most: the HTTP server's worker threads (``WORKER_THREADS`` in core/mcp/http.py, 16)
plus the background ones (vector filler, contradiction checks, sweeps, token lookups) never wait for one."""
POOL_WAIT_SECONDS = 30.0  # a busy pool: how long a read waits for a connection before StoreBusyError
_WAIT_STEP_SECONDS = 0.5  # while waiting, the server is asked whether it still answers this often
LOCK_TIMEOUT_MS = 10_000
IDLE_CHECK_SECONDS = 10.0
"""A pooled connection given back longer ago than this answers an empty query before it is leased again (an idle
timeout or a proxy may have ended it silently); one given back more recently is checked only when its socket
holds something unasked."""


class PgDatabase(Transactions[PgConnection]):
    """One memory in a PostgreSQL database (created tables and migrated on open): a
    :class:`~limbic.core.store.database.Database`.

    Args:
        address: ``postgresql://user@host:port/database`` (see :mod:`limbic.core.store.postgres.address`).
    Raises:
        DatabaseUnavailableError: the server cannot be reached, refused the login, or lacks pgvector.
        MigrationError: a schema migration failed (nothing of it was applied).
    """

    def __init__(self, address: str) -> None:
        self.address = address
        self.shown_address = pg_address.masked(address)
        self.shareable_address = pg_address.without_password(address)
        self._init_transactions()
        self._announcing = 0  # the change id the open write announces as it commits (_announce)
        self._local = threading.local()
        self._closed = False
        self._reach = Reachability(address, on_back=self._renew_pool)
        self._writer = PgConnection(connect(address), self._lost)
        try:
            migrate(self._writer, self.shown_address)
        except BaseException:
            self._closed = True
            self._writer.close()
            raise
        self.path = _local_folder(address) / "memory"
        self._leased = 0
        self._leased_lock = threading.Lock()
        self._returned: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = weakref.WeakKeyDictionary()
        self._pool = self._new_pool()
        self.nearest_index = HnswIndexes(self.read, lambda: connect(address))

    def follow(self, deliver: Callable[[list[Changes]], None], *, interval: float) -> ChangeListener:
        """Listen for other processes' commits: every commit sends ``NOTIFY limbic_changes``
        (:class:`~limbic.core.store.postgres.listen.ChangeListener`). ``interval`` is the poll of an engine without
        notifications; the listener keeps its own safety-net check (once a second)."""
        return ChangeListener(self.address, deliver).start()

    # --- connections ---------------------------------------------------------------------------

    def _new_pool(self) -> ConnectionPool:
        return ConnectionPool(self.address, min_size=1, max_size=READ_POOL_SIZE, open=True, timeout=POOL_WAIT_SECONDS,
                              kwargs={"autocommit": True, "application_name": "limbic",
                                      "connect_timeout": CONNECT_TIMEOUT_SECONDS},
                              configure=prepare, name="limbic-read")

    def _renew_pool(self) -> None:
        """A new read pool once the server answers again (the old one's connections died with the server, and
        its own reconnection waits grow long); the old pool closes as its leases come back."""
        if self._closed:
            return
        old, self._pool = self._pool, self._new_pool()
        threading.Thread(target=old.close, kwargs={"timeout": 1.0}, name="limbic-pool-close", daemon=True).start()

    def _lost(self, exc: BaseException) -> DatabaseUnavailableError:
        """The error for a connection found lost: the server is away (and then retried), or it answers and
        just this connection was ended (the call may be made again)."""
        if self._reach.down:
            return self._reach.error()
        if not self._reach.answers():
            return self._reach.unavailable()
        return DatabaseUnavailableError(f"the connection to the database at {self._reach.where} was lost; "
                                        "try again")

    def read(self) -> PgConnection:
        """This request's read connection: the one this thread already holds, else one leased from the pool
        (checked first, and given back when the last reference to it is dropped); the write connection inside
        this thread's write transaction.

        Raises:
            DatabaseClosedError: :meth:`close` was called.
            DatabaseUnavailableError: the server does not answer (at once while it is known to be away).
            StoreBusyError: every pooled connection stayed leased for ``POOL_WAIT_SECONDS``.
        """
        if self._closed:
            raise DatabaseClosedError("the database is closed")
        if self._owner == threading.get_ident():
            return self._writer
        held = getattr(self._local, "lease", None)
        conn: PgConnection | None = held() if held is not None else None
        if conn is None or conn.lost:
            conn = self._lease()
            self._local.lease = weakref.ref(conn)
        return conn

    def _lease(self) -> PgConnection:
        pool, raw = self._checked()
        held = [pool, raw]  # what the lease holds now: a statement may renew it (PgConnection's renew)
        conn = PgConnection(raw, self._lost, renew=lambda: self._renew(held))
        with self._leased_lock:
            self._leased += 1
        weakref.finalize(conn, self._checkin, held)
        return conn

    def _checked(self, *, always: bool = False) -> tuple[ConnectionPool, psycopg.Connection[Any]]:
        """A pooled connection taken to be alive (module docstring: an empty query when it lay idle or its socket
        holds something unasked; ``always``: in any case, as when the lease's last one was found lost), and its
        pool."""
        self._reach.check()
        deadline = time.monotonic() + POOL_WAIT_SECONDS
        swept = False
        while True:
            pool = self._pool
            try:
                raw = pool.getconn(timeout=max(0.01, min(_WAIT_STEP_SECONDS, deadline - time.monotonic())))
            except PoolClosed:
                if self._closed:
                    raise DatabaseClosedError("the database is closed") from None
                continue  # renewed meanwhile
            except PoolTimeout:
                if not self._reach.answers():
                    raise self._reach.unavailable() from None
                if time.monotonic() >= deadline:
                    raise StoreBusyError("every connection to the database server is in use; try again") from None
                continue
            if not always and not self._needs_check(raw):
                return pool, raw
            try:
                raw.execute("")
            except psycopg.Error:
                pool.putconn(raw)  # a lost connection is discarded by the pool
                if not swept:  # the server restarted or ended its connections: drop every dead one now
                    swept = True
                    if not self._reach.answers():
                        raise self._reach.unavailable() from None
                    pool.check()
                continue
            return pool, raw

    def _needs_check(self, raw: psycopg.Connection[Any]) -> bool:
        """Whether ``raw`` must answer an empty query before use: idle past :data:`IDLE_CHECK_SECONDS` (or never
        leased), or its socket readable (a read connection never listens, so anything there is the server
        ending it)."""
        returned = self._returned.get(raw)
        if returned is None or time.monotonic() - returned > IDLE_CHECK_SECONDS:
            return True
        try:
            readable, _, _ = select.select([raw.fileno()], [], [], 0)
        except (OSError, ValueError, psycopg.Error):
            return True
        return bool(readable)

    def _renew(self, held: list[Any]) -> psycopg.Connection[Any]:
        """Give back the lost connection of a lease and put a checked one in its place."""
        pool, raw = self._checked(always=True)
        lost_pool, lost = held
        held[:] = [pool, raw]
        self._give_back(lost_pool, lost)
        return raw

    def _checkin(self, held: list[Any]) -> None:
        with self._leased_lock:
            self._leased -= 1
        self._give_back(*held)

    def _give_back(self, pool: ConnectionPool, raw: psycopg.Connection[Any]) -> None:
        watch(raw, None)
        if self._closed or pool.closed:
            raw.close()
            return
        self._returned[raw] = time.monotonic()
        try:
            pool.putconn(raw)
        except Exception:  # noqa: BLE001 - a connection the pool no longer wants: closed instead
            raw.close()

    def open_read_connections(self) -> int:
        """Read connections leased now."""
        with self._leased_lock:
            return self._leased

    def release_cache(self) -> None:
        """Nothing: the server keeps its own cache."""
        return None

    def close(self) -> None:
        """Close the pool and the write connection."""
        if self._closed:
            return
        self._closed = True
        self._reach.close()
        self._pool.close()
        with self._write_lock:
            self._writer.close()

    # --- writing -------------------------------------------------------------------------------

    def _reopen_writer(self, conn: PgConnection) -> None:
        try:
            raw = psycopg.connect(self.address, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS,
                                  application_name="limbic")
        except psycopg.Error as exc:
            raise self._reach.unavailable(exc) from None
        conn.replace(raw)

    def _begin(self, conn: PgConnection) -> None:
        self._announcing = 0
        self._reach.check()
        if conn.lost:
            self._reopen_writer(conn)
        try:
            self._start(conn)
        except (psycopg.OperationalError, DatabaseUnavailableError):
            if not conn.lost:
                raise
            self._reopen_writer(conn)  # ended while idle: once more on a new connection (nothing was done)
            self._start(conn)  # lost again: the connection's own error (DatabaseUnavailableError)

    def _start(self, conn: PgConnection) -> None:
        """``BEGIN``, the lock timeout and the writers' advisory lock, in one round trip (the simple protocol
        runs the three statements in order and stops at the first that fails)."""
        raw = conn.raw
        try:
            raw.execute(f"BEGIN; SET LOCAL lock_timeout = {LOCK_TIMEOUT_MS}; "
                        f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")
        except psycopg.errors.LockNotAvailable as exc:
            raw.execute("ROLLBACK")
            raise StoreBusyError("another writer held the memory for more than 10 s; try again") from exc

    def _before_commit(self, conn: PgConnection) -> None:
        with conn.guard():
            flush_pending_text(conn)

    def _send(self, conn: PgConnection, command: str) -> None:
        conn.defer(command)  # with the next statement: one round trip for both

    def _announce(self, conn: PgConnection, change_id: int) -> None:
        """Kept for :meth:`_commit`, which sends the ``NOTIFY`` with the ``COMMIT`` (one round trip)."""
        self._announcing = change_id

    def _rollback(self, conn: PgConnection) -> None:
        conn.drop_deferred()  # a savepoint's RELEASE still waiting: the ROLLBACK ends it anyway
        if not conn.lost and conn.in_transaction:
            conn.execute("ROLLBACK")

    def _undo_savepoint(self, conn: PgConnection, name: str) -> None:
        """Nothing to undo on a lost connection: the server ended the whole transaction with it (the outer write
        fails, nothing stored)."""
        if conn.lost:
            conn.drop_deferred()
            return
        super()._undo_savepoint(conn, name)

    def _told(self, exc: BaseException) -> BaseException:
        """A lost write connection's psycopg error as the one-line error of :meth:`_lost`."""
        if isinstance(exc, psycopg.OperationalError) and self._writer.lost:
            return self._lost(exc)
        return exc

    def _commit(self, conn: PgConnection, change_id: int) -> None:
        """``COMMIT``, after the ``NOTIFY`` of the change :meth:`_announce` was given (in the same round trip, in
        the transaction: listeners hear of it once it is committed); when the connection is lost meanwhile, whether the write was stored is read back by its
        change id on a new connection (stored: this returns; not stored: DatabaseUnavailableError saying so;
        unknown: CommitUnknownError saying the write may be stored and sending it again is safe)."""
        announcing, self._announcing = self._announcing, 0
        notify = f"NOTIFY {CHANNEL}, '{int(announcing)}'; " if announcing else ""
        try:
            conn.raw.execute(f"{notify}COMMIT")
            return
        except (psycopg.Error, DatabaseUnavailableError) as exc:
            if not conn.lost:
                failure = self._failed(conn, exc, logged=bool(change_id))
                if failure is exc:
                    raise
                raise failure from None
        where = self._reach.where
        stored = self._stored(change_id)
        if stored is None:
            self._reach.lost()
            raise CommitUnknownError(f"the connection to the database at {where} was lost while the write "
                                     f"committed: {MAY_BE_STORED}")
        if not stored:
            raise DatabaseUnavailableError(nothing_stored(f"the connection to the database at {where} was lost "
                                                          "before the write committed; try again"))
        log.info("the connection to the database at %s was lost as change %d committed; it is stored",
                 where, change_id)

    def _stored(self, change_id: int) -> bool | None:
        """Whether the change ``change_id`` is stored, asked on new connections until the database answers (waits
        0.25 s doubling to 2 s between attempts, for at most :data:`COMMIT_CHECK_SECONDS`); None when it never
        did (or there is no change id to ask about). The row must be this write's own — its id, time, origin and
        operation: ids are max + 1, so when this transaction did not commit, the next writer's change (another
        server's) takes its id, and the id alone would answer a lost write as stored."""
        row_id, at, origin, op = self._change_row
        if not change_id or row_id != change_id:
            return None
        deadline, pause = time.monotonic() + COMMIT_CHECK_SECONDS, 0.25
        while True:
            try:
                with psycopg.connect(self.address, connect_timeout=2, application_name="limbic") as raw:
                    return raw.execute("SELECT 1 FROM changes WHERE id = %s AND at = %s AND origin = %s AND op = %s",
                                       (change_id, at, origin, op)).fetchone() is not None
            except psycopg.Error:
                if time.monotonic() + pause > deadline:
                    return None
                time.sleep(pause)
                pause = min(pause * 2, 2.0)

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
