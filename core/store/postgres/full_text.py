"""A full-text index on PostgreSQL that ranks exactly as SQLite's FTS5 ``bm25()`` ranks Limbic's four indexes.

**What it replaces.** ``entity_fts(name, entity_type, obs_text)``, ``observation_fts(name, content)``,
``reflection_fts(author, mood, content)`` and ``entity_cjk_fts(name, entity_type, obs_text)`` (migrations
``005_fts_porter.sql``, ``009_observation_fts.sql``, ``012_curation.sql``, ``016_cjk_fts.sql``), told apart by
``ix`` (:data:`ENTITY_FTS`, :data:`OBSERVATION_FTS`, :data:`REFLECTION_FTS`, :data:`ENTITY_CJK_FTS`). Texts
are split by FTS5's own tokenizer (``porter unicode61 remove_diacritics 2``, through ``apsw``), so a token here is byte for byte the token FTS5 stores; queries are the pieces the search
quotes and joins with ``OR`` (``"a" OR "b c"``, a piece of several tokens being a phrase of adjacent tokens),
optionally restricted to some columns (FTS5's ``{name entity_type} : (...)``).

**Schema** (:data:`SCHEMA`, plain SQL, PostgreSQL 15 or later). One row per token, document and column in
``fts_postings`` with the token's positions in that column (for phrases), their count ``freq`` and the
document's length in tokens (all columns), the last two carried in the primary key's ``INCLUDE`` so that a
one-word piece is scored from an index-only scan of ``(ix, token)`` without visiting the table; a second
index on ``(ix, doc)`` serves deletes. ``fts_docs`` holds every document's length (rows without a single
token count as rows in FTS5 too), ``fts_terms`` the number of documents holding each token and ``fts_totals``
the row and token counts of each index, kept by :func:`write_documents` and :func:`delete_documents` in the
caller's transaction, so a query reads BM25's ``N`` and average length from one row instead of summing
60,000, and a token's document count from one row instead of counting its postings (7 ms a search at 10k). That row is written by every change of
its index: writers of one index wait for each other until commit (Limbic has one writer at a time). A
posting list per token (one row holding every document) would be smaller but rewrites a common word's whole
list on each write. Tokens longer than :data:`LONG_TOKEN` bytes are keyed by their SHA-256 (a b-tree entry
holds at most about 2,700 bytes); tokens never hold control characters, so such a key is never a real token.

**Ranking** (:func:`ranked`) is FTS5's BM25 (``ext/fts5/fts5_aux.c``, ``fts5Bm25Function``; docs/scoring.md
"Base relevance"): for a row, ``Σ_i idf_i · f_i (k1 + 1) / (f_i + k1 (1 − b + b · D / avgdl))`` over the
query's phrases, ``k1`` 1.2, ``b`` 0.75, every column weighing 1; ``f_i`` the instances of phrase ``i`` in
the row (in the filtered columns only, when there is a column filter), ``D`` the row's tokens in all
columns, ``avgdl`` the index's tokens over its rows (all columns, filter or not), ``idf_i = ln((N − n_i +
0.5) / (n_i + 0.5))`` set to 1e-6 when not positive, ``N`` the rows of the index and ``n_i`` the rows the
phrase matches (in the filtered columns). Each piece is one phrase, repeats included (``groups`` and
``group`` count twice, as in FTS5); a piece without tokens matches nothing and adds nothing. The terms are
added in phrase order in double precision as FTS5 adds them, so equal rows score bit for bit equal and
ties go to the lower id as with ``ORDER BY rank, rowid``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Collection, Sequence
from functools import lru_cache

import apsw
import psycopg
from psycopg import sql

from limbic.core.store.postgres.pipeline import pipeline
from limbic.core.store.text_search import FTS_TOKENIZER as TOKENIZER

ENTITY_FTS = 1
"""``ix`` of ``entity_fts``: columns ``name``, ``entity_type``, ``obs_text``."""
OBSERVATION_FTS = 2
"""``ix`` of ``observation_fts``: columns ``name`` (the entity's), ``content``."""
REFLECTION_FTS = 3
"""``ix`` of ``reflection_fts``: columns ``author``, ``mood``, ``content``."""
ENTITY_CJK_FTS = 4
"""``ix`` of ``entity_cjk_fts``: the columns of ``entity_fts``, CJK characters spaced into tokens of their own
(:func:`limbic.core.store.text_search.cjk_documents`)."""
COLUMNS: dict[int, tuple[str, ...]] = {
    ENTITY_FTS: ("name", "entity_type", "obs_text"),
    OBSERVATION_FTS: ("name", "content"),
    REFLECTION_FTS: ("author", "mood", "content"),
    ENTITY_CJK_FTS: ("name", "entity_type", "obs_text"),
}
"""The column names of each index, in FTS5's order (column positions count from 0)."""

BM25_K1 = 1.2
"""FTS5's ``bm25()`` k1 (``ext/fts5/fts5_aux.c``)."""
BM25_B = 0.75
"""FTS5's ``bm25()`` b (``ext/fts5/fts5_aux.c``)."""
LONG_TOKEN = 512
PIPELINED_POSTINGS = 2_000
"""A write of at most this many postings sends its statements in one pipeline (one round trip, rows as arrays);
a larger one (an import's batch) streams its rows with ``COPY``, which a pipeline cannot hold."""
"""Tokens of more UTF-8 bytes than this are stored and looked up by digest (see the module docstring)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS fts_postings (
    ix        smallint NOT NULL,
    token     text COLLATE "C" NOT NULL,
    doc       bigint NOT NULL,
    col       smallint NOT NULL,
    freq      integer NOT NULL,
    length    integer NOT NULL,
    positions integer[] NOT NULL,
    PRIMARY KEY (ix, token, doc, col) INCLUDE (freq, length)
);
CREATE INDEX IF NOT EXISTS fts_postings_doc ON fts_postings (ix, doc);
CREATE TABLE IF NOT EXISTS fts_docs (
    ix     smallint NOT NULL,
    doc    bigint NOT NULL,
    length integer NOT NULL,
    PRIMARY KEY (ix, doc)
);
CREATE TABLE IF NOT EXISTS fts_terms (
    ix    smallint NOT NULL,
    token text COLLATE "C" NOT NULL,
    docs  bigint NOT NULL,
    PRIMARY KEY (ix, token)
);
CREATE TABLE IF NOT EXISTS fts_totals (
    ix     smallint PRIMARY KEY,
    rows   bigint NOT NULL,
    tokens bigint NOT NULL
);
"""
"""The index's tables (idempotent): ``fts_postings`` (token positions per document and column),
``fts_docs`` (document lengths in tokens), ``fts_terms`` (documents holding each token, FTS5's ``fts5vocab``
``row`` count) and ``fts_totals`` (rows and tokens per index)."""


def create_schema(conn: psycopg.Connection) -> None:
    """Create the index's tables and indexes when missing (:data:`SCHEMA`), in the caller's transaction."""
    conn.execute(SCHEMA)


@lru_cache(maxsize=1)
def _tokenizer() -> apsw.FTS5Tokenizer:
    return apsw.Connection(":memory:").fts5_tokenizer(TOKENIZER[0], list(TOKENIZER[1:]))


def _tokens(text: str, reason: int) -> list[str]:
    found = _tokenizer()(text.encode("utf-8"), reason, None, include_offsets=False, include_colocated=False)
    return [str(token) for token in found]


def document_tokens(text: str) -> list[str]:
    """The tokens FTS5 stores for ``text`` (``FTS5_TOKENIZE_DOCUMENT``), in order: lower-cased, accents
    removed, stemmed (``"Groups of Élan"`` → ``["group", "of", "elan"]``). Position = index in the list."""
    return _tokens(text, apsw.FTS5_TOKENIZE_DOCUMENT)


def query_tokens(piece: str) -> list[str]:
    """The tokens of one query piece (``FTS5_TOKENIZE_QUERY``): one token is a word, several a phrase
    (``"a:b"`` → ``["a", "b"]``), none a piece that matches nothing."""
    return _tokens(piece, apsw.FTS5_TOKENIZE_QUERY)


def _key(token: str) -> str:
    data = token.encode("utf-8")
    return token if len(data) <= LONG_TOKEN else "\x01" + hashlib.sha256(data).hexdigest()


def _columns_of(ix: int) -> tuple[str, ...]:
    if ix not in COLUMNS:
        raise ValueError(f"unknown full-text index {ix!r}; expected one of {sorted(COLUMNS)}")
    return COLUMNS[ix]


def _ids(ids: Collection[int]) -> list[int]:
    return [int(i) for i in ids]


def delete_documents(conn: psycopg.Connection, ix: int, ids: Collection[int]) -> None:
    """Remove documents ``ids`` (any not indexed are ignored) from index ``ix`` and their rows and tokens
    from its totals, in the caller's transaction.

    Raises:
        ValueError: ``ix`` is not one of :data:`COLUMNS`.
    """
    _columns_of(ix)
    listed = _ids(ids)
    if not listed:
        return
    conn.execute(
        "WITH gone AS (DELETE FROM fts_postings WHERE ix = %(ix)s AND doc = ANY(%(ids)s) RETURNING token, doc), "
        "per AS (SELECT token, count(DISTINCT doc) AS n FROM gone GROUP BY token) "
        "UPDATE fts_terms t SET docs = t.docs - per.n FROM per WHERE t.ix = %(ix)s AND t.token = per.token",
        {"ix": ix, "ids": listed})
    conn.execute(
        "WITH gone AS (DELETE FROM fts_docs WHERE ix = %(ix)s AND doc = ANY(%(ids)s) RETURNING length) "
        "UPDATE fts_totals SET rows = rows - (SELECT count(*) FROM gone), "
        "tokens = tokens - (SELECT coalesce(sum(length), 0) FROM gone) "
        "WHERE ix = %(ix)s AND EXISTS (SELECT FROM gone)",  # no row version when nothing was indexed
        {"ix": ix, "ids": listed})


def write_documents(conn: psycopg.Connection, ix: int, docs: Sequence[tuple[int, Sequence[str | None]]],
                    clear: Sequence[int] = ()) -> None:
    """Index ``docs`` — ``(id, column texts)`` with one text (or None, indexed as empty) per column of
    :data:`COLUMNS` ``[ix]`` — in index ``ix``, replacing what those ids held, and keep its totals; in the
    caller's transaction (FTS5's ``INSERT`` after a ``DELETE`` of the same rowids). The documents of the same
    ids are removed from each index of ``clear`` in the same round trip (:func:`delete_documents`).

    Raises:
        ValueError: ``ix`` is unknown, a document has not one text per column, or an id is repeated.
    """
    names = _columns_of(ix)
    ids = _ids([doc for doc, _ in docs])
    if len(set(ids)) != len(ids):
        raise ValueError("a document id is given twice")
    postings: list[tuple[int, str, int, int, int, int, list[int]]] = []
    lengths: list[tuple[int, int, int]] = []
    for doc, texts in zip(ids, (texts for _, texts in docs), strict=True):
        if len(texts) != len(names):
            raise ValueError(f"document {doc} has {len(texts)} column texts; index {ix} has {len(names)} columns")
        length = 0
        rows: list[tuple[str, int, list[int]]] = []
        for col, text in enumerate(texts):
            positions: dict[str, list[int]] = {}
            tokens = document_tokens(text or "")
            for position, token in enumerate(tokens):
                positions.setdefault(_key(token), []).append(position)
            length += len(tokens)
            rows.extend((token, col, found) for token, found in positions.items())
        postings.extend((ix, token, doc, col, len(found), length, found) for token, col, found in rows)
        lengths.append((ix, doc, length))
    if not lengths:
        return
    holding = Counter(token for _, token in {(p[2], p[1]) for p in postings})  # documents holding each token
    if len(postings) > PIPELINED_POSTINGS:  # an import's batch: COPY streams the rows
        for other in (ix, *clear):
            delete_documents(conn, other, ids)
        with conn.cursor() as cur:
            with cur.copy("COPY fts_postings (ix, token, doc, col, freq, length, positions) FROM STDIN") as copy:
                for row in postings:
                    copy.write_row(row)
            with cur.copy("COPY fts_docs (ix, doc, length) FROM STDIN") as copy:
                for entry in lengths:
                    copy.write_row(entry)
        _count(conn, ix, holding, lengths)
        return
    with pipeline(conn):  # a write's few documents: every statement in one round trip
        for other in (ix, *clear):
            delete_documents(conn, other, ids)
        conn.execute(
            "INSERT INTO fts_postings (ix, token, doc, col, freq, length, positions) "
            "SELECT %s, t, d, c, f, n, p::integer[] FROM unnest(%s::text[], %s::bigint[], %s::smallint[], "
            "%s::integer[], %s::integer[], %s::text[]) AS u(t, d, c, f, n, p)",
            (ix, [p[1] for p in postings], [p[2] for p in postings], [p[3] for p in postings],
             [p[4] for p in postings], [p[5] for p in postings],
             ["{" + ",".join(map(str, p[6])) + "}" for p in postings]))
        conn.execute("INSERT INTO fts_docs (ix, doc, length) SELECT %s, unnest(%s::bigint[]), unnest(%s::integer[])",
                     (ix, [doc for _, doc, _ in lengths], [length for _, _, length in lengths]))
        _count(conn, ix, holding, lengths)


def _count(conn: psycopg.Connection, ix: int, holding: Counter[str], lengths: list[tuple[int, int, int]]) -> None:
    """Add newly written documents to ``fts_terms`` (``holding``: documents per token) and ``fts_totals``."""
    conn.execute(
        "INSERT INTO fts_terms (ix, token, docs) SELECT %s, unnest(%s::text[]), unnest(%s::bigint[]) "
        "ON CONFLICT (ix, token) DO UPDATE SET docs = fts_terms.docs + excluded.docs",
        (ix, list(holding), list(holding.values())))
    conn.execute(
        "INSERT INTO fts_totals (ix, rows, tokens) VALUES (%s, %s, %s) ON CONFLICT (ix) DO UPDATE "
        "SET rows = fts_totals.rows + excluded.rows, tokens = fts_totals.tokens + excluded.tokens",
        (ix, len(lengths), sum(length for _, _, length in lengths)))


def row_count(conn: psycopg.Connection, ix: int) -> int:
    """Documents in index ``ix`` (FTS5's row count; 0 when empty). Raises ValueError for an unknown ``ix``."""
    _columns_of(ix)
    return row_counts(conn).get(ix, 0)


def row_counts(conn: psycopg.Connection) -> dict[int, int]:
    """Documents in each index, ``{ix: rows}`` (an index never written is left out)."""
    return {int(ix): int(rows) for ix, rows in conn.execute("SELECT ix, rows FROM fts_totals")}


def statistics(conn: psycopg.Connection, tokens: Collection[str]) -> tuple[dict[int, int], dict[int, dict[str, int]]]:
    """:func:`row_counts` and, for every index, :func:`document_frequencies` of ``tokens``, in one statement
    (what a search asks of both indexes before it ranks)."""
    keys = {_key(token): token for token in tokens}
    rows: dict[int, int] = {}
    frequencies: dict[int, dict[str, int]] = {ix: {} for ix in COLUMNS}
    for ix, token, count in conn.execute(
            "SELECT ix, NULL::text, rows FROM fts_totals UNION ALL "
            "SELECT ix, token, docs FROM fts_terms WHERE ix = ANY(%s) AND token = ANY(%s) AND docs > 0",
            (sorted(COLUMNS), list(keys))):
        if token is None:
            rows[int(ix)] = int(count)
        else:
            frequencies[int(ix)][keys[token]] = int(count)
    return rows, frequencies


def document_frequencies(conn: psycopg.Connection, ix: int, tokens: Collection[str]) -> dict[str, int]:
    """Documents of index ``ix`` holding each of ``tokens`` (as :func:`query_tokens` makes them) in any
    column, as FTS5's ``fts5vocab`` ``row`` table counts them; tokens no document holds are left out.
    Raises ValueError for an unknown ``ix``."""
    _columns_of(ix)
    return statistics(conn, tokens)[1][ix] if tokens else {}


def _phrase_hits(number: int, length: int, column_filter: bool) -> sql.Composed:
    """``(phrase, doc, f, length)`` of every document matching phrase ``number`` of ``length`` tokens:
    ``f`` its instances (positions ``p`` of the first token with token ``k`` at ``p + k`` in the same column)."""
    def token(k: int) -> sql.Placeholder:
        return sql.Placeholder(f"t{number}_{k}")
    where = sql.SQL(" AND p0.col = ANY(%(cols)s)") if column_filter else sql.SQL("")
    if length == 1:
        return sql.SQL("SELECT {n} AS phrase, p0.doc, sum(p0.freq)::float8 AS f, min(p0.length) AS length "
                       "FROM fts_postings p0 WHERE p0.ix = %(ix)s AND p0.token = {t}{where} GROUP BY p0.doc").format(
            n=sql.Literal(number), t=token(0), where=where)
    joins = sql.SQL(" ").join(
        sql.SQL("JOIN fts_postings {p} ON {p}.ix = p0.ix AND {p}.token = {t} AND {p}.doc = p0.doc "
                "AND {p}.col = p0.col").format(p=sql.Identifier(f"p{k}"), t=token(k)) for k in range(1, length))
    adjacent = sql.SQL(" AND ").join(
        sql.SQL("s.pos + {k} = ANY({p}.positions)").format(k=sql.Literal(k), p=sql.Identifier(f"p{k}"))
        for k in range(1, length))
    return sql.SQL(
        "SELECT phrase, doc, f, length FROM (SELECT {n} AS phrase, p0.doc, "
        "sum((SELECT count(*) FROM unnest(p0.positions) AS s(pos) WHERE {adjacent}))::float8 AS f, "
        "min(p0.length) AS length FROM fts_postings p0 {joins} "
        "WHERE p0.ix = %(ix)s AND p0.token = {t}{where} GROUP BY p0.doc) AS m WHERE f > 0").format(
        n=sql.Literal(number), adjacent=adjacent, joins=joins, t=token(0), where=where)


# BM25 term by term in fts5Bm25Function's order of operations, summed in phrase order
_RANKED = """
WITH totals AS (
    SELECT rows, tokens::float8 / rows::float8 AS avgdl FROM fts_totals WHERE ix = %(ix)s AND rows > 0),
hits AS MATERIALIZED ({hits}),
idf AS (
    SELECT phrase, CASE WHEN w <= 0 THEN 1e-6::float8 ELSE w END AS w FROM (
        SELECT h.phrase, ln(((t.rows - count(*))::float8 + 0.5::float8) / (count(*)::float8 + 0.5::float8)) AS w
        FROM hits h CROSS JOIN totals t GROUP BY h.phrase, t.rows) AS raw),
scored AS (
    SELECT h.doc, sum(i.w * ((h.f * (%(k1)s + 1.0::float8)) / (h.f + %(k1)s * ((1.0::float8 - %(b)s)
        + (%(b)s * h.length::float8) / t.avgdl))) ORDER BY h.phrase) AS score
    FROM hits h JOIN idf i ON i.phrase = h.phrase CROSS JOIN totals t{only}
    GROUP BY h.doc)
SELECT doc, score FROM scored ORDER BY score DESC, doc LIMIT %(limit)s
"""


def ranked(conn: psycopg.Connection, ix: int, pieces: Sequence[str], limit: int | None, *,
           only_ids: Collection[int] | None = None, columns: Collection[int] | None = None) -> list[tuple[int, float]]:
    """The documents of index ``ix`` matching any of ``pieces`` (unquoted query pieces, each one phrase:
    :func:`query_tokens`) as ``(id, score)``, best first, ties to the lower id, at most ``limit`` (None: all).

    ``score`` is FTS5's ``bm25()`` sign flipped (larger is better; see the module docstring), the value
    ``-rank`` of ``SELECT rowid, -rank FROM t WHERE t MATCH '"p1" OR "p2"' ORDER BY rank, rowid``.
    ``only_ids`` keeps only those documents (FTS5's ``AND +rowid IN (...)``: ``N`` and ``n_i`` still count the
    whole index). ``columns`` (positions in :data:`COLUMNS` ``[ix]``, from 0) matches only in those columns,
    FTS5's ``{name entity_type} : (...)`` filter, which counts ``f_i`` and ``n_i`` in those columns only.

    Raises:
        ValueError: ``ix`` is unknown, ``limit`` is negative, or a column position is out of range.
    """
    names = _columns_of(ix)
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be at least 0, got {limit}")
    wanted = None if columns is None else sorted({int(c) for c in columns})
    if wanted is not None and any(not 0 <= c < len(names) for c in wanted):
        raise ValueError(f"column positions {wanted} outside index {ix}'s {len(names)} columns")
    phrases = [tokens for tokens in (query_tokens(piece) for piece in pieces) if tokens]
    if not phrases or limit == 0 or wanted == [] or (only_ids is not None and not only_ids):
        return []
    params: dict[str, object] = {"ix": ix, "k1": BM25_K1, "b": BM25_B, "limit": limit, "cols": wanted}
    for number, tokens in enumerate(phrases):
        params.update({f"t{number}_{k}": _key(token) for k, token in enumerate(tokens)})
    only = sql.SQL("")
    if only_ids is not None:
        only = sql.SQL(" JOIN unnest(%(only)s::bigint[]) AS o(doc) ON o.doc = h.doc")  # a hash join, not ANY per hit
        params["only"] = sorted(set(_ids(only_ids)))
    hits = sql.SQL(" UNION ALL ").join(_phrase_hits(number, len(tokens), wanted is not None)
                                       for number, tokens in enumerate(phrases))
    query = sql.SQL(_RANKED).format(hits=hits, only=only)
    return [(int(doc), float(score)) for doc, score in conn.execute(query, params)]
