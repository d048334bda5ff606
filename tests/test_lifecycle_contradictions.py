"""Contradiction warnings: a close pair that differs in something checkable, with the real model; measured on
the labelled pairs of tests/fixtures/contradiction_pairs.jsonl (both modes); stored, returned over MCP, queued
when the vector lands later, settled through the review queue and undone exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _embedder_helpers import real_model_dir
from _mcp_helpers import portal_client

from limbic.core.embedding.onnx_embedder import OnnxEmbedder
from limbic.core.lifecycle import contradictions as c
from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.models import RelationInput as R
from limbic.core.service import MemoryService, review
from limbic.core.service.entity_edits import DeleteEntities, DeleteObservation, MergeEntities
from limbic.core.store.backend import open_database
from limbic.core.store.indexing import observation_passage

PAIRS = Path(__file__).parent / "fixtures" / "contradiction_pairs.jsonl"


@pytest.fixture(scope="module")
def model():
    return OnnxEmbedder(real_model_dir())


@pytest.fixture
def memory(model, memory_address):
    service = MemoryService(open_database(memory_address), model)
    service.create_entities([
        E("deploys", "Fact", (O("Production deploys go to AWS region us-east-1"),)),
        E("cache", "Component", (O("the cache is enabled"),)),
        E("infra", "Team", (O("the infra team owns the deploy pipeline"),)),
    ])
    service.create_relations([R("infra", "deploys", "owns")])
    yield service
    service.close()


def measure(model, mode: str) -> tuple[float, float, int]:
    """(precision, recall, labelled pairs) of the detector in ``mode`` on the fixture, with the real model."""
    pairs = [json.loads(line) for line in PAIRS.read_text().splitlines()]
    a = model.embed([observation_passage(p["entity"], p["a"]) for p in pairs])
    b = model.embed([observation_passage(p["entity"], p["b"]) for p in pairs])
    sims = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    flagged = np.array([c.judge(p["a"], p["b"], float(s), mode) is not None for p, s in zip(pairs, sims, strict=True)])
    truth = np.array([p["label"] == "contradiction" for p in pairs])
    return float((flagged & truth).sum() / max(flagged.sum(), 1)), float((flagged & truth).sum() / truth.sum()), len(pairs)


def test_checkable_differences():
    assert c.checkable_difference("deploys go to us-east-1", "deploys go to us-west-2") == \
        "differing region: us-east-1 / us-west-2"
    assert c.checkable_difference("the cache is enabled", "the cache is not enabled").startswith("negation")
    assert c.checkable_difference("Python 3.11 is required", "Python 3.9 is required").startswith("differing version")
    assert c.checkable_difference("The main database is PostgreSQL", "The main database is MySQL") == \
        "differing named: postgresql / mysql"
    assert c.checkable_difference("the cache is enabled", "caching is turned on") is None  # a paraphrase
    assert c.checkable_difference("requires Python 3.11", "requires Python 3.11 or newer") is None  # a refinement
    assert c.judge("a is 1", "a is 2", 0.70) is None and c.judge("a is 1", "a is 2", 0.80) is not None
    assert c.judge("same thing", "said again", 0.9, c.SIMILARITY) is not None


def test_precision_and_recall_on_the_labelled_pairs(model):
    precision, recall, count = measure(model, c.CHECKABLE)
    seed_precision, seed_recall, _ = measure(model, c.SIMILARITY)
    print(f"\ncheckable: precision {precision:.3f} recall {recall:.3f}; "
          f"similarity: precision {seed_precision:.3f} recall {seed_recall:.3f} ({count} pairs)")
    assert count >= 100
    assert precision >= 0.6
    assert precision > seed_precision


def test_a_contradicting_observation_is_stored_and_reported(memory):
    with portal_client(build_server(memory)) as (portal, client):
        def add(entity, text):
            result = portal.call(client.call_tool, "add_observations", {"observations": [
                {"entityName": entity, "contents": [text]}]})
            assert not result.is_error, result.content[0].text
            return result.structured_content

        region = add("deploys", "Production deploys go to AWS region us-west-2")
        paraphrase = add("cache", "caching is turned on")
        polarity = add("cache", "the cache is not enabled")
        related = add("deploys", "Staging deploys take about twelve minutes")
        across = add("infra", "Production deploys go to AWS region eu-central-1")
    [conflict] = region["conflicts"]
    assert conflict["conflictsWith"] == {"entityName": "deploys", "observation": "Production deploys go to AWS region us-east-1"}
    assert conflict["reason"].startswith("differing region") and conflict["similarity"] > 0.75
    assert conflict["options"] == ["keep_both", "update_old", "supersede", "delete_old"]
    assert polarity["conflicts"][0]["reason"].startswith("negation")
    assert paraphrase == {"results": [{"entityName": "cache", "addedObservations": ["caching is turned on"]}]}
    assert "conflicts" not in related
    assert {x["conflictsWith"]["entityName"] for x in across.get("conflicts", [])} <= {"deploys"}
    assert memory.get_entity("deploys").entity.observations[-1].content.startswith("Staging")  # all stored
    total, _ = memory.open_conflicts()
    assert total >= 2


def test_the_check_runs_when_the_vector_lands(memory):
    with memory.deferred_vectors():  # the model is busy: the write commits, its vector comes later
        memory.add_observations([("cache", [O("the cache is not enabled")])])
        assert memory.check_conflicts() == 0  # not landed yet: it stays queued
        assert memory.open_conflicts()[0] == 0
    memory.wait_for_vectors()
    total, rows = memory.open_conflicts()
    assert total == 1 and rows[0].other_content == "the cache is enabled"


def test_a_write_returns_its_conflicts_before_its_vector_lands(memory):
    with memory.deferred_vectors():
        memory.add_observations([("cache", [O("the cache is not enabled")])])
        found, pending = memory.conflicts_of([("cache", ["the cache is not enabled"])])  # embedded at once
    assert pending == 0 and [r.other_content for r in found] == ["the cache is enabled"]
    memory.wait_for_vectors()
    assert memory.open_conflicts()[0] == 1  # found once, not again when the vector lands


def test_the_seed_mode_flags_paraphrases(memory):
    memory.set_conflict_mode(c.SIMILARITY)
    memory.add_observations([("cache", [O("caching is turned on")])])
    found, _ = memory.conflicts_of([("cache", ["caching is turned on"])])
    assert found and found[0].reason.startswith("similar")


@pytest.mark.parametrize("option", ["supersede", "delete_old", "update_old", "keep_both"])
def test_settling_a_conflict_is_undone_exactly(memory, option):
    memory.add_observations([("deploys", [O("Production deploys go to AWS region us-west-2")])])
    memory.wait_for_vectors()  # the conflict is stored once the vector lands
    before, conflicts = memory.snapshot_entities(["deploys"]), memory.open_conflicts()
    [section] = review.review(memory, ["contradiction"])
    [decision] = section.items
    assert decision.options[0] == "supersede" and decision.evidence["reason"].startswith("differing region")
    edit = review.decide(memory, decision.key, option)
    assert review.review(memory, ["contradiction"])[0].total == 0
    live = [o.content for o in memory.get_entity("deploys").entity.live_observations]
    expected = {"supersede": ["Production deploys go to AWS region us-west-2"],
                "delete_old": ["Production deploys go to AWS region us-west-2"],
                "update_old": ["Production deploys go to AWS region us-west-2"],
                "keep_both": ["Production deploys go to AWS region us-east-1",
                              "Production deploys go to AWS region us-west-2"]}[option]
    assert live == expected
    if option == "supersede":
        old = memory.get_entity("deploys").entity.observations[0]
        assert old.weight == 0.1 and old.superseded_at is not None
    edit.revert(memory)
    assert memory.snapshot_entities(["deploys"]) == before
    assert [d.key for d in review.review(memory, ["contradiction"])[0].items] == [decision.key]
    assert memory.open_conflicts() == conflicts


@pytest.mark.parametrize("edit", [DeleteEntities(["deploys"]), MergeEntities(["deploys"], "cache"),
                                  DeleteObservation("deploys", "Production deploys go to AWS region us-east-1")],
                         ids=["delete entity", "merge", "delete observation"])
def test_an_undone_deletion_gives_its_conflicts_back_exactly(memory, edit):
    memory.add_observations([("deploys", [O("Production deploys go to AWS region us-west-2")])])
    memory.wait_for_vectors()  # the conflict is stored once the vector lands
    before, conflicts = memory.snapshot_entities(["deploys", "cache"]), memory.open_conflicts()
    assert conflicts[0] == 1 and before[0].conflicts == tuple(conflicts[1])
    edit.apply(memory)
    assert memory.open_conflicts() == (0, [])
    edit.revert(memory)
    assert memory.snapshot_entities(["deploys", "cache"]) == before
    assert memory.open_conflicts() == conflicts  # the same row: id, pair, reason, times
