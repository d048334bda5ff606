"""A PostgreSQL connection that the store's SQL runs on as it runs on apsw.

The store writes its SQL once, in the subset both engines run (:mod:`limbic.core.store.postgres.rewriter`), and
asks the engine for what differs (``conn.ops``: :class:`~limbic.core.store.postgres.operations.PgOperations`).
:class:`PgConnection` gives a ``psycopg`` 3 connection the store's common shape
(:class:`~limbic.core.store.connection.Connection`): apsw's calling conventions (``execute(sql,
bindings).fetchone() / .fetchall() / .get``, iteration, ``executemany``, ``changes()``, ``in_transaction``), each
statement's text rewritten for PostgreSQL by the rewriter, and ``execute_all`` / ``fetch_all``, several statements
in one round trip.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg.adapt import Loader
from psycopg.pq import TransactionStatus

from limbic.core.errors import DatabaseUnavailableError
from limbic.core.store.postgres import address as pg_address
from limbic.core.store.postgres.operations import PgOperations
from limbic.core.store.postgres.pipeline import pipeline
from limbic.core.store.postgres.rewriter import bind

log = logging.getLogger(__name__)

CHANNEL = "limbic_changes"  # every commit is announced here (NOTIFY); followers LISTEN (listen.py)
CONNECT_TIMEOUT_SECONDS = 10


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


class _NumericLoader(Loader):
    """``numeric`` (PostgreSQL's ``sum`` of integers, ``avg``) as an ``int`` when whole, else a ``float``,
    as SQLite returns them."""

    def load(self, data: Any) -> int | float:
        value = Decimal(bytes(data).decode("ascii"))
        return int(value) if value == value.to_integral_value() else float(value)


_SNAPSHOT = "BEGIN ISOLATION LEVEL REPEATABLE READ"


class PgCursor:
    """The rows of one statement, read at once, with apsw's ``fetchone``/``fetchall``/``get``/iteration."""

    __slots__ = ("_at", "_rows")

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self._rows = rows
        self._at = 0

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchall(self) -> list[tuple[Any, ...]]:
        rest = self._rows[self._at:]
        self._at = len(self._rows)
        return rest

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.fetchone()) is not None:
            yield row

    @property
    def get(self) -> Any:
        """apsw's ``Cursor.get``: None for no row, the value of a one-column row, else the row; a list of
        those when there are several rows."""
        rows = [row[0] if len(row) == 1 else row for row in self.fetchall()]
        if not rows:
            return None
        return rows[0] if len(rows) == 1 else rows


_PREPARED: weakref.WeakSet[psycopg.Connection[Any]] = weakref.WeakSet()
_VECTORS: weakref.WeakSet[psycopg.Connection[Any]] = weakref.WeakSet()


def prepare(raw: psycopg.Connection[Any]) -> None:
    """Make ``raw`` ready for the store's SQL (autocommit, ``numeric`` read as SQLite returns it); once per
    connection, so a pooled one leased again costs nothing."""
    if raw in _PREPARED:
        return
    raw.autocommit = True
    raw.adapters.register_loader("numeric", _NumericLoader)
    _PREPARED.add(raw)


class _PipelineExitNote(logging.Filter):
    """psycopg's warning that leaving a pipeline failed after an error of the block (``error ignored terminating
    <psycopg.Pipeline [BAD]>``, as when the server ended the connection): that error is raised, and told in one
    line where it is handled, so psycopg's line about the same event goes to the debug log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("error ignored terminating"):
            log.debug("psycopg: %s", record.getMessage())
            return False
        return True


logging.getLogger("psycopg").addFilter(_PipelineExitNote())


def is_lost(raw: psycopg.Connection[Any]) -> bool:
    """Whether ``raw`` can no longer be used: closed, or broken by the server going away or ending it."""
    return raw.closed or raw.broken


LostHandler = Callable[[BaseException], Exception]
"""Turns the error of a lost connection into the error to raise (a one-line ``DatabaseUnavailableError``)."""
_ON_LOST: weakref.WeakKeyDictionary[psycopg.Connection[Any], LostHandler] = weakref.WeakKeyDictionary()


class _GuardedCursor(psycopg.Cursor[Any]):
    """psycopg's cursor, raising the ``on_lost`` error of its connection when the connection was lost: store code
    that runs psycopg directly (full text, vector rows) tells an outage as plainly as :class:`PgConnection`."""

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().execute(*args, **kwargs)
        except psycopg.OperationalError as exc:
            raise _named(self.connection, exc) from None

    def executemany(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().executemany(*args, **kwargs)
        except psycopg.OperationalError as exc:
            raise _named(self.connection, exc) from None


def _named(raw: psycopg.Connection[Any], exc: psycopg.OperationalError) -> Exception:
    handler = _ON_LOST.get(raw)
    return handler(exc) if handler is not None and is_lost(raw) else exc


def watch(raw: psycopg.Connection[Any], on_lost: LostHandler | None) -> None:
    """Raise ``on_lost(error)`` from every statement on ``raw`` that fails because ``raw`` was lost (None: stop)."""
    if on_lost is None:
        _ON_LOST.pop(raw, None)
        return
    _ON_LOST[raw] = on_lost
    raw.cursor_factory = _GuardedCursor


class PgConnection:
    """One ``psycopg`` connection in autocommit mode with apsw's calling conventions (module docstring).

    Transactions are explicit (``BEGIN`` … ``COMMIT``), as on apsw; outside one each statement commits.
    When the connection is lost (the server stopped, restarted or ended it), a statement raises what
    ``on_lost`` makes of the error (the database's one-line ``DatabaseUnavailableError``) rather than
    psycopg's; without ``on_lost`` psycopg's error passes through.
    """

    def __init__(self, raw: psycopg.Connection[Any], on_lost: LostHandler | None = None,
                 renew: Callable[[], psycopg.Connection[Any]] | None = None) -> None:
        prepare(raw)
        watch(raw, on_lost)
        self._raw = raw
        self._on_lost = on_lost
        self._renew = renew
        self._changes = 0
        self._depth = 0
        self._owns_snapshot = False
        self._deferred: list[str] = []  # commands sent with the next statement (defer)
        self._memo: dict[Any, Any] = {}

    @property
    def ops(self) -> PgOperations:
        """The PostgreSQL operations bound to this connection."""
        return PgOperations(self)

    @property
    def raw(self) -> psycopg.Connection[Any]:
        """The psycopg connection, for store code that runs psycopg directly (the commands :meth:`defer` holds
        are sent first)."""
        if self._deferred:
            self._together([])
        return self._raw

    def defer(self, command: str) -> None:
        """Send ``command`` (one statement without bindings or rows: ``BEGIN``, ``SAVEPOINT``, ``RELEASE``) with
        the next statement, in one pipeline, rather than in a round trip of its own. Anything run on this
        connection sends it first, so the order of statements is kept; an error in it is raised by that
        next statement."""
        self._deferred.append(command)

    def drop_deferred(self) -> None:
        """Forget the commands :meth:`defer` holds (the transaction they belong to is being rolled back)."""
        self._deferred.clear()

    def _adopt(self, raw: psycopg.Connection[Any], *, in_snapshot: bool = False) -> None:
        prepare(raw)
        watch(raw, self._on_lost)
        self._raw = raw
        if not in_snapshot:
            self._depth = 0
            self._owns_snapshot = False
            self._memo.clear()

    def replace(self, raw: psycopg.Connection[Any]) -> None:
        """Go on with ``raw`` (a new connection) after this one was lost; the old one is closed, and the commands
        still deferred on it (a savepoint's ``RELEASE``) are dropped: they belonged to its transaction, which ended
        with it, and sent first on the new connection they would fail its next ``BEGIN``."""
        self._raw.close()
        self.drop_deferred()
        self._adopt(raw)

    def _may_retry(self, text: str) -> bool:
        """Whether a statement that failed because the connection was lost may run again on a new one: a
        read (``SELECT``/``WITH``) outside any snapshot or transaction, on a connection that can be renewed."""
        return (self._renew is not None and self._depth == 0 and self.lost
                and text.lstrip().upper().startswith(("SELECT", "WITH")))

    @property
    def lost(self) -> bool:
        return is_lost(self._raw)

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Inside the block, psycopg's error for this connection being lost becomes the ``on_lost`` error."""
        try:
            yield
        except psycopg.OperationalError as exc:
            if self._on_lost is None or not self.lost:
                raise
            raise self._on_lost(exc) from None

    def __enter__(self) -> PgConnection:
        """apsw's ``with conn:``: one consistent read snapshot (``REPEATABLE READ``) for the block; inside an
        open transaction (the writer's) it is part of that transaction. Its ``BEGIN`` goes with the block's
        first statement (one round trip for both); a block that runs none costs none. A leased connection
        found lost at that point is renewed and both are sent once more (nothing was read yet)."""
        if self._depth == 0 and not self.in_transaction:
            self.defer(_SNAPSHOT)
            self._owns_snapshot = True
        self._depth += 1
        return self

    def _renewed(self, exc: psycopg.OperationalError) -> bool:
        """After ``exc`` at a snapshot's first statement: whether the connection was lost and was renewed (the
        caller sends it again); raises the ``on_lost`` error when it was lost and cannot be renewed."""
        if not self.lost:
            return False
        if self._renew is None:
            if self._on_lost is None:
                return False
            raise self._on_lost(exc) from None
        self._adopt(self._renew(), in_snapshot=True)
        return True

    def in_snapshot(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()``, kept for the rest of the read snapshot this connection holds (a ``with conn:`` block on a
        leased connection), where the catalog it reads cannot change under the reader; outside one (and on the
        writer, whose own statements may change it) computed each time."""
        if not self._owns_snapshot:
            return compute()
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._owns_snapshot:
            self._owns_snapshot = False
            self._memo.clear()
            if self._deferred[:1] == [_SNAPSHOT]:  # no statement ran: nothing was begun
                self._deferred.clear()
                return
            if exc_type is not None and self.lost:
                return  # nothing to end: the server ended the snapshot with the connection
            with self.guard():
                self._raw.execute("COMMIT" if exc_type is None else "ROLLBACK")

    def register_vectors(self) -> None:
        """Let numpy arrays bind as pgvector ``vector`` values on this connection (once the extension exists)."""
        if self._raw not in _VECTORS:
            with self.guard():
                register_vector(self._raw)
            _VECTORS.add(self._raw)

    def execute(self, sql: str, bindings: Sequence[Any] | None = None) -> PgCursor:
        """Run one statement (or, without bindings, several separated by ``;``) and return its rows.

        Raises:
            UnsupportedSql: SQLite-only syntax. The ``on_lost`` error when the connection was lost;
            psycopg's errors pass through otherwise.
        """
        text, bound = bind(sql, bindings)
        if self._deferred and bound:
            return self._first(text, bound)
        try:
            return self._run(text, bound)
        except psycopg.OperationalError:
            if not self._may_retry(text):
                raise
        assert self._renew is not None
        self._adopt(self._renew())  # ended by the server since it was checked: once more on a checked one
        return self._run(text, bound)

    def _first(self, text: str, bound: list[Any]) -> PgCursor:
        """A statement sent in one pipeline after the deferred commands."""
        return self._together([(text, bound)])[0]

    def _together(self, statements: list[tuple[str, list[Any]]]) -> list[PgCursor]:
        """The deferred commands and ``statements`` in one pipeline (one round trip), the rows of each statement;
        when the commands begin a snapshot on a lease found lost, all are sent once more on a renewed one
        (nothing was read yet)."""
        commands, self._deferred = self._deferred, []
        try:
            return self._pipelined(commands, statements)
        except psycopg.OperationalError as exc:
            if commands[:1] != [_SNAPSHOT] or not self._renewed(exc):
                if self._on_lost is not None and self.lost:
                    raise self._on_lost(exc) from None
                raise
        with self.guard():
            return self._pipelined(commands, statements)

    def _pipelined(self, commands: list[str], statements: list[tuple[str, list[Any]]]) -> list[PgCursor]:
        raw = self._raw
        cursors = [psycopg.RawCursor(raw) for _ in statements]
        try:
            with pipeline(raw):
                for command in commands:
                    raw.execute(command)
                for cursor, (text, values) in zip(cursors, statements, strict=True):
                    cursor.execute(text, values or None)
            if cursors:
                self._changes = max(cursors[-1].rowcount, 0)
            return [PgCursor(cursor.fetchall() if cursor.description is not None else []) for cursor in cursors]
        finally:
            for cursor in cursors:
                cursor.close()

    def fetch_all(self, statements: Sequence[tuple[str, Sequence[Any] | None]]) -> list[list[tuple[Any, ...]]]:
        """The rows of each of ``statements`` (``(sql, bindings)``, run in order) from one pipeline: one round trip
        for all.

        Raises:
            UnsupportedSql: SQLite-only syntax. The ``on_lost`` error when the connection was lost; the first
            psycopg error otherwise (the statements after it do not run).
        """
        bound = [bind(sql, bindings) for sql, bindings in statements]
        return [cursor.fetchall() for cursor in self._together(bound)]

    def _run(self, text: str, bound: list[Any]) -> PgCursor:
        with (psycopg.RawCursor(self.raw) if bound else psycopg.Cursor(self.raw)) as cursor:
            # without bindings: the simple protocol, where several statements may be given
            try:
                cursor.execute(text, bound or None)
            except psycopg.OperationalError as exc:
                if self._on_lost is None or not self.lost or self._may_retry(text):
                    raise
                raise self._on_lost(exc) from None
            self._changes = max(cursor.rowcount, 0)
            rows = cursor.fetchall() if cursor.description is not None else []
        return PgCursor(rows)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run ``sql`` once for each of ``rows`` (psycopg's pipeline: one round trip for all; rows whose
        ``?N IS NULL`` tests come out differently run one by one, in order)."""
        bound = [bind(sql, row) for row in rows]
        if not bound:
            self._changes = 0
            return
        with self.guard(), psycopg.RawCursor(self.raw) as cursor:
            if len({text for text, _ in bound}) == 1:
                cursor.executemany(bound[0][0], [values for _, values in bound])
                self._changes = max(cursor.rowcount, 0)  # psycopg sums the rows of every execution
                return
            changed = 0
            for text, values in bound:
                cursor.execute(text, values)
                changed += max(cursor.rowcount, 0)
            self._changes = changed

    def execute_all(self, statements: Sequence[tuple[str, Sequence[Any] | None]]) -> None:
        """Run ``statements`` (``(sql, bindings)``, none returning rows) in order in one pipeline: one round trip
        for all. The first that fails raises its error (the ``on_lost`` error when the connection was lost);
        the rest do not run."""
        self.fetch_all(statements)

    def changes(self) -> int:
        """Rows changed by the last statement (apsw's ``changes()``)."""
        return self._changes

    @property
    def in_transaction(self) -> bool:
        return self._raw.info.transaction_status != TransactionStatus.IDLE

    def getautocommit(self) -> bool:
        """apsw's ``getautocommit()``: True outside an explicit transaction."""
        return not self.in_transaction

    def close(self) -> None:
        self._raw.close()

