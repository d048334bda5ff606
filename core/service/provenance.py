"""Who wrote each memory, and what fades next: the data of the app's *Who wrote it* and *What fades next* views
(docs/explorer.md).

- :func:`write_origins`: from the change log, which already records every write's origin (``gui``, ``cli``,
  ``import``, ``stdio``, ``mcp:NAME`` for an agent's token NAME; docs/mcp.md "Teams"), the origin of each
  entity's last write and how many writes each origin made. Housekeeping steps (vectors landed, the expiry
  sweep, saved settings, tokens) are not writes of memory and are left out.
- :func:`writes_by`: one origin's writes in order, with the entities each touched.
- :func:`fading_next`: what will expire (an observation's TTL or ``expiresAt``, docs/lifecycle.md "Expiry")
  or be proposed for forgetting if nothing is used or written meanwhile (the service's forecast, the one
  ``limbic gc --at`` and ``consolidation_report``'s ``at`` answer with: docs/lifecycle.md "Forget and promote")
  within a number of days, with the moment each crosses.

Plain functions over a :class:`~limbic.core.service.MemoryService`; reading records nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from limbic.core.errors import ValidationError
from limbic.core.service.expiry_sweep import SWEEP_OP
from limbic.core.store import provenance
from limbic.core.store.schema import LANDED_OP

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService

HOUSEKEEPING_OPS = (LANDED_OP, SWEEP_OP, "save_setting", "save_scoring_params", "add_token", "revoke_token")
"""Logged steps that write no memory: not counted as anyone's writes."""
HORIZONS_DAYS = (7, 30, 90)
"""The look-ahead windows the app offers."""
MAX_HORIZON_DAYS = 3_650
DAY = 86_400.0
EXPIRES, FORGOTTEN = "expires", "forgotten"


@dataclass(frozen=True, slots=True)
class WriteOrigins:
    """``last`` ``{entity id: origin of its last write}``, ``created`` ``{entity id: origin of its first write}``
    (entities still in the memory only) and ``counts`` ``{origin: writes}`` over the whole log."""

    last: dict[int, str]
    created: dict[int, str]
    counts: dict[str, int]


@dataclass(frozen=True, slots=True)
class Write:
    """One logged write: ``change_id``, ``at`` (UTC seconds), ``origin``, ``op`` and the ``names`` of the entities
    it touched that still exist (sorted)."""

    change_id: int
    at: float
    origin: str
    op: str
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Fade:
    """A memory that fades within the window: the entity (``entity_id``, ``name``), ``kind`` (:data:`EXPIRES`: an
    observation expires, its text in ``detail``; :data:`FORGOTTEN`: it is proposed for forgetting, ``detail`` says
    why, as at the end of the window) and ``at``, the moment it crosses (UTC seconds)."""

    entity_id: int
    name: str
    kind: str
    at: float
    detail: str


def write_origins(service: MemoryService) -> WriteOrigins:
    """Who wrote each entity (see :class:`WriteOrigins`), read from the change log oldest first."""
    conn = service.database.read()
    alive = provenance.entity_names(conn)
    last: dict[int, str] = {}
    created: dict[int, str] = {}
    counts: dict[str, int] = {}
    for change in provenance.changes_oldest_first(conn, HOUSEKEEPING_OPS):
        counts[change.origin] = counts.get(change.origin, 0) + 1
        for entity_id in change.entity_ids:
            if entity_id in alive:
                last[entity_id] = change.origin
                created.setdefault(entity_id, change.origin)
    return WriteOrigins(last, created, counts)


def writes_by(service: MemoryService, origin: str, limit: int = 500) -> list[Write]:
    """The last ``limit`` (1–10,000) writes made through ``origin``, oldest first.

    Raises:
        ValidationError: an empty origin or a limit out of range.
    """
    if not isinstance(origin, str) or not origin.strip():
        raise ValidationError("origin must be a non-empty string, e.g. 'gui' or 'mcp:alice'")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
        raise ValidationError(f"limit must be an integer between 1 and 10000, got {limit!r}")
    conn = service.database.read()
    names = provenance.entity_names(conn)
    found = [c for c in provenance.changes_oldest_first(conn, HOUSEKEEPING_OPS) if c.origin == origin][-limit:]
    return [Write(c.change_id, c.at, c.origin, c.op, tuple(sorted(names[i] for i in c.entity_ids if i in names)))
            for c in found]


def fading_next(service: MemoryService, days: float, *, now: float | None = None) -> list[Fade]:
    """What fades within ``days`` (0–3,650) after ``now`` (UTC seconds, default the present), soonest first:
    each live observation whose expiry falls in the window, and each entity the lifecycle rules would propose for
    forgetting by its end if nothing is used or written meanwhile (:meth:`MemoryService.lifecycle.forecast`), at the moment
    it is first proposed — each by its own decay and use. Entities proposed already are not listed (they are forget
    candidates now, in Review).

    Raises:
        ValidationError: ``days`` not a number in range.
    """
    if isinstance(days, bool) or not isinstance(days, int | float) or not 0 <= days <= MAX_HORIZON_DAYS:
        raise ValidationError(f"days must be a number from 0 to {MAX_HORIZON_DAYS}, got {days!r}")
    start = time.time() if now is None else float(now)
    end = start + float(days) * DAY
    fades = [Fade(entity_id, name, EXPIRES, at, content)
             for entity_id, name, content, at in provenance.expiring_observations(service.database.read(), start, end)]
    fades += [Fade(p.retention.entity_id, p.retention.name, FORGOTTEN, p.due, p.retention.reason)
              for p in service.lifecycle.forecast(end, now=start).proposed if p.due > start]
    fades.sort(key=lambda fade: (fade.at, fade.name, fade.kind))
    return fades
