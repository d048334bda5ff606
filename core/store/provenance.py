"""Reads behind the app's *Who wrote it* and *What fades next* views: the change log oldest first, the
names of entities, and the observations that expire within a time window.

Plain SQL with ``?`` parameters, the same on SQLite and PostgreSQL; nothing here writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from limbic.core.models import Changes
from limbic.core.store.connection import Connection

BATCH = 5_000  # log rows read per query


def changes_oldest_first(conn: Connection, skip_ops: tuple[str, ...]) -> Iterator[Changes]:
    """Every logged change whose op is not in ``skip_ops``, oldest first (read in batches of :data:`BATCH`)."""
    after = 0
    marks = ", ".join("?" for _ in skip_ops) or "''"
    while True:
        rows = list(conn.execute(
            f"SELECT id, origin, op, entity_ids, at FROM changes WHERE id > ? AND op NOT IN ({marks}) "
            "ORDER BY id LIMIT ?", (after, *skip_ops, BATCH)))
        for r in rows:
            yield Changes(int(r[0]), str(r[1]), str(r[2]), frozenset(json.loads(r[3])), float(r[4]))
        if len(rows) < BATCH:
            return
        after = int(rows[-1][0])


def entity_names(conn: Connection) -> dict[int, str]:
    """``{entity id: name}`` of every entity."""
    return {int(i): str(n) for i, n in conn.execute("SELECT id, name FROM entities")}


def expiring_observations(conn: Connection, start: float, end: float) -> list[tuple[int, str, str, float]]:
    """Live observations (not superseded) that expire after ``start`` and by ``end`` (UTC seconds), soonest first,
    as ``(entity id, entity name, content, expires_at)``."""
    rows = conn.execute(
        "SELECT e.id, e.name, o.content, o.expires_at FROM observations o JOIN entities e ON e.id = o.entity_id "
        "WHERE o.expires_at > ? AND o.expires_at <= ? AND o.superseded_at IS NULL ORDER BY o.expires_at, o.id",
        (start, end))
    return [(int(r[0]), str(r[1]), str(r[2]), float(r[3])) for r in rows]
