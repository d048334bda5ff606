"""Expired text never matches: the full-text branch's check of entities whose row may still hold it.

An entity's ``entity_fts`` row keeps the text of an observation that expired after the entity was last
re-indexed, until the sweep (:mod:`limbic.core.store.expiry`). For such entities among the full-text
matches, the match is checked again without that text (docs/lifecycle.md "Expiry"): the expression is a
disjunction of quoted pieces (:mod:`limbic.core.search.full_text`), so the entity matches without its
expired text exactly when its name or type matches (``entity_fts`` restricted to those columns) or one of
its current observations matches in ``observation_fts``. Entities that match only through expired text
are dropped; the BM25 of those kept still counts the expired words until the sweep.
"""

from __future__ import annotations

from collections.abc import Sequence

from limbic.core.store import Connection
from limbic.core.store.expiry import unswept_entities
from limbic.core.store.text_search import entities_holding_current_text, entities_matching_current_text


def without_expired(conn: Connection, expression: str | None, ids: list[int], scores: dict[int, float],
                    now: float, cjk_pieces: Sequence[str] = ()) -> tuple[list[int], dict[int, float]]:
    """``ids`` (best first) and ``scores`` without the entities that ``expression`` matches only through the
    text of observations expired by ``now`` (UTC seconds). One indexed look-up when none may hold expired
    text (the usual case); two more full-text queries over the few that may, and one more for the query's
    CJK pieces (``cjk_pieces``, found in ``entity_cjk_fts``): kept when their name, type or a current
    observation holds one."""
    if expression is None or not ids:
        return ids, scores
    suspects = unswept_entities(conn, now, list(scores))
    if not suspects:
        return ids, scores
    dropped = set(suspects) - entities_matching_current_text(conn, expression, suspects, now)
    if dropped and cjk_pieces:
        dropped -= entities_holding_current_text(conn, cjk_pieces, sorted(dropped), now)
    if not dropped:
        return ids, scores
    return [i for i in ids if i not in dropped], {i: s for i, s in scores.items() if i not in dropped}
