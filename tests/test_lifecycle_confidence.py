"""Confidence: an observation's weight multiplies its contribution to its entity's relevance (mememory
"Scoring & Recall", "Memory Weight"); a memory with the default weight ranks exactly as before; superseding
records weight 0.1 on the replaced observation."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from _mcp_helpers import portal_client
from _scoring_helpers import DAY, NOW, candidate_set, random_candidate_set

from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.search.pipeline import rerank
from limbic.core.search.presets import DEFAULT, SEED
from limbic.core.search.scoring import score_candidates

MEMEMORY = SEED.replace(lambda_hourly=0.005 / 24, temporal_floor=0.0)
"""The ``seed`` preset with mememory's gentle decay, e^(−0.005·days since the memory was written)."""


def _zustand_redux():
    """mememory's worked example: recall("state management", project="match"), three memories."""
    rows = [
        {"name": "Uses Zustand for stores", "distance": 1 - 0.92, "created_at": NOW - 5 * DAY},
        {"name": "Prefer Redux for large apps", "distance": 1 - 0.95, "created_at": NOW - 60 * DAY},
        {"name": "State management is complex", "distance": 1 - 0.88, "created_at": NOW - 2 * DAY},
    ]
    plain = candidate_set(rows, query="state management", strategy="limbic_heavy")
    return dataclasses.replace(plain, scope=np.array([1.0, 0.8, 0.8]), confidence=np.array([1.0, 1.0, 0.5]))


def test_the_worked_example_gives_its_scores_and_its_order():
    candidates = _zustand_redux()
    scores = score_candidates(candidates, MEMEMORY)
    assert np.round(scores.temporal_factor, 3).tolist() == [0.975, 0.741, 0.990]
    # the table's 0.349 is 0.3485 rounded twice (0.352 × 0.990 = 0.34848)
    assert np.allclose(scores.limbic_score, [0.897, 0.563, 0.349], atol=6e-4)
    assert [r.name for r in rerank(candidates, MEMEMORY)] == [
        "Uses Zustand for stores", "Prefer Redux for large apps", "State management is complex"]
    # the tentative memory's weight 0.5 is what keeps it last: at 1.0 it scores 0.697 and passes Redux
    confident = dataclasses.replace(candidates, confidence=np.ones(3))
    assert np.allclose(score_candidates(confident, MEMEMORY).limbic_score[2], 0.697, atol=5e-4)
    assert [r.name for r in rerank(confident, MEMEMORY)][1] == "State management is complex"


@pytest.mark.parametrize("params", [SEED, DEFAULT], ids=["seed", "default"])
def test_weight_one_tenth_puts_a_closer_memory_below(params):
    rows = [{"name": "closer", "distance": 0.10, "fts_rank": 1}, {"name": "further", "distance": 0.15, "fts_rank": 2}]
    plain = candidate_set(rows)
    assert [r.name for r in rerank(plain, params)] == ["closer", "further"]
    doubtful = dataclasses.replace(plain, confidence=np.array([0.1, 1.0]))
    assert [r.name for r in rerank(doubtful, params)] == ["further", "closer"]


@pytest.mark.parametrize("params", [SEED, DEFAULT], ids=["seed", "default"])
def test_default_weights_change_no_score_bit_for_bit(params):
    for seed in range(5):
        plain = random_candidate_set(60, seed)
        ones = dataclasses.replace(plain, confidence=np.ones(60), scope=np.ones(60),
                                   observation_confidence=np.ones(len(plain.observation_row)))
        a, b = score_candidates(plain, params), score_candidates(ones, params)
        assert np.array_equal(a.final_score, b.final_score) and np.array_equal(a.order, b.order)


def test_an_observations_weight_scales_its_evidence():
    plain = random_candidate_set(40, 3)
    halved = dataclasses.replace(plain, observation_confidence=np.full(len(plain.observation_row), 0.5))
    full, half = score_candidates(plain, DEFAULT), score_candidates(halved, DEFAULT)
    assert np.all(half.observation <= full.observation + 1e-12) and np.any(half.observation < full.observation)


def test_a_low_weight_observation_ranks_its_entity_lower_in_search(service):
    service.entities.create_entities([
        E("alpha", "Note", (O("the harbour crane lifts containers"),)),
        E("beta", "Note", (O("the harbour crane lifts heavy containers daily"),)),
    ])
    first = [r.name for r in service.search.query("harbour crane containers", limit=2, record=False).results]
    doubted = first[0]
    content = service.entities.get_entity(doubted).entity.observations[0].content
    service.lifecycle.set_observation_terms(doubted, content, expires_at=None, weight=0.1)
    again = [r.name for r in service.search.query("harbour crane containers", limit=2, record=False).results]
    assert again == first[::-1]


def test_superseding_records_weight_one_tenth_and_undo_restores_it(service):
    from limbic.core.service.entity_edits import SupersedeObservation

    service.entities.create_entities([E("cache", "Component", (O("the cache is enabled", weight=0.8),))])
    edit = SupersedeObservation("cache", "the cache is enabled", O("the cache is disabled"))
    edit.apply(service)
    old = next(o for o in service.entities.get_entity("cache").entity.observations if o.content == "the cache is enabled")
    assert old.weight == 0.1 and old.superseded_at is not None
    edit.revert(service)
    old = service.entities.get_entity("cache").entity.observations[0]
    assert (old.weight, old.superseded_at) == (0.8, None)


def test_weight_over_mcp(service):
    with portal_client(build_server(service)) as (portal, client):
        created = portal.call(client.call_tool, "create_entities", {"entities": [
            {"name": "hunch", "entityType": "Idea", "observations": ["maybe rust"], "weight": 0.3}]})
        assert created.structured_content == {"entities": [
            {"name": "hunch", "entityType": "Idea", "observations": ["maybe rust"]}]}
        portal.call(client.call_tool, "add_observations", {"observations": [
            {"entityName": "hunch", "contents": ["maybe go"], "weight": 0.5}]})
        refused = portal.call(client.call_tool, "add_observations", {"observations": [
            {"entityName": "hunch", "contents": ["x"], "weight": 1.5}]})
        assert refused.is_error and "weight" in refused.content[0].text
    weights = {o.content: o.weight for o in service.entities.get_entity("hunch").entity.observations}
    assert weights == {"maybe rust": 0.3, "maybe go": 0.5}
    assert math.isclose(service.search.query("maybe rust", record=False).candidate_set.confidence[0], 0.5)
