"""Decay models: how a memory's weight falls with the time since it was last used (Mnemex
``scoring_algorithm.md``, "Model Selection"; docs/lifecycle.md "Decay models").

Each model is one class here, a subclass of :class:`DecayModel`: its ``name`` (stored in settings), its ``label``
(shown), its :class:`Parameter` values (name, range, default, label, help) and its ``curve`` (numpy, whole arrays),
with its formula's source in its docstring. Defining the subclass registers it in :data:`MODELS`; nothing else
names the models. Every user of a decay — the search's temporal factor (:func:`limbic.core.search.terms.decay`),
the forget/promote score (:mod:`limbic.core.lifecycle.retention`), the tuning panel, the decay plot and the graph
view — reads it through a :class:`Decay` value: the chosen model's name and the value of every registered
parameter (``ScoringParams.decay``, ``RetentionParams.decay``), flattened for settings as ``decay_model`` and each
parameter's name with a prefix (``decay_alpha`` in the scoring parameters, ``alpha`` in the retention settings).

Times are hours (``Δt ≥ 0``; a future time counts as 0); the rate ``λ`` is per hour, the scale every model shares
(the scoring parameters' ``lambda_hourly``, the retention settings' ``half_life_hours`` as ``ln 2 / H``). The
exponential computes exactly ``exp(−λ·Δt)``, the ``seed`` preset's temporal factor.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from limbic.core.errors import ValidationError

__all__ = ["MODELS", "PARAMETERS", "Decay", "DecayModel", "Parameter", "rate"]


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter of a decay model: its ``name`` (a settings key with the owner's prefix), ``default``, range
    ``low``..``high``, and the ``label`` and ``help`` a control shows."""

    name: str
    default: float
    low: float
    high: float
    label: str
    help: str


MODELS: dict[str, type[DecayModel]] = {}
"""Every decay model by name, in the order defined."""
PARAMETERS: dict[str, Parameter] = {}
"""Every model's parameters by name (a name belongs to one model)."""


class DecayModel(ABC):
    """A decay curve ``f(Δt)`` in ``[0, 1]``, ``f(0) = 1``, falling with ``Δt``; subclasses set ``name``, ``label``,
    ``parameters`` and :meth:`curve`, and are registered when defined."""

    name: ClassVar[str]
    label: ClassVar[str]
    parameters: ClassVar[tuple[Parameter, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name in MODELS:
            raise TypeError(f"decay model {cls.name!r} is defined twice")
        for parameter in cls.parameters:
            if parameter.name in PARAMETERS or parameter.name == "model":
                raise TypeError(f"decay parameter {parameter.name!r} of {cls.name!r} is taken")
            PARAMETERS[parameter.name] = parameter
        MODELS[cls.name] = cls

    @staticmethod
    @abstractmethod
    def curve(hours: np.ndarray, rate_per_hour: float, values: Mapping[str, float]) -> np.ndarray:
        """``f(Δt)`` at ``hours``, ``(n,) float64``, for the rate ``λ`` per hour and the parameter ``values`` (by
        name; every registered parameter's)."""

    @classmethod
    def half_life(cls, rate_per_hour: float, values: Mapping[str, float]) -> float:
        """Hours until :meth:`curve` falls to 1/2, found by bisection (80 halvings); ``inf`` when it is still above
        1/2 at 10⁹ hours."""

        def f(t: float) -> float:
            return float(cls.curve(np.array([t]), rate_per_hour, values)[0])

        low, high = 0.0, 1.0
        while f(high) > 0.5:
            high *= 2.0
            if high > 1e9:
                return math.inf
        for _ in range(80):
            middle = (low + high) / 2.0
            low, high = (middle, high) if f(middle) > 0.5 else (low, middle)
        return high

    @classmethod
    def written(cls, rate_per_hour: float, values: Mapping[str, float], hours: float) -> str:
        """The curve at ``hours`` written out with its numbers, as the scoring inspector shows it."""
        return f"{cls.label}({hours:,.0f} h)"


def rate(half_life_hours: float) -> float:
    """The exponential rate per hour of a half-life in hours (``ln 2 / H``; 0 for an infinite one)."""
    return 0.0 if not math.isfinite(half_life_hours) else math.log(2.0) / half_life_hours


def _ln2_over(rate_per_hour: float) -> float:
    """``ln 2 / λ`` hours, ``inf`` for ``λ = 0``."""
    return math.inf if rate_per_hour == 0 else math.log(2.0) / rate_per_hour


def _exponential(hours: np.ndarray, rate_per_hour: float) -> np.ndarray:
    return np.exp(-rate_per_hour * np.maximum(np.asarray(hours, dtype=np.float64), 0.0))


class Exponential(DecayModel):
    """``f(Δt) = e^(−λ·Δt)``: the seeds' temporal factor (mcp-memory "The Limbic System", "temporal_factor"; Mnemex
    ``scoring_algorithm.md`` "Model Selection", exponential); half-life ``H = ln 2 / λ``."""

    name = "exponential"
    label = "exponential"

    @staticmethod
    def curve(hours: np.ndarray, rate_per_hour: float, values: Mapping[str, float]) -> np.ndarray:
        return _exponential(hours, rate_per_hour)

    @classmethod
    def half_life(cls, rate_per_hour: float, values: Mapping[str, float]) -> float:
        return _ln2_over(rate_per_hour)

    @classmethod
    def written(cls, rate_per_hour: float, values: Mapping[str, float], hours: float) -> str:
        return f"exp(−{rate_per_hour:g} × {hours:,.0f} h)"


class PowerLaw(DecayModel):
    """``f(Δt) = (1 + Δt/t0)^(−α)`` with ``t0 = H / (2^(1/α) − 1)``, so that ``f(H) = 1/2`` at the half-life
    ``H = ln 2 / λ`` (Mnemex ``scoring_algorithm.md`` "Model Selection", power law, its default): a heavier tail, old
    but important memories fade slower; 1 everywhere for ``λ = 0``."""

    name = "power_law"
    label = "power law"
    parameters = (Parameter("alpha", 1.1, 0.1, 5.0, "power-law α", "Shape of the power law: larger fades old "
                            "memories more"),)

    @staticmethod
    def curve(hours: np.ndarray, rate_per_hour: float, values: Mapping[str, float]) -> np.ndarray:
        hours = np.maximum(np.asarray(hours, dtype=np.float64), 0.0)
        half_life = _ln2_over(rate_per_hour)
        if not math.isfinite(half_life):
            return np.ones_like(hours)
        alpha = values["alpha"]
        return (1.0 + hours / PowerLaw._t0(half_life, alpha)) ** (-alpha)

    @classmethod
    def half_life(cls, rate_per_hour: float, values: Mapping[str, float]) -> float:
        return _ln2_over(rate_per_hour)

    @classmethod
    def written(cls, rate_per_hour: float, values: Mapping[str, float], hours: float) -> str:
        half_life, alpha = _ln2_over(rate_per_hour), values["alpha"]
        if not math.isfinite(half_life):
            return "1 (λ = 0)"
        return f"(1 + {hours:,.0f} h / {cls._t0(half_life, alpha):,.1f} h)^(−{alpha:g})"

    @staticmethod
    def _t0(half_life: float, alpha: float) -> float:
        """``t0 = H / (2^(1/α) − 1)`` hours."""
        return half_life / (2.0 ** (1.0 / alpha) - 1.0)


class TwoComponent(DecayModel):
    """``f(Δt) = w·e^(−λf·Δt) + (1 − w)·e^(−λ·Δt)`` (Mnemex ``scoring_algorithm.md`` "Model Selection",
    two-component): a fast part of half-life ``fast_hours`` (``λf = ln 2 / fast_hours``) and share ``w =
    fast_share`` forgets the very recent faster, the slow part at ``λ`` keeps a heavy tail; its half-life is found
    by bisection."""

    name = "two_component"
    label = "two-component"
    parameters = (
        Parameter("fast_hours", 24.0, 1.0, 8_760.0, "fast half-life (h)",
                  "Half-life of the two-component model's fast part, in hours"),
        Parameter("fast_share", 0.5, 0.0, 1.0, "fast share w",
                  "Share of the fast part in the two-component model (the slow part decays at λ)"),
    )

    @staticmethod
    def curve(hours: np.ndarray, rate_per_hour: float, values: Mapping[str, float]) -> np.ndarray:
        share = values["fast_share"]
        return share * _exponential(hours, rate(values["fast_hours"])) + (1.0 - share) * _exponential(hours, rate_per_hour)

    @classmethod
    def half_life(cls, rate_per_hour: float, values: Mapping[str, float]) -> float:
        if rate_per_hour == 0 and values["fast_share"] <= 0.5:  # the slow part alone stays at or above 1/2
            return math.inf
        return super().half_life(rate_per_hour, values)

    @classmethod
    def written(cls, rate_per_hour: float, values: Mapping[str, float], hours: float) -> str:
        share = values["fast_share"]
        return (f"{share:g} × exp(−{rate(values['fast_hours']):.3g} × {hours:,.0f} h) + {1.0 - share:g} × "
                f"exp(−{rate_per_hour:g} × {hours:,.0f} h)")


LEGACY_CODES = {0: "exponential", 1: "power_law", 2: "two_component"}
"""The numbers that named the first three models in settings written before models had names (saved scoring
parameters, the search log, tuning records, the retention settings, ``--set decay_model=1``): still read."""


def model_named(value: object) -> str:
    """The model ``value`` names: a model's name, or a number of :data:`LEGACY_CODES` (``1``, ``1.0``, ``"1"``).

    Raises:
        ValidationError: no model has that name or number (the message lists the names).
    """
    if isinstance(value, str) and value.strip() in MODELS:
        return value.strip()
    try:
        code = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        code = math.nan
    if code.is_integer() and int(code) in LEGACY_CODES:
        return LEGACY_CODES[int(code)]
    raise ValidationError(f"unknown decay model {value!r}; expected one of {', '.join(MODELS)}")


@dataclass(frozen=True, slots=True)
class Decay:
    """A chosen decay model (``model``, a name of :data:`MODELS`) with the value of every registered parameter
    (``values``: ``(name, value)`` pairs in :data:`PARAMETERS` order; a missing one takes its default), so that
    choosing another model and back keeps what was set.

    Raises:
        ValidationError: an unknown model or parameter, or a value that is not a number within its range.
    """

    model: str = "exponential"
    values: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValidationError(f"unknown decay model {self.model!r}; expected one of {', '.join(MODELS)}")
        given = dict(self.values)
        unknown = sorted(given.keys() - PARAMETERS.keys())
        if unknown:
            raise ValidationError(f"unknown decay parameter {unknown[0]!r}; expected one of {', '.join(PARAMETERS)}")
        values = []
        for name, parameter in PARAMETERS.items():
            value = given.get(name, parameter.default)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                    or not parameter.low <= value <= parameter.high:
                raise ValidationError(f"decay parameter {name} must be a number from {parameter.low:g} to "
                                      f"{parameter.high:g}, got {value!r}")
            values.append((name, float(value)))
        object.__setattr__(self, "values", tuple(values))

    @property
    def chosen(self) -> type[DecayModel]:
        """The chosen model's class."""
        return MODELS[self.model]

    def value(self, name: str) -> float:
        """The value of the parameter ``name`` (KeyError for an unknown one)."""
        return dict(self.values)[name]

    def replace(self, model: str | None = None, **values: float) -> Decay:
        """A copy with another model and/or other parameter values (validated)."""
        return Decay(self.model if model is None else model, (*self.values, *values.items()))

    def curve(self, hours: np.ndarray, rate_per_hour: float) -> np.ndarray:
        """``f(Δt)`` of the chosen model at ``hours`` for the rate ``λ`` per hour, ``(n,) float64``."""
        return self.chosen.curve(hours, rate_per_hour, dict(self.values))

    def half_life(self, rate_per_hour: float) -> float:
        """Hours until the chosen model's curve falls to 1/2 (``inf`` when it never does)."""
        return self.chosen.half_life(rate_per_hour, dict(self.values))

    def written(self, rate_per_hour: float, hours: float) -> str:
        """The chosen model's curve at ``hours`` written out with its numbers (:meth:`DecayModel.written`)."""
        return self.chosen.written(rate_per_hour, dict(self.values), hours)

    def flat(self, prefix: str) -> dict[str, Any]:
        """``{"decay_model": name, prefix + parameter: value, …}``, as settings store it."""
        return {"decay_model": self.model, **{prefix + name: value for name, value in self.values}}

    @staticmethod
    def keys(prefix: str) -> list[str]:
        """The keys of :meth:`flat`: ``decay_model`` and every parameter's name with ``prefix``."""
        return ["decay_model", *(prefix + name for name in PARAMETERS)]

    @classmethod
    def from_flat(cls, data: Mapping[str, Any], prefix: str, default: Decay) -> Decay:
        """The decay of the :meth:`flat` keys in ``data`` (other keys ignored; a missing one keeps ``default``'s);
        ``decay_model`` may be a name or a legacy number (:func:`model_named`), each value a number or its text.

        Raises:
            ValidationError: an unknown model, or a value that is not a number within its range.
        """
        model = model_named(data["decay_model"]) if "decay_model" in data else default.model
        values = {}
        for name in PARAMETERS:
            if prefix + name in data:
                try:
                    values[name] = float(data[prefix + name])
                except (TypeError, ValueError):
                    raise ValidationError(f"{prefix + name} must be a number, got {data[prefix + name]!r}") from None
        return default.replace(model, **values)
