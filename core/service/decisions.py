"""The values of the queue of decisions (:mod:`limbic.core.service.review`): a :class:`Decision`, a section of them
per kind, and the :class:`DecisionSource` each kind provides (docs/architecture.md "Review")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from limbic.core.service.edits import Edit
    from limbic.core.service.memory import MemoryService


@dataclass(frozen=True, slots=True)
class Decision:
    """One thing to decide.

    ``kind``: the source's kind (``contradiction``, ``duplicate``, ``split``, ``forget``, ``promote``,
    ``expired``, …); ``key``: a stable id within the memory (``"contradiction:123:456"``); ``title``: one line;
    ``subjects``: the entity names it concerns; ``evidence``: JSON-able details shown beside it (texts side by
    side, similarity, reason, …); ``options``: the ways to settle it, the suggested one first;
    ``created_at``: when it arose (UTC seconds), ``None`` when unknown.
    """

    kind: str
    key: str
    title: str
    subjects: tuple[str, ...]
    evidence: dict[str, Any] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    created_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (camelCase keys, as MCP results use)."""
        return {"kind": self.kind, "key": self.key, "title": self.title, "subjects": list(self.subjects),
                "evidence": self.evidence, "options": list(self.options), "createdAt": self.created_at}


@dataclass(frozen=True, slots=True)
class ReviewSection:
    """The decisions of one ``kind``: how many there are in all (``total``) and the first ``items``."""

    kind: str
    total: int
    items: tuple[Decision, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "total": self.total, "items": [d.to_dict() for d in self.items]}


class DecisionSource(Protocol):
    """Finds the decisions of one kind and builds the edit that settles one."""

    kind: str

    def find(self, service: MemoryService, limit: int) -> tuple[int, list[Decision]]:
        """The number of open decisions of this kind and the ``limit`` most important ones; never writes."""
        ...

    def edit(self, service: MemoryService, decision: Decision, option: str) -> Edit:
        """The undoable edit that settles ``decision`` with ``option`` (not applied yet).

        Raises:
            ValidationError: ``option`` is not one of ``decision.options``.
        """
        ...
