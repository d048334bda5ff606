"""Scoring parameters: every constant of the limbic formula in one frozen value, passed explicitly.

Sources: the mcp-memory documentation pages "The Limbic System" ("Tuneable Constants", "Status
Deboosts", "Metadata Penalty", "Query Routing") and "Hybrid search" (RRF_K, EXPANSION_FACTOR);
docs/scoring.md states the formulas and the readings they leave open. No module global is ever
patched at run time: the GUI, the MCP server and the CLI each hold a ``ScoringParams`` and pass it to
the pipeline. The decay model and its parameters are one field, ``decay`` (:class:`~limbic.core.search.decay.Decay`,
its models registered in :mod:`limbic.core.search.decay`), seen as flat knobs — ``decay_model`` and ``decay_`` plus
each parameter's name — by :meth:`ScoringParams.knobs`, :meth:`~ScoringParams.value`, :meth:`~ScoringParams.replace`
and the stored JSON.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from limbic.core.errors import ValidationError
from limbic.core.search.decay import MODELS, PARAMETERS, Decay
from limbic.core.validation import known_keys

DECAY_PREFIX = "decay_"
"""The prefix of the decay parameters' knobs (``decay_alpha``)."""


@dataclass(frozen=True, slots=True)
class Knob:
    """One tuneable value as a control shows it: its ``name`` (a key of :meth:`ScoringParams.to_dict`) and
    ``metadata``: ``label`` and ``help``, and either ``min``, ``max`` and ``integer`` (a number) or ``choices`` (a
    name among them)."""

    name: str
    metadata: Mapping[str, Any]


def _knob(default: float, low: float, high: float, label: str, help_text: str, *, integer: bool = False):
    return field(
        default=default,
        metadata={"min": low, "max": high, "label": label, "help": help_text, "integer": integer},
    )


@dataclass(frozen=True, slots=True)
class ScoringParams:
    """All tuneable constants of the limbic re-ranker (mcp-memory "The Limbic System", "Tuneable Constants").

    Each number field carries ``metadata`` with ``min``, ``max``, ``label``, ``help`` and ``integer``, and ``decay``
    holds the decay model with its parameters, so that user interfaces build a control per knob (:meth:`knobs`)
    without a second list of names.
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
    decay: Decay = Decay()

    def __post_init__(self) -> None:
        if not isinstance(self.decay, Decay):
            raise ValidationError(f"scoring parameter decay must be a decay model, got {self.decay!r}")
        for f in _NUMBERS:
            value = getattr(self, f.name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
                raise ValidationError(f"scoring parameter {f.name} must be a finite number, got {value!r}")
            low, high = f.metadata["min"], f.metadata["max"]
            if not low <= value <= high:
                raise ValidationError(f"scoring parameter {f.name}={value} is outside [{low}, {high}]")

    @property
    def half_life_hours(self) -> float:
        """Half-life of the temporal decay in hours, of the chosen model (``ln 2 / lambda_hourly`` for the
        exponential and the power law; infinite when λ = 0; :meth:`limbic.core.search.decay.Decay.half_life`)."""
        return self.decay.half_life(self.lambda_hourly)

    def strategy_cosine_weight(self, strategy: str) -> float:
        """Cosine weight ``w_c`` of a routing strategy; the limbic weight is ``1 - w_c`` (docs/scoring.md "Score and blend")."""
        return {
            "cosine_heavy": self.cosine_heavy_weight,
            "limbic_heavy": self.limbic_heavy_weight,
            "hybrid_balanced": self.balanced_weight,
        }[strategy]

    def value(self, name: str) -> float | str:
        """The knob ``name`` (:meth:`knobs`): a number field, ``decay_model`` (the model's name) or a decay
        parameter (``decay_alpha``). Raises KeyError for an unknown name."""
        if name in _NUMBER_NAMES:
            return getattr(self, name)
        if name == "decay_model":
            return self.decay.model
        if name.startswith(DECAY_PREFIX) and name[len(DECAY_PREFIX):] in PARAMETERS:
            return self.decay.value(name[len(DECAY_PREFIX):])
        raise KeyError(name)

    def replace(self, **changes: Any) -> ScoringParams:
        """A copy with some knobs changed (validated): number fields, ``decay`` (a
        :class:`~limbic.core.search.decay.Decay`), ``decay_model`` (a model's name) or decay parameters
        (``decay_alpha=1.5``)."""
        flat = {k: changes.pop(k) for k in list(changes) if k in _DECAY_KEYS}
        if flat:
            decay = changes.get("decay", self.decay)
            model = flat.pop("decay_model", None)
            changes["decay"] = decay.replace(model, **{k[len(DECAY_PREFIX):]: v for k, v in flat.items()})
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, float | str]:
        """Every knob by name (:meth:`knobs`): the numbers, ``decay_model`` and the decay parameters."""
        return {**{f.name: getattr(self, f.name) for f in _NUMBERS}, **self.decay.flat(DECAY_PREFIX)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoringParams:
        """Build from a mapping of knobs (:meth:`to_dict`); unknown keys raise :class:`ValidationError`, missing keys
        keep defaults; ``decay_model`` may also be the number stored before models had names
        (:data:`limbic.core.search.decay.LEGACY_CODES`)."""
        known_keys(data, [*_NUMBER_NAMES, *_DECAY_KEYS], "scoring parameters")
        try:
            numbers = {k: float(v) for k, v in data.items() if k in _NUMBER_NAMES}
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"scoring parameters must be numbers: {exc}") from None
        return cls(**numbers, decay=Decay.from_flat(data, DECAY_PREFIX, Decay()))

    @classmethod
    def from_json(cls, text: str) -> ScoringParams:
        return cls.from_dict(json.loads(text))

    @staticmethod
    def knobs() -> list[Knob]:
        """Every knob in declaration order — the number fields, then ``decay_model`` and the decay parameters (every
        registered model's) — for building controls and tuning grids."""
        model = {"label": "decay model", "choices": tuple(MODELS), "help": "The temporal factor's curve: "
                 + ", ".join(m.label for m in MODELS.values()) + " (docs/lifecycle.md \"Decay models\")"}
        return [*(Knob(f.name, f.metadata) for f in _NUMBERS),
                Knob("decay_model", model),
                *(Knob(DECAY_PREFIX + p.name, {"min": p.low, "max": p.high, "label": p.label, "help": p.help,
                                               "integer": False}) for p in PARAMETERS.values())]


_NUMBERS = tuple(f for f in dataclasses.fields(ScoringParams) if f.name != "decay")
"""The number fields of :class:`ScoringParams` (every field but ``decay``)."""
_NUMBER_NAMES = frozenset(f.name for f in _NUMBERS)
_DECAY_KEYS = frozenset(Decay.keys(DECAY_PREFIX))
