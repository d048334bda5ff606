"""Reading the full-text indexes, on either engine: what search and reflections ask of ``entity_fts``,
``observation_fts`` and ``reflection_fts``.

On SQLite these are FTS5 tables (migrations ``005``/``009``/``012``); on PostgreSQL the postings of
:mod:`limbic.core.store.postgres.full_text`, written with FTS5's own tokenizer and ranked by FTS5's BM25 in
SQL, so both give the same ids, order and scores (docs/architecture.md "Storage backends"); each engine reads
its own (``conn.ops``). Expressions are the quoted pieces joined with ``OR`` that
:mod:`limbic.core.search.full_text` builds; this module never builds one from user text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from limbic.core.store.connection import Connection
from limbic.core.store.expiry import current

FTS_TOKENIZER = ("porter", "unicode61", "remove_diacritics", "2")
"""The full-text tokenizer (migration ``005_fts_porter.sql``): Porter stemming over ``unicode61`` with diacritics
removed, FTS5's on both engines; measured against plain ``unicode61`` in docs/scoring.md "Full-text index"."""


CJK_TABLE = "entity_cjk_fts"
"""The index of entities holding Chinese, Japanese or Korean text (migration ``016_cjk_fts.sql``): columns of
``entity_fts``, each :data:`CJK` character a word of its own (:func:`spaced_cjk`), so that a query's CJK piece is a
phrase of its characters and matches wherever those characters stand together, with FTS5's BM25 (docs/scoring.md
"Chinese, Japanese and Korean")."""
CJK = re.compile("[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
                 "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f]")
"""One character of a script written without spaces between words, or whose words carry their particles (Korean):
Han (CJK unified ideographs, extensions A to H, compatibility), kana, Hangul syllables and jamo."""


def has_cjk(text: str) -> bool:
    """True when ``text`` holds a :data:`CJK` character."""
    return CJK.search(text) is not None


def spaced_cjk(text: str) -> str:
    """``text`` with a space on each side of every :data:`CJK` character, so FTS5's ``unicode61`` makes each one
    a token (``"系统提示词"`` → ``" 系  统  提  示  词 "``); other text is left as it is."""
    return CJK.sub(lambda found: f" {found.group()} ", text)


def cjk_documents(rows: Sequence[tuple[int, str, str, str]]) -> list[tuple[int, str, str, str]]:
    """The rows of :data:`CJK_TABLE` for ``entity_fts`` rows ``(id, name, type, observation text)``: those holding
    a :data:`CJK` character, each text :func:`spaced_cjk`; the others have no row there (English text costs
    the index nothing)."""
    return [(eid, spaced_cjk(name), spaced_cjk(etype), spaced_cjk(text))
            for eid, name, etype, text in rows if has_cjk(name) or has_cjk(etype) or has_cjk(text)]


def tokenizer(conn: Connection) -> Callable[[str], list[str]]:
    """The index's own tokenizer (:data:`FTS_TOKENIZER`, through ``apsw``) as a function from a piece of
    query text to its tokens, exactly as FTS5 stores them (lower-cased, accents removed, stemmed)."""
    return conn.ops.tokenizer()


def document_frequencies(conn: Connection, table: str, tokens: Sequence[str]) -> dict[str, int]:
    """Rows of the full-text index ``table`` holding each of ``tokens`` (absent: none)."""
    return conn.ops.document_frequencies(table, tokens)


def row_count(conn: Connection, table: str) -> int:
    """Rows of the table whose full-text index is ``table`` (FTS5's N counts them all)."""
    return conn.ops.text_rows(table)


def matches(conn: Connection, table: str, expression: str, limit: int | None = None, *,
            only_ids: Sequence[int] | None = None, columns: Sequence[str] | None = None) -> list[tuple[int, float]]:
    """``(row id, −bm25)`` of the rows of the index ``table`` matching ``expression``, best first, ties to the
    lower id (FTS5's order); ``limit`` rows at most; ``only_ids`` keeps those rows only (``N`` and the
    document frequencies still count the whole index); ``columns`` limits the match to those columns (FTS5's
    ``{col …} :``).

    Raises:
        ValidationError: the engine refused the expression (it is built to be valid; no engine message shown).
    """
    return conn.ops.text_matches(table, expression, limit, only_ids, columns)


def best_entities(conn: Connection, expression: str, count: int, *, rare: str | None = None,
                  common_bound: float = 0.0) -> list[tuple[int, float]]:
    """The ``count`` best entities for ``expression`` in ``entity_fts``: ``(id, −bm25)``, best first, ties to
    the lower id. With ``rare`` (the expression of the query's rare pieces) an engine may score the rows
    matching it first, and keep them when ``count`` of them score above ``common_bound`` (what the common
    pieces alone can reach: exact, MaxScore — :func:`limbic.core.search.full_text.split_common`); otherwise
    every match is scored.

    Raises:
        ValidationError: as :func:`matches`.
    """
    return conn.ops.best_text_entities(expression, count, rare, common_bound)


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
    return kept | conn.ops.entities_with_current_observation_text(expression, entity_ids, now)


def entities_holding_current_text(conn: Connection, pieces: Sequence[str], entity_ids: Sequence[int],
                                  now: float) -> set[int]:
    """Those of ``entity_ids`` whose name or type holds one of ``pieces`` (exact text), or one of whose observations
    current at ``now`` (UTC seconds) does: what :func:`entities_matching_current_text` tells for the query's
    :data:`CJK` pieces, which :data:`CJK_TABLE` matches as substrings."""
    if not pieces or not entity_ids:
        return set()
    held = [f"?{n}" for n in range(3, 3 + len(pieces))]
    by_name = " OR ".join(f"{conn.ops.holds_text('name', p)} OR {conn.ops.holds_text('entity_type', p)}" for p in held)
    by_text = " OR ".join(conn.ops.holds_text("content", p) for p in held)
    rows = conn.execute(
        f"SELECT id FROM entities WHERE id IN (SELECT value FROM json_each(?1)) AND ({by_name}) UNION "
        f"SELECT entity_id FROM observations WHERE entity_id IN (SELECT value FROM json_each(?1)) "
        f"AND {current('?2')} AND ({by_text})",
        (json.dumps([int(i) for i in entity_ids]), now, *pieces))
    return {int(r[0]) for r in rows}
