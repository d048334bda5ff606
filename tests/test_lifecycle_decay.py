"""Decay models (Mnemex ``scoring_algorithm.md``, "Model Selection"): exponential, power law with
``t0 = H / (2^(1/α) − 1)`` and two components, each halving at its half-life from hours to years; a
``ScoringParams`` choice whose default ranks as before."""

from __future__ import annotations

import numpy as np
import pytest
from _scoring_helpers import DAY, HOUR, candidate_set

from limbic.core.search import decay
from limbic.core.search.presets import DEFAULT, SEED
from limbic.core.search.scoring import score_candidates


@pytest.mark.parametrize("hours", [2.0, 72.0, 24 * 365.0, 24 * 365 * 5.0])
def test_every_model_halves_at_its_half_life(hours):
    rate = decay.rate(hours)
    assert decay.model_curve(np.array([hours]), decay.EXPONENTIAL, rate, 1.1, 24, 0.5)[0] == pytest.approx(0.5)
    for alpha in (0.5, 1.1, 3.0):
        t0 = hours / (2 ** (1 / alpha) - 1)
        curve = decay.power_law(np.array([0.0, hours, 10 * hours]), hours, alpha)
        assert curve[:2] == pytest.approx([1.0, 0.5]) and curve[2] == pytest.approx((1 + 10 * hours / t0) ** -alpha)
    two = decay.half_life(decay.TWO_COMPONENT, rate, 1.1, 1.0, 0.3)
    assert decay.model_curve(np.array([two]), decay.TWO_COMPONENT, rate, 1.1, 1.0, 0.3)[0] == pytest.approx(0.5, abs=1e-6)


def test_the_power_law_keeps_a_heavier_tail():
    hours = np.array([24 * 30.0])
    assert decay.power_law(hours, 72, 1.1)[0] > decay.exponential(hours, decay.rate(72))[0]


def test_the_decay_model_is_a_scoring_choice():
    rows = [{"distance": 0.2, "created_at": 1_780_000_000.0 - 400 * DAY, "last_access": 1_780_000_000.0 - 400 * DAY,
             "access_count": 1}, {"distance": 0.2, "last_access": 1_780_000_000.0 - HOUR, "access_count": 1}]
    candidates = candidate_set(rows)
    exponential = score_candidates(candidates, SEED).temporal_factor
    power = score_candidates(candidates, SEED.replace(decay_model=1)).temporal_factor
    two = score_candidates(candidates, SEED.replace(decay_model=2, decay_fast_share=0.9)).temporal_factor
    assert power[0] > exponential[0] and two[0] < exponential[0]
    assert SEED.replace(decay_model=1).half_life_hours == pytest.approx(SEED.half_life_hours)
    assert DEFAULT.decay_model == 0  # the default ranks as before
