"""A PostgreSQL connection that the store's SQL runs on as it runs on apsw.

The store writes its SQL once, in the subset SQLite and PostgreSQL share (``?`` placeholders, ``ON CONFLICT``,
``RETURNING``, ``coalesce``, window functions), and keeps what differs in per-backend code (the schema, full
text, vector tables, the change feed, transactions). :class:`PgConnection` gives a ``psycopg`` 3 connection the
small part of apsw's interface the store uses (``execute(sql, bindings).fetchone() / .fetchall() / .get``,
iteration, ``executemany``, ``changes()``, ``in_transaction``) and rewrites, once per SQL
text, the few idioms of the shared subset PostgreSQL spells differently:

- ``?`` and ``?N`` placeholders become PostgreSQL's own ``$N`` (run through psycopg's ``RawCursor``), so a
  repeated ``?N`` is one parameter whose type the server infers from all its uses; a bare ``?`` is numbered as
  SQLite numbers it (one above the highest so far); string literals, quoted identifiers and comments
  (``--``, ``/* */``) are kept as they are (a ``?``, ``$1`` or apostrophe inside them is text);
- an id list ``x IN (SELECT value FROM json_each(?N))`` (a JSON array bound as text) becomes
  ``x = ANY(%s)`` with the array bound as a PostgreSQL array; ``NOT IN`` becomes ``<> ALL``;
- ``?N IS NULL`` / ``?N IS NOT NULL`` become ``TRUE`` or ``FALSE`` as the value bound is None or not (the
  server cannot type a parameter used only there);
- SQLite's unary ``+`` before a column (which keeps an index out of a plan) is dropped;
- ``instr(a, b)`` becomes ``strpos(a, b)``, ``CAST(x AS REAL)`` becomes ``CAST(x AS double precision)``,
  a scalar ``max(a, b)``/``min(a, b)`` becomes ``greatest``/``least``;
- ``LIMIT ?N`` bound to a negative number means no limit, as on SQLite (PostgreSQL's ``LIMIT NULL``).

SQLite-only SQL (``PRAGMA``, ``sqlite_master``, FTS5 ``MATCH``, ``bm25``, ``fts5vocab``) raises
:class:`UnsupportedSql` at once: such code must have a PostgreSQL branch of its own.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from functools import lru_cache
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg.adapt import Loader
from psycopg.pq import TransactionStatus

SQLITE_ONLY = re.compile(r"\bPRAGMA\b|\bsqlite_master\b|\bMATCH\b|\bbm25\(|\bfts5vocab\b", re.IGNORECASE)
_ID_LIST = re.compile(r"(\bNOT\s+)?\bIN\s*\(\s*SELECT\s+value\s+FROM\s+json_each\(\s*(\?\d*)\s*\)\s*\)", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\?(\d*)(::LIST)?(\s+IS\s+(NOT\s+)?NULL\b)?", re.IGNORECASE)
_NULL_MARK = re.compile("\x00(\\d+)([=!])\x00")
_LIMIT_BEFORE = re.compile(r"\bLIMIT\s+$", re.IGNORECASE)
_PARAM_MARK = re.compile("\x01(\\d+)\x02")  # a placeholder in translated code, numbered later (never in a literal)
_UNARY_PLUS = re.compile(r"(\b(?:WHERE|AND|OR|ON|NOT)\s+|\(\s*)\+(?=[A-Za-z_])", re.IGNORECASE)
_SCALAR_MINMAX = re.compile(r"\b(max|min)\(", re.IGNORECASE)


class UnsupportedSql(RuntimeError):
    """SQLite-only SQL reached the PostgreSQL connection (a missing PostgreSQL branch: a bug, not bad input)."""


class _NumericLoader(Loader):
    """``numeric`` (PostgreSQL's ``sum`` of integers, ``avg``) as an ``int`` when whole, else a ``float``,
    as SQLite returns them."""

    def load(self, data: Any) -> int | float:
        value = Decimal(bytes(data).decode("ascii"))
        return int(value) if value == value.to_integral_value() else float(value)


def _top_level_commas(text: str, start: int) -> tuple[int, int]:
    """``(commas at depth 0, index of the closing parenthesis)`` of the call whose ``(`` is at ``start - 1``."""
    depth, commas = 0, 0
    for at in range(start, len(text)):
        ch = text[at]
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return commas, at
            depth -= 1
        elif ch == "," and depth == 0:
            commas += 1
    return commas, len(text)


def _scalar_min_max(code: str) -> str:
    out, last = [], 0
    for found in _SCALAR_MINMAX.finditer(code):
        commas, _ = _top_level_commas(code, found.end())
        if commas:
            out.append(code[last:found.start()])
            out.append("greatest(" if found.group(1).lower() == "max" else "least(")
            last = found.end()
    out.append(code[last:])
    return "".join(out)


_QUOTES = {"'": "'", '"': '"', "--": "\n", "/*": "*/"}
_OPENING = re.compile(r"'|\"|--|/\*")


def _split_literals(sql: str) -> list[tuple[bool, str]]:
    """``(kept, text)`` pieces of ``sql``: string literals, quoted identifiers and comments (``--`` to the end of
    the line, ``/* */``), kept as they are, apart from the code around them, which is rewritten."""
    pieces: list[tuple[bool, str]] = []
    at = 0
    while at < len(sql):
        found = _OPENING.search(sql, at)
        if found is None:
            pieces.append((False, sql[at:]))
            break
        pieces.append((False, sql[at:found.start()]))
        closing = _QUOTES[found.group()]
        end = found.end()
        while True:
            end = sql.find(closing, end)
            if end < 0:
                end = len(sql)
                break
            end += len(closing)
            if closing in "'\"" and sql.startswith(closing, end):  # a doubled quote stays inside
                end += 1
                continue
            break
        pieces.append((True, sql[found.start():end]))
        at = end
    return [(kept, text) for kept, text in pieces if text]


@lru_cache(maxsize=4096)
def translate(sql: str) -> tuple[str, frozenset[int], frozenset[int]]:
    """The PostgreSQL text of ``sql`` with its placeholders marked (``\\x01N\\x02``, N numbered as SQLite numbers
    them; :func:`bind` makes them ``$N``) and each ``?N IS [NOT] NULL`` marked for :func:`bind` to decide, the
    0-based binding indexes that are JSON id lists (bound as arrays) and those that are ``LIMIT`` counts (a
    negative one, SQLite's "no limit", is bound as NULL, PostgreSQL's). Cached per SQL text.

    Raises:
        UnsupportedSql: ``sql`` uses SQLite-only syntax (see the module docstring).
    """
    if SQLITE_ONLY.search(sql):
        raise UnsupportedSql(f"SQLite-only SQL on PostgreSQL: {sql.strip()[:80]}")
    lists: set[int] = set()
    limits: set[int] = set()
    next_index = 0
    out: list[str] = []

    def placeholder(found: re.Match[str]) -> str:
        nonlocal next_index
        index = int(found.group(1)) - 1 if found.group(1) else next_index
        next_index = max(next_index, index + 1)  # SQLite's numbering: a bare ? follows the highest so far
        if found.group(3):  # ``?N IS [NOT] NULL``: TRUE or FALSE once the value is known (_bind)
            return f"\x00{index}{'!' if found.group(4) else '='}\x00"
        if found.group(2):
            lists.add(index)
        if _LIMIT_BEFORE.search(found.string, 0, found.start()):
            limits.add(index)
        return f"\x01{index + 1}\x02"

    for kept, piece in _split_literals(sql):
        if kept:
            out.append(piece)
            continue
        code = _ID_LIST.sub(lambda m: f"{'<> ALL' if m.group(1) else '= ANY'}({m.group(2)}::LIST)", piece)
        code = _UNARY_PLUS.sub(r"\1", code)
        code = re.sub(r"\binstr\(", "strpos(", code, flags=re.IGNORECASE)
        code = re.sub(r"\bAS\s+REAL\)", "AS double precision)", code, flags=re.IGNORECASE)
        code = _scalar_min_max(code)
        out.append(_PLACEHOLDER.sub(placeholder, code))
    return "".join(out), frozenset(lists), frozenset(limits)


@lru_cache(maxsize=4096)
def _referenced(text: str) -> list[int]:
    return sorted({int(n) for n in _PARAM_MARK.findall(text)})


@lru_cache(maxsize=4096)
def _numbered(text: str) -> str:
    """``text`` with its placeholders as PostgreSQL's ``$N``, numbered as translated."""
    return _PARAM_MARK.sub(lambda m: f"${m.group(1)}", text)


def bind(sql: str, bindings: Sequence[Any] | None) -> tuple[str, list[Any]]:
    """The PostgreSQL text of ``sql`` and the values to send for ``bindings`` (SQLite's): JSON id lists as
    arrays, a negative ``LIMIT`` as NULL, ``?N IS [NOT] NULL`` decided here, and only the parameters the text
    uses, renumbered ``$1``, ``$2``… in order.

    Raises:
        UnsupportedSql: ``sql`` uses SQLite-only syntax.
    """
    text, lists, limits = translate(sql)
    values = list(bindings or ())
    for index in lists:
        value = values[index]
        values[index] = json.loads(value) if isinstance(value, str | bytes) else list(value)
    for index in limits:
        if isinstance(values[index], int) and values[index] < 0:
            values[index] = None
    if "\x00" in text:  # ``?N IS [NOT] NULL``: known here, and a bare NULL parameter has no type on the server
        text = _NULL_MARK.sub(lambda m: "TRUE" if (values[int(m.group(1))] is None) == (m.group(2) == "=")
                              else "FALSE", text)
    used = _referenced(text)
    if len(used) < len(values):  # renumber what is used: the server must type every parameter it is given
        number = {old: new for new, old in enumerate(used, 1)}
        return _PARAM_MARK.sub(lambda m: f"${number[int(m.group(1))]}", text), [values[old - 1] for old in used]
    return _numbered(text), values


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

    backend = "postgresql"

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

    def _adopt(self, raw: psycopg.Connection[Any], *, in_snapshot: bool = False) -> None:
        prepare(raw)
        watch(raw, self._on_lost)
        self._raw = raw
        if not in_snapshot:
            self._depth = 0
            self._owns_snapshot = False
            self._memo.clear()

    def replace(self, raw: psycopg.Connection[Any]) -> None:
        """Go on with ``raw`` (a new connection) after this one was lost; the old one is closed."""
        self._raw.close()
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
            with raw.pipeline():
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


def on_postgres(conn: object) -> bool:
    """Whether ``conn`` is a PostgreSQL connection (else an apsw one): the test of every per-backend branch."""
    return isinstance(conn, PgConnection)
