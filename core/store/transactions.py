"""The one write transaction of a memory, the same on every engine: logged, nested as savepoints, all or nothing.

:class:`Transactions` holds the writer's state and runs :meth:`~Transactions.write` and
:meth:`~Transactions.maintenance`; an engine says how a transaction starts (:meth:`~Transactions._begin`:
SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's ``BEGIN`` and an advisory lock), what it does before it commits
(:meth:`~Transactions._before_commit`: PostgreSQL indexes the text its statements queued), how a committed
change is announced (:meth:`~Transactions._announce`: PostgreSQL's ``NOTIFY``) and how it commits
(:meth:`~Transactions._commit`: PostgreSQL reads back a write whose connection was lost as it committed).

Every write's outcome is told truly: an error raised before the commit means nothing of the write was stored
(a lost server connection says so in its message); once committed, the write is reported as stored.
"""

from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from limbic.core.errors import DatabaseClosedError
from limbic.core.store.connection import Connection

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

    def _not_stored(self, exc: BaseException) -> BaseException:
        """The error to raise for ``exc``, raised before the commit (the default: ``exc`` itself)."""
        return exc

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
                yield from self._savepoint(conn)
                return
            self._begin(conn)
            txn = WriteTransaction(conn)
            self._open.append(txn)
            self._owner = threading.get_ident()
            try:
                yield txn
                self._before_commit(conn)
                txn.change_id = int(conn.execute(
                    "INSERT INTO changes(at, origin, op, entity_ids) VALUES (?, ?, ?, ?) RETURNING id",
                    (time.time(), origin, op, json.dumps(sorted(txn.entity_ids)))).get)
                self._announce(conn, txn.change_id)
            except BaseException as exc:
                self._rollback(conn)
                failure = self._not_stored(exc)
                if failure is exc:
                    raise
                raise failure from None
            else:
                self._commit(conn, txn.change_id)
            finally:
                self._open.clear()
                self._owner = None

    def _savepoint(self, conn: C) -> Iterator[WriteTransaction]:
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
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
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
                for _ in self._savepoint(conn):
                    yield conn
                return
            self._begin(conn)
            try:
                yield conn
                self._before_commit(conn)
            except BaseException as exc:
                self._rollback(conn)
                failure = self._not_stored(exc)
                if failure is exc:
                    raise
                raise failure from None
            self._commit(conn, 0)
