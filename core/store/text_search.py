"""Reading the full-text indexes, on either backend: what search and reflections ask of ``entity_fts``,
``observation_fts`` and ``reflection_fts``.

On SQLite these are FTS5 tables (migrations ``005``/``009``); on PostgreSQL the postings of
:mod:`limbic.core.store.postgres.full_text`, written with FTS5's own tokenizer and ranked by FTS5's BM25 in
SQL, so both give the same ids, order and scores (docs/architecture.md "Storage backends"). Expressions
are the quoted pieces joined with ``OR`` that :mod:`limbic.core.search.full_text` builds; this module
never builds one from user text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import apsw

from limbic.core.errors import ValidationError
from limbic.core.store.connection import Connection
from limbic.core.store.expiry import current
from limbic.core.store.postgres import full_text as pg_text
from limbic.core.store.postgres.connection import on_postgres

FTS_TOKENIZER = pg_text.TOKENIZER
"""The ``entity_fts`` tokenizer (migration ``005_fts_porter.sql``): Porter stemming over ``unicode61``
with diacritics removed; measured against plain ``unicode61`` in docs/scoring.md "Full-text index"."""

_PG_INDEX = {"entity_fts": pg_text.ENTITY_FTS, "observation_fts": pg_text.OBSERVATION_FTS,
             "reflection_fts": pg_text.REFLECTION_FTS}
# the table each index holds a row of (FTS5's N counts them all)
_ROWS = {"entity_fts": "entities", "observation_fts": "observations", "reflection_fts": "reflections"}
# per-connection fts5vocab tables over each full-text index (temp schema: nothing is written)
_VOCAB = {"entity_fts": "limbic_fts_vocab", "observation_fts": "limbic_observation_fts_vocab"}
_QUOTED = re.compile(r'"(?:[^"]|"")*"')


def pieces_of(expression: str) -> list[str]:
    """The pieces of an expression of quoted pieces joined with ``OR`` (the inverse of its quoting)."""
    return [piece[1:-1].replace('""', '"') for piece in _QUOTED.findall(expression)]


def tokenizer(conn: Connection) -> Callable[[str], list[str]]:
    """The index's own tokenizer (:data:`FTS_TOKENIZER`, through ``apsw``) as a function from a piece of
    query text to its tokens, exactly as FTS5 stores them (lower-cased, accents removed, stemmed); the same
    tokenizer on PostgreSQL, whose index is written with it."""
    if on_postgres(conn):
        return pg_text.query_tokens
    tokenize = conn.fts5_tokenizer(FTS_TOKENIZER[0], list(FTS_TOKENIZER[1:]))  # type: ignore[attr-defined]

    def run(term: str) -> list[str]:
        found = tokenize(term.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None,
                         include_offsets=False, include_colocated=False)
        return [str(token) for token in found]

    return run


def document_frequencies(conn: Connection, table: str, tokens: Sequence[str]) -> dict[str, int]:
    """Rows of the full-text index ``table`` holding each of ``tokens`` (absent: none); on SQLite through a
    per-connection ``fts5vocab`` table in the ``temp`` schema (nothing is written to the database file)."""
    if on_postgres(conn):
        return _pg_statistics(conn, tokens)[1][_PG_INDEX[table]]
    vocab = _VOCAB[table]
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, '{table}', 'row')")
    return dict(conn.execute(f"SELECT term, doc FROM temp.{vocab} WHERE term IN (SELECT value FROM json_each(?))",
                             (json.dumps(list(tokens)),)))


def row_count(conn: Connection, table: str) -> int:
    """Rows of the table whose full-text index is ``table`` (FTS5's N counts them all); on PostgreSQL the
    index's own count, kept as it is written (``count(*)`` there scans the table)."""
    if on_postgres(conn):
        counts = conn.in_snapshot(_PG_ROWS, lambda: pg_text.row_counts(conn.raw))  # type: ignore[attr-defined]
        return int(counts.get(_PG_INDEX[table], 0))
    return int(conn.execute(f"SELECT count(*) FROM {_ROWS[table]}").get)


_PG_ROWS = ("full-text rows",)


def _pg_statistics(conn: Any, tokens: Sequence[str]) -> tuple[dict[int, int], dict[int, dict[str, int]]]:
    """Row counts and the document frequencies of ``tokens`` in every PostgreSQL index, read in one statement
    once per read snapshot (a search asks for both indexes' in turn); the row counts are kept for
    :func:`row_count` too."""
    found: tuple[dict[int, int], dict[int, dict[str, int]]] = conn.in_snapshot(
        ("full-text statistics", frozenset(tokens)), lambda: pg_text.statistics(conn.raw, list(tokens)))
    conn.in_snapshot(_PG_ROWS, lambda: found[0])
    return found


def _matching(conn: Connection, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The rows of an FTS5 ``MATCH`` query. The expression is built to be valid; should SQLite still
    refuse it, the caller gets a ValidationError without SQLite's message."""
    try:
        return conn.execute(sql, args).fetchall()
    except apsw.SQLError as exc:
        raise ValidationError("the query could not be searched as text; try other words") from exc


def matches(conn: Connection, table: str, expression: str, limit: int | None = None, *,
            only_ids: Sequence[int] | None = None, columns: Sequence[str] | None = None) -> list[tuple[int, float]]:
    """``(row id, −bm25)`` of the rows of the index ``table`` matching ``expression``, best first, ties to the
    lower id (FTS5's order); ``limit`` rows at most; ``only_ids`` keeps those rows only (FTS5's ``+rowid IN``,
    a filter on the match's own scan); ``columns`` limits the match to those columns (FTS5's ``{col …} :``).

    Raises:
        ValidationError: SQLite refused the expression (it is built to be valid; no SQLite message shown).
    """
    if on_postgres(conn):
        positions = None if columns is None else [pg_text.COLUMNS[_PG_INDEX[table]].index(c) for c in columns]
        return pg_text.ranked(conn.raw, _PG_INDEX[table], pieces_of(expression), limit,  # type: ignore[attr-defined]
                              only_ids=only_ids, columns=positions)
    match = expression if columns is None else f"{{{' '.join(columns)}}} : ({expression})"
    where = f"{table} MATCH ?1"
    args: tuple[Any, ...] = (match,)
    if only_ids is not None:
        where += " AND +rowid IN (SELECT value FROM json_each(?2))"
        args += (json.dumps([int(i) for i in only_ids]),)
    sql = f"SELECT rowid, -bm25({table}) FROM {table} WHERE {where}"
    if limit is not None:
        sql += f" ORDER BY rank, rowid LIMIT {int(limit)}"
    rows = [(int(r), float(s)) for r, s in _matching(conn, sql, args)]
    return rows if limit is not None else sorted(rows, key=lambda row: (-row[1], row[0]))


# BM25 of the whole expression, computed only for the rows that match a rare piece
_RARE_ROWS = """
SELECT rowid, -bm25(entity_fts) FROM entity_fts
WHERE entity_fts MATCH ?1 AND +rowid IN (SELECT rowid FROM entity_fts WHERE entity_fts MATCH ?2)
"""
# ``rank, rowid``: SQLite's sorter keeps the best ``LIMIT`` rows as it goes, faster than FTS5's own
# ``ORDER BY rank`` (18 against 32 ms for 35,000 matches at all of Debian), with ties to the lower id
_ALL_ROWS = "SELECT rowid, -rank FROM entity_fts WHERE entity_fts MATCH ? ORDER BY rank, rowid LIMIT ?"


def best_entities(conn: Connection, expression: str, count: int, *, rare: str | None = None,
                  common_bound: float = 0.0) -> list[tuple[int, float]]:
    """The ``count`` best entities for ``expression`` in ``entity_fts``: ``(id, −bm25)``, best first, ties to
    the lower id. With ``rare`` (the expression of the query's rare pieces) the rows matching it are scored
    first, and kept when ``count`` of them score above ``common_bound`` (what the common pieces alone can
    reach: exact, MaxScore — :func:`limbic.core.search.full_text.split_common`); otherwise every match is.

    Raises:
        ValidationError: as :func:`matches`.
    """
    if on_postgres(conn):
        return matches(conn, "entity_fts", expression, count)
    if rare is not None and count > 0:
        rows = _matching(conn, _RARE_ROWS, (expression, rare))
        if len(rows) >= count:
            rows.sort(key=lambda row: (-row[1], row[0]))
            if rows[count - 1][1] > common_bound * (1.0 + 1e-6) + 1e-9:
                return [(int(rowid), float(score)) for rowid, score in rows[:count]]
    return [(int(rowid), float(score)) for rowid, score in _matching(conn, _ALL_ROWS, (expression, count))]


_LIVE_OF_ENTITIES = "SELECT id FROM observations WHERE entity_id IN (SELECT value FROM json_each(?1)) AND {live}"
_ENTITIES_OF = "SELECT DISTINCT entity_id FROM observations WHERE id IN (SELECT value FROM json_each(?))"
_OBSERVATION_MATCHES = """
SELECT DISTINCT o.entity_id FROM observation_fts f JOIN observations o ON o.id = f.rowid
WHERE observation_fts MATCH ?1 AND +f.rowid IN (
    SELECT id FROM observations WHERE entity_id IN (SELECT value FROM json_each(?2)) AND {live})
"""


def entities_matching_current_text(conn: Connection, expression: str, entity_ids: Sequence[int],
                                   now: float) -> set[int]:
    """Those of ``entity_ids`` that ``expression`` matches without the text of observations expired by ``now``
    (UTC seconds): by name or type in ``entity_fts``, or by a current observation in ``observation_fts``
    (docs/lifecycle.md "Expiry").

    Raises:
        ValidationError: as :func:`matches`.
    """
    kept = {i for i, _ in matches(conn, "entity_fts", expression, only_ids=entity_ids,
                                  columns=("name", "entity_type"))}
    listed = json.dumps([int(i) for i in entity_ids])
    if on_postgres(conn):
        live = [int(r[0]) for r in conn.execute(_LIVE_OF_ENTITIES.format(live=current("?2")), (listed, now))]
        matched = [i for i, _ in matches(conn, "observation_fts", expression, only_ids=live)]
        kept |= {int(r[0]) for r in conn.execute(_ENTITIES_OF, (json.dumps(matched),))}
    else:
        kept |= {int(r[0]) for r in _matching(conn, _OBSERVATION_MATCHES.format(live=current("?3")),
                                              (expression, listed, now))}
    return kept
