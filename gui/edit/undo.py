"""Undoable edits of the memory graph: each ``QUndoCommand`` knows its service call and the inverse.

A command's :meth:`apply` and :meth:`revert` take the ``MemoryService`` and run on a worker thread
(the editor's :class:`~limbic.gui.editor.EditQueue` runs them one after another, in order); they
never touch a widget. ``apply`` snapshots whatever the inverse needs (an entity's observations and
relations before a delete or merge) just before it writes. Inverses restore the graph's content —
names, types, statuses, observations with kind, weight, timestamps and supersede links, relations with
context and timestamps — but not usage signals (access counts, co-occurrences), which are not part of
an entity's editable content; database ids change when something is re-created.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtGui import QUndoCommand

from limbic.core.errors import ConflictError, NotFoundError
from limbic.core.models import EntityDetail, EntityInput, Observation, ObservationInput, RelationInput
from limbic.core.service import MemoryService

Submit = Callable[[Callable[[Any], Any], str, "str | None"], None]


# --- snapshot and restore helpers (worker thread) --------------------------------------------------


def observation_inputs(observations: Sequence[Observation]) -> list[ObservationInput]:
    """Inputs that re-create ``observations`` in id order, supersede links included."""
    by_id = {o.id: o for o in observations}
    out = []
    for o in sorted(observations, key=lambda o: o.id):
        previous = by_id.get(o.supersedes) if o.supersedes is not None else None
        out.append(ObservationInput(o.content, o.kind, previous.content if previous else None,
                                    o.created_at, o.expires_at, o.weight))
    return out


def restore_relations(service: MemoryService, relations: Sequence[Any]) -> None:
    """Create ``relations`` again (oldest first); ended ones are created, then ended."""
    for r in sorted({r.id: r for r in relations}.values(), key=lambda r: (r.created_at, r.id)):
        item = RelationInput(r.source, r.target, r.relation_type, r.context, r.created_at)
        service.create_relations([item])
        if not r.active:
            service.end_relation(item)


def restore_entities(service: MemoryService, details: Sequence[EntityDetail]) -> None:
    """Re-create entities from snapshots, then every relation they had (endpoints must exist)."""
    service.create_entities([
        EntityInput(d.entity.name, d.entity.entity_type, tuple(observation_inputs(d.entity.observations)),
                    d.entity.status, d.entity.created_at, d.entity.updated_at)
        for d in details
    ])
    restore_relations(service, [r for d in details for r in d.relations])


def triple_relations(service: MemoryService, item: RelationInput) -> list[Any]:
    """Every stored relation (active or ended) with ``item``'s source, target and type."""
    return [r for r in service.get_entity(item.source).relations
            if (r.source, r.target, r.relation_type) == (item.source, item.target, item.relation_type)]


def reset_triple(service: MemoryService, item: RelationInput, snapshot: Sequence[Any]) -> None:
    """Make the relations of ``item``'s triple exactly ``snapshot`` again."""
    service.delete_relations([item])
    restore_relations(service, snapshot)


# --- commands ----------------------------------------------------------------------------------------


class ServiceCommand(QUndoCommand):
    """Base of every edit. Subclasses define ``apply(service)`` and ``revert(service)``.

    ``submit(fn, label, focus)`` queues ``fn(service)`` on the edit queue; ``focus`` names the entity
    to select afterwards. The first ``redo()`` (Qt calls it on ``push``) is skipped: the editor pushes
    a command only after its first ``apply`` succeeded.
    """

    def __init__(self, text: str, submit: Submit) -> None:
        super().__init__(text)
        self._submit = submit
        self._applied_once = False
        self.focus_after_apply: str | None = None
        self.focus_after_revert: str | None = None

    def mark_applied(self) -> None:
        self._applied_once = True

    # Every command defines both, run on the edit queue, off the UI thread: ``apply`` makes the change,
    # ``revert`` undoes it (checked when a subclass is defined).
    apply: Callable[[MemoryService], None]
    revert: Callable[[MemoryService], None]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        missing = [name for name in ("apply", "revert") if not callable(getattr(cls, name, None))]
        if missing:
            raise TypeError(f"{cls.__name__} must define {' and '.join(missing)}")

    def redo(self) -> None:
        if self._applied_once:
            self._applied_once = False
            return
        self._submit(self.apply, f"Redo {self.text()}", self.focus_after_apply)

    def undo(self) -> None:
        self._submit(self.revert, f"Undo {self.text()}", self.focus_after_revert)


class CreateEntity(ServiceCommand):
    """Create one entity (with observations); undo deletes it. Raises ConflictError if the name exists."""

    def __init__(self, submit: Submit, item: EntityInput) -> None:
        super().__init__(f"create {item.name}", submit)
        self.item = item
        self.focus_after_apply = item.name

    def apply(self, service: MemoryService) -> None:
        if not service.create_entities([self.item]):
            raise ConflictError(f"an entity named {self.item.name!r} already exists")

    def revert(self, service: MemoryService) -> None:
        service.delete_entities([self.item.name])


class DeleteEntities(ServiceCommand):
    """Delete entities; undo re-creates them with observations (history included), status and relations."""

    def __init__(self, submit: Submit, names: Sequence[str]) -> None:
        super().__init__(f"delete {', '.join(names)}", submit)
        self.names = list(names)
        self.snapshot: list[EntityDetail] = []
        self.focus_after_revert = self.names[0]

    def apply(self, service: MemoryService) -> None:
        self.snapshot = [service.get_entity(n) for n in self.names]
        service.delete_entities(self.names)

    def revert(self, service: MemoryService) -> None:
        restore_entities(service, self.snapshot)


class RenameEntity(ServiceCommand):
    """Rename; undo renames back."""

    def __init__(self, submit: Submit, old: str, new: str) -> None:
        super().__init__(f"rename {old} → {new}", submit)
        self.old, self.new = old, new
        self.focus_after_apply, self.focus_after_revert = new, old

    def apply(self, service: MemoryService) -> None:
        service.rename_entity(self.old, self.new)

    def revert(self, service: MemoryService) -> None:
        service.rename_entity(self.new, self.old)


class MergeEntities(ServiceCommand):
    """Merge sources into a target; undo deletes the target and re-creates every entity from snapshots."""

    def __init__(self, submit: Submit, sources: Sequence[str], target: str) -> None:
        super().__init__(f"merge {', '.join(sources)} into {target}", submit)
        self.sources, self.target = list(sources), target
        self.snapshot: list[EntityDetail] = []
        self.focus_after_apply = self.focus_after_revert = target

    def apply(self, service: MemoryService) -> None:
        self.snapshot = [service.get_entity(n) for n in (*self.sources, self.target)]
        service.merge_entities(self.sources, self.target)

    def revert(self, service: MemoryService) -> None:
        service.delete_entities([self.target])
        restore_entities(service, self.snapshot)


class SetStatus(ServiceCommand):
    """Set a status; undo restores each entity's previous status."""

    def __init__(self, submit: Submit, names: Sequence[str], status: str) -> None:
        super().__init__(f"set {', '.join(names)} {status}", submit)
        self.names, self.status = list(names), status
        self.previous: dict[str, str] = {}
        self.focus_after_apply = self.focus_after_revert = self.names[0]

    def apply(self, service: MemoryService) -> None:
        self.previous = {n: service.get_entity(n).entity.status for n in self.names}
        service.set_status(self.names, self.status)

    def revert(self, service: MemoryService) -> None:
        for status in dict.fromkeys(self.previous.values()):
            service.set_status([n for n, s in self.previous.items() if s == status], status)


class AddObservation(ServiceCommand):
    """Add an observation; undo deletes it. Raises ConflictError for an exact duplicate."""

    def __init__(self, submit: Submit, entity: str, observation: ObservationInput) -> None:
        super().__init__(f"add observation to {entity}", submit)
        self.entity, self.observation = entity, observation
        self.focus_after_apply = self.focus_after_revert = entity

    def apply(self, service: MemoryService) -> None:
        [(_, added)] = service.add_observations([(self.entity, [self.observation])])
        if not added:
            raise ConflictError(f"{self.entity!r} already has this observation")

    def revert(self, service: MemoryService) -> None:
        service.delete_observations([(self.entity, [self.observation.content])])


class EditObservation(ServiceCommand):
    """Edit an observation's text (and kind) in place; undo restores text and kind."""

    def __init__(self, submit: Submit, entity: str, old: str, new: str, kind: str | None) -> None:
        super().__init__(f"edit observation of {entity}", submit)
        self.entity, self.old, self.new, self.kind = entity, old, new, kind
        self.previous: list[Observation] = []  # the observation before the edit, and its successor if any
        self.focus_after_apply = self.focus_after_revert = entity

    def apply(self, service: MemoryService) -> None:
        observations = service.get_entity(self.entity).entity.observations
        found = next((o for o in observations if o.content == self.old), None)
        successor = next((o for o in observations if found is not None and o.supersedes == found.id), None)
        self.previous = [o for o in (found, successor) if o is not None]
        service.update_observation(self.entity, self.old, self.new, self.kind)

    def revert(self, service: MemoryService) -> None:
        old_kind = self.previous[0].kind if self.previous else None
        if old_kind is not None or self.kind is None:
            service.update_observation(self.entity, self.new, self.old, old_kind)
            return
        # update_observation cannot clear a kind: put the old observation (and its successor) back.
        remove = [self.new] + [o.content for o in self.previous[1:]]
        service.delete_observations([(self.entity, remove)])
        service.add_observations([(self.entity, observation_inputs(self.previous))])


class SupersedeObservation(ServiceCommand):
    """Add a newer observation that supersedes an old one; undo removes it and makes the old one live."""

    def __init__(self, submit: Submit, entity: str, old: str, new: ObservationInput) -> None:
        super().__init__(f"supersede observation of {entity}", submit)
        self.entity, self.old, self.new = entity, old, new
        self.previous: Observation | None = None
        self.focus_after_apply = self.focus_after_revert = entity

    def apply(self, service: MemoryService) -> None:
        found = [o for o in service.get_entity(self.entity).entity.observations if o.content == self.old]
        self.previous = found[0] if found else None
        service.supersede_observation(self.entity, self.old, self.new)

    def revert(self, service: MemoryService) -> None:
        # The old observation comes back live: delete both, add the old one again with its own fields.
        service.delete_observations([(self.entity, [self.new.content, self.old])])
        p = self.previous
        restored = ObservationInput(self.old) if p is None else ObservationInput(
            p.content, p.kind, None, p.created_at, p.expires_at, p.weight)
        service.add_observations([(self.entity, [restored])])


class DeleteObservation(ServiceCommand):
    """Delete an observation; undo adds it back with its fields and supersede link."""

    def __init__(self, submit: Submit, entity: str, content: str) -> None:
        super().__init__(f"delete observation of {entity}", submit)
        self.entity, self.content = entity, content
        self.restore: list[ObservationInput] = []
        self.successor: str | None = None
        self.focus_after_apply = self.focus_after_revert = entity

    def apply(self, service: MemoryService) -> None:
        observations = service.get_entity(self.entity).entity.observations
        target = next((o for o in observations if o.content == self.content), None)
        if target is None:
            raise NotFoundError(f"{self.entity!r} has no observation {self.content[:80]!r}", [self.content])
        successor = next((o for o in observations if o.supersedes == target.id), None)
        kept = [target] + ([successor] if successor is not None else [])
        self.restore = observation_inputs(kept)
        self.successor = successor.content if successor is not None else None
        service.delete_observations([(self.entity, [self.content])])

    def revert(self, service: MemoryService) -> None:
        if self.successor is not None:  # re-add the successor after it, so the supersede link returns
            service.delete_observations([(self.entity, [self.successor])])
        service.add_observations([(self.entity, self.restore)])


class AddRelation(ServiceCommand):
    """Create a relation; undo restores the (source, target, type) relations as they were."""

    def __init__(self, submit: Submit, item: RelationInput) -> None:
        super().__init__(f"relate {item.source} -[{item.relation_type}]-> {item.target}", submit)
        self.item = item
        self.before: list[Any] = []
        self.focus_after_apply = self.focus_after_revert = item.source

    def apply(self, service: MemoryService) -> None:
        self.before = triple_relations(service, self.item)
        if not service.create_relations([self.item]):
            raise ConflictError("this relation already exists")

    def revert(self, service: MemoryService) -> None:
        reset_triple(service, self.item, self.before)


class EndRelation(ServiceCommand):
    """End an active relation (kept as history); undo restores the relations of that triple."""

    def __init__(self, submit: Submit, item: RelationInput) -> None:
        super().__init__(f"end {item.source} -[{item.relation_type}]-> {item.target}", submit)
        self.item = item
        self.before: list[Any] = []
        self.focus_after_apply = self.focus_after_revert = item.source

    def apply(self, service: MemoryService) -> None:
        self.before = triple_relations(service, self.item)
        service.end_relation(self.item)

    def revert(self, service: MemoryService) -> None:
        reset_triple(service, self.item, self.before)


class DeleteRelation(ServiceCommand):
    """Delete a relation (active or ended); undo restores the relations of that triple."""

    def __init__(self, submit: Submit, item: RelationInput) -> None:
        super().__init__(f"delete {item.source} -[{item.relation_type}]-> {item.target}", submit)
        self.item = item
        self.before: list[Any] = []
        self.focus_after_apply = self.focus_after_revert = item.source

    def apply(self, service: MemoryService) -> None:
        self.before = triple_relations(service, self.item)
        service.delete_relations([self.item])

    def revert(self, service: MemoryService) -> None:
        reset_triple(service, self.item, self.before)
