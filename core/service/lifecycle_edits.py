"""Undoable edits of the lifecycle (docs/lifecycle.md): an observation's terms (expiry, weight).

Each is an :class:`~limbic.core.service.edits.Edit` that records the rows its revert puts back exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from limbic.core.service.entity_edits import _ObservationEdit
from limbic.core.service.memory import MemoryService


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
        service.set_observation_terms(self.entity, self.content, expires_at=self.expires_at, weight=self.weight)
