"""Rows of the forget/promote review: every entity's uses, strength, pin and arrival, the memory's last activity,
the active relations and the texts of protected entities (docs/lifecycle.md "Forget and promote"), each in one
set-based query; and the writes of pinning and strength. None commits."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import apsw

from limbic.core.store.postgres.connection import on_postgres

_USAGE = """
SELECT e.id, e.name, e.status, e.created_at, e.strength, e.pinned_at, coalesce(a.access_count, 0), a.last_access,
       coalesce((SELECT sum(d.count) FROM entity_access_days d WHERE d.entity_id = e.id AND d.day >= ?1), 0),
       e.entity_type
FROM entities e LEFT JOIN entity_access a ON a.entity_id = e.id
ORDER BY e.id
"""

_FIRST_CHANGE_SQLITE = """
SELECT CAST(j.value AS INTEGER), min(c.at) FROM changes c, json_each(c.entity_ids) j GROUP BY 1
"""
_FIRST_CHANGE_POSTGRES = """
SELECT CAST(j.value AS bigint), min(c.at) FROM changes c, jsonb_array_elements_text(CAST(c.entity_ids AS jsonb)) j(value)
GROUP BY 1
"""


def usage(conn: apsw.Connection, since_day: str) -> list[tuple[Any, ...]]:
    """Per entity, by id: ``(id, name, status, created_at, strength, pinned_at, access_count, last_access or
    None, accesses on days from ``since_day`` (YYYY-MM-DD, UTC) on, entity_type)``."""
    return conn.execute(_USAGE, (since_day,)).fetchall()


def first_changes(conn: apsw.Connection) -> dict[int, float]:
    """``{entity id: time of the first logged change that touched it}`` (UTC seconds): when it was written or
    imported into this memory, whatever ``created_at`` the import carried."""
    sql = _FIRST_CHANGE_POSTGRES if on_postgres(conn) else _FIRST_CHANGE_SQLITE
    return {int(i): float(at) for i, at in conn.execute(sql)}


def last_activity(conn: apsw.Connection) -> float | None:
    """The memory's last activity (UTC seconds): its latest logged write by anyone but the system (the expiry
    sweep) or its latest recorded use, whichever is later; ``None`` for a memory without either."""
    row = conn.execute("SELECT (SELECT max(at) FROM changes WHERE origin <> 'system'), "
                       "(SELECT max(last_access) FROM entity_access)").fetchone()
    found = [float(v) for v in (row or ()) if v is not None]
    return max(found) if found else None


def active_pairs(conn: apsw.Connection) -> list[tuple[int, int]]:
    """``(from id, to id)`` of every active relation."""
    return [(int(a), int(b)) for a, b in conn.execute("SELECT from_id, to_id FROM relations WHERE active = 1")]


def texts_of_types(conn: apsw.Connection, types: Sequence[str], now: float) -> list[tuple[int, str]]:
    """``(entity id, observation text)`` of the current observations (neither superseded nor expired at ``now``)
    of entities whose type, lower-cased, is one of ``types``."""
    return [(int(i), str(t)) for i, t in conn.execute(
        "SELECT o.entity_id, o.content FROM observations o JOIN entities e ON e.id = o.entity_id "
        "WHERE lower(e.entity_type) IN (SELECT value FROM json_each(?)) AND o.superseded_at IS NULL "
        "AND (o.expires_at IS NULL OR o.expires_at > ?)", (json.dumps(list(types)), now))]


def set_pinned(conn: apsw.Connection, entity_ids: Sequence[int], at: float | None) -> None:
    """Pin the entities at ``at`` (UTC seconds), or unpin them (``None``)."""
    conn.execute("UPDATE entities SET pinned_at = ? WHERE id IN (SELECT value FROM json_each(?))",
                 (at, json.dumps([int(i) for i in entity_ids])))


def set_strength(conn: apsw.Connection, entity_ids: Sequence[int], value: float) -> None:
    conn.execute("UPDATE entities SET strength = ? WHERE id IN (SELECT value FROM json_each(?))",
                 (value, json.dumps([int(i) for i in entity_ids])))
