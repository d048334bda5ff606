"""The context of a memory: the entities written just before and after it (docs/scoring.md "Context").

Memory is written in episodes: an agent records a conversation turn by turn, or what it learnt in a
working session entity by entity. The memory that answers a question often sits next to the one that
shares the question's words: the turn that asks and the turn that answers, the decision and the reason
written after it. Two entities are *neighbours* when they are next to each other in creation order
(``created_at``, then id), were created at most ``window_hours`` apart and have the same entity type (the
turns of one conversation; not the person, the place and the tool an agent happened to note in the same
hour); each entity has at most two.
The look-ups use the index ``entities_created`` (schema 8) and never write.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import apsw

from limbic.core.search.terms import SECONDS_PER_HOUR

# Two index seeks per side (same creation time, then the nearest other time within the window): a row-value
# comparison on (created_at, id) seeks on created_at only and scanned every entity of one import (10 ms at 10k).
_NEIGHBOURS = """
SELECT x.id, CASE WHEN b.entity_type = x.entity_type THEN x.before END,
       CASE WHEN a.entity_type = x.entity_type THEN x.after END
FROM (SELECT e.id, e.entity_type,
  coalesce((SELECT max(p.id) FROM entities p WHERE p.created_at = e.created_at AND p.id < e.id),
           (SELECT p.id FROM entities p WHERE p.created_at < e.created_at AND p.created_at >= e.created_at - ?2
             ORDER BY p.created_at DESC, p.id DESC LIMIT 1)) AS before,
  coalesce((SELECT min(n.id) FROM entities n WHERE n.created_at = e.created_at AND n.id > e.id),
           (SELECT n.id FROM entities n WHERE n.created_at > e.created_at AND n.created_at <= e.created_at + ?2
             ORDER BY n.created_at, n.id LIMIT 1)) AS after
  FROM entities e WHERE e.id IN (SELECT value FROM json_each(?1))) x
LEFT JOIN entities b ON b.id = x.before LEFT JOIN entities a ON a.id = x.after
"""


def neighbours(conn: apsw.Connection, entity_ids: Iterable[int], window_hours: float) -> dict[int, tuple[int, ...]]:
    """Each of ``entity_ids`` that exists → the ids of its neighbours (the one created just before, then
    the one just after, when created within ``window_hours`` hours of it and of the same entity type;
    zero to two ids)."""
    ids = sorted({int(i) for i in entity_ids})
    if not ids:
        return {}
    window = max(0.0, float(window_hours)) * SECONDS_PER_HOUR
    rows = conn.execute(_NEIGHBOURS, (json.dumps(ids), window))
    return {int(eid): tuple(int(n) for n in (before, after) if n is not None) for eid, before, after in rows}


def extend(conn: apsw.Connection, candidates: list[int], seeds: Iterable[int],
           window_hours: float) -> tuple[list[int], dict[int, tuple[int, ...]]]:
    """The neighbours of ``seeds`` that are not among ``candidates`` (in the order found), and the
    neighbours of every candidate and of those added (for :func:`pairs`)."""
    around = neighbours(conn, candidates, window_hours)
    known = set(candidates)
    added: list[int] = []
    for seed in seeds:
        for entity_id in around.get(int(seed), ()):
            if entity_id not in known:
                known.add(entity_id)
                added.append(entity_id)
    if added:
        around.update(neighbours(conn, added, window_hours))
    return added, around


def pairs(entity_ids: list[int], around: dict[int, tuple[int, ...]]) -> tuple[list[int], list[int]]:
    """Index pairs ``(a, b)``, ``a < b``, of the positions in ``entity_ids`` of neighbours that are both there."""
    position = {entity_id: i for i, entity_id in enumerate(entity_ids)}
    found = sorted({(min(position[e], position[n]), max(position[e], position[n]))
                    for e, near in around.items() if e in position for n in near if n in position})
    return [a for a, _ in found], [b for _, b in found]
