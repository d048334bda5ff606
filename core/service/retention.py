"""The forget/promote review over the whole memory (docs/lifecycle.md "Forget and promote"): every entity's
retention score from its uses (accesses only), strength and last use, and what it suggests.

Writing a memory is its first use: ``n_use = 1 + accesses``, and a memory never accessed was last used when it
was created. Pinned memories (promoted) are kept: they are never forget candidates nor promoted again.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from limbic.core.lifecycle import retention
from limbic.core.lifecycle.retention import RetentionParams
from limbic.core.store import retention as rows
from limbic.core.store.database import Database
from limbic.core.store.writes import day_of

PARAMS_KEY = "retention_params"
"""Setting: the saved :class:`~limbic.core.lifecycle.retention.RetentionParams` (JSON)."""
HOUR = 3600.0


@dataclass(frozen=True, slots=True)
class Retention:
    """One entity in the review: ``score``, ``decision`` (keep / forget / promote) and its ``reason``; ``uses``
    (1 + accesses), ``recent_uses`` (uses within the promote window), ``hours_since_use``, ``strength`` (after
    its uses), ``status``, ``pinned_at`` (UTC seconds or ``None``) and ``hours_until_forgotten`` without another use
    (bisection; ``inf``: not within 100 years)."""

    entity_id: int
    name: str
    score: float
    decision: str
    reason: str
    uses: int
    recent_uses: int
    hours_since_use: float
    strength: float
    status: str
    pinned_at: float | None
    hours_until_forgotten: float

    def to_dict(self) -> dict:
        until = self.hours_until_forgotten
        return {"name": self.name, "score": round(self.score, 6), "decision": self.decision, "reason": self.reason,
                "uses": self.uses, "recentUses": self.recent_uses, "daysSinceUse": round(self.hours_since_use / 24, 2),
                "strength": round(self.strength, 3), "status": self.status, "pinned": self.pinned_at is not None,
                "daysUntilForgotten": None if math.isinf(until) else round(until / 24, 2)}


def load_params(database: Database) -> RetentionParams:
    text = database.get_setting(PARAMS_KEY)
    return RetentionParams.from_dict(json.loads(text)) if text else RetentionParams()


def review(database: Database, params: RetentionParams, now: float) -> list[Retention]:
    """Every entity's retention at ``now`` (UTC seconds), by id."""
    since = day_of(now - params.promote_window_days * 86_400.0)
    found = rows.usage(database.read(), since)
    if not found:
        return []
    accesses = np.array([r[6] for r in found], dtype=np.float64)
    last = np.array([r[3] if r[7] is None else r[7] for r in found], dtype=np.float64)
    hours = np.maximum(0.0, (now - last) / HOUR)
    strengths = retention.strength(np.array([r[4] for r in found]), accesses, params)
    uses = 1.0 + accesses
    window_start = now - params.promote_window_days * 86_400.0  # the write is a use within the window too
    recent = np.array([r[8] + (r[3] >= window_start) for r in found], dtype=np.float64)
    scores = retention.score(uses, hours, strengths, params)
    decisions = retention.decide(scores, uses, recent, params)
    until = retention.hours_until_forgotten(uses, hours, strengths, params)
    return [Retention(int(r[0]), r[1], float(s), d, why, int(u), int(n), float(h), float(st), r[2], r[5], float(t))
            for r, s, (d, why), u, n, h, st, t in zip(found, scores.tolist(), decisions, uses.tolist(), recent.tolist(),
                                                        hours.tolist(), strengths.tolist(), until.tolist(), strict=True)]


def forget_candidates(items: list[Retention], *, archived: bool = False) -> list[Retention]:
    """The forget candidates, lowest score first: not pinned, and not archived already unless ``archived``."""
    return sorted((r for r in items if r.decision == retention.FORGET and r.pinned_at is None
                   and (archived or r.status != "archived")), key=lambda r: (r.score, r.entity_id))


def promote_candidates(items: list[Retention]) -> list[Retention]:
    """The promote candidates, highest score first: not pinned yet."""
    return sorted((r for r in items if r.decision == retention.PROMOTE and r.pinned_at is None),
                  key=lambda r: (-r.score, r.entity_id))
