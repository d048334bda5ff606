"""Shadow A/B settings and treatment assignment (seed ``004`` "A/B Testing: Shadow Mode").

Every logged search computes both rankings: the *treatment* (the limbic re-rank, with the parameters in
use) and the *baseline* (cosine-only KNN order and BM25-only order, read from the candidate set's
branch ranks). The caller always receives the treatment ranking; the assignment only labels which
group the search belongs to when metrics are computed per group. The baseline's results are logged
(in the stored candidate set), never returned.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass
from typing import Any

from limbic.core.errors import ValidationError

SETTINGS_KEY = "shadow_ab"
TREATMENT = "limbic"
BASELINE = "baseline"
ASSIGNMENTS = ("hash", "random")


@dataclass(frozen=True, slots=True)
class ShadowConfig:
    """How searches are logged and assigned to groups.

    Attributes:
        enabled: log searches at all (impressions are logged only when enabled).
        assignment: ``"hash"`` (a query's text always lands in the same group) or ``"random"``.
        baseline_probability: share of searches labelled baseline, 0..1 (mcp-memory "Architecture": 0.1).
        retention: how many logged searches are kept; the oldest are dropped (default 10,000).
        feedback_window_seconds: a use within this time after a search, by the same origin, labels
            the shown entity as relevant for that search (default 30 minutes).
    """

    enabled: bool = True
    assignment: str = "hash"
    baseline_probability: float = 0.1
    retention: int = 10_000
    feedback_window_seconds: float = 1800.0

    def __post_init__(self) -> None:
        if self.assignment not in ASSIGNMENTS:
            raise ValidationError(f"assignment must be one of {', '.join(ASSIGNMENTS)}, got {self.assignment!r}")
        if not 0.0 <= self.baseline_probability <= 1.0:
            raise ValidationError(f"baseline_probability must be within 0..1, got {self.baseline_probability}")
        if not 1 <= self.retention <= 10_000_000:
            raise ValidationError(f"retention must be 1..10000000 searches, got {self.retention}")
        if not 0 < self.feedback_window_seconds <= 30 * 86400:
            raise ValidationError("feedback_window_seconds must be within 0..30 days")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ShadowConfig:
        """Parse saved settings. Raises ValidationError for unknown keys or bad values."""
        data: Any = json.loads(text)
        if not isinstance(data, dict):
            raise ValidationError("shadow A/B settings must be a JSON object")
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValidationError(f"unknown shadow A/B settings: {', '.join(unknown)}")
        return cls(**data)


def query_bucket(query: str) -> float:
    """A stable number in [0, 1) for a query text (sha256 of its case-folded, space-normalised form)."""
    normal = " ".join(query.casefold().split())
    return int.from_bytes(hashlib.sha256(normal.encode("utf-8")).digest()[:8], "big") / 2.0**64


def assign_treatment(query: str, config: ShadowConfig, rng: random.Random | None = None) -> str:
    """``"baseline"`` for a ``baseline_probability`` share of searches, else ``"limbic"``.

    Hash mode is deterministic per query text; random mode draws from ``rng`` (default: the module's).
    """
    draw = query_bucket(query) if config.assignment == "hash" else (rng or random).random()
    return BASELINE if draw < config.baseline_probability else TREATMENT
