"""Exact copies of stored rows, and putting them back: what undoing an edit restores.

:func:`read_records` copies everything an entity's deletion destroys — its row, every observation
(superseded ones and supersede links included), every relation touching it (ended ones included),
its usage history (accesses, access days, impressions, co-occurrences), the reflections about it and the
contradictions found between its observations and others — into an
:class:`EntityRecord`. The ``put_*`` functions write such rows back inside the caller's write
transaction, under their old ids whenever those are free, so that what refers to an entity or an
observation by id (logged searches and their relevance labels, supersede links) finds it again.
None commits, touches the change log or re-indexes: the service does that
(:mod:`limbic.core.service.restoring`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from limbic.core.errors import ConflictError, NotFoundError
from limbic.core.models import Entity, Observation, Reflection, Relation
from limbic.core.store import conflicts, reads, reflections, scope
from limbic.core.store.conflicts import ConflictRow
from limbic.core.store.connection import Connection


@dataclass(frozen=True, slots=True)
class CoOccurrence:
    """Two entities used together: the other entity's id and name, the count and the last time (UTC seconds)."""

    other_id: int
    other_name: str
    count: int
    last: float


@dataclass(frozen=True, slots=True)
class Usage:
    """An entity's usage history as stored: ``access`` is ``(count, last access)`` and ``impressions`` is
    ``(count, last impression)`` (UTC seconds; ``None`` when there is no row), ``days`` the
    ``(YYYY-MM-DD, count)`` access days, ``co_occurrences`` the pairs it belongs to."""

    access: tuple[int, float] | None = None
    days: tuple[tuple[str, int], ...] = ()
    impressions: tuple[int, float] | None = None
    co_occurrences: tuple[CoOccurrence, ...] = ()


@dataclass(frozen=True, slots=True)
class EntityRecord:
    """Every stored row of one entity: the entity with all its observations, every relation touching it
    (active and ended, either direction), its usage history, the reflections about it or its relations and the
    conflicts (settled or not) either of whose observations is one of its own.
    Vectors and full-text rows are not kept: they follow from the text."""

    entity: Entity
    relations: tuple[Relation, ...]
    usage: Usage
    reflections: tuple[Reflection, ...] = ()
    conflicts: tuple[ConflictRow, ...] = ()


def read_records(conn: Connection, entity_ids: Sequence[int]) -> list[EntityRecord]:
    """Records of the entities ``entity_ids``, in that order (unknown ids are left out)."""
    entities = reads.entities_by_ids(conn, entity_ids)
    relations = reads.relations_touching(conn, [e.id for e in entities], include_ended=True)
    thoughts = reflections.touching(conn, [e.id for e in entities])
    found = conflicts.touching(conn, [o.id for e in entities for o in e.observations])
    return [EntityRecord(e, tuple(r for r in relations if e.id in (r.source_id, r.target_id)), _usage(conn, e.id),
                         tuple(r for r in thoughts if e.id in (r.entity_id, r.target_id)),
                         tuple(c for c in found if {c.observation_id, c.other_id} & {o.id for o in e.observations}))
            for e in entities]


def _usage(conn: Connection, entity_id: int) -> Usage:
    access = conn.execute("SELECT access_count, last_access FROM entity_access WHERE entity_id = ?",
                          (entity_id,)).fetchone()
    days: list[tuple[Any, ...]] = conn.execute("SELECT day, count FROM entity_access_days WHERE entity_id = ? ORDER BY day",
                        (entity_id,)).fetchall()
    impressions = conn.execute("SELECT impression_count, last_impression FROM entity_impressions "
                               "WHERE entity_id = ?", (entity_id,)).fetchone()
    pairs: list[tuple[Any, ...]] = conn.execute(
        "SELECT c.other, e.name, c.co_count, c.last_co FROM (SELECT CASE WHEN a_id = ?1 THEN b_id ELSE a_id END "
        "AS other, co_count, last_co FROM co_occurrences WHERE a_id = ?1 OR b_id = ?1) c "
        "JOIN entities e ON e.id = c.other ORDER BY c.other", (entity_id,)).fetchall()
    return Usage(None if access is None else (int(access[0]), float(access[1])),
                 tuple((day, int(count)) for day, count in days),
                 None if impressions is None else (int(impressions[0]), float(impressions[1])),
                 tuple(CoOccurrence(int(o), name, int(c), float(t)) for o, name, c, t in pairs))


def _free(conn: Connection, table: str, row_id: int) -> int | None:
    """``row_id`` when no row of ``table`` has it (so a restored row gets its old id back), else None (a new id)."""
    taken = conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (row_id,)).fetchone()
    return None if taken else row_id


def _require_free_name(conn: Connection, name: str, project: str | None, entity_id: int | None) -> None:
    holder = scope.in_slot(conn, [name], project).get(name)
    if holder is not None and holder != entity_id:
        raise ConflictError(f"cannot restore {name!r}: another entity has that name now")


def put_entity_row(conn: Connection, entity: Entity, entity_id: int | None = None) -> int:
    """Write ``entity``'s row (name, type, status, created and updated times, project, strength, pin) onto the
    entity ``entity_id``, or insert it (under its old id when free) when ``entity_id`` is None. Returns the
    entity's id.

    Raises ConflictError when another entity of its project (or another global one) holds the name."""
    _require_free_name(conn, entity.name, entity.project, entity_id)
    values = (entity.name, entity.entity_type, entity.status, entity.created_at, entity.updated_at, entity.project,
              entity.strength, entity.pinned_at)
    if entity_id is not None:
        conn.execute("UPDATE entities SET name = ?, entity_type = ?, status = ?, created_at = ?, updated_at = ?, "
                     "project = ?, strength = ?, pinned_at = ? WHERE id = ?", (*values, entity_id))
        return entity_id
    return int(conn.execute("INSERT INTO entities(id, name, entity_type, status, created_at, updated_at, project, "
                            "strength, pinned_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                            (_free(conn, "entities", entity.id), *values)).get)


def put_observations(conn: Connection, entity_id: int, observations: Sequence[Observation]) -> dict[int, int]:
    """Make ``observations`` rows of the entity ``entity_id`` again, as recorded: a row that still has its
    id is rewritten in place, any other is inserted (under its old id when free); a row of that entity
    with the same text but another id gives way. Supersede links among them are restored, and links to
    observations of the entity that still exist are kept. Returns ``{recorded id: id now}``."""
    placed: dict[int, int] = {}
    for o in sorted(observations, key=lambda o: o.id):
        conn.execute("DELETE FROM observations WHERE entity_id = ? AND content = ? AND id != ?",
                     (entity_id, o.content, o.id))
        values = (o.content, o.kind, o.superseded_at, o.expires_at, o.weight, o.created_at)
        owner = conn.execute("SELECT entity_id FROM observations WHERE id = ?", (o.id,)).fetchone()
        if owner is not None and owner[0] == entity_id:
            conn.execute("UPDATE observations SET content = ?, kind = ?, superseded_at = ?, expires_at = ?, "
                         "weight = ?, created_at = ? WHERE id = ?", (*values, o.id))
            placed[o.id] = o.id
        else:
            placed[o.id] = int(conn.execute(
                "INSERT INTO observations(id, entity_id, content, kind, superseded_at, expires_at, weight, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (None if owner else o.id, entity_id, *values)).get)
    for o in observations:
        link = placed.get(o.supersedes) if o.supersedes is not None else None
        if link is None and o.supersedes is not None and conn.execute(
                "SELECT 1 FROM observations WHERE id = ? AND entity_id = ?", (o.supersedes, entity_id)).fetchone():
            link = o.supersedes
        conn.execute("UPDATE observations SET supersedes = ? WHERE id = ?", (link, placed[o.id]))
    return placed


def _entity_id(conn: Connection, old_id: int, name: str, placed: Mapping[int, int]) -> int | None:
    """The current id of the entity recorded as ``old_id``/``name``: its restored id, its old id when that
    still names it, else the id of the entity of that name (None when there is none)."""
    if old_id in placed:
        return placed[old_id]
    row = conn.execute("SELECT name FROM entities WHERE id = ?", (old_id,)).fetchone()
    if row is not None and row[0] == name:
        return old_id
    return reads.ids_by_names(conn, [name]).get(name)


def put_relations(conn: Connection, relations: Iterable[Relation], placed: Mapping[int, int]) -> set[int]:
    """Insert ``relations`` as recorded (context, active or ended, times), under their old ids when free;
    an active one that is active again already is skipped. ``placed`` maps recorded entity ids to the ids
    of entities restored in this transaction. Returns the ids of the endpoints.

    Raises NotFoundError naming the endpoints that no longer exist."""
    rows, missing = [], []
    for r in sorted({r.id: r for r in relations}.values(), key=lambda r: r.id):
        source = _entity_id(conn, r.source_id, r.source, placed)
        target = _entity_id(conn, r.target_id, r.target, placed)
        if source is None or target is None:
            missing += [name for name, found in ((r.source, source), (r.target, target)) if found is None]
            continue
        rows.append((r, source, target))
    if missing:
        names = list(dict.fromkeys(missing))
        raise NotFoundError(f"cannot restore relations of {', '.join(map(repr, names))}: no longer stored", names)
    for r, source, target in rows:
        conn.execute("INSERT INTO relations(id, from_id, to_id, relation_type, context, active, ended_at, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                     (_free(conn, "relations", r.id), source, target, r.relation_type, r.context, int(r.active),
                      r.ended_at, r.created_at))
    return {i for _, source, target in rows for i in (source, target)}


def put_usage(conn: Connection, entity_id: int, usage: Usage, placed: Mapping[int, int]) -> None:
    """Write ``usage`` back for the entity ``entity_id`` (just inserted, so without usage rows of its own);
    co-occurrences with entities no longer stored are dropped."""
    if usage.access is not None:
        conn.execute("INSERT INTO entity_access(entity_id, access_count, last_access) VALUES (?, ?, ?)",
                     (entity_id, *usage.access))
    conn.executemany("INSERT INTO entity_access_days(entity_id, day, count) VALUES (?, ?, ?)",
                     [(entity_id, day, count) for day, count in usage.days])
    if usage.impressions is not None:
        conn.execute("INSERT INTO entity_impressions(entity_id, impression_count, last_impression) VALUES (?, ?, ?)",
                     (entity_id, *usage.impressions))
    for pair in usage.co_occurrences:
        other = _entity_id(conn, pair.other_id, pair.other_name, placed)
        if other is not None and other != entity_id:
            conn.execute("INSERT INTO co_occurrences(a_id, b_id, co_count, last_co) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT(a_id, b_id) DO NOTHING",
                         (min(entity_id, other), max(entity_id, other), pair.count, pair.last))


def put_records(conn: Connection, records: Sequence[EntityRecord]) -> tuple[dict[int, int], set[int]]:
    """Insert whole entities from ``records`` (none of their names may be stored): rows, observations,
    relations, usage, reflections, conflicts. Returns ``{recorded id: id now}`` and the ids of every relation
    endpoint.

    Raises ConflictError when a name is taken, NotFoundError when a relation's other end is gone."""
    placed: dict[int, int] = {}
    for record in records:
        placed[record.entity.id] = put_entity_row(conn, record.entity)
    observations: dict[int, int] = {}
    for record in records:
        observations.update(put_observations(conn, placed[record.entity.id], record.entity.observations))
    endpoints = put_relations(conn, [r for record in records for r in record.relations], placed)
    for record in records:
        put_usage(conn, placed[record.entity.id], record.usage, placed)
    reflections.put(conn, [r for record in records for r in record.reflections], placed)
    conflicts.restore(conn, [c for record in records for c in record.conflicts], observations)
    return placed, endpoints
