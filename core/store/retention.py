"""Rows of the forget/promote review: every entity's uses, strength, pin and arrival, the active relations and the
current observations (docs/lifecycle.md "Forget and promote"), each in one set-based query; and the writes of
pinning and strength. None commits."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from limbic.core.store.connection import Connection

_USAGE = """
SELECT e.id, e.name, e.status, e.created_at, e.strength, e.pinned_at, coalesce(a.access_count, 0), a.last_access,
       coalesce((SELECT sum(d.count) FROM entity_access_days d WHERE d.entity_id = e.id AND d.day >= ?1), 0),
       e.entity_type
FROM entities e LEFT JOIN entity_access a ON a.entity_id = e.id
ORDER BY e.id
"""

ARRIVING_OPS = ("create_entities", "upsert_entities", "create_entity", "import_file", "adopt_memory_file")
"""Change-log ops that write entities anew: creating and importing (a file, or the memory file an MCP server
adopts)."""
_ARRIVED = """
SELECT CAST(j.value AS BIGINT), coalesce(max(c.at) FILTER (WHERE c.op IN ({ops})), min(c.at))
FROM changes c, {ids} GROUP BY 1
"""
_OPS = ", ".join(f"'{op}'" for op in ARRIVING_OPS)


def usage(conn: Connection, since_day: str) -> list[tuple[Any, ...]]:
    """Per entity, by id: ``(id, name, status, created_at, strength, pinned_at, access_count, last_access or
    None, accesses on days from ``since_day`` (YYYY-MM-DD, UTC) on, entity_type)``."""
    return conn.execute(_USAGE, (since_day,)).fetchall()


def arrivals(conn: Connection) -> dict[int, float]:
    """``{entity id: when it was last written anew}`` (UTC seconds): the latest logged change of an
    :data:`ARRIVING_OPS` op that touched it (an id reused after a deletion counts from its new entity; a
    re-import counts as new), else its first logged change: when it came into this memory, whatever
    ``created_at`` an import carried."""
    sql = _ARRIVED.format(ops=_OPS, ids=conn.ops.json_id_rows("c.entity_ids", "j"))
    return {int(i): float(at) for i, at in conn.execute(sql)}


def active_relations(conn: Connection) -> list[tuple[Any, ...]]:
    """``(from id, to id, relation type)`` of every active relation."""
    return conn.execute("SELECT from_id, to_id, relation_type FROM relations WHERE active = 1").fetchall()


def current_observations(conn: Connection, now: float) -> list[tuple[int, str, str | None]]:
    """``(entity id, text, kind)`` of every current observation (neither superseded nor expired at ``now``), by
    entity, in the order written."""
    return [(int(i), str(t), k) for i, t, k in conn.execute(
        "SELECT entity_id, content, kind FROM observations WHERE superseded_at IS NULL "
        "AND (expires_at IS NULL OR expires_at > ?) ORDER BY entity_id, id", (now,))]


def set_pinned(conn: Connection, entity_ids: Sequence[int], at: float | None) -> None:
    """Pin the entities at ``at`` (UTC seconds), or unpin them (``None``)."""
    conn.execute("UPDATE entities SET pinned_at = ? WHERE id IN (SELECT value FROM json_each(?))",
                 (at, json.dumps([int(i) for i in entity_ids])))


def set_strength(conn: Connection, entity_ids: Sequence[int], value: float) -> None:
    conn.execute("UPDATE entities SET strength = ? WHERE id IN (SELECT value FROM json_each(?))",
                 (value, json.dumps([int(i) for i in entity_ids])))
