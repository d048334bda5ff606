"""The queue of decisions: what in the memory needs a person's judgement, and how each is settled.

Contradictions, duplicate clusters, split proposals, forget and promote candidates and expired observations
are all things a person decides (docs/architecture.md "Review"). Each kind has a :class:`DecisionSource`
that finds its :class:`Decision` values (detection never writes) and turns a chosen option into an undoable
:class:`~limbic.core.service.edits.Edit`. :func:`review` lists them for ``consolidation_report``,
``limbic review`` / ``limbic report`` and the app's Review view; :func:`decide` applies one option as one
transaction and returns the applied edit, so the caller can revert it or keep it on an undo stack. Both give
the edit wrapped in :class:`~limbic.core.service.decision_log.Decided`: applying it records the decision in the
log of applied decisions, which ``limbic undo`` and the MCP tool ``undo_decision`` undo from anywhere.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.service import curation_review, decision_log, forgetting, lifecycle_review
from limbic.core.service.decisions import Decision, DecisionSource, Family, ReviewSection, families
from limbic.core.service.edits import Compound

if TYPE_CHECKING:
    from limbic.core.service.edits import Edit
    from limbic.core.service.memory import MemoryService


__all__ = ["SOURCES", "Decision", "DecisionSource", "Family", "ReviewSection", "decide", "decide_all", "edit_for",
           "review", "sources_at"]

FAMILY_SCAN = 10_000
"""Decisions of one kind looked at to find its families (more than are listed; past this many, the rest count
as one row each)."""
FAMILY_TITLES = {
    "duplicate": "{count} facts said twice in entities of type {what} — e.g. {example}",
    "duplicate_entity": "{count} pairs of entities ({what}) — e.g. {example}",
}

SOURCES: tuple[DecisionSource, ...] = (*lifecycle_review.LIFECYCLE_SOURCES, *curation_review.SOURCES)
"""Every kind of decision, in the order the report lists them."""


def sources_at(at: float) -> tuple[DecisionSource, ...]:
    """:data:`SOURCES` as the queue would stand at ``at`` (UTC seconds, now or later) if nothing is used or written
    meanwhile: the lifecycle's forget, promote and expired kinds read then (:func:`lifecycle_review.sources_at`),
    the other kinds as they are now."""
    return (*lifecycle_review.sources_at(at), *curation_review.SOURCES)


def review(service: MemoryService, kinds: Sequence[str] | None = None, limit: int = 20,
           sources: Sequence[DecisionSource] | None = None) -> list[ReviewSection]:
    """One section per kind (only ``kinds`` when given), each with its total and its first ``limit`` decisions.

    Raises:
        ValidationError: an unknown kind in ``kinds``, or ``limit`` below 0.
    """
    if limit < 0:
        raise ValidationError("limit must be 0 or more")
    # every kind read at one moment, so that forget and promote share one retention review
    known = {source.kind: source for source in (sources_at(time.time()) if sources is None else sources)}
    wanted = list(known) if kinds is None else list(dict.fromkeys(kinds))
    unknown = [kind for kind in wanted if kind not in known]
    if unknown:
        raise ValidationError(f"unknown kind of decision: {', '.join(unknown)}; known: {', '.join(known) or 'none'}")
    sections = []
    with forgetting.shared_reviews():  # forget and promote read the same retention review
        for kind in wanted:
            total, items = known[kind].find(service, max(limit, FAMILY_SCAN))
            alike = families(items, FAMILY_TITLES.get(kind, "{count} alike: {example}"))
            sections.append(ReviewSection(kind, total, tuple(items[:limit]), alike))
    return sections


def decide(service: MemoryService, key: str, option: str, *, origin: str | None = None,
           sources: Sequence[DecisionSource] | None = None) -> decision_log.Decided:
    """Settle the open decision ``key`` with ``option`` as one transaction, logged; returns the applied edit
    (``edit.revert(service)`` undoes it exactly; its ``decision_id`` is its row in the log).

    Raises:
        NotFoundError: no open decision has that key; the message says why (:func:`_not_open`).
        ValidationError: ``option`` is not one of the decision's options.
    """
    kind = key.split(":", 1)[0]
    source = next((s for s in (SOURCES if sources is None else sources) if s.kind == kind), None)
    if source is None:
        raise NotFoundError(f"no open decision {key!r}")
    _, found = source.find(service, limit=10_000)
    decision = next((d for d in found if d.key == key), None)
    if decision is None:
        raise NotFoundError(f"no open decision {key!r}: {_not_open(service, key)}")
    if option not in decision.options:
        raise ValidationError(f"{option!r} is not an option of {key!r}; options: {', '.join(decision.options)}")
    return decision_log.apply(service, source.edit(service, decision, option), decision.kind, decision.subjects,
                              origin=origin)


def decide_all(service: MemoryService, keys: Sequence[str], option: str, *, origin: str | None = None,
               sources: Sequence[DecisionSource] | None = None) -> Edit:
    """Settle every open decision of ``keys`` (of one kind, e.g. a :class:`Family`'s) with ``option`` as one
    edit (one undo takes back all of them); returns the applied edit.

    Raises:
        ValidationError: no keys, keys of several kinds, or ``option`` not an option of one of them.
        NotFoundError: one of the keys is not an open decision.
    """
    keys = list(dict.fromkeys(keys))
    kinds = {key.split(":", 1)[0] for key in keys}
    if len(kinds) != 1:
        raise ValidationError("name the keys of open decisions of one kind")
    [kind] = kinds
    source = next((s for s in (SOURCES if sources is None else sources) if s.kind == kind), None)
    if source is None:
        raise NotFoundError(f"no open decision {keys[0]!r}")
    _, found = source.find(service, limit=10_000)
    by_key = {d.key: d for d in found}
    missing = [key for key in keys if key not in by_key]
    if missing:
        raise NotFoundError(f"no open decision {missing[0]!r}: {_not_open(service, missing[0])}")
    steps = []
    for key in keys:
        if option not in by_key[key].options:
            raise ValidationError(f"{option!r} is not an option of {key!r}; options: {', '.join(by_key[key].options)}")
        steps.append(source.edit(service, by_key[key], option))
    edit = steps[0] if len(steps) == 1 else Compound(f"{option} {len(steps)} alike decisions", steps)
    return decision_log.apply(service, edit, kind, [name for key in keys for name in by_key[key].subjects],
                              origin=origin)


def _not_open(service: MemoryService, key: str) -> str:
    """Why ``key`` names no open decision, in one line: for a contradiction, its conflict's own state
    (:meth:`~limbic.core.service.MemoryService.lifecycle.why_not_open`: unknown, another project's, settled when and by
    whom, an observation changed); otherwise that it was settled or the memory changed."""
    kind, _, number = key.partition(":")
    if kind == lifecycle_review.ContradictionSource.kind and number.isascii() and number.isdigit() \
            and len(number) < 19:  # an id SQL can hold
        reason = service.lifecycle.why_not_open(int(number))
        if reason is not None:
            return reason
    return "it was settled or the memory changed"


def edit_for(service: MemoryService, decision: Decision, option: str,
             sources: Sequence[DecisionSource] | None = None) -> Edit:
    """The undoable edit that settles ``decision`` with ``option``, not applied (the app's Review view applies it on
    its undo stack); applying it records the decision in the log.

    Raises:
        NotFoundError: no source handles the decision's kind.
        ValidationError: ``option`` is not one of the decision's options.
    """
    source = next((s for s in (SOURCES if sources is None else sources) if s.kind == decision.kind), None)
    if source is None:
        raise NotFoundError(f"no source of {decision.kind!r} decisions")
    return decision_log.Decided(source.edit(service, decision, option), decision.kind, decision.subjects)
