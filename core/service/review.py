"""The queue of decisions: what in the memory needs a person's judgement, and how each is settled.

Contradictions, duplicate clusters, split proposals, forget and promote candidates and expired observations
are all things a person decides (docs/architecture.md "Review"). Each kind has a :class:`DecisionSource`
that finds its :class:`Decision` values (detection never writes) and turns a chosen option into an undoable
:class:`~limbic.core.service.edits.Edit`. :func:`review` lists them for ``consolidation_report``,
``limbic review`` / ``limbic report`` and the app's Review view; :func:`decide` applies one option as one
transaction and returns the applied edit, so the caller can revert it or keep it on an undo stack.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from limbic.core.errors import NotFoundError, ValidationError

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


from limbic.core.service import curation_review  # noqa: E402  (its sources build on the classes above)

SOURCES: tuple[DecisionSource, ...] = (*curation_review.SOURCES,)
"""Every kind of decision, in the order the report lists them."""


def review(service: MemoryService, kinds: Sequence[str] | None = None, limit: int = 20,
           sources: Sequence[DecisionSource] = SOURCES) -> list[ReviewSection]:
    """One section per kind (only ``kinds`` when given), each with its total and its first ``limit`` decisions.

    Raises:
        ValidationError: an unknown kind in ``kinds``, or ``limit`` below 0.
    """
    if limit < 0:
        raise ValidationError("limit must be 0 or more")
    known = {source.kind: source for source in sources}
    wanted = list(known) if kinds is None else list(dict.fromkeys(kinds))
    unknown = [kind for kind in wanted if kind not in known]
    if unknown:
        raise ValidationError(f"unknown kind of decision: {', '.join(unknown)}; known: {', '.join(known) or 'none'}")
    sections = []
    for kind in wanted:
        total, items = known[kind].find(service, limit)
        sections.append(ReviewSection(kind, total, tuple(items[:limit])))
    return sections


def decide(service: MemoryService, key: str, option: str, *, origin: str | None = None,
           sources: Sequence[DecisionSource] = SOURCES) -> Edit:
    """Settle the open decision ``key`` with ``option`` as one transaction; returns the applied edit
    (``edit.revert(service)`` undoes it exactly).

    Raises:
        NotFoundError: no open decision has that key (already settled, or the memory changed).
        ValidationError: ``option`` is not one of the decision's options.
    """
    kind = key.split(":", 1)[0]
    source = next((s for s in sources if s.kind == kind), None)
    if source is None:
        raise NotFoundError(f"no open decision {key!r}")
    _, found = source.find(service, limit=10_000)
    decision = next((d for d in found if d.key == key), None)
    if decision is None:
        raise NotFoundError(f"no open decision {key!r}: it was settled or the memory changed")
    if option not in decision.options:
        raise ValidationError(f"{option!r} is not an option of {key!r}; options: {', '.join(decision.options)}")
    edit = source.edit(service, decision, option)
    edit.apply(service, origin=origin)
    return edit
