"""The lifecycle's kinds of decision for the queue of :mod:`limbic.core.service.review` (docs/lifecycle.md).

``contradiction``: an open conflict between a written observation and an older one (texts side by side,
similarity, the checkable difference), settled by keeping both, updating the old one, superseding it or deleting
it. ``expired``: an observation past its expiry, kept as history; delete it or renew it (no expiry). ``forget``
and ``promote``: memories whose retention score says so (archive, delete or pin; pin). Every option is an
undoable edit. :func:`sources_at` reads the last three as they would stand at a later moment if nothing is used or
written meanwhile (``consolidation_report``'s ``at``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from limbic.core.errors import ValidationError
from limbic.core.lifecycle.contradictions import SUGGESTIONS, options_for
from limbic.core.lifecycle.retention import duration
from limbic.core.models import iso
from limbic.core.service import forgetting
from limbic.core.service.decisions import Decision
from limbic.core.service.edits import Edit
from limbic.core.service.entity_edits import DeleteEntities, DeleteObservation, SetStatus
from limbic.core.service.forgetting import Retention
from limbic.core.service.lifecycle_edits import SetObservationTerms, SetPinned, SettleConflict
from limbic.core.store import expiry

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService

EXPIRED_OPTIONS = ("delete", "renew")


def _decision(**fields: object) -> Decision:

    return Decision(**fields)  # type: ignore[arg-type]


def _check(decision: Decision, option: str) -> None:
    if option not in decision.options:
        raise ValidationError(f"{option!r} is not an option of {decision.key!r}; options: {', '.join(decision.options)}")


class ContradictionSource:
    """Open conflicts, newest first (:mod:`limbic.core.service.conflict_checks`), both texts side by side; keeping
    both is suggested unless the newer says it is current
    (:func:`~limbic.core.lifecycle.contradictions.options_for`)."""

    kind = "contradiction"

    def find(self, service: MemoryService, limit: int) -> tuple[int, list[Decision]]:
        total, rows = service.lifecycle.open_conflicts(limit)
        options = [options_for(r.other_content, r.content, r.entity == r.other_entity) for r in rows]
        return total, [_decision(
            kind=self.kind, key=f"{self.kind}:{r.id}",
            title=f"{r.entity}: “{r.content}” contradicts “{r.other_content}”",
            subjects=tuple(dict.fromkeys((r.entity, r.other_entity))),
            evidence={"new": {"entity": r.entity, "observation": r.content, "id": r.observation_id},
                      "old": {"entity": r.other_entity, "observation": r.other_content, "id": r.other_id},
                      "similarity": round(r.similarity, 4), "reason": r.reason, "mode": r.mode,
                      "suggestion": SUGGESTIONS[chosen[0]]},
            options=chosen, created_at=r.created_at) for r, chosen in zip(rows, options, strict=True)]

    def edit(self, service: MemoryService, decision: Decision, option: str) -> Edit:
        _check(decision, option)
        return SettleConflict(int(decision.key.split(":", 1)[1]), option)


class ExpiredSource:
    """Observations past their expiry (kept as history until deleted), the most recently expired first; at ``at``
    (UTC seconds) when given, else at the time asked."""

    kind = "expired"

    def __init__(self, at: float | None = None) -> None:
        self.at = at

    def find(self, service: MemoryService, limit: int) -> tuple[int, list[Decision]]:
        now = time.time() if self.at is None else self.at
        total, rows = expiry.expired_rows(service.database.read(), now, limit)
        return total, [_decision(
            kind=self.kind, key=f"{self.kind}:{oid}",
            title=f"{name}: “{content}” expired {duration(now - at)} ago ({(iso(at) or '')[:10]})",
            subjects=(name,), evidence={"entity": name, "observation": content, "expiredAt": iso(at), "weight": weight},
            options=EXPIRED_OPTIONS, created_at=at) for oid, name, content, at, weight in rows]

    def edit(self, service: MemoryService, decision: Decision, option: str) -> Edit:
        _check(decision, option)
        entity, content = decision.evidence["entity"], decision.evidence["observation"]
        if option == "delete":
            return DeleteObservation(entity, content)
        return SetObservationTerms(entity, content, None, float(decision.evidence["weight"]))


class RetentionSource:
    """Forget or promote candidates (:mod:`limbic.core.service.forgetting`, with the saved settings): ``kind``,
    the ``options`` (the suggested one first) and ``select``, which picks the candidates of a moment — the forget
    candidates are the forecast's (:meth:`MemoryService.lifecycle.forecast`), each with the moment it is first proposed; at
    ``at`` (UTC seconds) when given, else at the time asked."""

    def __init__(self, kind: str, options: tuple[str, ...],
                 select: Callable[[MemoryService, float], list[tuple[Retention, float | None]]],
                 at: float | None = None) -> None:
        self.kind, self.options, self._select, self.at = kind, options, select, at

    def at_moment(self, at: float) -> RetentionSource:
        """The same source read at ``at`` (UTC seconds, now or later)."""
        return RetentionSource(self.kind, self.options, self._select, at)

    def find(self, service: MemoryService, limit: int) -> tuple[int, list[Decision]]:
        found = self._select(service, time.time() if self.at is None else self.at)
        return len(found), [_decision(
            kind=self.kind, key=f"{self.kind}:{r.entity_id}", title=f"{r.name}: {r.reason}", subjects=(r.name,),
            evidence=r.to_dict() if due is None else {**r.to_dict(), "proposedFrom": iso(due)},
            options=self.options) for r, due in found[:limit]]

    def edit(self, service: MemoryService, decision: Decision, option: str) -> Edit:
        _check(decision, option)
        names = list(decision.subjects)
        if option == "pin":
            return SetPinned(names, True)
        return SetStatus(names, "archived") if option == "archive" else DeleteEntities(names)


def _forget(service: MemoryService, at: float) -> list[tuple[Retention, float | None]]:
    now = min(at, time.time())
    return [(p.retention, None if at == now else p.due) for p in service.lifecycle.forecast(at, now=now).proposed]


def _promote(service: MemoryService, at: float) -> list[tuple[Retention, float | None]]:
    return [(r, None) for r in forgetting.promote_candidates(service.lifecycle.retention(now=at))]


FORGET = RetentionSource("forget", ("archive", "delete", "pin"), _forget)
"""Memories whose retention score fell below τ_forget and that no guard keeps (new, used lately, pinned, protected,
open work, configuration, tied to a kept or used memory): archive (suggested), delete, or pin to keep."""
PROMOTE = RetentionSource("promote", ("pin",), _promote)
"""Memories used enough to keep for good: pin them (pinned memories are never forget candidates)."""


LIFECYCLE_SOURCES = (ContradictionSource(), ExpiredSource(), FORGET, PROMOTE)
"""The lifecycle's decision sources, in the order the report lists them."""


def sources_at(at: float) -> tuple[ContradictionSource, ExpiredSource, RetentionSource, RetentionSource]:
    """The lifecycle's decision sources as they would stand at ``at`` (UTC seconds, now or later) if nothing is used
    or written meanwhile: expired observations, forget and promote candidates then; open contradictions as now."""
    return ContradictionSource(), ExpiredSource(at), FORGET.at_moment(at), PROMOTE.at_moment(at)
