"""The edits of the entity editor: entities, observations and relations, each undoable exactly.

Each is an :class:`~limbic.core.service.edits.Edit`: ``perform`` records the rows its ``reverse`` needs,
then calls one mutation of :class:`~limbic.core.service.MemoryService`; ``reverse`` puts those rows
back through the service's restores (:mod:`limbic.core.service.restoring`). A deleted or merged entity
is re-created with its observations (supersede history included), status, relations and usage
history; the other edits restore just the rows they changed, so that a write another client made
meanwhile to other rows stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from limbic.core.errors import ConflictError, NotFoundError
from limbic.core.models import Entity, EntityInput, Observation, ObservationInput, Relation, RelationInput
from limbic.core.service.edits import Edit
from limbic.core.service.memory import MemoryService
from limbic.core.store.conflicts import ConflictRow
from limbic.core.store.snapshots import EntityRecord

# --- entities ------------------------------------------------------------------------------------


@dataclass(eq=False)
class CreateEntity(Edit):
    """Create one entity with its observations; revert deletes it. Raises ConflictError when the name exists."""

    item: EntityInput
    op: ClassVar[str] = "create_entity"

    @property
    def description(self) -> str:
        return f"create {self.item.name}"

    def subject(self, *, reverted: bool = False) -> str | None:
        return None if reverted else self.item.name

    def perform(self, service: MemoryService) -> None:
        if not service.entities.create_entities([self.item]):
            raise ConflictError(f"an entity named {self.item.name!r} already exists")

    def reverse(self, service: MemoryService) -> None:
        service.entities.delete_entities([self.item.name])


@dataclass(eq=False)
class DeleteEntities(Edit):
    """Delete entities; revert re-creates each exactly (observations, relations, status, usage history)."""

    names: Sequence[str]
    before: list[EntityRecord] = field(init=False, repr=False)
    op: ClassVar[str] = "delete_entities"

    def __post_init__(self) -> None:
        self.names = tuple(self.names)

    @property
    def description(self) -> str:
        return f"delete {', '.join(self.names)}"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.names[0] if reverted and self.names else None

    def perform(self, service: MemoryService) -> None:
        self.before = service.snapshots.snapshot_entities(self.names)
        service.entities.delete_entities(self.names)

    def reverse(self, service: MemoryService) -> None:
        service.snapshots.restore_entities(self.before)


@dataclass(eq=False)
class MergeEntities(Edit):
    """Merge ``sources`` into ``target``; revert deletes the merged target and re-creates every entity exactly
    as it was (the usage signals the merge summed are split again)."""

    sources: Sequence[str]
    target: str
    before: list[EntityRecord] = field(init=False, repr=False)
    op: ClassVar[str] = "merge_entities"

    def __post_init__(self) -> None:
        self.sources = tuple(self.sources)

    @property
    def description(self) -> str:
        return f"merge {', '.join(self.sources)} into {self.target}"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.target

    def perform(self, service: MemoryService) -> None:
        self.before = service.snapshots.snapshot_entities([*self.sources, self.target])
        service.entities.merge_entities(self.sources, self.target)

    def reverse(self, service: MemoryService) -> None:
        service.snapshots.restore_entities(self.before, replacing=[self.target])


@dataclass(eq=False)
class RenameEntity(Edit):
    """Rename an entity (relations follow); revert gives back the old name and the entity's row."""

    old: str
    new: str
    before: Entity = field(init=False, repr=False)
    op: ClassVar[str] = "rename_entity"

    @property
    def description(self) -> str:
        return f"rename {self.old} → {self.new}"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.old if reverted else self.new

    def perform(self, service: MemoryService) -> None:
        self.before = service.entities.get_entity(self.old).entity
        service.entities.rename_entity(self.old, self.new)

    def reverse(self, service: MemoryService) -> None:
        service.snapshots.restore_entity(self.new, self.before)


@dataclass(eq=False)
class SetStatus(Edit):
    """Set the status of entities; revert gives each its row back (previous status, updated time)."""

    names: Sequence[str]
    status: str
    before: list[Entity] = field(init=False, repr=False)
    op: ClassVar[str] = "set_status"

    def __post_init__(self) -> None:
        self.names = tuple(self.names)

    @property
    def description(self) -> str:
        return f"set {', '.join(self.names)} {self.status}"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.names[0] if self.names else None

    def perform(self, service: MemoryService) -> None:
        self.before = [service.entities.get_entity(n).entity for n in dict.fromkeys(self.names)]
        service.entities.set_status(self.names, self.status)

    def reverse(self, service: MemoryService) -> None:
        for entity in self.before:
            service.snapshots.restore_entity(entity.name, entity)


# --- observations --------------------------------------------------------------------------------


@dataclass(eq=False)
class _ObservationEdit(Edit):
    """An edit of one entity's observations. ``perform`` records the entity (``before``) and the conflicts of
    its observations, the observation rows the revert puts back (``kept``) and the texts it removes (``added``)."""

    entity: str
    before: Entity = field(init=False, repr=False)
    conflicts: tuple[ConflictRow, ...] = field(init=False, repr=False)
    kept: tuple[Observation, ...] = field(init=False, repr=False)
    added: tuple[str, ...] = field(init=False, repr=False)

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.entity

    def _record(self, service: MemoryService) -> None:
        self.before = service.entities.get_entity(self.entity).entity
        self.conflicts = service.snapshots.snapshot_entities([self.entity])[0].conflicts
        self.kept, self.added = (), ()

    def _find(self, content: str) -> Observation:
        """The recorded observation ``content``. Raises NotFoundError when the entity has none."""
        found = next((o for o in self.before.observations if o.content == content), None)
        if found is None:
            raise NotFoundError(f"{self.entity!r} has no observation {content[:80]!r}", [content])
        return found

    def reverse(self, service: MemoryService) -> None:
        service.snapshots.restore_entity(self.entity, self.before, observations=self.kept, remove=self.added,
                               conflicts=self.conflicts)


@dataclass(eq=False)
class AddObservation(_ObservationEdit):
    """Add an observation; revert deletes it. Raises ConflictError when the entity has that text already."""

    observation: ObservationInput
    op: ClassVar[str] = "add_observation"

    @property
    def description(self) -> str:
        return f"add observation to {self.entity}"

    def perform(self, service: MemoryService) -> None:
        self._record(service)
        [(_, added)] = service.entities.add_observations([(self.entity, [self.observation])])
        if not added:
            raise ConflictError(f"{self.entity!r} already has this observation")
        self.added = tuple(added)


@dataclass(eq=False)
class EditObservation(_ObservationEdit):
    """Change an observation's text (and kind, when given) in place; revert restores both (a kind the edit
    set where there was none is cleared again)."""

    old: str
    new: str
    kind: str | None = None
    op: ClassVar[str] = "update_observation"

    @property
    def description(self) -> str:
        return f"edit observation of {self.entity}"

    def perform(self, service: MemoryService) -> None:
        self._record(service)
        self.kept = (self._find(self.old),)
        service.entities.update_observation(self.entity, self.old, self.new, self.kind)


@dataclass(eq=False)
class SupersedeObservation(_ObservationEdit):
    """Add ``new`` as the successor of the live observation ``old`` (kept as history); revert deletes ``new``
    and makes ``old`` live again."""

    old: str
    new: ObservationInput
    op: ClassVar[str] = "supersede_observation"

    @property
    def description(self) -> str:
        return f"supersede observation of {self.entity}"

    def perform(self, service: MemoryService) -> None:
        self._record(service)
        self.kept = (self._find(self.old),)
        self.added = (service.entities.supersede_observation(self.entity, self.old, self.new).content,)


@dataclass(eq=False)
class DeleteObservation(_ObservationEdit):
    """Delete an observation (live or superseded); revert puts it back, linked to its successor again."""

    content: str
    op: ClassVar[str] = "delete_observation"

    @property
    def description(self) -> str:
        return f"delete observation of {self.entity}"

    def perform(self, service: MemoryService) -> None:
        self._record(service)
        target = self._find(self.content)
        self.kept = (target, *(o for o in self.before.observations if o.supersedes == target.id))
        service.entities.delete_observations([(self.entity, [self.content])])


# --- relations -----------------------------------------------------------------------------------


@dataclass(eq=False)
class _RelationEdit(Edit):
    """An edit of the relations ``item.source -[item.relation_type]-> item.target``; revert makes them exactly
    what they were (active or ended, context, times)."""

    item: RelationInput
    before: tuple[Relation, ...] = field(init=False, repr=False)

    def _arrow(self) -> str:
        return f"{self.item.source} -[{self.item.relation_type}]-> {self.item.target}"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.item.source

    def _record(self, service: MemoryService) -> None:
        triple = (self.item.source, self.item.target, self.item.relation_type)
        self.before = tuple(r for r in service.entities.get_entity(self.item.source).relations
                            if (r.source, r.target, r.relation_type) == triple)

    def reverse(self, service: MemoryService) -> None:
        service.snapshots.restore_relations([self.item], self.before)


@dataclass(eq=False)
class AddRelation(_RelationEdit):
    """Create a relation. Raises ConflictError when the same relation is active already."""

    op: ClassVar[str] = "create_relation"

    @property
    def description(self) -> str:
        return f"relate {self._arrow()}"

    def perform(self, service: MemoryService) -> None:
        self._record(service)
        if not service.relations.create_relations([self.item]):
            raise ConflictError("this relation already exists")


@dataclass(eq=False)
class EndRelation(_RelationEdit):
    """Mark an active relation as ended (kept as history). Raises NotFoundError when none is active."""

    op: ClassVar[str] = "end_relation"

    @property
    def description(self) -> str:
        return f"end {self._arrow()}"

    def perform(self, service: MemoryService) -> None:
        self._record(service)
        service.relations.end_relation(self.item)


@dataclass(eq=False)
class DeleteRelation(_RelationEdit):
    """Delete the relations (active and ended) of one source, target and type."""

    op: ClassVar[str] = "delete_relation"

    @property
    def description(self) -> str:
        return f"delete {self._arrow()}"

    def perform(self, service: MemoryService) -> None:
        self._record(service)
        service.relations.delete_relations([self.item])
