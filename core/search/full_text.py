"""The full-text branch of search: user text to a safe FTS5 query, its BM25 ceilings, and its best rows.

**Safe expressions.** The text is split on white space; each piece becomes one quoted FTS5 string (``"``
doubled inside), so ``*``, ``-x``, ``a:b``, ``NEAR(``, ``AND``/``OR``/``NOT``, parentheses and ``^`` are plain
text (user text is never FTS syntax). A quoted piece such as ``"a:b"`` is a phrase: the tokenizer splits it into
``a`` ``b`` and matches them adjacent; the index stems English words (``groups`` matches ``group``). Pieces are
joined with ``OR`` so BM25 ranks rows by how many and how rare the matched words are (candidate retrieval wants
recall; the re-ranker orders them). Control characters (NUL included, which FTS5 rejects) and lone surrogates
become spaces; pieces with no letter or digit (only punctuation or emoji, which the tokenizer drops) are left
out. Text longer than 2,000 characters (``validation.MAX_QUERY``) raises
:class:`~limbic.core.errors.ValidationError`.

**Common pieces.** FTS5's BM25 clamps the IDF of a token found in half of the rows or more to 1e-6, so such a
piece does not change the order of rows matched by rarer pieces, yet every row containing it must be scored:
:func:`informative_terms` leaves those pieces out when a rarer one remains.

**Best rows.** :func:`full_text_query` reads the document frequencies of the query's words from per-connection
``fts5vocab`` tables in the ``temp`` schema (nothing is written to the database file); :func:`ranked_matches`
returns the best rows by FTS5's BM25, scoring the rows that hold a rare word first (MaxScore, exact:
docs/architecture.md "The search pipeline").
"""


from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import apsw

from limbic.core.errors import ValidationError
from limbic.core.store.postgres import full_text as pg_text
from limbic.core.store.postgres.connection import on_postgres
from limbic.core.validation import MAX_QUERY

FTS_TOKENIZER = ("porter", "unicode61", "remove_diacritics", "2")
"""The ``entity_fts`` tokenizer (migration ``005_fts_porter.sql``): Porter stemming over ``unicode61``
with diacritics removed; measured against plain ``unicode61`` in docs/scoring.md "Full-text index"."""


BM25_K1 = 1.2
"""FTS5's ``bm25()`` k1 (``ext/fts5/fts5_aux.c``): a term's weight in a row stays below ``idf × (k1 + 1)``."""
COMMON_SHARE = 0.05
"""One-word pieces in at least this share of the rows are scored last (:func:`split_common`)."""


def _clean(text: str) -> str:
    return "".join(" " if unicodedata.category(ch) in ("Cc", "Cs") else ch for ch in text)


def fts_terms(text: str) -> list[str]:
    """The white-space separated pieces of ``text`` that contain at least one letter or digit, in order, without repeats.

    Raises:
        ValidationError: ``text`` is not a string or longer than 2,000 characters.
    """
    if not isinstance(text, str):
        raise ValidationError(f"search text must be a string, got {type(text).__name__}")
    if len(text) > MAX_QUERY:
        raise ValidationError(f"query is {len(text):,} characters long; the limit is {MAX_QUERY:,}")
    terms: list[str] = []
    for piece in _clean(text).split():
        if any(ch.isalnum() for ch in piece) and piece not in terms:
            terms.append(piece)
    return terms


def tokenizer(conn: apsw.Connection) -> Callable[[str], list[str]]:
    """The index's own tokenizer (:data:`FTS_TOKENIZER`, through ``apsw``) as a function from a piece of
    query text to its tokens, exactly as FTS5 stores them (lower-cased, accents removed, stemmed); the same
    tokenizer on PostgreSQL, whose index is written with it."""
    if on_postgres(conn):
        return pg_text.query_tokens
    tokenize = conn.fts5_tokenizer(FTS_TOKENIZER[0], list(FTS_TOKENIZER[1:]))

    def run(term: str) -> list[str]:
        found = tokenize(term.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None,
                         include_offsets=False, include_colocated=False)
        return [str(token) for token in found]

    return run


def informative_terms(terms: Sequence[str], document_frequency: Mapping[str, int], total_rows: int,
                      tokenize: Callable[[str], list[str]]) -> list[str]:
    """The pieces whose rarest token is in fewer than half of ``total_rows`` rows (BM25 IDF above FTS5's clamp).

    ``document_frequency`` maps tokens (as ``tokenize`` makes them, see :func:`tokenizer`) to the number
    of rows containing them (absent = 0). When every piece is common, all are kept: the query asks for
    common words and gets them.
    """
    kept = [term for term in terms if 2 * _rarest_frequency(term, document_frequency, tokenize) < total_rows]
    return kept or list(terms)


def _rarest_frequency(term: str, document_frequency: Mapping[str, int], tokenize: Callable[[str], list[str]]) -> int:
    return min((document_frequency.get(token, 0) for token in tokenize(term)), default=0)


def bm25_ceiling(terms: Sequence[str], document_frequency: Mapping[str, int], total_rows: int,
                 tokenize: Callable[[str], list[str]]) -> float:
    """What a row matching each of ``terms`` once would score with FTS5's BM25 (docs/scoring.md "Base relevance").

    ``Σ idf`` over the pieces the index contains, with FTS5's ``idf = ln((N − n + 0.5) / (n + 0.5))``
    (``N`` = ``total_rows``, ``n`` = rows holding the piece's rarest token; clamped at 1e-6 as FTS5 does):
    the BM25 of a row of average length with each term once. Pieces no row contains cannot be matched
    and add nothing; ``0.0`` when none is in the index.
    """
    ceiling = 0.0
    for term in terms:
        rows = _rarest_frequency(term, document_frequency, tokenize)
        if rows > 0:
            ceiling += max(1e-6, math.log((total_rows - rows + 0.5) / (rows + 0.5)))
    return ceiling


def split_common(terms: Sequence[str], document_frequency: Mapping[str, int], total_rows: int,
                 tokenize: Callable[[str], list[str]]) -> tuple[list[str], float]:
    """The pieces to find rows by, and the most BM25 a row can score from the common pieces alone (MaxScore).

    A one-word piece in at least :data:`COMMON_SHARE` of the rows is *common*: a row matching only common
    pieces scores below ``(k1 + 1) × Σ idf`` over them (FTS5's BM25 saturates each term's weight below
    ``k1 + 1``; ``idf`` as in :func:`bm25_ceiling`). Scoring the rows that match a rare piece first, with
    the whole expression, gives the exact top rows whenever the last of them scores above that bound
    (:func:`ranked_matches` scores every match otherwise). Returns ``([], 0.0)``
    when no piece is common or every piece is.
    """
    common: list[str] = []
    bound = 0.0
    for term in terms:
        tokens = tokenize(term)
        rows = document_frequency.get(tokens[0], 0) if len(tokens) == 1 else 0
        if total_rows > 0 and rows >= COMMON_SHARE * total_rows:
            common.append(term)
            bound += (BM25_K1 + 1.0) * max(1e-6, math.log((total_rows - rows + 0.5) / (rows + 0.5)))
    rare = [term for term in terms if term not in common]
    if not common or not rare:
        return [], 0.0
    return rare, bound


def quote_term(term: str) -> str:
    """One FTS5 string literal: ``term`` in double quotes, inner double quotes doubled."""
    return '"' + term.replace('"', '""') + '"'


def match_expression(terms: Sequence[str]) -> str | None:
    """Quoted ``terms`` joined with ``OR``, or ``None`` when there are none."""
    return " OR ".join(quote_term(term) for term in terms) if terms else None


def fts_match_expression(text: str) -> str | None:
    """A safe FTS5 ``MATCH`` expression for ``text`` (quoted pieces joined with ``OR``), or ``None``
    when ``text`` has nothing searchable (empty, white space, only punctuation).

    Raises:
        ValidationError: ``text`` is not a string or longer than 2,000 characters.
    """
    return match_expression(fts_terms(text))


_PG_INDEX = {"entity_fts": pg_text.ENTITY_FTS, "observation_fts": pg_text.OBSERVATION_FTS,
             "reflection_fts": pg_text.REFLECTION_FTS}


def pieces_of(expression: str) -> list[str]:
    """The pieces of an expression :func:`match_expression` made (the inverse of its quoting and ``OR``)."""
    return [piece[1:-1].replace('""', '"') for piece in _QUOTED.findall(expression)]


_QUOTED = re.compile(r'"(?:[^"]|"")*"')


def pg_matches(conn: apsw.Connection, table: str, expression: str, limit: int | None = None, *,
               only_ids: Sequence[int] | None = None, columns: Sequence[int] | None = None) -> list[tuple[int, float]]:
    """On PostgreSQL: ``(row id, −bm25)`` of the rows of ``table`` matching ``expression``, best first, ties to
    the lower id, as FTS5 ranks them (:mod:`limbic.core.store.postgres.full_text`); ``only_ids`` and
    ``columns`` (positions from 0) as FTS5's ``+rowid IN (…)`` and ``{col …} :`` filters."""
    return pg_text.ranked(conn.raw, _PG_INDEX[table], pieces_of(expression), limit,  # type: ignore[attr-defined]
                          only_ids=only_ids, columns=columns)


# per-connection fts5vocab tables over each full-text index (temp schema: nothing is written)
_VOCAB = {"entity_fts": "limbic_fts_vocab", "observation_fts": "limbic_observation_fts_vocab"}


def document_frequencies(conn: apsw.Connection, table: str, tokens: str) -> dict[str, int]:
    """Rows of FTS5 ``table`` holding each of ``tokens`` (a JSON list), through a per-connection ``fts5vocab``
    table in the ``temp`` schema (nothing is written to the database file)."""
    if on_postgres(conn):
        return pg_text.document_frequencies(conn.raw, _PG_INDEX[table], json.loads(tokens))  # type: ignore[attr-defined]
    vocab = _VOCAB[table]
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, '{table}', 'row')")
    return dict(conn.execute(f"SELECT term, doc FROM temp.{vocab} WHERE term IN (SELECT value FROM json_each(?))",
                             (tokens,)))


@dataclass(frozen=True, slots=True)
class FullText:
    """The FTS5 ``expression`` of a query, the BM25 ceilings of its pieces in ``entity_fts`` and
    ``observation_fts``, and its rare pieces' expression with the bound on what its common pieces alone
    score (:func:`split_common`; ``rare`` None when there is no such split)."""

    expression: str | None = None
    ceiling: float = 0.0
    observation_ceiling: float = 0.0
    rare: str | None = None
    common_bound: float = 0.0


def full_text_query(conn: apsw.Connection, query: str) -> FullText:
    """The FTS5 expression for ``query``, leaving out pieces too common to rank (:func:`informative_terms`),
    and the BM25 ceilings of the pieces kept (:func:`bm25_ceiling`) in ``entity_fts``
    and in ``observation_fts``."""
    terms = fts_terms(query)
    if not terms:
        return FullText()
    tokenize = tokenizer(conn)
    wanted = json.dumps(sorted({token for term in terms for token in tokenize(term)}))
    frequency = document_frequencies(conn, "entity_fts", wanted)
    total = _rows(conn, "entity_fts", "entities")
    if len(terms) > 1:
        terms = informative_terms(terms, frequency, total, tokenize)
    observation_total = _rows(conn, "observation_fts", "observations")
    observation_ceiling = bm25_ceiling(terms, document_frequencies(conn, "observation_fts", wanted),
                                       observation_total, tokenize)
    rare, common_bound = split_common(terms, frequency, total, tokenize)
    return FullText(match_expression(terms), bm25_ceiling(terms, frequency, total, tokenize), observation_ceiling,
                     match_expression(rare), common_bound)


def _rows(conn: apsw.Connection, table: str, rows: str) -> int:
    """Rows of the table whose full-text index is ``table`` (FTS5's N counts them all); on PostgreSQL the
    index's own count, kept as it is written (``count(*)`` there scans the table)."""
    if on_postgres(conn):
        return pg_text.row_count(conn.raw, _PG_INDEX[table])  # type: ignore[attr-defined]
    return int(conn.execute(f"SELECT count(*) FROM {rows}").get)


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
    :func:`split_common`); otherwise every match is."""
    if full_text.expression is None:
        return [], {}
    if on_postgres(conn):
        scored = pg_matches(conn, "entity_fts", full_text.expression, count)
        return [rowid for rowid, _ in scored], dict(scored)
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
