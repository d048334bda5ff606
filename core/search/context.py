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

from collections.abc import Iterable

from limbic.core.search.terms import SECONDS_PER_HOUR
from limbic.core.store import Connection
from limbic.core.store.search_reads import creation_neighbours


def neighbours(conn: Connection, entity_ids: Iterable[int], window_hours: float) -> dict[int, tuple[int, ...]]:
    """Each of ``entity_ids`` that exists → the ids of its neighbours (the one created just before, then
    the one just after, when created within ``window_hours`` hours of it and of the same entity type;
    zero to two ids)."""
    ids = sorted({int(i) for i in entity_ids})
    if not ids:
        return {}
    window = max(0.0, float(window_hours)) * SECONDS_PER_HOUR
    rows = creation_neighbours(conn, ids, window)
    return {int(eid): tuple(int(n) for n in (before, after) if n is not None) for eid, before, after in rows}


def extend(conn: Connection, candidates: list[int], seeds: Iterable[int],
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
