"""The auto-tuner: grid search over logged searches by pure re-rank, applied by EMA (seed ``000``
"Auto-Tuning", "Usage"; seed ``004`` "Auto-Tuning Workflow").

The grid is every combination of the given values per parameter (default γ × β_sal, the seed's ranges);
each point re-ranks every labelled logged search (:class:`~limbic.core.learning.replay.ReplayHistory`)
and the point with the best NDCG@K wins (ties: the first in grid order). The winner is applied smoothly:
``new = (1 − blend)·old + blend·best`` per tuned parameter, ``blend = 0.1`` (integer parameters rounded).
With fewer than ``MIN_EVENTS`` labelled searches the tuner refuses.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from limbic.core.errors import LimbicError, ValidationError
from limbic.core.learning.replay import Quality, ReplayHistory
from limbic.core.search.params import Knob, ScoringParams
from limbic.core.validation import known_keys

MIN_EVENTS = 50
EMA_BLEND = 0.1
DEFAULT_GRID: Mapping[str, tuple[float, ...]] = {
    "gamma": (0.001, 0.01, 0.05, 0.1),
    "beta_sal": (0.1, 0.5, 1.0),
}


class NotEnoughFeedbackError(LimbicError):
    """Too few labelled searches to tune on; ``events`` and ``minimum`` say how many there are and are needed."""

    def __init__(self, events: int, minimum: int = MIN_EVENTS) -> None:
        super().__init__(f"Only {events} events, minimum {minimum} required")
        self.events = events
        self.minimum = minimum


@dataclass(frozen=True, slots=True)
class GridPoint:
    """One evaluated point of the grid: the values tried and the quality they give."""

    values: dict[str, float]
    quality: Quality


@dataclass(frozen=True, slots=True)
class TuneResult:
    """What :func:`grid_search` found: the best grid values, their full parameters (the current ones with
    the grid values), their quality, the current parameters' quality, and every point tried."""

    best_values: dict[str, float]
    best_params: ScoringParams
    best: Quality
    current: Quality
    points: tuple[GridPoint, ...]

    @property
    def gain(self) -> float:
        """NDCG@K of the best point minus that of the current parameters."""
        return self.best.ndcg - self.current.ndcg


def parse_range(text: str, name: str) -> tuple[float, ...]:
    """``"0.001,0.01,0.05"`` → ``(0.001, 0.01, 0.05)``, each value within the parameter's bounds.

    Raises ValidationError naming the parameter for an unknown name, a choice (``decay_model``), a non-number or a
    value out of bounds.
    """
    choices = {k.name: k.metadata["choices"] for k in ScoringParams.knobs() if "choices" in k.metadata}
    if name in choices:
        raise ValidationError(f"{name} is a choice ({', '.join(choices[name])}), not a number to tune: pick it on "
                              "the tuning panel")
    fields = _numbers()
    if name not in fields:
        raise ValidationError(f"unknown scoring parameter {name!r}; known: {', '.join(fields)}")
    low, high = fields[name].metadata["min"], fields[name].metadata["max"]
    values = []
    for piece in text.split(","):
        try:
            value = float(piece)
        except ValueError:
            raise ValidationError(f"{name}: {piece.strip()!r} is not a number") from None
        if not math.isfinite(value) or not low <= value <= high:
            raise ValidationError(f"{name}: {value} is outside [{low}, {high}]")
        values.append(value)
    if not values:
        raise ValidationError(f"{name}: give at least one value")
    return tuple(dict.fromkeys(values))


def _numbers() -> dict[str, Knob]:
    """The number knobs of :class:`ScoringParams` by name (the decay model, a choice, is not tuned here)."""
    return {k.name: k for k in ScoringParams.knobs() if "choices" not in k.metadata}


def require_events(history: ReplayHistory, minimum: int = MIN_EVENTS) -> None:
    """Raise :class:`NotEnoughFeedbackError` when ``history`` has fewer than ``minimum`` labelled searches."""
    if len(history) < minimum:
        raise NotEnoughFeedbackError(len(history), minimum)


def grid_search(history: ReplayHistory, current: ScoringParams, grid: Mapping[str, Sequence[float]] | None = None,
                k: int = 10, progress: Callable[[int, int], None] | None = None,
                minimum: int = MIN_EVENTS) -> TuneResult:
    """Evaluate every grid point on ``history`` (see the module docstring).

    ``progress(done, total)`` is called after each point. Raises NotEnoughFeedbackError (fewer than
    ``minimum`` labelled searches) or ValidationError (an empty grid or a value out of bounds).
    """
    require_events(history, minimum)
    grid = dict(grid or DEFAULT_GRID)
    if not grid or any(not values for values in grid.values()):
        raise ValidationError("the grid needs at least one value per parameter")
    names = list(grid)
    combos = list(itertools.product(*(grid[name] for name in names)))
    baseline = history.evaluate(current, k)
    points = []
    for done, combo in enumerate(combos, start=1):
        values = dict(zip(names, (float(v) for v in combo), strict=True))
        points.append(GridPoint(values, history.evaluate(current.replace(**values), k)))
        if progress is not None:
            progress(done, len(combos))
    best = max(points, key=lambda p: -math.inf if math.isnan(p.quality.ndcg) else p.quality.ndcg)
    return TuneResult(best.values, current.replace(**best.values), best.quality, baseline, tuple(points))


def blend(old: ScoringParams, target: Mapping[str, float], weight: float = EMA_BLEND) -> ScoringParams:
    """The EMA step ``(1 − weight)·old + weight·target`` for each parameter named in ``target``.

    Integer parameters are rounded to the nearest whole value. Raises ValidationError for unknown names
    or values out of bounds.
    """
    fields = _numbers()
    known_keys(target, fields, "scoring parameters")
    changes = {}
    for name, value in target.items():
        mixed = (1.0 - weight) * float(old.value(name)) + weight * float(value)
        changes[name] = float(round(mixed)) if fields[name].metadata["integer"] else mixed
    return old.replace(**changes)
