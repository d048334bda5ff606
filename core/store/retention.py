"""Rows of the forget/promote review: every entity's uses, strength and pin (docs/lifecycle.md "Forget and
promote"), in one set-based query; and the writes of pinning and strength. None commits."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from limbic.core.store.connection import Connection

_USAGE = """
SELECT e.id, e.name, e.status, e.created_at, e.strength, e.pinned_at, coalesce(a.access_count, 0), a.last_access,
       coalesce((SELECT sum(d.count) FROM entity_access_days d WHERE d.entity_id = e.id AND d.day >= ?1), 0)
FROM entities e LEFT JOIN entity_access a ON a.entity_id = e.id
ORDER BY e.id
"""


def usage(conn: Connection, since_day: str) -> list[tuple[Any, ...]]:
    """Per entity, by id: ``(id, name, status, created_at, strength, pinned_at, access_count, last_access or
    None, accesses on days from ``since_day`` (YYYY-MM-DD, UTC) on)``."""
    return conn.execute(_USAGE, (since_day,)).fetchall()


def set_pinned(conn: Connection, entity_ids: Sequence[int], at: float | None) -> None:
    """Pin the entities at ``at`` (UTC seconds), or unpin them (``None``)."""
    conn.execute("UPDATE entities SET pinned_at = ? WHERE id IN (SELECT value FROM json_each(?))",
                 (at, json.dumps([int(i) for i in entity_ids])))


def set_strength(conn: Connection, entity_ids: Sequence[int], value: float) -> None:
    conn.execute("UPDATE entities SET strength = ? WHERE id IN (SELECT value FROM json_each(?))",
                 (value, json.dumps([int(i) for i in entity_ids])))
