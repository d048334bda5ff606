"""Semantic duplicates: the checkable-value rule, name normalisation, the exact pair finder, the calibrated
threshold on the labelled pairs (real model), and the duplicate decisions settled and undone exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _embedder_helpers import real_model_dir

from limbic.core.curation import duplicates, values
from limbic.core.curation.entities import acronym, normalise_name, same_names
from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.service import MemoryService, review
from limbic.core.service.curation_edits import SupersedeDuplicates, keep_observations_apart, merge_duplicates
from limbic.core.store.backend import open_database

PAIRS = json.loads((Path(__file__).parent / "fixtures" / "duplicate_pairs.json").read_text(encoding="utf-8"))["pairs"]


# --- what two statements can differ in --------------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "different"), [
    ("rate limited to 100 requests per minute", "rate limited to 1000 requests per minute", True),
    ("likes coffee", "does not like coffee", True),
    ("likes coffee", "doesn't like coffee", True),
    ("deadline is the end of March", "kicked off in January", True),
    ("runs on AWS in eu-west-1", "runs on AWS in us-east-1", True),
    ("runs every night at 2am UTC", "scheduled nightly at 02:00 UTC", False),
    ("costs 1,000 euros", "costs 1000 euros", False),
    ("lives in Berlin since 2019", "is based in Berlin", False),  # detail on one side only
    ("migrated from Python 2 to Python 3", "was moved from Python 2 to Python 3", False),
    ("prefers dark mode", "likes a dark theme", False),
])
def test_checkable_differences(a, b, different):
    assert values.differ(values.signature(a), values.signature(b)) is different


def test_names_are_normalised_for_case_spacing_punctuation_plurals_and_accents():
    assert normalise_name("  Café   Owners! ") == normalise_name("cafe owner") == "cafe owner"
    assert normalise_name("Libraries") == normalise_name("library")
    assert normalise_name("user_settings") == normalise_name("User Setting")
    assert normalise_name("Boxes") == "box" and normalise_name("class") == "class"
    assert acronym("New York City") == "nyc" and acronym("Berlin") is None
    groups = same_names([(1, "NYC"), (2, "New York City"), (3, "Projects"), (4, "project"), (5, "Alice")])
    assert [(g.ids, g.reason) for g in groups] == [((1, 2), "acronym"), ((3, 4), "same name")]


def test_the_pair_finder_is_exact_in_blocks(monkeypatch):
    monkeypatch.setattr(duplicates, "ROW_BLOCK", 7)
    monkeypatch.setattr(duplicates, "COLUMN_BLOCK", 11)
    rng = np.random.default_rng(3)
    base = rng.standard_normal((12, 16)).astype(np.float32)
    unit = np.repeat(base, 4, axis=0) + 0.25 * rng.standard_normal((48, 16)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    full = unit @ unit.T
    expected = {(i, j) for i in range(48) for j in range(i + 1, 48) if full[i, j] >= 0.8}
    a, b, sims = duplicates.similar_pairs(unit, 0.8)
    assert set(zip(a.tolist(), b.tolist(), strict=True)) == expected and len(a) == len(expected)
    assert np.allclose(sims, full[a, b], atol=1e-5)
    queries = np.array([0, 5, 9])
    a, b, _ = duplicates.similar_pairs(unit, 0.8, queries)
    assert set(zip(a.tolist(), b.tolist(), strict=True)) == {p for p in expected if p[0] in queries or p[1] in queries}


# --- with the real model ------------------------------------------------------------------------------


@pytest.fixture
def real_service(memory_address):
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    service = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    yield service
    service.close()


def test_default_threshold_reaches_precision_and_recall_on_the_labelled_pairs(real_service):
    """The pairs of tests/fixtures/duplicate_pairs.json, stored as observations of their entities: a labelled pair
    counts as found when the finder pairs its two observations (docs/curation.md "Calibration")."""
    assert len(PAIRS) >= 40
    texts: dict[str, list[str]] = {}
    for pair in PAIRS:
        for entity, text in (pair["a"], pair["b"]):
            texts.setdefault(entity, [])
            if text not in texts[entity]:
                texts[entity].append(text)
    real_service.create_entities([EntityInput(name, "Thing", tuple(ObservationInput(t) for t in found))
                                  for name, found in texts.items()])
    ids = {(e.name, o.content): o.id for e in real_service.read_graph().entities for o in e.observations}
    report = real_service.find_duplicate_observations(limit=1000)
    assert report.threshold == duplicates.DEFAULT_THRESHOLD and report.compared == len(ids)
    found = {frozenset((a, b)) for cluster in report.clusters for a, b, _ in cluster.pairs}
    predicted = [frozenset((ids[tuple(p["a"])], ids[tuple(p["b"])])) in found for p in PAIRS]
    labelled = [p["duplicate"] for p in PAIRS]
    true_positives = sum(p and t for p, t in zip(predicted, labelled, strict=True))
    precision, recall = true_positives / sum(predicted), true_positives / sum(labelled)
    assert precision >= 0.9 and recall >= 0.9, (precision, recall)


def test_paraphrases_are_found_unrelated_ones_not_and_settling_undoes_exactly(memory_address):
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    service = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    try:
        service.create_entities([
            EntityInput("User", "person", tuple(ObservationInput(t) for t in (
                "Prefers tabs over spaces for indentation", "Likes indenting with tabs rather than spaces",
                "Is allergic to peanuts", "Drinks coffee every morning", "Plays chess on weekends"))),
            EntityInput("Acme", "company", (ObservationInput("Makes widgets in Ohio"),)),
        ])
        service.create_relations([RelationInput("User", "Acme", "works_at")])
        report = service.find_duplicate_observations()
        assert [[m.content for m in c.members] for c in report.clusters] == [
            ["Prefers tabs over spaces for indentation", "Likes indenting with tabs rather than spaces"]]
        assert service.find_duplicate_observations(entity_name="Acme").total == 0
        assert service.find_duplicate_observations(entity_name="User").total == 1
        before = service.read_graph(include_ended=True)
        [section] = review.review(service, kinds=["duplicate"])
        assert section.total == 1 and section.items[0].options == ("supersede", "merge", "keep")
        for option in ("merge", "supersede", "keep"):
            edit = review.decide(service, section.items[0].key, option)
            assert service.find_duplicate_observations().total == 0
            edit.revert(service)
            assert service.read_graph(include_ended=True) == before, option
            assert service.find_duplicate_observations().total == 1
        with pytest.raises(ValidationError):
            review.decide(service, section.items[0].key, "explode")
        with pytest.raises(NotFoundError):
            review.decide(service, "duplicate:1-999", "merge")
    finally:
        service.close()


# --- edits and decisions with the hashing embedder ---------------------------------------------------------


def test_supersede_and_merge_across_entities_and_hostile_arguments(service):
    service.create_entities([EntityInput("A", "t", (ObservationInput("the blue widget is made in Ohio"),)),
                             EntityInput("B", "t", (ObservationInput("the blue widget is made in Ohio"),
                                                    ObservationInput("something else entirely")))])
    report = service.find_duplicate_observations(threshold=0.6)
    [cluster] = report.clusters
    assert cluster.entities == ("A", "B") and cluster.size == 2
    before = service.read_graph()
    edit = SupersedeDuplicates(cluster.members)
    edit.apply(service)
    live = {e.name: [o.content for o in e.live_observations] for e in service.read_graph().entities}
    assert sum("the blue widget is made in Ohio" in texts for texts in live.values()) == 1
    edit.revert(service)
    assert service.read_graph() == before
    merge = merge_duplicates(cluster.members)
    merge.apply(service)
    merge.revert(service)
    assert service.read_graph() == before
    keep = keep_observations_apart(cluster.members)
    keep.apply(service)
    assert service.find_duplicate_observations(threshold=0.6).total == 0
    keep.revert(service)
    assert service.find_duplicate_observations(threshold=0.6).total == 1
    for bad in (0.2, 1.5, "0.9", True, float("nan")):
        with pytest.raises(ValidationError):
            service.find_duplicate_observations(threshold=bad)
    with pytest.raises(ValidationError):
        service.find_duplicate_observations(limit=-1)
    with pytest.raises(NotFoundError):
        service.find_duplicate_observations(entity_name="Nobody")
    with pytest.raises(ValidationError):
        merge_duplicates(cluster.members[:1])


def test_duplicate_entities_by_name_merge_and_keep_undo_exactly(service):
    service.create_entities([EntityInput("NYC", "city", (ObservationInput("big apple"),)),
                             EntityInput("New York City", "city", (ObservationInput("five boroughs"),
                                                                    ObservationInput("on the Hudson"))),
                             EntityInput("Café Owners", "group", ()), EntityInput("cafe owner", "group", ()),
                             EntityInput("Alice", "person", ())])
    service.create_relations([RelationInput("Alice", "NYC", "lives_in")])
    service.record_access(["NYC"])
    total, found = service.find_duplicate_entities()
    assert total == 2
    assert {(g.names, g.reason) for g in found} == {(("New York City", "NYC"), "acronym"),
                                                    (("Café Owners", "cafe owner"), "same name")}
    before = service.read_graph(include_ended=True)
    sections = review.review(service, kinds=["duplicate_entity"])
    key = next(d.key for d in sections[0].items if "NYC" in d.subjects)
    edit = review.decide(service, key, "merge")
    merged = service.get_entity("New York City")
    assert [o.content for o in merged.entity.observations] == ["five boroughs", "on the Hudson", "big apple"]
    assert merged.access_count == 1 and [r.source for r in merged.relations] == ["Alice"]
    edit.revert(service)
    assert service.read_graph(include_ended=True) == before
    assert service.get_entity("NYC").access_count == 1
    keep = review.decide(service, key, "keep")
    assert service.find_duplicate_entities()[0] == 1
    keep.revert(service)
    assert service.find_duplicate_entities()[0] == 2


def test_the_approximate_scan_finds_the_exact_pairs_on_clustered_vectors(monkeypatch):
    monkeypatch.setattr(duplicates, "APPROXIMATE_FROM", 100)
    rng = np.random.default_rng(5)
    centres = rng.standard_normal((40, 32)).astype(np.float32)
    unit = np.repeat(centres, 10, axis=0) + 0.2 * rng.standard_normal((400, 32)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    exact = set(zip(*[x.tolist() for x in duplicates.similar_pairs(unit, 0.9)[:2]], strict=True))
    a, b, sims = duplicates.approximate_pairs(unit, 0.9)
    found = set(zip(a.tolist(), b.tolist(), strict=True))
    assert found <= exact and len(found) >= 0.95 * len(exact)
    assert np.allclose(sims, (unit[a] * unit[b]).sum(axis=1), atol=1e-5)
