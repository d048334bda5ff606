"""Undoable edits of the lifecycle (docs/lifecycle.md): an observation's terms (expiry, weight), settling a
conflict, pinning entities and their strength.

Each is an :class:`~limbic.core.service.edits.Edit` that records the rows its revert puts back exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from limbic.core.models import Entity
from limbic.core.service.edits import Edit
from limbic.core.service.entity_edits import _ObservationEdit
from limbic.core.service.memory import MemoryService
from limbic.core.store.conflicts import ConflictRow


@dataclass(eq=False)
class SetObservationTerms(_ObservationEdit):
    """Set when an observation expires (UTC seconds, ``None``: never) and its weight (0.1..1.0); revert
    restores both."""

    content: str
    expires_at: float | None
    weight: float
    op: ClassVar[str] = "set_observation_terms"

    @property
    def description(self) -> str:
        return f"set expiry and weight of an observation of {self.entity}"

    def perform(self, service: MemoryService) -> None:
        self._record(service)
        self.kept = (self._find(self.content),)
        service.lifecycle.set_observation_terms(self.entity, self.content, expires_at=self.expires_at, weight=self.weight)


@dataclass(eq=False)
class SettleConflict(Edit):
    """Settle a conflict with one of its options (keep both, update old, supersede, delete old); revert puts both
    entities' observations and the conflict back exactly as they were (open)."""

    conflict_id: int
    option: str
    row: ConflictRow = field(init=False, repr=False)
    before: list[Entity] = field(init=False, repr=False)
    op: ClassVar[str] = "settle_conflict"

    @property
    def description(self) -> str:
        return f"{self.option.replace('_', ' ')} (conflict {self.conflict_id})"

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.row.entity if hasattr(self, "row") else None

    def perform(self, service: MemoryService) -> None:
        self.row = service.lifecycle.conflict(self.conflict_id)
        names = dict.fromkeys((self.row.entity, self.row.other_entity))
        self.before = [service.entities.get_entity(name).entity for name in names]
        service.lifecycle.settle_conflict(self.conflict_id, self.option)

    def reverse(self, service: MemoryService) -> None:
        for entity in self.before:
            service.snapshots.restore_entity(entity.name, entity, observations=entity.observations)
        service.lifecycle.restore_conflict(self.row)


@dataclass(eq=False)
class _EntityRowEdit(Edit):
    """An edit of some entities' rows; revert gives each its recorded row back (pin, strength, times)."""

    names: Sequence[str]
    before: list[Entity] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.names = tuple(dict.fromkeys(self.names))

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.names[0] if self.names else None

    def _record(self, service: MemoryService) -> None:
        self.before = [service.entities.get_entity(name).entity for name in self.names]

    def reverse(self, service: MemoryService) -> None:
        for entity in self.before:
            service.snapshots.restore_entity(entity.name, entity)


@dataclass(eq=False)
class SetPinned(_EntityRowEdit):
    """Pin (promote to long-term memory: never a forget candidate) or unpin entities."""

    pinned: bool = True
    op: ClassVar[str] = "set_pinned"

    @property
    def description(self) -> str:
        return f"{'pin' if self.pinned else 'unpin'} {', '.join(self.names)}"

    def perform(self, service: MemoryService) -> None:
        self._record(service)
        service.lifecycle.set_pinned(self.names, self.pinned)


@dataclass(eq=False)
class SetStrength(_EntityRowEdit):
    """Set the strength (0..2) of entities' retention scores."""

    value: float = 1.0
    op: ClassVar[str] = "set_strength"

    @property
    def description(self) -> str:
        return f"set strength {self.value:g} of {', '.join(self.names)}"

    def perform(self, service: MemoryService) -> None:
        self._record(service)
        service.lifecycle.set_strength(self.names, self.value)
