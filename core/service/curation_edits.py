"""The curation edits: settling duplicates and keeping things as they are, each undoable exactly.

Each is an :class:`~limbic.core.service.edits.Edit` (one transaction to apply, one to revert). Merging
duplicate observations keeps one text and deletes the others (:func:`merge_duplicates`); superseding keeps
the newest live and the others as its history (:class:`SupersedeDuplicates`); combining writes one text that
keeps every detail of the members and makes them its history (:class:`CombineDuplicates`); merging duplicate entities is
:class:`~limbic.core.service.entity_edits.MergeEntities` (observations, relations and usage history move to
the survivor); keeping as is records the person's choice so that it is not proposed again
(:class:`KeepAsIs`); splitting an entity is :class:`SplitEntity`; reflections are written, edited and deleted by
:class:`AddReflection`, :class:`EditReflection` and :class:`DeleteReflection`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from limbic.core.errors import ValidationError
from limbic.core.models import Entity, Observation, ObservationInput, Reflection, RelationInput
from limbic.core.service.curating import Member, pair_key
from limbic.core.service.edits import Compound, Edit
from limbic.core.service.entity_edits import DeleteObservation
from limbic.core.service.memory import MemoryService
from limbic.core.service.splitting import SplitPart
from limbic.core.store.snapshots import EntityRecord


def longest(members: Sequence[Member]) -> Member:
    """The member that says the most (longest text), the oldest among equals: the one a merge keeps."""
    return min(members, key=lambda m: (-len(m.content), m.created_at, m.id))


def newest(members: Sequence[Member]) -> Member:
    """The most recent member, the newest id among equals: the one a supersede keeps live."""
    return max(members, key=lambda m: (m.created_at, m.id))


def merge_duplicates(members: Sequence[Member], survivor: Member | None = None) -> Compound:
    """Keep ``survivor`` (default :func:`longest`) and delete the other ``members``; one undo puts them back
    with their ids, kinds, times and supersede links. Raises ValidationError for fewer than two members or
    a survivor that is not one of them."""
    keeper = _check(members, survivor, longest)
    steps = [DeleteObservation(m.entity, m.content) for m in members if m.id != keeper.id]
    return Compound(f"merge {len(members)} duplicate observations into “{_short(keeper.content)}”", steps)


@dataclass(eq=False)
class SupersedeDuplicates(Edit):
    """Keep ``survivor`` (default :func:`newest`) live and mark the other ``members`` superseded by it: they stay
    as history of their entities (linked to it within one entity). Revert makes them live again exactly."""

    members: Sequence[Member]
    survivor: Member | None = None
    before: list[tuple[Entity, tuple[Observation, ...]]] = field(init=False, repr=False)
    op: ClassVar[str] = "supersede_duplicates"

    def __post_init__(self) -> None:
        self.members = tuple(self.members)
        self.survivor = _check(self.members, self.survivor, newest)

    @property
    def description(self) -> str:
        assert self.survivor is not None
        return f"supersede {len(self.members) - 1} duplicates by “{_short(self.survivor.content)}”"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.survivor.entity if self.survivor is not None else None

    def perform(self, service: MemoryService) -> None:
        keeper = self.survivor
        assert keeper is not None
        olds: dict[str, list[str]] = {}
        for m in self.members:
            if m.id != keeper.id:
                olds.setdefault(m.entity, []).append(m.content)
        self.before = []
        for entity, contents in olds.items():
            current = service.entities.get_entity(entity).entity
            touched = {*contents, keeper.content} if entity == keeper.entity else set(contents)
            self.before.append((current, tuple(o for o in current.observations if o.content in touched)))
            service.curation.supersede_by(entity, contents, keeper.entity, keeper.content)

    def reverse(self, service: MemoryService) -> None:
        for entity, rows in reversed(self.before):
            service.snapshots.restore_entity(entity.name, entity, observations=rows)


@dataclass(eq=False)
class CombineDuplicates(Edit):
    """Write ``text`` — one text keeping every detail of ``members``, shown to the person before
    (:attr:`~limbic.core.service.curating.DuplicateCluster.merged`) — as an observation of ``entity`` (default:
    the entity holding most members, the first among equals) and mark every member superseded by it: they stay
    as history (linked to it within its entity). The new observation takes the members' kind when they share
    one. Revert deletes it and makes the members live again exactly. Raises ValidationError for fewer than two
    members, an empty text or an entity holding none of them."""

    members: Sequence[Member]
    text: str
    entity: str | None = None
    before: list[tuple[Entity, tuple[Observation, ...]]] = field(init=False, repr=False)
    added: bool = field(default=False, init=False, repr=False)
    op: ClassVar[str] = "combine_duplicates"

    def __post_init__(self) -> None:
        self.members = tuple(self.members)
        if len({m.id for m in self.members}) < 2:
            raise ValidationError("a duplicate cluster needs at least two observations")
        if not self.text.strip():
            raise ValidationError("the combined text is empty")
        holders = [m.entity for m in self.members]
        if self.entity is None:
            self.entity = max(dict.fromkeys(holders), key=holders.count)
        elif self.entity not in holders:
            raise ValidationError(f"{self.entity!r} holds none of the observations to combine")

    @property
    def description(self) -> str:
        return f"combine {len(self.members)} duplicate observations into “{_short(self.text)}”"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.entity

    def perform(self, service: MemoryService) -> None:
        assert self.entity is not None
        olds: dict[str, list[str]] = {self.entity: []}
        for m in self.members:
            olds.setdefault(m.entity, []).append(m.content)
        self.before = []
        for entity, contents in olds.items():
            current = service.entities.get_entity(entity).entity
            touched = {*contents, self.text} if entity == self.entity else set(contents)
            self.before.append((current, tuple(o for o in current.observations if o.content in touched)))
        kinds = {m.kind for m in self.members}
        [(_, written)] = service.entities.add_observations(
            [(self.entity, [ObservationInput(self.text, kind=kinds.pop() if len(kinds) == 1 else None)])])
        self.added = bool(written)
        for entity, contents in olds.items():
            if contents:
                service.curation.supersede_by(entity, contents, self.entity, self.text)

    def reverse(self, service: MemoryService) -> None:
        for entity, rows in reversed(self.before):
            remove = (self.text,) if self.added and entity.name == self.entity else ()
            service.snapshots.restore_entity(entity.name, entity, observations=rows, remove=remove)


@dataclass(eq=False)
class KeepAsIs(Edit):
    """Record that a person keeps these as they are (``curation_kept`` keys): the decision is not proposed
    again. Revert forgets exactly the keys this edit recorded."""

    keys: Sequence[str]
    text: str = "keep as is"
    added: list[str] = field(init=False, repr=False)
    op: ClassVar[str] = "keep_as_is"

    def __post_init__(self) -> None:
        self.keys = tuple(self.keys)

    @property
    def description(self) -> str:
        return self.text

    def perform(self, service: MemoryService) -> None:
        self.added = service.curation.keep_as_is(self.keys)

    def reverse(self, service: MemoryService) -> None:
        if self.added:
            service.curation.keep_as_is(self.added, keep=False)


@dataclass(eq=False)
class AddReflection(Edit):
    """Write a reflection (:meth:`~limbic.core.service.MemoryService.reflections.add_reflection`); revert deletes it."""

    target_type: str
    target: str | RelationInput | None
    author: str
    content: str
    mood: str | None = None
    added: Reflection | None = field(default=None, init=False, repr=False)
    op: ClassVar[str] = "add_reflection"

    @property
    def description(self) -> str:
        return f"add a reflection by {self.author}"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.target if isinstance(self.target, str) else self.target.source if self.target else None

    def perform(self, service: MemoryService) -> None:
        if self.added is not None:  # redo: the same row again
            self.added = service.reflections.restore_reflection(self.added)
            return
        self.added = service.reflections.add_reflection(self.target_type, self.target, self.author, self.content, self.mood)

    def reverse(self, service: MemoryService) -> None:
        assert self.added is not None
        service.reflections.delete_reflection(self.added.id)


@dataclass(eq=False)
class EditReflection(Edit):
    """Rewrite a reflection's text, author and mood; revert gives its row back exactly."""

    reflection_id: int
    content: str
    author: str | None = None
    mood: str | None = None
    before: Reflection = field(init=False, repr=False)
    op: ClassVar[str] = "update_reflection"

    @property
    def description(self) -> str:
        return "edit a reflection"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.before.entity if hasattr(self, "before") else None

    def perform(self, service: MemoryService) -> None:
        self.before = service.reflections.get_reflection(self.reflection_id)
        service.reflections.update_reflection(self.reflection_id, self.content, author=self.author, mood=self.mood)

    def reverse(self, service: MemoryService) -> None:
        service.reflections.restore_reflection(self.before)


@dataclass(eq=False)
class DeleteReflection(Edit):
    """Delete a reflection; revert puts it back exactly (same id when free)."""

    reflection_id: int
    before: Reflection = field(init=False, repr=False)
    op: ClassVar[str] = "delete_reflection"

    @property
    def description(self) -> str:
        return "delete a reflection"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.before.entity if hasattr(self, "before") else None

    def perform(self, service: MemoryService) -> None:
        self.before = service.reflections.delete_reflection(self.reflection_id)

    def reverse(self, service: MemoryService) -> None:
        service.reflections.restore_reflection(self.before)


@dataclass(eq=False)
class SplitEntity(Edit):
    """Split ``entity`` into ``parts`` (:meth:`~limbic.core.service.MemoryService.splits.split_entity`, one
    transaction); revert deletes the parts and gives the original back exactly (observations, relations,
    usage history, reflections)."""

    entity: str
    parts: Sequence[SplitPart]
    relation_names: str = "contains"
    before: list[EntityRecord] = field(init=False, repr=False)
    op: ClassVar[str] = "split_entity"

    def __post_init__(self) -> None:
        self.parts = tuple(self.parts)

    @property
    def description(self) -> str:
        return f"split {self.entity} into {len(self.parts)} parts"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.entity

    def perform(self, service: MemoryService) -> None:
        self.before = service.snapshots.snapshot_entities([self.entity])
        service.splits.split_entity(self.entity, self.parts, relation_names=self.relation_names)

    def reverse(self, service: MemoryService) -> None:
        service.snapshots.restore_entities(self.before, replacing=[self.entity, *(p.name for p in self.parts)])


def pair_keys(kind: str, ids: Sequence[int]) -> list[str]:
    """The ``curation_kept`` keys of every pair of ``ids`` (``kind``: ``observations`` or ``entities``)."""
    unique = sorted(set(ids))
    return [pair_key(kind, a, b) for i, a in enumerate(unique) for b in unique[i + 1:]]


def keep_observations_apart(members: Sequence[Member]) -> KeepAsIs:
    """Keep every pair of ``members`` apart: they are not proposed as duplicates of one another again."""
    return KeepAsIs(pair_keys("observations", [m.id for m in members]),
                    f"keep {len(members)} similar observations apart")


def keep_entities_apart(entity_ids: Sequence[int], names: Sequence[str]) -> KeepAsIs:
    """Keep these entities apart: they are not proposed as one again."""
    return KeepAsIs(pair_keys("entities", entity_ids), f"keep {', '.join(names)} apart")


def _check(members: Sequence[Member], survivor: Member | None, default) -> Member:
    if len({m.id for m in members}) < 2:
        raise ValidationError("a duplicate cluster needs at least two observations")
    if survivor is None:
        return default(members)
    if survivor.id not in {m.id for m in members}:
        raise ValidationError("the observation to keep must be one of the cluster's")
    return survivor


def _short(text: str, length: int = 40) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"
