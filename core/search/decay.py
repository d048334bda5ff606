"""Decay models: how a memory's weight falls with the time since it was last used (Mnemex
``scoring_algorithm.md``, "Model Selection"; docs/lifecycle.md "Decay models").

- exponential: ``f(Δt) = e^(−λ·Δt)`` (the ``seed`` preset's temporal factor; half-life ``H = ln 2 / λ``);
- power law: ``f(Δt) = (1 + Δt/t0)^(−α)`` with ``t0 = H / (2^(1/α) − 1)``, so that ``f(H) = 1/2``: a heavier
  tail, old but important memories fade slower;
- two-component: ``f(Δt) = w·e^(−λf·Δt) + (1 − w)·e^(−λs·Δt)``: forgets very recent items faster (the fast
  component) and keeps a heavy tail (the slow one).

Times are hours here (``Δt ≥ 0``; a future time counts as 0); rates are per hour. The search's temporal
factor (:mod:`limbic.core.search.scoring`, :mod:`limbic.core.search.batch`) and the forget/promote score
(:mod:`limbic.core.lifecycle.retention`) both use :func:`model_curve`. The exponential model computes exactly
``exp(−λ·Δt)`` as before, so the default ranks bit for bit as it did.
"""

from __future__ import annotations

import math

import numpy as np

EXPONENTIAL, POWER_LAW, TWO_COMPONENT = 0, 1, 2
MODEL_NAMES = ("exponential", "power law", "two-component")
"""The models by their code (``ScoringParams.decay_model``)."""


def exponential(hours: np.ndarray, rate: float) -> np.ndarray:
    """``e^(−rate·Δt)``, ``(n,) float64``; ``rate`` per hour."""
    return np.exp(-rate * np.maximum(np.asarray(hours, dtype=np.float64), 0.0))


def power_law(hours: np.ndarray, half_life: float, alpha: float) -> np.ndarray:
    """``(1 + Δt/t0)^(−α)`` with ``t0 = half_life / (2^(1/α) − 1)`` (hours), ``(n,) float64``; 1 everywhere for an
    infinite half-life."""
    hours = np.maximum(np.asarray(hours, dtype=np.float64), 0.0)
    if not math.isfinite(half_life):
        return np.ones_like(hours)
    t0 = half_life / (2.0 ** (1.0 / alpha) - 1.0)
    return (1.0 + hours / t0) ** (-alpha)


def two_component(hours: np.ndarray, fast_rate: float, slow_rate: float, fast_share: float) -> np.ndarray:
    """``w·e^(−λf·Δt) + (1 − w)·e^(−λs·Δt)``, ``(n,) float64``; rates per hour, ``w = fast_share``."""
    return fast_share * exponential(hours, fast_rate) + (1.0 - fast_share) * exponential(hours, slow_rate)


def rate(half_life_hours: float) -> float:
    """The exponential rate per hour of a half-life in hours (``ln 2 / H``; 0 for an infinite one)."""
    return 0.0 if not math.isfinite(half_life_hours) else math.log(2.0) / half_life_hours


def model_curve(hours: np.ndarray, model: int, rate_per_hour: float, alpha: float, fast_half_life: float,
                fast_share: float) -> np.ndarray:
    """The decay of ``model`` at ``hours``, ``(n,) float64``: the exponential at ``rate_per_hour`` (λ), the power law
    of the same half-life ``ln 2 / λ`` and shape ``alpha``, or the two components — fast with half-life
    ``fast_half_life`` hours, share ``fast_share``; slow at λ."""
    if model == POWER_LAW:
        return power_law(hours, math.inf if rate_per_hour == 0 else math.log(2.0) / rate_per_hour, alpha)
    if model == TWO_COMPONENT:
        return two_component(hours, rate(fast_half_life), rate_per_hour, fast_share)
    return exponential(hours, rate_per_hour)


def half_life(model: int, rate_per_hour: float, alpha: float, fast_half_life: float, fast_share: float) -> float:
    """Hours until :func:`model_curve` falls to 1/2 (``inf`` when it never does): ``ln 2 / λ`` for the exponential
    and the power law, found by bisection for the two components."""
    if model != TWO_COMPONENT:
        return math.inf if rate_per_hour == 0 else math.log(2.0) / rate_per_hour
    if rate_per_hour == 0 and fast_share <= 0.5:
        return math.inf

    def f(t: float) -> float:
        return float(model_curve(np.array([t]), model, rate_per_hour, alpha, fast_half_life, fast_share)[0])

    low, high = 0.0, 1.0
    while f(high) > 0.5:
        high *= 2.0
        if high > 1e9:
            return math.inf
    for _ in range(80):
        middle = (low + high) / 2.0
        low, high = (middle, high) if f(middle) > 0.5 else (low, middle)
    return high
