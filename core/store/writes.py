"""Row-level mutations used by :class:`~limbic.core.service.MemoryService` inside one write transaction.

Each function takes the open write connection; none commits. Callers validate input first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

from limbic.core.errors import NotFoundError
from limbic.core.store.connection import Connection


def insert_entity(conn: Connection, name: str, entity_type: str, status: str, created: float, updated: float,
                  project: str | None = None) -> int:
    return int(conn.execute(
        "INSERT INTO entities(name, entity_type, status, created_at, updated_at, project) VALUES (?, ?, ?, ?, ?, ?) "
        "RETURNING id", (name, entity_type, status, created, updated, project)).get)


def update_entity(
    conn: Connection, entity_id: int, *, entity_type: str | None, status: str | None, at: float
) -> bool:
    """Change type and/or status (``None`` keeps the stored value). Returns True when something changed."""
    row = conn.execute("SELECT entity_type, status FROM entities WHERE id = ?", (entity_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no entity with id {entity_id}")
    new_type = entity_type if entity_type is not None else row[0]
    new_status = status if status is not None else row[1]
    if (new_type, new_status) == tuple(row):
        return False
    conn.execute(
        "UPDATE entities SET entity_type = ?, status = ?, updated_at = ? WHERE id = ?",
        (new_type, new_status, at, entity_id),
    )
    return True


def rename_entity(conn: Connection, entity_id: int, name: str, at: float) -> None:
    """Give the entity ``entity_id`` the name ``name``, updated at ``at`` (UTC seconds)."""
    conn.execute("UPDATE entities SET name = ?, updated_at = ? WHERE id = ?", (name, at, entity_id))


def touch_entity(conn: Connection, entity_ids: Sequence[int], at: float) -> None:
    conn.execute(
        "UPDATE entities SET updated_at = ? WHERE id IN (SELECT value FROM json_each(?))",
        (at, json.dumps(list(entity_ids))),
    )


def observation_id(conn: Connection, entity_id: int, content: str, *, live_only: bool = True) -> int | None:
    live = " AND superseded_at IS NULL" if live_only else ""
    row = conn.execute(
        "SELECT id FROM observations WHERE entity_id = ? AND content = ?" + live, (entity_id, content)
    ).fetchone()
    return row[0] if row else None


def insert_observation(
    conn: Connection,
    entity_id: int,
    content: str,
    *,
    kind: str | None,
    supersedes: int | None,
    created_at: float,
    expires_at: float | None,
    weight: float,
) -> int | None:
    """Insert one observation; returns its id, or None when the same text is already stored (skipped)."""
    found = conn.execute(
        "INSERT INTO observations(entity_id, content, kind, supersedes, expires_at, weight, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
        (entity_id, content, kind, supersedes, expires_at, weight, created_at),
    ).fetchone()
    return None if found is None else int(found[0])


def mark_superseded(conn: Connection, observation: int, at: float, weight: float | None = None) -> None:
    """Mark ``observation`` superseded at ``at`` (UTC seconds), recording ``weight`` on it when given."""
    conn.execute("UPDATE observations SET superseded_at = ?, weight = coalesce(?, weight) WHERE id = ?",
                 (at, weight, observation))


def set_observation_content(conn: Connection, observation: int, content: str, kind: str | None) -> None:
    """Give ``observation`` the text ``content`` and, when ``kind`` is not None, that kind."""
    conn.execute("UPDATE observations SET content = ?, kind = coalesce(?, kind) WHERE id = ?", (content, kind, observation))


def set_observation_terms(conn: Connection, observation: int, expires_at: float | None, weight: float) -> None:
    """Set when ``observation`` expires (UTC seconds, None: never) and its weight."""
    conn.execute("UPDATE observations SET expires_at = ?, weight = ? WHERE id = ?", (expires_at, weight, observation))


def link_supersedes(conn: Connection, observation: int, supersedes: int) -> None:
    """Record that ``observation`` supersedes ``supersedes``, unless it already supersedes one."""
    conn.execute("UPDATE observations SET supersedes = ? WHERE id = ? AND supersedes IS NULL", (supersedes, observation))


def delete_observation_texts(conn: Connection, entity_id: int, contents: Sequence[str]) -> int:
    conn.execute(
        "DELETE FROM observations WHERE entity_id = ? AND content IN (SELECT value FROM json_each(?))",
        (entity_id, json.dumps(list(contents))),
    )
    return conn.changes()


def insert_relation(
    conn: Connection, from_id: int, to_id: int, relation_type: str, context: str | None, created_at: float
) -> int | None:
    """Insert an active relation; None when the same active relation already exists (skipped)."""
    found = conn.execute(
        "INSERT INTO relations(from_id, to_id, relation_type, context, active, created_at) "
        "VALUES (?, ?, ?, ?, 1, ?) ON CONFLICT DO NOTHING RETURNING id",
        (from_id, to_id, relation_type, context, created_at),
    ).fetchone()
    return None if found is None else int(found[0])


def end_relation(conn: Connection, relation_id: int, at: float) -> None:
    """Mark the relation ``relation_id`` inactive, ended at ``at`` (UTC seconds)."""
    conn.execute("UPDATE relations SET active = 0, ended_at = ? WHERE id = ?", (at, relation_id))


def delete_relation(conn: Connection, from_id: int, to_id: int, relation_type: str) -> int:
    conn.execute(
        "DELETE FROM relations WHERE from_id = ? AND to_id = ? AND relation_type = ?", (from_id, to_id, relation_type)
    )
    return conn.changes()


def delete_entities(conn: Connection, entity_ids: Sequence[int]) -> int:
    conn.execute("DELETE FROM entities WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(list(entity_ids)),))
    return conn.changes()


def day_of(ts: float) -> str:
    """UTC calendar day ``YYYY-MM-DD`` of a unix time (seconds)."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def record_access(conn: Connection, entity_ids: Sequence[int], at: float, *, co_occurrence: bool) -> None:
    """Access count, last access, access day and (optionally) co-occurrence of every pair (mcp-memory "The Limbic System", "Signal Tracking")."""
    ids = sorted(set(int(i) for i in entity_ids))
    if not ids:
        return
    ops = conn.ops
    conn.executemany(
        "INSERT INTO entity_access(entity_id, access_count, last_access) VALUES (?, 1, ?) "
        "ON CONFLICT(entity_id) DO UPDATE SET access_count = entity_access.access_count + 1, "
        f"last_access = {ops.greatest('entity_access.last_access', 'excluded.last_access')}",
        [(i, at) for i in ids],
    )
    day = day_of(at)
    conn.executemany(
        "INSERT INTO entity_access_days(entity_id, day, count) VALUES (?, ?, 1) "
        "ON CONFLICT(entity_id, day) DO UPDATE SET count = entity_access_days.count + 1",
        [(i, day) for i in ids],
    )
    if co_occurrence and len(ids) > 1:
        pairs = [(a, b, at) for index, a in enumerate(ids) for b in ids[index + 1 :]]
        conn.executemany(
            "INSERT INTO co_occurrences(a_id, b_id, co_count, last_co) VALUES (?, ?, 1, ?) "
            "ON CONFLICT(a_id, b_id) DO UPDATE SET co_count = co_occurrences.co_count + 1, "
            f"last_co = {ops.greatest('co_occurrences.last_co', 'excluded.last_co')}",
            pairs,
        )


def merge_into(conn: Connection, source_id: int, target_id: int, at: float) -> None:
    """Move observations, relations, usage signals and reflections of ``source_id`` onto ``target_id``, then
    delete the source.

    Duplicated observation texts and relations that would duplicate an active one are dropped;
    relations between the two merged entities are dropped (they would become self-loops).
    """
    conn.execute(
        "INSERT INTO observations(entity_id, content, kind, supersedes, superseded_at, expires_at, weight, created_at) "
        "SELECT ?, content, kind, NULL, superseded_at, expires_at, weight, created_at FROM observations "
        "WHERE entity_id = ? ORDER BY id ON CONFLICT DO NOTHING",
        (target_id, source_id),
    )
    conn.execute(
        "DELETE FROM relations WHERE (from_id = ?1 AND to_id = ?2) OR (from_id = ?2 AND to_id = ?1)",
        (source_id, target_id),
    )
    for column, other in (("from_id", "to_id"), ("to_id", "from_id")):
        conn.execute(
            f"INSERT INTO relations(from_id, to_id, relation_type, context, active, ended_at, created_at) "
            f"SELECT {'?1' if column == 'from_id' else 'from_id'}, {'?1' if column == 'to_id' else 'to_id'}, "
            f"relation_type, context, active, ended_at, created_at FROM relations "
            f"WHERE {column} = ?2 AND {other} != ?2 ORDER BY id ON CONFLICT DO NOTHING",
            (target_id, source_id),
        )
    ops = conn.ops
    conn.execute(
        "INSERT INTO entity_access(entity_id, access_count, last_access) "
        "SELECT ?, access_count, last_access FROM entity_access WHERE entity_id = ? "
        "ON CONFLICT(entity_id) DO UPDATE SET access_count = entity_access.access_count + excluded.access_count, "
        f"last_access = {ops.greatest('entity_access.last_access', 'excluded.last_access')}",
        (target_id, source_id),
    )
    conn.execute(
        "INSERT INTO entity_access_days(entity_id, day, count) SELECT ?, day, count FROM entity_access_days "
        "WHERE entity_id = ? ON CONFLICT(entity_id, day) DO UPDATE SET count = entity_access_days.count + excluded.count",
        (target_id, source_id),
    )
    conn.execute(
        "INSERT INTO co_occurrences(a_id, b_id, co_count, last_co) "
        f"SELECT {ops.least('?1', 'other')}, {ops.greatest('?1', 'other')}, co_count, last_co FROM ("
        "  SELECT CASE WHEN a_id = ?2 THEN b_id ELSE a_id END AS other, co_count, last_co "
        "  FROM co_occurrences WHERE a_id = ?2 OR b_id = ?2) AS moved WHERE other != ?1 "
        "ON CONFLICT(a_id, b_id) DO UPDATE SET co_count = co_occurrences.co_count + excluded.co_count, "
        f"last_co = {ops.greatest('co_occurrences.last_co', 'excluded.last_co')}",
        (target_id, source_id),
    )
    conn.execute("UPDATE reflections SET entity_id = ?1 WHERE entity_id = ?2", (target_id, source_id))
    conn.execute("UPDATE reflections SET other_id = ?1 WHERE other_id = ?2", (target_id, source_id))
    conn.execute("DELETE FROM entities WHERE id = ?", (source_id,))
    conn.execute("UPDATE entities SET updated_at = ? WHERE id = ?", (at, target_id))


def require_ids(conn: Connection, names: Sequence[str], what: str = "entities") -> dict[str, int]:
    """``{name: id}`` for every name, or :class:`NotFoundError` naming all the missing ones."""
    from limbic.core.store.reads import ids_by_names

    found = ids_by_names(conn, names)
    missing = [n for n in dict.fromkeys(names) if n not in found]
    if missing:
        raise NotFoundError(f"unknown {what}: {', '.join(repr(m) for m in missing)}", missing)
    return found
