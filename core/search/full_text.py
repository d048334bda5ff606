"""The full-text branch of search: the FTS5 query for a user's text, its BM25 ceilings, and its best rows.

:func:`full_text_query` turns the text into a safe expression (:mod:`limbic.core.search.fts`) with the
document frequencies of its words, read from per-connection ``fts5vocab`` tables in the ``temp`` schema
(nothing is written to the database file). :func:`ranked_matches` returns the best rows by FTS5's
BM25, scoring the rows that hold a rare word first (MaxScore, exact: README "Search and the limbic re-ranker").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import apsw

from limbic.core.errors import ValidationError
from limbic.core.search.fts import (
    bm25_ceiling,
    fts_terms,
    informative_terms,
    match_expression,
    split_common,
    tokenizer,
)

# per-connection fts5vocab tables over each full-text index (temp schema: nothing is written)
_VOCAB = {"entity_fts": "limbic_fts_vocab", "observation_fts": "limbic_observation_fts_vocab"}


def document_frequencies(conn: apsw.Connection, table: str, tokens: str) -> dict[str, int]:
    """Rows of FTS5 ``table`` holding each of ``tokens`` (a JSON list), through a per-connection ``fts5vocab``
    table in the ``temp`` schema (nothing is written to the database file)."""
    vocab = _VOCAB[table]
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, '{table}', 'row')")
    return dict(conn.execute(f"SELECT term, doc FROM temp.{vocab} WHERE term IN (SELECT value FROM json_each(?))",
                             (tokens,)))


@dataclass(frozen=True, slots=True)
class FullText:
    """The FTS5 ``expression`` of a query, the BM25 ceilings of its pieces in ``entity_fts`` and
    ``observation_fts``, and its rare pieces' expression with the bound on what its common pieces alone
    score (:func:`limbic.core.search.fts.split_common`; ``rare`` None when there is no such split)."""

    expression: str | None = None
    ceiling: float = 0.0
    observation_ceiling: float = 0.0
    rare: str | None = None
    common_bound: float = 0.0


def full_text_query(conn: apsw.Connection, query: str) -> FullText:
    """The FTS5 expression for ``query``, leaving out pieces too common to rank (see :mod:`limbic.core.fts`),
    and the BM25 ceilings of the pieces kept (:func:`limbic.core.search.fts.bm25_ceiling`) in ``entity_fts``
    and in ``observation_fts``."""
    terms = fts_terms(query)
    if not terms:
        return FullText()
    tokenize = tokenizer(conn)
    wanted = json.dumps(sorted({token for term in terms for token in tokenize(term)}))
    frequency = document_frequencies(conn, "entity_fts", wanted)
    total = conn.execute("SELECT count(*) FROM entities").get
    if len(terms) > 1:
        terms = informative_terms(terms, frequency, total, tokenize)
    observation_total = conn.execute("SELECT count(*) FROM observations").get
    observation_ceiling = bm25_ceiling(terms, document_frequencies(conn, "observation_fts", wanted),
                                       observation_total, tokenize)
    rare, common_bound = split_common(terms, frequency, total, tokenize)
    return FullText(match_expression(terms), bm25_ceiling(terms, frequency, total, tokenize), observation_ceiling,
                     match_expression(rare), common_bound)


def matching(conn: apsw.Connection, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The rows of a full-text ``MATCH`` query. The expression is built to be valid; should SQLite still
    refuse it, the caller gets a ValidationError without SQLite's message."""
    try:
        return conn.execute(sql, args).fetchall()
    except apsw.SQLError as exc:
        raise ValidationError("the query could not be searched as text; try other words") from exc


# BM25 of the whole expression, computed only for the rows that match a rare piece
_RARE_ROWS = """
SELECT rowid, -bm25(entity_fts) FROM entity_fts
WHERE entity_fts MATCH ?1 AND +rowid IN (SELECT rowid FROM entity_fts WHERE entity_fts MATCH ?2)
"""
# ``rank, rowid``: SQLite's sorter keeps the best ``LIMIT`` rows as it goes, faster than FTS5's own
# ``ORDER BY rank`` (18 against 32 ms for 35,000 matches at all of Debian), with ties to the lower id
_ALL_ROWS = "SELECT rowid, -rank FROM entity_fts WHERE entity_fts MATCH ? ORDER BY rank, rowid LIMIT ?"


def ranked_matches(conn: apsw.Connection, full_text: FullText, count: int) -> tuple[list[int], dict[int, float]]:
    """The ``count`` best ids, best first, and their BM25 scores, sign flipped (larger is better; ``rank``
    is FTS5's ``bm25()``), ties to the lower id. When the rows matching a rare piece hold ``count`` rows
    scoring above what the common pieces alone can reach, only they are scored (exact: MaxScore, see
    :func:`limbic.core.search.fts.split_common`); otherwise every match is."""
    if full_text.expression is None:
        return [], {}
    if full_text.rare is not None and count > 0:
        rows = matching(conn, _RARE_ROWS, (full_text.expression, full_text.rare))
        if len(rows) >= count:
            rows.sort(key=lambda row: (-row[1], row[0]))
            if rows[count - 1][1] > full_text.common_bound * (1.0 + 1e-6) + 1e-9:
                scored = [(int(rowid), float(score)) for rowid, score in rows[:count]]
                return [rowid for rowid, _ in scored], dict(scored)
    rows = matching(conn, _ALL_ROWS, (full_text.expression, count))
    scored = [(int(rowid), float(score)) for rowid, score in rows]
    return [rowid for rowid, _ in scored], dict(scored)
