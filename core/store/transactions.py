"""The one write transaction of a memory, the same on every engine: logged, nested as savepoints, all or nothing.

:class:`Transactions` holds the writer's state and runs :meth:`~Transactions.write` and
:meth:`~Transactions.maintenance`; an engine says how a transaction starts (:meth:`~Transactions._begin`:
SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's ``BEGIN`` and an advisory lock), what it does before it commits
(:meth:`~Transactions._before_commit`: PostgreSQL indexes the text its statements queued), how a committed
change is announced (:meth:`~Transactions._announce`: PostgreSQL's ``NOTIFY``) and how it commits
(:meth:`~Transactions._commit`: PostgreSQL reads back a write whose connection was lost as it committed).

Every write's outcome is told truly: an error raised before the commit means nothing of the write was stored
(an outage's error raised inside the transaction says so in its message:
:func:`~limbic.core.errors.nothing_stored`); once committed, the write is reported as stored. :func:`commits_recorded` tells a front end whether a call that failed had stored anything.
"""

from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Generic, TypeVar

from limbic.core.errors import DatabaseClosedError, LimbicError, unstored
from limbic.core.store.connection import Connection

_commits: ContextVar[list[int] | None] = ContextVar("limbic_commits", default=None)


@contextmanager
def commits_recorded(writes: bool = True) -> Iterator[list[int] | None]:
    """Record the transactions committed inside the block (the change id of each write, 0 for a maintenance
    transaction), on this thread and on the worker threads it starts with a copy of its context (as MCP tool
    calls run): a call that writes and failed with nothing recorded stored nothing. Yields the record; with
    ``writes`` False (a call that only reads) none, even inside an outer block (a command serving MCP calls)."""
    record: list[int] | None = [] if writes else None
    token = _commits.set(record)
    try:
        yield record
    finally:
        _commits.reset(token)


def recorded_commits() -> list[int] | None:
    """The record of the enclosing :func:`commits_recorded` block, None outside one."""
    return _commits.get()


C = TypeVar("C", bound=Connection)
"""The engine's own connection class."""


class WriteTransaction:
    """Handle given to the body of :meth:`Transactions.write`.

    ``conn`` is the write connection inside the transaction; ``touch(ids)`` records which entity ids the change
    affected (stored as JSON in the ``changes`` row and sent to subscribers). A nested transaction (a
    savepoint) passes its ids on to the outer one when it succeeds.
    """

    def __init__(self, conn: Connection, parent: WriteTransaction | None = None) -> None:
        self.conn = conn
        self.parent = parent
        self.entity_ids: set[int] = set()
        self.change_id = 0
        self.pending_vectors = False  # the write marked vectors pending (the outermost commit wakes the filler)

    @property
    def nested(self) -> bool:
        return self.parent is not None

    def mark_pending_vectors(self) -> None:
        """Record that this write (and so its outermost transaction) left vectors to compute after commit."""
        txn: WriteTransaction | None = self
        while txn is not None:
            txn.pending_vectors = True
            txn = txn.parent

    def touch(self, entity_ids: int | Iterable[int]) -> None:
        if isinstance(entity_ids, int):
            self.entity_ids.add(entity_ids)
        else:
            self.entity_ids.update(int(i) for i in entity_ids)


class Transactions(ABC, Generic[C]):
    """The writer's side of a memory; an engine sets ``_writer`` (its write connection, of its own class ``C``)
    and ``_closed``, and implements :meth:`_begin`."""

    _writer: C
    _closed: bool

    def _init_transactions(self) -> None:
        self._write_lock = threading.RLock()
        self._open: list[WriteTransaction] = []  # the writer's open transactions, outermost first
        self._owner: int | None = None  # thread holding an open write transaction
        self._change_row: tuple[int, float, str, str] = (0, 0.0, "", "")  # the last change row written: id, at, origin, op

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def writing(self) -> bool:
        """Whether the calling thread holds an open write transaction (a write now would be a savepoint of it)."""
        return self._owner == threading.get_ident()

    @abstractmethod
    def _begin(self, conn: C) -> None:
        """Start the outermost transaction, waiting for this memory's other writers.

        Raises:
            StoreBusyError: another writer kept its turn past the timeout.
        """

    def _before_commit(self, conn: C) -> None:
        """What the backend does inside every transaction just before it commits (nothing by default)."""
        return None

    def _send(self, conn: C, command: str) -> None:
        """Run ``command`` (``SAVEPOINT``, ``RELEASE``: no bindings, no rows); PostgreSQL sends it with the next
        statement instead (one round trip for both; an error in it is raised there)."""
        conn.execute(command)

    def _announce(self, conn: C, change_id: int) -> None:
        """Announce the logged change ``change_id`` to other processes, inside the transaction (nothing by
        default: SQLite's other processes poll the file)."""
        return None

    def _rollback(self, conn: C) -> None:
        if conn.in_transaction:
            conn.execute("ROLLBACK")

    def _undo_savepoint(self, conn: C, name: str) -> None:
        """Undo the savepoint ``name`` whose block failed (the outer transaction goes on)."""
        conn.execute(f"ROLLBACK TO {name}; RELEASE {name}")

    def _told(self, exc: BaseException) -> BaseException:
        """The error to raise for ``exc``, raised in a transaction before its commit (the default: ``exc`` itself;
        PostgreSQL tells a lost connection in one line)."""
        return exc

    def _failed(self, conn: C, exc: BaseException, *, logged: bool) -> BaseException:
        """Roll back the outermost transaction after ``exc`` and return the error to raise for it: for a logged
        write (``logged``), an outage's error worded as one that stored nothing
        (:func:`~limbic.core.errors.unstored`)."""
        self._rollback(conn)
        told = self._told(exc)
        return unstored(told) if logged and isinstance(told, LimbicError) else told

    def _commit(self, conn: C, change_id: int) -> None:
        """Commit the outermost transaction whose ``changes`` row is ``change_id`` (0 for :meth:`maintenance`).

        Raises:
            whatever the commit raised when the write was not stored (then rolled back).
        """
        try:
            conn.execute("COMMIT")
        except BaseException:
            self._rollback(conn)
            raise

    @contextmanager
    def write(self, origin: str, op: str) -> Iterator[WriteTransaction]:
        """One transaction on the write connection, logged in ``changes``.

        On normal exit the ``changes`` row is appended and the transaction commits; on any exception
        everything is rolled back and the exception propagates. Called again by the same thread inside an open
        transaction, it opens a savepoint instead: a failure undoes only that savepoint, and the outermost
        transaction writes the one ``changes`` row and commits.

        Raises:
            StoreBusyError: another writer held the memory past the timeout.
            DatabaseClosedError: :meth:`close` was called.
        """
        if self._closed:
            raise DatabaseClosedError("the database is closed")
        with self._write_lock:
            conn = self._writer
            if self._open:
                with self._savepoint(conn) as nested:
                    yield nested
                return
            self._begin(conn)
            txn = WriteTransaction(conn)
            self._open.append(txn)
            self._owner = threading.get_ident()
            try:
                yield txn
                self._before_commit(conn)
                at = time.time()
                txn.change_id = int(conn.execute(
                    "INSERT INTO changes(at, origin, op, entity_ids) VALUES (?, ?, ?, ?) RETURNING id",
                    (at, origin, op, json.dumps(sorted(txn.entity_ids)))).get)
                # what tells this change's row from another's: an id is max + 1, so a transaction that did not
                # commit leaves its id to the next writer's change (the commit check, PostgreSQL's _commit)
                self._change_row = (txn.change_id, at, origin, op)
                self._announce(conn, txn.change_id)
            except BaseException as exc:
                failure = self._failed(conn, exc, logged=True)
                if failure is exc:
                    raise
                raise failure from None
            else:
                self._commit(conn, txn.change_id)
                _record(txn.change_id)
            finally:
                self._open.clear()
                self._owner = None

    @contextmanager
    def _savepoint(self, conn: C) -> Iterator[WriteTransaction]:
        """A savepoint of the open transaction for the block: released when the block ends, undone when it raises
        (:meth:`_undo_savepoint`), and the error raised on."""
        parent = self._open[-1]
        name = f"limbic_{len(self._open)}"
        self._send(conn, f"SAVEPOINT {name}")
        txn = WriteTransaction(conn, parent)
        self._open.append(txn)
        try:
            yield txn
            self._send(conn, f"RELEASE {name}")
            parent.touch(txn.entity_ids)
        except BaseException:
            self._undo_savepoint(conn, name)
            raise
        finally:
            self._open.pop()

    @contextmanager
    def maintenance(self) -> Iterator[Connection]:
        """A transaction without a ``changes`` row: signals and logs that views need not follow.

        Inside the same thread's open write transaction it is a savepoint of that transaction.
        Raises StoreBusyError or DatabaseClosedError as :meth:`write` does.
        """
        if self._closed:
            raise DatabaseClosedError("the database is closed")
        with self._write_lock:
            conn = self._writer
            if self._open:
                with self._savepoint(conn):
                    yield conn
                return
            self._begin(conn)
            try:
                yield conn
                self._before_commit(conn)
            except BaseException as exc:
                failure = self._failed(conn, exc, logged=False)
                if failure is exc:
                    raise
                raise failure from None
            self._commit(conn, 0)
            _record(0)


def _record(change_id: int) -> None:
    record = _commits.get()
    if record is not None:
        record.append(change_id)
