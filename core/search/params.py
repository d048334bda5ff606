"""Scoring parameters: every constant of the limbic formula in one frozen value, passed explicitly.

Sources: the mcp-memory documentation pages "The Limbic System" ("Tuneable Constants", "Status
Deboosts", "Metadata Penalty", "Query Routing") and "Hybrid search" (RRF_K, EXPANSION_FACTOR);
docs/scoring.md states the formulas and the readings they leave open. No module global is ever
patched at run time: the GUI, the MCP server and the CLI each hold a ``ScoringParams`` and pass it to
the pipeline.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any

from limbic.core.errors import ValidationError
from limbic.core.search import decay
from limbic.core.validation import known_keys


def _knob(default: float, low: float, high: float, label: str, help_text: str, *, integer: bool = False):
    return field(
        default=default,
        metadata={"min": low, "max": high, "label": label, "help": help_text, "integer": integer},
    )


@dataclass(frozen=True, slots=True)
class ScoringParams:
    """All tuneable constants of the limbic re-ranker (mcp-memory "The Limbic System", "Tuneable Constants").

    Each field carries ``metadata`` with ``min``, ``max``, ``label``, ``help`` and ``integer`` so that
    user interfaces can build a control per field without a second list of names.
    """

    beta_sal: float = _knob(0.5, 0.0, 2.0, "β salience", "Weight of the salience boost (1 + β·importance)")
    beta_deg: float = _knob(0.15, 0.0, 1.0, "β degree", "Weight of graph degree inside importance")
    alpha_cons: float = _knob(0.2, 0.0, 1.0, "α consolidation", "Weight of distinct access days inside importance")
    d_max: float = _knob(15, 1, 100, "D max", "Degree cap for degree normalisation", integer=True)
    lambda_hourly: float = _knob(1e-4, 0.0, 5e-3, "λ per hour", "Temporal decay rate; half-life = ln 2 / λ hours")
    temporal_floor: float = _knob(0.1, 0.0, 1.0, "temporal floor", "Lowest value of the temporal factor")
    cooc_temporal_floor: float = _knob(0.1, 0.0, 1.0, "co-occurrence floor", "Lowest decay of a co-occurrence")
    gamma: float = _knob(0.01, 0.0, 0.5, "γ co-occurrence", "Weight of the co-occurrence boost (1 + γ·boost)")
    rrf_k: float = _knob(60, 1, 200, "RRF k", "Reciprocal Rank Fusion smoothing constant", integer=True)
    expansion_factor: float = _knob(3, 1, 10, "expansion", "Candidates per branch = limit × expansion", integer=True)
    cosine_heavy_weight: float = _knob(0.7, 0.0, 1.0, "cosine-heavy w", "Cosine weight of the cosine_heavy strategy")
    limbic_heavy_weight: float = _knob(0.3, 0.0, 1.0, "limbic-heavy w", "Cosine weight of the limbic_heavy strategy")
    balanced_weight: float = _knob(0.5, 0.0, 1.0, "balanced w", "Cosine weight of the hybrid_balanced strategy")
    status_paused: float = _knob(0.85, 0.0, 1.0, "paused ×", "Status multiplier for paused entities")
    status_completed: float = _knob(0.70, 0.0, 1.0, "completed ×", "Status multiplier for completed entities")
    status_archived: float = _knob(0.50, 0.0, 1.0, "archived ×", "Status multiplier for archived entities")
    metadata_penalty: float = _knob(0.7, 0.0, 1.0, "metadata ×", "Multiplier when > metadata share of observations are metadata")
    metadata_share: float = _knob(0.5, 0.0, 1.0, "metadata share", "Share of kind=metadata observations that triggers the penalty")
    relevance_fusion: float = _knob(
        0, 0, 1, "fused relevance",
        "0: base = cosine (seed); 1: base = weighted cosine and BM25, each divided by its best", integer=True)
    bm25_weight: float = _knob(0.5, 0.0, 1.0, "BM25 weight", "Share of BM25 in the fused base relevance")
    bm25_ceiling_share: float = _knob(
        0.0, 0.0, 1.0, "BM25 ceiling share",
        "Fused BM25 is divided by max(best candidate, share × Σ IDF of the query terms); 0 = by the best only")
    bm25_exponent: float = _knob(
        1.0, 1.0, 4.0, "BM25 exponent", "Fused BM25 evidence is (BM25 / its divisor)^p: p > 1 shrinks partial matches")
    prior_exponent: float = _knob(
        1.0, 0.0, 1.0, "prior strength κ", "Limbic factors enter as (product of factors)^κ; 1 = seed, 0 = off")
    limbic_ratio: float = _knob(
        0, 0, 1, "limbic ÷ max", "0: limbic score min–max normalised (seed); 1: divided by its maximum", integer=True)
    created_decay: float = _knob(
        1.0, 0.0, 1.0, "decay if never used", "Share of the decay from created_at for never-accessed memories")
    context_weight: float = _knob(
        0.0, 0.0, 1.0, "context α",
        "Relevance lent by the memories written just before and after: base = own + α·max(0, best neighbour − own)")
    context_window_hours: float = _knob(
        1.0, 0.0, 168.0, "context window (h)",
        "Memories created at most this many hours apart, next to each other in creation order, are neighbours")
    observation_weight: float = _knob(
        0.0, 0.0, 1.0, "observation μ",
        "Share of the best single observation in fused relevance: base = (1 − μ)·entity + μ·best observation")
    observation_ceiling_share: float = _knob(
        0.0, 0.0, 1.0, "observation ceiling share",
        "An observation's BM25 is divided by max(best observation, share × Σ IDF of the query terms in observations)")
    observation_bm25_exponent: float = _knob(
        1.0, 1.0, 4.0, "observation BM25 exponent", "An observation's BM25 evidence is (BM25 / its divisor)^p")
    date_weight: float = _knob(
        0.0, 0.0, 1.0, "date weight δ",
        "A memory written on a date the query names gets relevance × (1 + δ·exp(−days off / tolerance))")
    date_tolerance_days: float = _knob(
        3.0, 0.25, 60.0, "date tolerance (days)", "Days outside the named date over which its weight falls to 1/e")
    feedback_weight: float = _knob(
        0.0, 0.0, 3.0, "feedback β",
        "A memory used after an earlier query like this one gets the prior 1 + β·(similarity − floor)/(1 − floor)")
    feedback_floor: float = _knob(
        0.7, 0.0, 0.95, "feedback similarity floor", "Query cosine below which an earlier use does not count")
    decay_model: float = _knob(
        0, 0, 2, "decay model",
        "0 exponential e^(−λΔt) (seed); 1 power law (1 + Δt/t0)^−α, same half-life; 2 two-component", integer=True)
    decay_alpha: float = _knob(1.1, 0.1, 5.0, "power-law α", "Shape of the power law: larger fades old memories more")
    decay_fast_hours: float = _knob(
        24.0, 1.0, 8760.0, "fast half-life (h)", "Half-life of the two-component model's fast part, in hours")
    decay_fast_share: float = _knob(
        0.5, 0.0, 1.0, "fast share w", "Share of the fast part in the two-component model (the slow part decays at λ)")

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
                raise ValidationError(f"scoring parameter {f.name} must be a finite number, got {value!r}")
            low, high = f.metadata["min"], f.metadata["max"]
            if not low <= value <= high:
                raise ValidationError(f"scoring parameter {f.name}={value} is outside [{low}, {high}]")

    @property
    def half_life_hours(self) -> float:
        """Half-life of the temporal decay in hours, of the chosen model (``ln 2 / lambda_hourly`` for the
        exponential and the power law; infinite when λ = 0; :func:`limbic.core.search.decay.half_life`)."""
        return decay.half_life(int(self.decay_model), self.lambda_hourly, self.decay_alpha, self.decay_fast_hours,
                               self.decay_fast_share)

    def strategy_cosine_weight(self, strategy: str) -> float:
        """Cosine weight ``w_c`` of a routing strategy; the limbic weight is ``1 - w_c`` (docs/scoring.md "Score and blend")."""
        return {
            "cosine_heavy": self.cosine_heavy_weight,
            "limbic_heavy": self.limbic_heavy_weight,
            "hybrid_balanced": self.balanced_weight,
        }[strategy]

    def replace(self, **changes: Any) -> ScoringParams:
        """A copy with some fields changed (validated)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScoringParams:
        """Build from a mapping; unknown keys raise :class:`ValidationError`, missing keys keep defaults."""
        known_keys(data, (f.name for f in dataclasses.fields(cls)), "scoring parameters")
        return cls(**{k: float(v) for k, v in data.items()})

    @classmethod
    def from_json(cls, text: str) -> ScoringParams:
        return cls.from_dict(json.loads(text))

    @staticmethod
    def field_specs() -> list[dataclasses.Field]:
        """The dataclass fields in declaration order (name, default, metadata) for building controls."""
        return list(dataclasses.fields(ScoringParams))
