"""The store's shared SQL made PostgreSQL's: the subset both engines read alike, written once in SQLite's spelling,
rewritten once per SQL text (:func:`translate`) and bound per call (:func:`bind`);
:class:`~limbic.core.store.postgres.connection.PgConnection` runs the result.

**The accepted subset.** Statements both engines run with the same meaning: ``SELECT`` (joins, subqueries,
``WITH``, ``UNION``, ``GROUP BY``/``HAVING``, window functions, ``FILTER``, ``ORDER BY … NULLS FIRST/LAST``),
``INSERT … ON CONFLICT … DO UPDATE/NOTHING``, ``RETURNING``, ``UPDATE``, ``DELETE``, ``CREATE``/``DROP``
of plain tables; the functions and operators both define alike (``count``, ``sum``, ``avg``, ``min``/``max`` of
one argument, ``coalesce``, ``CASE``, ``lower``, ``length``, ``abs``, ``LIKE … ESCAPE``, ``||``,
``CAST(x AS BIGINT | DOUBLE PRECISION | TEXT)``) and the store's ``unicode_lower``, defined on both. Only
how values are bound and one planner hint are rewritten:

- ``?`` and ``?N`` placeholders become PostgreSQL's own ``$N`` (run through psycopg's ``RawCursor``), so a
  repeated ``?N`` is one parameter whose type the server infers from all its uses; a bare ``?`` is numbered as
  SQLite numbers it (one above the highest so far); string literals, quoted identifiers and comments
  (``--``, ``/* */``) are kept as they are (a ``?``, ``$1`` or apostrophe inside them is text);
- an id list ``x IN (SELECT value FROM json_each(?N))`` (a JSON array bound as text, the one use of
  ``json_each`` the subset has) becomes ``x = ANY($N)`` with the array bound as a PostgreSQL array; ``NOT IN``
  becomes ``<> ALL``;
- ``?N IS NULL`` / ``?N IS NOT NULL`` become ``TRUE`` or ``FALSE`` as the value bound is None or not (the
  server cannot type a parameter used only there);
- ``LIMIT ?N`` bound to a negative number means no limit, as on SQLite (PostgreSQL's ``LIMIT NULL``);
- SQLite's unary ``+`` before a column (which keeps an index out of a plan) is dropped.

**Refused** (:class:`UnsupportedSql`, at once): what the engines spell or mean differently, which the store
asks of the connection's engine instead (``conn.ops``, :class:`~limbic.core.store.operations.Operations`):
``PRAGMA`` and ``sqlite_master`` (``table_columns``, ``vector_dimension``), FTS5's ``MATCH``, ``bm25`` and
``fts5vocab`` (the full-text operations), ``COLLATE`` (``ascii_folded``), ``instr`` (``holds_text``), a scalar
``max``/``min`` of several arguments (``greatest``/``least``: their NULLs differ), ``CAST(… AS REAL)``
(single precision on PostgreSQL: write ``DOUBLE PRECISION``) and ``json_each`` other than in an id list
(``json_ids_contain``, ``json_id_rows``). tests/test_pg_rewriter.py checks each rule on the text and on the rows
a real SQLite and a real PostgreSQL give.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

SQLITE_ONLY = re.compile(r"\bPRAGMA\b|\bsqlite_master\b|\bMATCH\b|\bbm25\(|\bfts5vocab\b|\bCOLLATE\b|\binstr\(|"
                         r"\bAS\s+REAL\b|\bjson_each\(", re.IGNORECASE)
_ID_LIST = re.compile(r"(\bNOT\s+)?\bIN\s*\(\s*SELECT\s+value\s+FROM\s+json_each\(\s*(\?\d*)\s*\)\s*\)", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\?(\d*)(::LIST)?(\s+IS\s+(NOT\s+)?NULL\b)?", re.IGNORECASE)
_NULL_MARK = re.compile("\x00(\\d+)([=!])\x00")
_LIMIT_BEFORE = re.compile(r"\bLIMIT\s+$", re.IGNORECASE)
_PARAM_MARK = re.compile("\x01(\\d+)\x02")  # a placeholder in translated code, numbered later (never in a literal)
_UNARY_PLUS = re.compile(r"(\b(?:WHERE|AND|OR|ON|NOT)\s+|\(\s*)\+(?=[A-Za-z_])", re.IGNORECASE)
_SCALAR_MINMAX = re.compile(r"\b(max|min)\(", re.IGNORECASE)


class UnsupportedSql(RuntimeError):
    """SQL outside the shared subset reached the PostgreSQL connection (SQL that belongs to an engine's operations:
    a bug, not bad input)."""


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


def _has_scalar_min_max(code: str) -> bool:
    """Whether ``code`` calls ``max`` or ``min`` with several arguments (SQLite's scalar functions)."""
    return any(_top_level_commas(code, found.end())[0] for found in _SCALAR_MINMAX.finditer(code))


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
        UnsupportedSql: ``sql`` is outside the shared subset (see the module docstring).
    """
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
        if SQLITE_ONLY.search(code) or _has_scalar_min_max(code):
            raise UnsupportedSql(f"SQL outside the shared subset on PostgreSQL: {sql.strip()[:80]}")
        code = _UNARY_PLUS.sub(r"\1", code)
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
        UnsupportedSql: ``sql`` is outside the shared subset.
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
