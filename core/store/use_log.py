"""The use log: one row per entity of every use (``use_events``: when, by which origin, what kind of use), read by
an agent's timeline (:mod:`limbic.core.store.timeline`) whether a search showed the entity before or not
(docs/architecture.md "Data model"). Bounded like the search log: the oldest rows past a cap are dropped.
Write functions take an open write connection inside the caller's transaction; none commits.
"""

from __future__ import annotations

from collections.abc import Sequence

from limbic.core.store.connection import Connection


def insert_uses(conn: Connection, entity_ids: Sequence[int], at: float, origin: str, source: str,
                search_id: int | None, *, retention: int) -> None:
    """Log one use of each entity (once per entity) at ``at`` (UTC seconds) by ``origin`` (``source``: the kind of
    use, ``open_nodes``, ``get_entity``, ``mark_used``…; ``search_id``: the logged search it named, or ``None``),
    then drop the oldest uses beyond the newest ``retention``."""
    conn.executemany("INSERT INTO use_events(at, origin, source, entity_id, search_id) VALUES (?, ?, ?, ?, ?)",
                     [(at, origin, source, int(i), search_id) for i in dict.fromkeys(entity_ids)])
    trim(conn, retention)


def trim(conn: Connection, retention: int) -> int:
    """Drop the oldest logged uses (by time, then id) beyond the newest ``retention``; returns how many were
    dropped."""
    count = int(conn.execute("SELECT count(*) FROM use_events").get)
    if count <= retention:
        return 0
    conn.execute("DELETE FROM use_events WHERE id IN (SELECT id FROM use_events ORDER BY at, id LIMIT ?)",
                 (count - retention,))
    return count - retention
