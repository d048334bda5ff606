"""The rewriting of the store's SQL for PostgreSQL: the few idioms of the subset SQLite and PostgreSQL share
that PostgreSQL spells differently, rewritten once per SQL text (:func:`translate`) and bound per call
(:func:`bind`); :class:`~limbic.core.store.postgres.connection.PgConnection` runs the result.

- ``?`` and ``?N`` placeholders become PostgreSQL's own ``$N`` (run through psycopg's ``RawCursor``), so a
  repeated ``?N`` is one parameter whose type the server infers from all its uses; a bare ``?`` is numbered as
  SQLite numbers it (one above the highest so far); string literals, quoted identifiers and comments
  (``--``, ``/* */``) are kept as they are (a ``?``, ``$1`` or apostrophe inside them is text);
- an id list ``x IN (SELECT value FROM json_each(?N))`` (a JSON array bound as text) becomes
  ``x = ANY(%s)`` with the array bound as a PostgreSQL array; ``NOT IN`` becomes ``<> ALL``;
- ``?N IS NULL`` / ``?N IS NOT NULL`` become ``TRUE`` or ``FALSE`` as the value bound is None or not (the
  server cannot type a parameter used only there);
- SQLite's unary ``+`` before a column (which keeps an index out of a plan) is dropped;
- ``column COLLATE NOCASE`` becomes ``lower(column)`` (SQLite's NOCASE folds ASCII letters, as ``lower()`` of a
  ``"C"`` text does on PostgreSQL, where ``lower(name)`` is indexed as SQLite indexes ``name COLLATE NOCASE``;
  the values compared with it are given lowercased);
- ``instr(a, b)`` becomes ``strpos(a, b)``, ``CAST(x AS REAL)`` becomes ``CAST(x AS double precision)``,
  a scalar ``max(a, b)``/``min(a, b)`` becomes ``greatest``/``least``;
- ``LIMIT ?N`` bound to a negative number means no limit, as on SQLite (PostgreSQL's ``LIMIT NULL``).

SQLite-only SQL (``PRAGMA``, ``sqlite_master``, FTS5 ``MATCH``, ``bm25``, ``fts5vocab``) raises
:class:`UnsupportedSql` at once: such code must have a PostgreSQL branch of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

SQLITE_ONLY = re.compile(r"\bPRAGMA\b|\bsqlite_master\b|\bMATCH\b|\bbm25\(|\bfts5vocab\b", re.IGNORECASE)
_ID_LIST = re.compile(r"(\bNOT\s+)?\bIN\s*\(\s*SELECT\s+value\s+FROM\s+json_each\(\s*(\?\d*)\s*\)\s*\)", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\?(\d*)(::LIST)?(\s+IS\s+(NOT\s+)?NULL\b)?", re.IGNORECASE)
_NULL_MARK = re.compile("\x00(\\d+)([=!])\x00")
_LIMIT_BEFORE = re.compile(r"\bLIMIT\s+$", re.IGNORECASE)
_PARAM_MARK = re.compile("\x01(\\d+)\x02")  # a placeholder in translated code, numbered later (never in a literal)
_UNARY_PLUS = re.compile(r"(\b(?:WHERE|AND|OR|ON|NOT)\s+|\(\s*)\+(?=[A-Za-z_])", re.IGNORECASE)
_SCALAR_MINMAX = re.compile(r"\b(max|min)\(", re.IGNORECASE)
_NOCASE = re.compile(r"\b(\w+(?:\.\w+)?)\s+COLLATE\s+NOCASE\b", re.IGNORECASE)


class UnsupportedSql(RuntimeError):
    """SQLite-only SQL reached the PostgreSQL connection (a missing PostgreSQL branch: a bug, not bad input)."""


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
        code = _NOCASE.sub(r"lower(\1)", code)
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
