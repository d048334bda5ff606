"""Context: the memories written just before and after a result lend it relevance (docs/scoring.md "Context").

Real memories (a SQLite file, a PostgreSQL database) through ``MemoryService`` with the deterministic hashing embedder (no model files).
"""

from __future__ import annotations

import pytest

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.search import context
from limbic.core.search.presets import preset
from limbic.core.search.scoring import explain
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

HOUR = 3600.0
T0 = 1_700_000_000.0
QUERY = "lighthouse festival"


def _entity(name: str, text: str, at: float) -> EntityInput:
    return EntityInput(name, "turn", (ObservationInput(text, created_at=at),), created_at=at, updated_at=at)


def _conversation(address, embedder) -> MemoryService:
    """A question turn, its answer (sharing no word with the question), then turns written days later."""
    svc = MemoryService(open_database(address), embedder, origin="cli")
    svc.entities.create_entities([
        _entity("D1:1", "Caroline: how was the lighthouse festival last weekend?", T0),
        _entity("D1:2", "Melanie: we watched fireworks over the harbour until midnight", T0),
        _entity("D1:3", "Caroline: my cat knocked a plant off the shelf", T0),
    ])
    svc.entities.create_entities([
        _entity("D2:1", "Melanie: the old lighthouse keeper retired", T0 + 72 * HOUR),
        _entity("D2:2", "Caroline: I started painting again", T0 + 72 * HOUR),
    ] + [_entity(f"D3:{i}", f"Melanie: note {i} about groceries, bills and the weather", T0 + 144 * HOUR)
         for i in range(1, 13)])
    return svc


@pytest.fixture
def conversation(memory_address):
    svc = _conversation(memory_address, HashingEmbedder())
    yield svc
    svc.close()


def _own(shown: dict, params) -> float:
    """Relevance before context: the entity's fused relevance mixed with its best observation's."""
    entity = (1 - params.bm25_weight) * shown["cosine_rel"] + params.bm25_weight * shown["bm25_rel"]
    return (1 - params.observation_weight) * entity + params.observation_weight * shown["observation"]


def test_the_answer_next_to_the_matching_turn_is_lifted_by_its_context(conversation):
    without = [r.name for r in conversation.search.query(QUERY, 3, preset("default").replace(context_weight=0.0),
                                                   record=False).results]
    assert without[0] == "D1:1" and without[1] == "D2:1"  # the answer shares no word with the question
    ranked = [r.name for r in conversation.search.query(QUERY, 3, preset("default"), record=False).results]
    assert ranked[:2] == ["D1:1", "D1:2"]  # the answer comes right after the turn that asks


def test_neighbours_of_each_branchs_results_join_the_candidates(conversation):
    params = preset("default").replace(expansion_factor=1)
    cs = conversation.search.query(QUERY, 1, params, record=False).candidate_set
    assert "D1:2" in cs.names  # the answer: a neighbour of the best full-text match, found by neither branch
    answer = cs.names.index("D1:2")
    assert (cs.knn_rank[answer], cs.fts_rank[answer]) == (0, 0)
    plain = conversation.search.query(QUERY, 1, params.replace(context_weight=0.0), record=False).candidate_set
    assert "D1:2" not in plain.names


def test_context_lifts_by_a_share_of_the_neighbours_lead_and_never_lowers(conversation):
    params = preset("default")
    cs = conversation.search.query(QUERY, 5, params, record=False).candidate_set
    shown = {name: explain(cs, params, i) for i, name in enumerate(cs.names)}
    question, answer = shown["D1:1"], shown["D1:2"]
    assert question["base"] == pytest.approx(_own(question, params))  # its neighbours are less relevant
    assert answer["context"] == pytest.approx(_own(question, params))
    assert answer["base"] == pytest.approx(_own(answer, params) + 0.5 * (_own(question, params) - _own(answer, params)))
    for one in shown.values():
        own = _own(one, params)
        assert one["base"] == pytest.approx(own + params.context_weight * max(0.0, one["context"] - own))
        assert one["base"] >= own - 1e-12


def test_without_a_model_only_text_matches_are_returned(memory_address):
    svc = _conversation(memory_address, None)
    try:
        outcome = svc.search.query(QUERY, 5, preset("default"), record=False)
        assert outcome.mode == "fts_only"
        assert sorted(r.name for r in outcome.results) == ["D1:1", "D2:1"]
    finally:
        svc.close()


def test_neighbours_follow_creation_order_within_the_window(conversation):
    ids = {e.name: e.id for e in conversation.entities.read_graph().entities}
    conn = conversation.database.read()
    around = context.neighbours(conn, ids.values(), window_hours=1.0)
    assert around[ids["D1:1"]] == (ids["D1:2"],)
    assert around[ids["D1:2"]] == (ids["D1:1"], ids["D1:3"])
    assert around[ids["D1:3"]] == (ids["D1:2"],)  # D2:1 was written 72 hours later
    assert around[ids["D2:1"]] == (ids["D2:2"],)
    wide = context.neighbours(conn, [ids["D1:3"]], window_hours=72.0)
    assert wide[ids["D1:3"]] == (ids["D1:2"], ids["D2:1"])
    assert context.neighbours(conn, [], 1.0) == {}


def test_seed_preset_adds_no_candidates_and_ignores_context(conversation):
    seed = preset("seed")
    cs = conversation.search.query(QUERY, 1, seed.replace(expansion_factor=1), record=False).candidate_set
    assert "D1:2" not in cs.names
    full = conversation.search.query(QUERY, 5, seed, record=False)
    assert [r.base_relevance for r in full.results] == [
        explain(full.candidate_set, seed, full.candidate_set.names.index(r.name))["base"] for r in full.results]
    assert all(r.base_relevance == pytest.approx(1 - r.distance) for r in full.results if r.distance is not None)


def test_only_memories_of_the_same_type_are_neighbours(memory_address):
    """An agent notes a tool, then a person, in the same hour: the person is not the tool's context."""
    svc = MemoryService(open_database(memory_address), HashingEmbedder(), origin="cli")
    svc.entities.create_entities([
        EntityInput("Dagster", "Tool", (ObservationInput("orchestrates the lighthouse festival pipelines", created_at=T0),),
                    created_at=T0, updated_at=T0),
        EntityInput("Sofia", "Person", (ObservationInput("works from the harbour office", created_at=T0),),
                    created_at=T0 + 60, updated_at=T0 + 60),
        EntityInput("Airflow", "Tool", (ObservationInput("the scheduler we replaced", created_at=T0),),
                    created_at=T0 + 120, updated_at=T0 + 120),
    ])
    read = svc.database.read()
    with read:
        ids = dict(read.execute("SELECT name, id FROM entities"))
        around = context.neighbours(read, ids.values(), 1.0)
    assert around[ids["Dagster"]] == () and around[ids["Sofia"]] == () and around[ids["Airflow"]] == ()
    svc.close()
