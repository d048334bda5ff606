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

import json

import apsw

from limbic.core.search.full_text import matching, pg_matches
from limbic.core.store.expiry import current, unswept_entities
from limbic.core.store.postgres.connection import on_postgres

_HEADER_MATCHES = """
SELECT rowid FROM entity_fts WHERE entity_fts MATCH ?1 AND +rowid IN (SELECT value FROM json_each(?2))
"""
_OBSERVATION_MATCHES = f"""
SELECT DISTINCT o.entity_id FROM observation_fts f JOIN observations o ON o.id = f.rowid
WHERE observation_fts MATCH ?1 AND +f.rowid IN (
    SELECT id FROM observations WHERE entity_id IN (SELECT value FROM json_each(?2)) AND {current('?3')})
"""


def without_expired(conn: apsw.Connection, expression: str | None, ids: list[int], scores: dict[int, float],
                    now: float) -> tuple[list[int], dict[int, float]]:
    """``ids`` (best first) and ``scores`` without the entities that ``expression`` matches only through the
    text of observations expired by ``now`` (UTC seconds). One indexed look-up when none may hold expired
    text (the usual case); two more full-text queries over the few that may."""
    if expression is None or not ids:
        return ids, scores
    suspects = unswept_entities(conn, now, list(scores))
    if not suspects:
        return ids, scores
    listed = json.dumps(suspects)
    if on_postgres(conn):
        header = (0, 1)  # the name and entity_type columns
        kept = {i for i, _ in pg_matches(conn, "entity_fts", expression, only_ids=suspects, columns=header)}
        live = [int(r[0]) for r in conn.execute(f"SELECT id FROM observations WHERE entity_id IN "
                                                f"(SELECT value FROM json_each(?1)) AND {current('?2')}", (listed, now))]
        matched = [i for i, _ in pg_matches(conn, "observation_fts", expression, only_ids=live)]
        kept |= {int(r[0]) for r in conn.execute("SELECT DISTINCT entity_id FROM observations WHERE id IN "
                                                 "(SELECT value FROM json_each(?))", (json.dumps(matched),))}
    else:
        kept = {int(r[0]) for r in matching(conn, _HEADER_MATCHES, (f"{{name entity_type}} : ({expression})", listed))}
        kept |= {int(r[0]) for r in matching(conn, _OBSERVATION_MATCHES, (expression, listed, now))}
    dropped = set(suspects) - kept
    if not dropped:
        return ids, scores
    return [i for i in ids if i not in dropped], {i: s for i, s in scores.items() if i not in dropped}
