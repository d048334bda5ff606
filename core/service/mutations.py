"""What each :class:`~limbic.core.service.MemoryService` mutation does to the rows, inside its open transaction.

Every function takes the :class:`~limbic.core.store.database.WriteTransaction` and already validated
input, records the entity ids it touched (``txn.touch``) and calls ``reindex(txn, ids)`` so the FTS rows
and embeddings follow. None commits, validates user input or notifies: the service does that.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from limbic.core.errors import ConflictError, NotFoundError
from limbic.core.models import Entity, EntityInput, Observation, ObservationInput, Relation, RelationInput
from limbic.core.service.inputs import add_observations as insert_observations
from limbic.core.store import reads, scope, writes
from limbic.core.store.database import WriteTransaction
from limbic.core.store.indexing import drop_index_rows

Reindex = Callable[[WriteTransaction, Iterable[int]], None]


@dataclass(frozen=True, slots=True)
class UpsertReport:
    """Result of ``upsert_entities``: names created and updated, observations added."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    observations_added: int = 0


def _insert(txn: WriteTransaction, item: EntityInput, now: float) -> int:
    created_at = item.created_at or now
    return writes.insert_entity(
        txn.conn, item.name, item.entity_type or "Unknown", item.status or "active",
        created_at, item.updated_at or created_at, item.project,
    )


def existing_ids(txn: WriteTransaction, items: Sequence[EntityInput]) -> dict[tuple[str, str | None], int]:
    """``{(name, project): id}`` of the items' names that already name an entity in the view of the item's
    project (its own entity, else the global one; an item without a project: the call's view), after checking
    that the call may place entities in those projects (:mod:`limbic.core.store.scope`)."""
    found: dict[tuple[str, str | None], int] = {}
    for project in dict.fromkeys(item.project for item in items):
        scope.check_writable(project)
        names = [item.name for item in items if item.project == project]
        held = reads.ids_by_names(txn.conn, names) if project is None else scope.resolve(txn.conn, names, project)
        found.update({(name, project): eid for name, eid in held.items()})
    return found


def create_entities(txn: WriteTransaction, items: Sequence[EntityInput], reindex: Reindex) -> list[Entity]:
    """Insert the entities whose names are new in their project's view (with their observations); existing
    names are skipped."""
    existing = existing_ids(txn, items)
    created: dict[tuple[str, str | None], int] = {}
    now = time.time()
    for item in items:
        key = (item.name, item.project)
        if key in existing or key in created:
            continue
        created[key] = _insert(txn, item, now)
        insert_observations(txn.conn, created[key], item.name, item.observations, now)
    txn.touch(created.values())
    reindex(txn, created.values())
    return reads.entities_by_ids(txn.conn, list(created.values()))


def upsert_entities(txn: WriteTransaction, items: Sequence[EntityInput], reindex: Reindex) -> UpsertReport:
    """Insert new entities; on existing ones set type/status when given and add new observations."""
    created, updated, added_count = [], [], 0
    ids = existing_ids(txn, items)
    now = time.time()
    changed: set[int] = set()
    for item in items:
        key = (item.name, item.project)
        if key in ids:
            eid = ids[key]
            if writes.update_entity(txn.conn, eid, entity_type=item.entity_type, status=item.status, at=now):
                changed.add(eid)
                updated.append(item.name)
        else:
            eid = ids[key] = _insert(txn, item, now)
            changed.add(eid)
            created.append(item.name)
        added = insert_observations(txn.conn, eid, item.name, item.observations, now)
        if added:
            changed.add(eid)
            if item.name not in created:
                updated.append(item.name)
        added_count += len(added)
    txn.touch(changed)
    reindex(txn, changed)
    return UpsertReport(created, list(dict.fromkeys(updated)), added_count)


def delete_entities(txn: WriteTransaction, names: Sequence[str]) -> int:
    """Delete the named entities (unknown names ignored) with their index rows; returns how many."""
    ids = list(reads.ids_by_names(txn.conn, names).values())
    drop_index_rows(txn.conn, ids)
    txn.touch(ids)
    return writes.delete_entities(txn.conn, ids)


def rename_entity(txn: WriteTransaction, old: str, new: str, reindex: Reindex) -> Entity:
    eid = writes.require_ids(txn.conn, [old])[old]
    project = reads.project_of(txn.conn, eid)
    other = scope.in_slot(txn.conn, [new], project).get(new)
    if other is not None and other != eid:
        where = "" if project is None else f" in project {project!r}"
        raise ConflictError(f"an entity named {new!r} already exists{where}; merge instead of renaming")
    writes.rename_entity(txn.conn, eid, new, time.time())
    txn.touch(eid)
    reindex(txn, [eid])
    return reads.entities_by_ids(txn.conn, [eid])[0]


def merge_entities(txn: WriteTransaction, sources: Sequence[str], target: str, reindex: Reindex) -> Entity:
    ids = writes.require_ids(txn.conn, [*sources, target])
    now = time.time()
    source_ids = [ids[s] for s in sources]
    drop_index_rows(txn.conn, source_ids)
    for source_id in source_ids:
        writes.merge_into(txn.conn, source_id, ids[target], now)
    txn.touch([*source_ids, ids[target]])
    reindex(txn, [ids[target]])
    return reads.entities_by_ids(txn.conn, [ids[target]])[0]


def set_status(txn: WriteTransaction, names: Sequence[str], status: str, reindex: Reindex) -> list[Entity]:
    ids = writes.require_ids(txn.conn, names)
    now = time.time()
    changed = [eid for eid in ids.values() if writes.update_entity(txn.conn, eid, entity_type=None, status=status, at=now)]
    txn.touch(changed)
    reindex(txn, changed)
    return reads.entities_by_ids(txn.conn, list(dict.fromkeys(ids[n] for n in names)))


def add_observations(
    txn: WriteTransaction, items: Sequence[tuple[str, Sequence[ObservationInput]]], reindex: Reindex
) -> list[tuple[str, list[str]]]:
    ids = writes.require_ids(txn.conn, [n for n, _ in items])
    now = time.time()
    out, changed = [], set()
    for name, observations in items:
        added = insert_observations(txn.conn, ids[name], name, observations, now)
        if added:
            changed.add(ids[name])
        out.append((name, added))
    writes.touch_entity(txn.conn, sorted(changed), now)
    txn.touch(changed)
    reindex(txn, changed)
    return out


def delete_observations(txn: WriteTransaction, items: Sequence[tuple[str, Sequence[str]]], reindex: Reindex) -> int:
    ids = reads.ids_by_names(txn.conn, [n for n, _ in items])
    deleted, changed = 0, set()
    for name, contents in items:
        count = writes.delete_observation_texts(txn.conn, ids[name], contents) if name in ids else 0
        if count:
            deleted += count
            changed.add(ids[name])
    writes.touch_entity(txn.conn, sorted(changed), time.time())
    txn.touch(changed)
    reindex(txn, changed)
    return deleted


def _observation(txn: WriteTransaction, entity_id: int, match: Callable[[Observation], bool]) -> Observation:
    return next(o for o in reads.observations_by_entity(txn.conn, [entity_id])[entity_id] if match(o))


def update_observation(
    txn: WriteTransaction, entity: str, old_content: str, new_content: str, kind: str | None, reindex: Reindex
) -> Observation:
    eid = writes.require_ids(txn.conn, [entity])[entity]
    oid = writes.observation_id(txn.conn, eid, old_content, live_only=False)
    if oid is None:
        raise NotFoundError(f"{entity!r} has no observation {old_content[:80]!r}", [old_content])
    other = writes.observation_id(txn.conn, eid, new_content, live_only=False)
    if other is not None and other != oid:
        raise ConflictError(f"{entity!r} already has the observation {new_content[:80]!r}")
    writes.set_observation_content(txn.conn, oid, new_content, kind)
    writes.touch_entity(txn.conn, [eid], time.time())
    txn.touch(eid)
    reindex(txn, [eid])
    return _observation(txn, eid, lambda o: o.id == oid)


def supersede_observation(txn: WriteTransaction, entity: str, new: ObservationInput, reindex: Reindex) -> Observation:
    """Insert ``new`` (whose ``supersedes`` names the live observation it replaces)."""
    eid = writes.require_ids(txn.conn, [entity])[entity]
    if not insert_observations(txn.conn, eid, entity, [new], time.time()):
        raise ConflictError(f"{entity!r} already has the observation {new.content[:80]!r}")
    txn.touch(eid)
    reindex(txn, [eid])
    return _observation(txn, eid, lambda o: o.content == new.content)


def create_relations(txn: WriteTransaction, items: Sequence[RelationInput]) -> list[Relation]:
    ids = writes.require_ids(txn.conn, [n for r in items for n in (r.source, r.target)], "relation endpoints")
    now = time.time()
    new_ids = []
    for r in items:
        rid = writes.insert_relation(txn.conn, ids[r.source], ids[r.target], r.relation_type, r.context, r.created_at or now)
        if rid is not None:
            new_ids.append(rid)
            txn.touch([ids[r.source], ids[r.target]])
    return reads.relations_by_ids(txn.conn, new_ids)


def delete_relations(txn: WriteTransaction, items: Sequence[RelationInput]) -> int:
    ids = reads.ids_by_names(txn.conn, [n for r in items for n in (r.source, r.target)])
    deleted = 0
    for r in items:
        if r.source in ids and r.target in ids:
            count = writes.delete_relation(txn.conn, ids[r.source], ids[r.target], r.relation_type)
            if count:
                deleted += count
                txn.touch([ids[r.source], ids[r.target]])
    return deleted


def end_relation(txn: WriteTransaction, r: RelationInput, at: float) -> Relation:
    ids = writes.require_ids(txn.conn, [r.source, r.target], "relation endpoints")
    found = reads.find_relation(txn.conn, ids[r.source], ids[r.target], r.relation_type)
    if not found:
        raise NotFoundError(f"no active relation {r.source!r} -[{r.relation_type}]-> {r.target!r}")
    writes.end_relation(txn.conn, found[0].id, at)
    txn.touch([ids[r.source], ids[r.target]])
    return reads.find_relation(txn.conn, ids[r.source], ids[r.target], r.relation_type, active_only=False)[-1]
