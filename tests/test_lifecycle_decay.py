"""Decay models (Mnemex ``scoring_algorithm.md``, "Model Selection"): exponential, power law with
``t0 = H / (2^(1/α) − 1)`` and two components, each halving at its half-life from hours to years; every
registered model keeps the contract of a decay; a ``ScoringParams`` and ``RetentionParams`` choice by name whose
default ranks as before, and settings stored with the old numbers still load."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _scoring_helpers import DAY, HOUR, candidate_set

from limbic.core.errors import ValidationError
from limbic.core.lifecycle.retention import RetentionParams, fading
from limbic.core.search import decay
from limbic.core.search.decay import MODELS, PARAMETERS, Decay
from limbic.core.search.params import ScoringParams
from limbic.core.search.presets import DEFAULT, SEED
from limbic.core.search.scoring import score_candidates

HOURS = np.array([0.0, 0.5, 6.0, 72.0, 24 * 30.0, 24 * 365.0, 24 * 365 * 10.0])


@pytest.mark.parametrize("name", list(MODELS))
def test_every_registered_model_is_a_decay(name):
    """Whatever a model's formula: 1 at Δt = 0 (and for a future time), within [0, 1], never rising, 1/2 at its
    half-life, its parameters' defaults within their ranges, written out with its numbers."""
    model = MODELS[name]
    assert model.label and "__doc__" in vars(model) and "f(Δt)" in model.__doc__  # its own formula and source
    for parameter in model.parameters:
        assert parameter.low <= parameter.default <= parameter.high and PARAMETERS[parameter.name] is parameter
    chosen = Decay(name)
    for half_life in (2.0, 72.0, 24 * 365.0):
        rate = decay.rate(half_life)
        curve = chosen.curve(np.concatenate([[-5.0], HOURS]), rate)
        assert curve.dtype == np.float64 and curve[0] == curve[1] == 1.0
        assert np.all((curve >= 0) & (curve <= 1)) and np.all(np.diff(curve) <= 0)
        assert chosen.curve(np.array([chosen.half_life(rate)]), rate)[0] == pytest.approx(0.5, abs=1e-6)
    if math.isinf(chosen.half_life(0.0)):
        assert np.all(chosen.curve(HOURS, 0.0) >= 0.5)
    assert "72 h" in chosen.written(decay.rate(72.0), 72.0)


@pytest.mark.parametrize("hours", [2.0, 72.0, 24 * 365.0, 24 * 365 * 5.0])
def test_every_model_halves_at_its_half_life(hours):
    rate = decay.rate(hours)
    assert Decay("exponential").curve(np.array([hours]), rate)[0] == pytest.approx(0.5)
    for alpha in (0.5, 1.1, 3.0):
        t0 = hours / (2 ** (1 / alpha) - 1)
        curve = Decay("power_law", (("alpha", alpha),)).curve(np.array([0.0, hours, 10 * hours]), rate)
        assert curve[:2] == pytest.approx([1.0, 0.5]) and curve[2] == pytest.approx((1 + 10 * hours / t0) ** -alpha)
    two = Decay("two_component").replace(fast_hours=1.0, fast_share=0.3)
    assert two.half_life(rate) < hours
    assert two.curve(np.array([two.half_life(rate)]), rate)[0] == pytest.approx(0.5, abs=1e-6)


def test_the_exponential_is_exactly_the_seeds_factor():
    rate = 1e-4
    assert np.array_equal(Decay().curve(HOURS, rate), np.exp(-rate * HOURS))


def test_the_power_law_keeps_a_heavier_tail():
    hours, rate = np.array([24 * 30.0]), decay.rate(72)
    assert Decay("power_law").curve(hours, rate)[0] > Decay("exponential").curve(hours, rate)[0]


def test_a_two_component_that_never_halves_says_so():
    assert Decay("two_component").replace(fast_share=0.5).half_life(0.0) == math.inf


def test_the_decay_model_is_a_scoring_choice():
    rows = [{"distance": 0.2, "created_at": 1_780_000_000.0 - 400 * DAY, "last_access": 1_780_000_000.0 - 400 * DAY,
             "access_count": 1}, {"distance": 0.2, "last_access": 1_780_000_000.0 - HOUR, "access_count": 1}]
    candidates = candidate_set(rows)
    exponential = score_candidates(candidates, SEED).temporal_factor
    power = score_candidates(candidates, SEED.replace(decay_model="power_law")).temporal_factor
    two = score_candidates(candidates, SEED.replace(decay_model="two_component", decay_fast_share=0.9)).temporal_factor
    assert power[0] > exponential[0] and two[0] < exponential[0]
    assert SEED.replace(decay_model="power_law").half_life_hours == pytest.approx(SEED.half_life_hours)
    assert DEFAULT.decay.model == SEED.decay.model == "exponential"  # the default ranks as before


def test_the_knobs_are_flat_and_round_trip():
    params = SEED.replace(decay_model="two_component", decay_fast_hours=12.0, decay_alpha=2.0)
    stored = params.to_dict()
    assert stored["decay_model"] == "two_component" and stored["decay_fast_hours"] == 12.0
    assert ScoringParams.from_json(params.to_json()) == params
    assert params.value("decay_model") == "two_component" and params.value("decay_alpha") == 2.0
    assert params.replace(decay_model="exponential").replace(decay_model="two_component") == params  # kept
    knobs = {k.name: k for k in ScoringParams.knobs()}
    assert knobs["decay_model"].metadata["choices"] == tuple(MODELS)
    assert {f"decay_{name}" for name in PARAMETERS} <= knobs.keys() and set(stored) == set(knobs)


@pytest.mark.parametrize("code, name", [(0, "exponential"), (1.0, "power_law"), ("2", "two_component")])
def test_settings_stored_with_the_old_numbers_still_load(code, name):
    """Saved scoring parameters, the search log and tuning records held ``decay_model`` as a number (0, 1, 2), and
    the retention settings too (``limbic review --set decay_model=1``)."""
    old = {**{k: v for k, v in SEED.to_dict().items() if k != "decay_model"}, "decay_model": code}
    assert ScoringParams.from_json(json.dumps(old)).decay.model == name
    retention = {"beta": 0.6, "half_life_hours": 72.0, "decay_model": code, "alpha": 1.1, "fast_hours": 24.0,
                 "fast_share": 0.5, "tau_forget": 0.05, "protected_types": ["person"]}
    loaded = RetentionParams.from_dict(retention)
    assert loaded.decay.model == name and RetentionParams.from_dict(json.loads(loaded.to_json())) == loaded


@pytest.mark.parametrize("bad", ["spline", 3, 1.5, None])
def test_an_unknown_model_is_refused_naming_the_models(bad):
    with pytest.raises(ValidationError, match=", ".join(MODELS)):
        ScoringParams.from_dict({"decay_model": bad})
    with pytest.raises(ValidationError, match="decay_alpha must be a number"):
        ScoringParams.from_dict({"decay_alpha": "steep"})
    with pytest.raises(ValidationError, match="from 0.1 to 5"):
        SEED.replace(decay_alpha=9.0)


def test_the_retention_score_uses_the_same_models():
    hours = np.array([0.0, 72.0, 24 * 49.0])
    params = RetentionParams()
    assert params.decay.model == "power_law"  # Mnemex's default for forgetting
    assert np.array_equal(fading(hours, params), Decay("power_law").curve(hours, decay.rate(72.0)))
    exponential = RetentionParams.from_dict({"decay_model": "exponential"})
    assert fading(hours, exponential)[1] == pytest.approx(0.5)


def test_a_memory_saved_with_numbered_models_opens_and_saves_names(tmp_path, capsys):
    """A real database whose settings were written when models were numbers: the saved scoring parameters and the
    retention settings load, ``limbic review --set decay_model=…`` takes a name or an old number, and names are
    what is saved from then on."""
    from limbic.core.cli.main import main
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.learning.loop import PARAMS_KEY
    from limbic.core.service import MemoryService
    from limbic.core.service.forgetting import PARAMS_KEY as RETENTION_KEY
    from limbic.core.store.schema import put_setting

    path = str(tmp_path / "memory.db")
    scoring = {**{k: v for k, v in DEFAULT.to_dict().items() if not k.startswith("decay_")},
               "decay_model": 2.0, "decay_alpha": 1.1, "decay_fast_hours": 12.0, "decay_fast_share": 0.5}
    retention = {"alpha": 1.1, "beta": 0.6, "decay_model": 1, "detail_step": 0.1, "fast_hours": 24.0,
                 "fast_share": 0.5, "grace_days": 30, "half_life_hours": 72.0, "keep_used_days": 30,
                 "promote_min_uses": 2, "promote_uses": 5, "promote_window_days": 14,
                 "protected_types": ["person", "preference", "identity", "decision"], "strength_step": 0.1,
                 "tau_forget": 0.05, "tau_promote": 0.65}
    service = MemoryService.open(path, embedder=HashingEmbedder())
    with service.database.write("cli", "set") as txn:
        put_setting(txn.conn, PARAMS_KEY, json.dumps(scoring))
        put_setting(txn.conn, RETENTION_KEY, json.dumps(retention))
    assert service.search.scoring_params() == DEFAULT.replace(decay_model="two_component", decay_fast_hours=12.0)
    assert service.lifecycle.retention_params() == RetentionParams()
    service.close()
    for value, name in (("exponential", "exponential"), ("2", "two_component")):
        assert main(["--db", path, "review", "--json", "--set", f"decay_model={value}"]) == 0
        capsys.readouterr()
        service = MemoryService.open(path, embedder=HashingEmbedder())
        assert service.lifecycle.retention_params().decay.model == name
        assert json.loads(service.database.get_setting(RETENTION_KEY))["decay_model"] == name
        service.close()
    assert main(["--db", path, "review", "--set", "decay_model=spline"]) == 2
    assert "unknown decay model 'spline'" in capsys.readouterr().err
