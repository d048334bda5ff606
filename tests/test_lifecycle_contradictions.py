"""Contradiction warnings: a stated change, another value in the same frame, a negation or opposite words, with
reasons a person reads at once; measured with the real model on the realistic labelled pairs of
tests/fixtures/contradiction_pairs_realistic.jsonl (per split, both modes) and the earlier pairs; stored, returned
over MCP, queued when the vector lands later, settled through the review queue and undone exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _mcp_helpers import portal_client

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
REALISTIC = Path(__file__).parent / "fixtures" / "contradiction_pairs_realistic.jsonl"


@pytest.fixture
def memory(model, memory_address):
    service = MemoryService(open_database(memory_address), model)
    service.entities.create_entities([
        E("deploys", "Fact", (O("Production deploys go to AWS region us-east-1"),)),
        E("cache", "Component", (O("the cache is enabled"),)),
        E("infra", "Team", (O("the infra team owns the deploy pipeline"),)),
    ])
    service.relations.create_relations([R("infra", "deploys", "owns")])
    yield service
    service.close()


def measure(model, path: Path, mode: str, split: str | None = None) -> dict[str, int]:
    """``tp``, ``fp``, ``fn``, ``tn`` of the detector in ``mode`` on the labelled pairs of ``path`` (of ``split``
    when given), each pair embedded as the product embeds observations, judged old → new."""
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    pairs = [p for p in pairs if split is None or p["split"] == split]
    a = model.embed([observation_passage(p["entity"], p["a"]) for p in pairs])
    b = model.embed([observation_passage(p["entity"], p["b"]) for p in pairs])
    sims = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for pair, sim in zip(pairs, sims.tolist(), strict=True):
        flagged, truth = c.judge(pair["a"], pair["b"], sim, mode) is not None, pair["label"] == "contradiction"
        counts[("tp" if truth else "fp") if flagged else ("fn" if truth else "tn")] += 1
    return counts


def rates(counts: dict[str, int]) -> tuple[float, float]:
    return counts["tp"] / max(1, counts["tp"] + counts["fp"]), counts["tp"] / max(1, counts["tp"] + counts["fn"])


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("Sofia works at Acme Corp as a product manager", "Sofia left Acme and joined Initech in March",
     "employer changed: Acme → Initech"),
    ("api-service runs on Python 3.11", "api-service was upgraded to Python 3.12", "version: Python 3.11 → 3.12"),
    ("Daniel is on call this week", "Daniel is no longer on call this week", "negated: is no longer on call this week"),
    ("The backend stores sessions in MySQL", "Backend moved off MySQL to DynamoDB for sessions",
     "switched: MySQL → DynamoDB"),
    ("Production deploys go to us-east-1", "Production deploys go to us-west-2", "region: us-east-1 → us-west-2"),
    ("The cache is enabled", "The cache is disabled", "opposite: enabled → disabled"),
    ("Javier vive en Madrid", "Javier se mudó a Valencia el mes pasado", "moved: Madrid → Valencia"),
    ("Launch is planned for March 15, 2025", "Launch slipped to April 2, 2025", "date: March 15, 2025 → April 2, 2025"),
    ("Sofia's role: senior product manager", "Sofia's role: director of product",
     "role: senior product manager → director of product"),
])
def test_reasons_a_person_reads_at_once(old, new, reason):
    assert c.judge(old, new, 0.9) == reason


@pytest.mark.parametrize(("old", "new"), [
    ("Standup is on Mondays and Thursdays", "Standup starts at 9:30am"),  # a weekday and a time of day
    ("User had a dentist appointment on 2024-03-04", "User had a dentist appointment on 2024-09-12"),  # two events
    ("Team Alpha has 6 engineers", "Team Alpha has 2 designers"),  # two counts of two things
    ("User pays $15.49 a month for Netflix", "User pays $10.99 a month for Spotify"),  # two bills
    ("Launch is planned for March 15, 2025", "Launch is scheduled for 15 March 2025"),  # one date written twice
    ("Sofia lives in Lisbon", "Sofia lives in Lisbon, in the Alfama neighbourhood"),  # a refinement
    ("The repository is private", "The repository is not public"),  # two negatives
    ("Sofia is moving to Porto in September", "Sofia moved to Porto as planned"),  # the change agrees
    ("User speaks French", "User also speaks German"),  # one more
    ("split out last year (note 2)", "split out last year (note 179)"),  # an aside in parentheses
    ("NOTE: THIS PACKAGE IS NOW OBSOLETE.", "builds reproducibly on ppc64el since the last upload"),  # shouting
    ("Step 2: run the migrations with make migrate", "Step 4: restart the workers with make restart"),  # two items
    ("SAVE button opens SaveDialog and calls persistDraft()", "LOAD button opens LoadDialog and calls readDraft()"),
    ("User enjoys Stoicism.", "User enjoys Taoism. Mention it when relevant."),  # one may enjoy both
    ("Key structs: cache_entry_t uses ttl_ms", "Key structs: queue_item_t uses retry_count"),  # a list, line by line
    ("The proxy listens on port 8443", "Now exposes 12 tools to the agent"),  # two quantities of two things
])
def test_compatible_facts_are_not_flagged(old, new):
    assert c.judge(old, new, 0.95) is None


def test_below_its_floor_nothing_is_read():
    assert c.judge("Team Alpha has 6 engineers", "Team Alpha has 9 engineers", c.FLOOR - 0.01) is None
    long = "Team Alpha has 6 engineers. " + "It ships the billing service every week. " * 8
    assert len(long) > c.MAX_CHARS and c.judge(long, long.replace("6 engineers", "9 engineers"), 0.99) is None
    assert c.judge("a is 1", "a is 2", 0.70, c.SIMILARITY) is None and c.judge("same", "again", 0.9, c.SIMILARITY)


def test_precision_and_recall_on_realistic_pairs(model):
    """The targets on the realistic pairs: precision ≥ 0.8 with recall ≥ 0.6 on each split (the dev split the
    rules were tuned on, the held-out test split, and the fresh pairs written after the rules were set)."""
    for split in ("dev", "test", "fresh"):
        counts = measure(model, REALISTIC, c.CHECKABLE, split)
        precision, recall = rates(counts)
        seed_precision, seed_recall = rates(measure(model, REALISTIC, c.SIMILARITY, split))
        print(f"\n{split}: checkable {counts} precision {precision:.3f} recall {recall:.3f}; "
              f"similarity precision {seed_precision:.3f} recall {seed_recall:.3f}")
        assert precision >= 0.8 and recall >= 0.6, (split, counts)
        assert precision > seed_precision


def test_the_earlier_pairs_stay_a_regression_set(model):
    precision, recall = rates(measure(model, PAIRS, c.CHECKABLE))
    assert precision >= 0.8 and recall >= 0.7


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
    assert conflict["reason"] == "region: us-east-1 → us-west-2" and conflict["similarity"] > 0.75
    assert conflict["options"] == ["keep_both", "update_old", "supersede", "delete_old"]
    assert polarity["conflicts"][0]["reason"] == "negated: is not enabled"
    assert paraphrase == {"results": [{"entityName": "cache", "addedObservations": ["caching is turned on"]}]}
    assert "conflicts" not in related
    assert {x["conflictsWith"]["entityName"] for x in across.get("conflicts", [])} <= {"deploys"}
    assert memory.entities.get_entity("deploys").entity.observations[-1].content.startswith("Staging")  # all stored
    total, _ = memory.lifecycle.open_conflicts()
    assert total >= 2


def test_the_check_runs_when_the_vector_lands(memory):
    with memory.search.deferred_vectors():  # the model is busy: the write commits, its vector comes later
        memory.entities.add_observations([("cache", [O("the cache is not enabled")])])
        assert memory.lifecycle.check_conflicts() == 0  # not landed yet: it stays queued
        assert memory.lifecycle.open_conflicts()[0] == 0
    memory.search.wait_for_vectors()
    total, rows = memory.lifecycle.open_conflicts()
    assert total == 1 and rows[0].other_content == "the cache is enabled"


def test_a_write_returns_its_conflicts_before_its_vector_lands(memory):
    with memory.search.deferred_vectors():
        memory.entities.add_observations([("cache", [O("the cache is not enabled")])])
        found, pending = memory.lifecycle.conflicts_of([("cache", ["the cache is not enabled"])])  # embedded at once
    assert pending == 0 and [r.other_content for r in found] == ["the cache is enabled"]
    memory.search.wait_for_vectors()
    assert memory.lifecycle.open_conflicts()[0] == 1  # found once, not again when the vector lands


def test_the_seed_mode_flags_paraphrases(memory):
    memory.lifecycle.set_conflict_mode(c.SIMILARITY)
    memory.entities.add_observations([("cache", [O("caching is turned on")])])
    found, _ = memory.lifecycle.conflicts_of([("cache", ["caching is turned on"])])
    assert found and found[0].reason.startswith("similar")


@pytest.mark.parametrize("option", ["supersede", "delete_old", "update_old", "keep_both"])
def test_settling_a_conflict_is_undone_exactly(memory, option):
    memory.entities.add_observations([("deploys", [O("Production deploys go to AWS region us-west-2")])])
    memory.search.wait_for_vectors()  # the conflict is stored once the vector lands
    before, conflicts = memory.snapshots.snapshot_entities(["deploys"]), memory.lifecycle.open_conflicts()
    [section] = review.review(memory, ["contradiction"])
    [decision] = section.items
    assert decision.options[0] == "keep_both" and decision.evidence["reason"].startswith("region:")  # no cue says which
    assert decision.evidence["suggestion"].startswith("nothing says which is current")
    edit = review.decide(memory, decision.key, option)
    assert review.review(memory, ["contradiction"])[0].total == 0
    live = [o.content for o in memory.entities.get_entity("deploys").entity.live_observations]
    expected = {"supersede": ["Production deploys go to AWS region us-west-2"],
                "delete_old": ["Production deploys go to AWS region us-west-2"],
                "update_old": ["Production deploys go to AWS region us-west-2"],
                "keep_both": ["Production deploys go to AWS region us-east-1",
                              "Production deploys go to AWS region us-west-2"]}[option]
    assert live == expected
    if option == "supersede":
        old = memory.entities.get_entity("deploys").entity.observations[0]
        assert old.weight == 0.1 and old.superseded_at is not None
    edit.revert(memory)
    assert memory.snapshots.snapshot_entities(["deploys"]) == before
    assert [d.key for d in review.review(memory, ["contradiction"])[0].items] == [decision.key]
    assert memory.lifecycle.open_conflicts() == conflicts


@pytest.mark.parametrize("edit", [DeleteEntities(["deploys"]), MergeEntities(["deploys"], "cache"),
                                  DeleteObservation("deploys", "Production deploys go to AWS region us-east-1")],
                         ids=["delete entity", "merge", "delete observation"])
def test_an_undone_deletion_gives_its_conflicts_back_exactly(memory, edit):
    memory.entities.add_observations([("deploys", [O("Production deploys go to AWS region us-west-2")])])
    memory.search.wait_for_vectors()  # the conflict is stored once the vector lands
    before, conflicts = memory.snapshots.snapshot_entities(["deploys", "cache"]), memory.lifecycle.open_conflicts()
    assert conflicts[0] == 1 and before[0].conflicts == tuple(conflicts[1])
    edit.apply(memory)
    assert memory.lifecycle.open_conflicts() == (0, [])
    edit.revert(memory)
    assert memory.snapshots.snapshot_entities(["deploys", "cache"]) == before
    assert memory.lifecycle.open_conflicts() == conflicts  # the same row: id, pair, reason, times
