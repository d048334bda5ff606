"""Snapshots and exact restores of :class:`~limbic.core.service.MemoryService`: what undo is built on.

The manager :class:`Snapshots` (``memory.snapshots``). :meth:`~Snapshots.snapshot_entities` copies entities with
everything a deletion destroys (:class:`~limbic.core.store.snapshots.EntityRecord`); the ``restore_*``
methods put recorded rows back, each one transaction (or a savepoint of the caller's), under their old
ids when free, and re-index what they wrote. :meth:`~Snapshots.run_edit` runs several of
these and of the service's mutations as one transaction and returns its change record: the edits of
:mod:`limbic.core.service.edits` are applied and reverted through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from limbic.core import validation as check
from limbic.core.models import Changes, Entity, Observation, Relation, RelationInput
from limbic.core.service import mutations
from limbic.core.service.inputs import prepare_relation
from limbic.core.store import conflicts as conflict_rows
from limbic.core.store import reads, snapshots, writes
from limbic.core.store.conflicts import ConflictRow
from limbic.core.store.database import WriteTransaction
from limbic.core.store.snapshots import EntityRecord

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService

Write = Callable[[str, str | None, Callable[[WriteTransaction], Any]], Any]


class Snapshots:
    """Exact snapshots and restores of entities and relations: what every undo is built on.

    Reached as ``memory.snapshots`` (:class:`~limbic.core.service.memory.MemoryService`).
    """

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def run_edit(self, op: str, steps: Callable[[], object], *, origin: str | None = None) -> Changes:
        """Run ``steps()`` — calls of this service — as one transaction logged as ``op``; return its change record.

        Everything ``steps`` writes is kept, or nothing (the exception propagates). Called inside an open
        transaction it runs in a savepoint and returns a record with ``change_id`` 0: the outer
        transaction commits and notifies. Reads by this thread inside ``steps`` see its writes.
        """
        origin = origin or self.memory.origin
        with self.memory.database.write(origin, op) as txn:
            steps()
        return self.memory.publish(txn, origin, op)

    def snapshot_entities(self, names: Sequence[str]) -> list[EntityRecord]:
        """Records of the named entities (rows, all observations, all relations, usage history), in the order
        given. Recording is not a use. Raises NotFoundError naming every unknown entity."""
        check.count(names, "entity names")
        conn = self.memory.database.read()
        names = [check.name(n) for n in names]
        found = writes.require_ids(conn, names)
        return snapshots.read_records(conn, [found[n] for n in dict.fromkeys(names)])

    def restore_entities(self, records: Sequence[EntityRecord], *, replacing: Sequence[str] = (),
                         origin: str | None = None) -> list[Entity]:
        """Delete the entities named in ``replacing`` (unknown names ignored), then re-create the entities of
        ``records`` exactly: rows, observations with supersede links, relations, usage history, under their
        old ids when free. Returns the restored entities.

        Raises ConflictError when a recorded name is taken, NotFoundError when the other end of a recorded
        relation is gone; nothing is written then."""
        check.count(records, "entity records")
        replacing = [check.name(n) for n in replacing]

        def body(txn: WriteTransaction) -> list[Entity]:
            if replacing:
                mutations.delete_entities(txn, replacing)
            placed, endpoints = snapshots.put_records(txn.conn, records)
            txn.touch(endpoints | set(placed.values()))
            self.memory.reindex(txn, placed.values())
            return reads.entities_by_ids(txn.conn, list(placed.values()))

        return self.memory.write("restore_entities", origin, body)

    def restore_entity(self, name: str, before: Entity, *, observations: Sequence[Observation] = (),
                       remove: Sequence[str] = (), conflicts: Sequence[ConflictRow] = (),
                       origin: str | None = None) -> Entity:
        """Give the entity now called ``name`` the row of ``before`` again (name, type, status, created and
        updated times), delete its observations whose text is in ``remove``, make ``observations`` its
        rows again as recorded (same ids, kinds, weights, times, supersede links) and ``conflicts`` the
        conflicts of those observations again. Returns the entity.

        Raises NotFoundError for an unknown ``name``, ConflictError when another entity holds ``before.name``."""
        name = check.name(name)
        remove = [check.observation(c) for c in remove]

        def body(txn: WriteTransaction) -> Entity:
            eid = writes.require_ids(txn.conn, [name])[name]
            if remove:
                writes.delete_observation_texts(txn.conn, eid, remove)
            placed = snapshots.put_observations(txn.conn, eid, observations)
            conflict_rows.restore(txn.conn, conflicts, placed)
            snapshots.put_entity_row(txn.conn, before, eid)
            txn.touch(eid)
            self.memory.reindex(txn, [eid])
            return reads.entities_by_ids(txn.conn, [eid])[0]

        return self.memory.write("restore_entity", origin, body)

    def restore_relations(self, triples: Sequence[RelationInput], before: Sequence[Relation], *,
                          origin: str | None = None) -> list[Relation]:
        """Make the relations of each ``(source, target, type)`` of ``triples`` exactly ``before`` again
        (context, active or ended, times, old ids when free). Returns the relations written.

        Raises NotFoundError when an endpoint no longer exists."""
        check.count(triples, "relations")
        items = [prepare_relation(t) for t in triples]

        def body(txn: WriteTransaction) -> list[Relation]:
            ids = writes.require_ids(txn.conn, [n for r in items for n in (r.source, r.target)], "relation endpoints")
            for r in items:
                writes.delete_relation(txn.conn, ids[r.source], ids[r.target], r.relation_type)
            endpoints = snapshots.put_relations(txn.conn, before, {})
            txn.touch(endpoints | set(ids.values()))
            wanted = {(r.source, r.target, r.relation_type) for r in before}
            return [r for r in reads.relations_touching(txn.conn, list(ids.values()), include_ended=True)
                    if (r.source, r.target, r.relation_type) in wanted]

        return self.memory.write("restore_relations", origin, body)

