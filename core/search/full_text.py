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

**Chinese, Japanese and Korean.** FTS5's ``unicode61`` keeps a run of Han, kana or Hangul characters as one
token, so ``"提示词"`` is not found inside ``"系统提示词外置化"``. The pieces holding such characters are also
looked up in ``entity_cjk_fts`` (:data:`~limbic.core.store.text_search.CJK_TABLE`), where every one of those
characters is a token: the piece becomes the phrase of its characters and matches wherever they stand together,
however short. An entity's score is its BM25 in ``entity_fts`` plus its BM25 in ``entity_cjk_fts`` (each index's
own N and lengths), the ceiling the sum of both ceilings; a query without such characters never reads the second
index, so its rows and scores are those of ``entity_fts`` alone.

**Best rows.** :func:`full_text_query` reads the document frequencies of the query's words from per-connection
``fts5vocab`` tables in the ``temp`` schema (nothing is written to the database file); :func:`ranked_matches`
returns the best rows by FTS5's BM25, scoring the rows that hold a rare word first (MaxScore, exact:
docs/architecture.md "The search pipeline").
"""


from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from limbic.core.errors import ValidationError
from limbic.core.store import Connection, text_search
from limbic.core.store.text_search import CJK_TABLE, FTS_TOKENIZER, has_cjk, spaced_cjk
from limbic.core.validation import MAX_QUERY

__all__ = ["FTS_TOKENIZER", "FullText", "fts_match_expression", "fts_terms", "full_text_query", "ranked_matches"]


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



def informative_terms(terms: Sequence[str], document_frequency: Mapping[str, int], total_rows: int,
                      tokenize: Callable[[str], list[str]]) -> list[str]:
    """The pieces whose rarest token is in fewer than half of ``total_rows`` rows (BM25 IDF above FTS5's clamp).

    ``document_frequency`` maps tokens (as ``tokenize`` makes them, see :func:`limbic.core.store.text_search.tokenizer`) to the number
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


@dataclass(frozen=True, slots=True)
class FullText:
    """The FTS5 ``expression`` of a query, the BM25 ceilings of its pieces in ``entity_fts`` (plus, for its CJK
    pieces, in ``entity_cjk_fts``) and ``observation_fts``, and its rare pieces' expression with the bound on
    what its common pieces alone score (:func:`split_common`; ``rare`` None when there is no such split).
    ``cjk_pieces``: the pieces holding CJK characters, as typed; ``cjk_expression`` their expression in
    ``entity_cjk_fts`` (None when there are none)."""

    expression: str | None = None
    ceiling: float = 0.0
    observation_ceiling: float = 0.0
    rare: str | None = None
    common_bound: float = 0.0
    cjk_pieces: tuple[str, ...] = ()
    cjk_expression: str | None = None


def full_text_query(conn: Connection, query: str) -> FullText:
    """The FTS5 expression for ``query``, leaving out pieces too common to rank (:func:`informative_terms`),
    and the BM25 ceilings of the pieces kept (:func:`bm25_ceiling`) in ``entity_fts``
    and in ``observation_fts``."""
    terms = fts_terms(query)
    if not terms:
        return FullText()
    tokenize = text_search.tokenizer(conn)
    wanted = sorted({token for term in terms for token in tokenize(term)})
    frequency = text_search.document_frequencies(conn, "entity_fts", wanted)
    total = text_search.row_count(conn, "entity_fts")
    if len(terms) > 1:
        terms = informative_terms(terms, frequency, total, tokenize)
    observation_total = text_search.row_count(conn, "observation_fts")
    observation_ceiling = bm25_ceiling(terms, text_search.document_frequencies(conn, "observation_fts", wanted),
                                       observation_total, tokenize)
    rare, common_bound = split_common(terms, frequency, total, tokenize)
    ceiling = bm25_ceiling(terms, frequency, total, tokenize)
    cjk_pieces = tuple(term for term in terms if has_cjk(term))
    cjk_terms = [spaced_cjk(term) for term in cjk_pieces]
    if cjk_terms:
        cjk_frequency = text_search.document_frequencies(
            conn, CJK_TABLE, sorted({token for term in cjk_terms for token in tokenize(term)}))
        ceiling += bm25_ceiling(cjk_terms, cjk_frequency, text_search.row_count(conn, CJK_TABLE), tokenize)
    return FullText(match_expression(terms), ceiling, observation_ceiling, match_expression(rare), common_bound,
                    cjk_pieces, match_expression(cjk_terms))


def ranked_matches(conn: Connection, full_text: FullText, count: int) -> tuple[list[int], dict[int, float]]:
    """The ``count`` best ids, best first, and their BM25 scores, sign flipped (larger is better; ``rank``
    is FTS5's ``bm25()``), ties to the lower id. With CJK pieces, every match of ``entity_fts`` and
    ``entity_cjk_fts`` is scored and an entity's two scores added (module docstring). Otherwise, when the rows
    matching a rare piece hold ``count`` rows scoring above what the common pieces alone can reach, only they
    are scored (exact: MaxScore, see :func:`split_common`); otherwise every match is
    (:func:`limbic.core.store.text_search.best_entities`)."""
    if full_text.expression is None:
        return [], {}
    if full_text.cjk_expression is not None:  # every match of both indexes, their BM25 added
        summed: dict[int, float] = {}
        for table, expression in (("entity_fts", full_text.expression), (CJK_TABLE, full_text.cjk_expression)):
            for rowid, score in text_search.matches(conn, table, expression):
                summed[rowid] = summed.get(rowid, 0.0) + score
        scored = sorted(summed.items(), key=lambda row: (-row[1], row[0]))[:count]
    else:
        scored = text_search.best_entities(conn, full_text.expression, count, rare=full_text.rare,
                                           common_bound=full_text.common_bound)
    return [rowid for rowid, _ in scored], dict(scored)
