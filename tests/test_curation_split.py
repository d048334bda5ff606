"""Entity splitting: thresholds by type, candidates, topics compared on labelled entities (real model), a clear
three-topic entity split into three parts with the right observations and relations, reviewed, executed in
one transaction (a failure mid-way leaves the original intact) and undone exactly."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from _embedder_helpers import real_model_dir
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from sklearn.metrics import adjusted_rand_score

from limbic.core.curation import splitting, stop_words
from limbic.core.errors import ConflictError, NotFoundError, ValidationError
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.service import MemoryService, review
from limbic.core.service.curation_edits import SplitEntity
from limbic.core.service.splitting import SplitPart
from limbic.core.store.backend import open_database
from limbic.core.store.indexing import observation_passage

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "split_entities.json").read_text(encoding="utf-8"))

GARDEN = ("Grows tomatoes and peppers in raised beds", "Waters the vegetable garden every evening in summer",
          "Keeps a compost heap behind the shed", "Planted twelve rose bushes along the fence",
          "Prunes the apple tree every February", "Uses copper tape to keep slugs away from the lettuce",
          "Harvested forty kilos of potatoes this year", "Starts the seedlings indoors under grow lights in March",
          "Mulches the flower beds with bark chips", "The herb garden has basil, thyme and rosemary",
          "Fights aphids on the roses with soapy water", "Built a greenhouse from old windows",
          "Saves seeds from the best squash plants")
SKY = ("Owns an eight-inch Dobsonian telescope", "Photographed the rings of Saturn last August",
       "Drives to a dark-sky site to avoid light pollution", "Keeps a log of every galaxy observed",
       "Watched the Perseid meteor shower in the mountains", "Is learning to use a star chart to find nebulae",
       "Saw the four big moons of Jupiter through binoculars", "Is a member of the local astronomy club",
       "Wants to see a total solar eclipse", "Aligns the telescope finder on Polaris",
       "Tracks the International Space Station passes", "Uses a red torch at night to keep dark-adapted eyes",
       "Observed the Andromeda galaxy for the first time")
BAKING = ("Bakes sourdough bread every weekend", "Feeds the sourdough starter twice a day",
          "Makes croissants with laminated butter dough", "Uses a Dutch oven to bake crusty loaves",
          "Weighs flour in grams for precise recipes", "Bakes cinnamon rolls for birthdays",
          "Prefers rye flour for dense country loaves", "Let the dough proof overnight in the fridge",
          "Learned to shape baguettes at a workshop", "Burned the first batch of cookies in the new oven",
          "Makes pizza dough with a long cold fermentation", "Scores the bread with a razor blade before baking",
          "Bakes a lemon tart for dinner parties", "Grinds spelt flour at home")
RELATIONS = (RelationInput("Alex", "Greenhouse", "owns"), RelationInput("Alex", "Astronomy Club", "member_of"),
             RelationInput("Sourdough Starter", "Alex", "fed_by"), RelationInput("Alex", "Bob", "knows"))


def test_the_english_stop_words_are_scikit_learns():
    assert stop_words.ENGLISH == ENGLISH_STOP_WORDS


def test_thresholds_by_type_are_settable(service):
    assert [splitting.threshold_for(t) for t in ("Sesion", "Sesión", "session", "Proyecto", "PROJECT", "Person")] == [
        15, 15, 15, 25, 25, 20]
    assert service.splits.split_thresholds()["*"] == 20
    service.splits.set_split_thresholds({"Person": 3, "*": 30, "Sesión": 10})
    saved = service.splits.split_thresholds()
    assert (saved["person"], saved["*"], saved["sesion"], saved["proyecto"]) == (3, 30, 10, 25)
    with pytest.raises(ValidationError):
        service.splits.set_split_thresholds({"Person": 0})
    service.entities.create_entities([EntityInput("P", "Person", tuple(ObservationInput(f"fact {i}") for i in range(4))),
                             EntityInput("Q", "Thing", tuple(ObservationInput(f"fact {i}") for i in range(4)))])
    total, found = service.splits.find_split_candidates()
    assert total == 1 and found[0].to_dict() == {"entityName": "P", "entityType": "Person", "observationCount": 4,
                                                 "threshold": 3, "score": 1.333}
    assert service.splits.find_split_candidates(thresholds={"Thing": 2})[0] == 2


def test_vector_topics_beat_tfidf_topics_on_the_labelled_entities():
    """docs/curation.md "Splitting": the adjusted Rand index of each method against the labels."""
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    embedder = OnnxEmbedder(real_model_dir())
    scores: dict[str, list[float]] = {"vectors": [], "tfidf": []}
    for entity in FIXTURE["entities"]:
        texts = [t for observations in entity["topics"].values() for t in observations]
        truth = [topic for topic, observations in entity["topics"].items() for _ in observations]
        vectors = embedder.embed([observation_passage(entity["name"], t) for t in texts])
        for method in scores:
            labels, _, _, used = splitting.topics(texts, vectors, method)
            assert used == method
            scores[method].append(adjusted_rand_score(truth, labels))
    assert splitting.DEFAULT_METHOD == "vectors"
    assert np.mean(scores["vectors"]) > np.mean(scores["tfidf"]) + 0.3, scores
    assert scores["vectors"][0] > 0.8  # Project Atlas, three topics in English


@pytest.fixture
def alex(memory_address):
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    service = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    service.entities.create_entities([EntityInput("Alex", "Person", tuple(ObservationInput(t, "fact") for t in (
        *GARDEN, *SKY, *BAKING))), *(EntityInput(n, "Thing") for n in (
            "Greenhouse", "Astronomy Club", "Sourdough Starter", "Bob"))])
    service.relations.create_relations(list(RELATIONS))
    service.usage.record_access(["Alex", "Bob"])
    service.reflections.add_reflection("entity", "Alex", "me", "Alex does too many things")
    yield service
    service.close()


def snapshot(service) -> tuple:
    graph = service.entities.read_graph(include_ended=True)
    alex = service.entities.get_entity("Alex")
    return graph, alex.access_count, [(r.author, r.content) for r in service.reflections.all_reflections()]


def test_a_clear_three_topic_entity_splits_into_three_parts_and_undoes_exactly(alex):
    service = alex
    [candidate] = service.splits.find_split_candidates()[1]
    assert (candidate.name, candidate.observations, candidate.threshold) == ("Alex", 40, 20)
    proposal = service.splits.propose_entity_split("Alex")
    assert proposal.needs_split and proposal.method == "vectors" and len(proposal.parts) == 3
    assert [set(p.observations) for p in proposal.parts] == [set(GARDEN[1:]), set(SKY), set(BAKING)]
    assert proposal.staying == (GARDEN[0],)  # the first observation says what Alex is: it stays
    assert [p.name.startswith("Alex - ") for p in proposal.parts] == [True] * 3
    assert [[(r.source, r.target) for r in p.relations] for p in proposal.parts] == [
        [("Alex", "Greenhouse")], [("Alex", "Astronomy Club")], [("Sourdough Starter", "Alex")]]
    assert [(r.source, r.target) for r in proposal.staying_relations] == [("Alex", "Bob")]

    # review: rename a part, move an observation to another part, keep one on the original
    garden, sky, baking = proposal.parts
    parts = [replace(garden, name="Alex's garden", observations=garden.observations[1:]),
             replace(sky, observations=(*sky.observations, garden.observations[0])),
             replace(baking, observations=baking.observations[:-1])]
    before = snapshot(service)
    edit = SplitEntity("Alex", parts)
    edit.apply(service)
    assert {o.content for o in service.entities.get_entity("Alex's garden").entity.observations} == set(GARDEN[2:])
    assert GARDEN[1] in {o.content for o in service.entities.get_entity(sky.name).entity.observations}
    original = service.entities.get_entity("Alex")
    assert [o.content for o in original.entity.live_observations] == [GARDEN[0], BAKING[-1]]
    arrows = {(r.source, r.relation_type, r.target) for r in original.relations}
    assert {("Alex", "contains", p.name) for p in parts} <= arrows
    assert {(p.name, "part_of", "Alex") for p in parts} <= arrows
    assert ("Alex", "knows", "Bob") in arrows and ("Alex", "owns", "Greenhouse") not in arrows
    assert ("Alex's garden", "owns", "Greenhouse") in {(r.source, r.relation_type, r.target)
                                                      for r in service.entities.get_entity("Greenhouse").relations}
    assert service.entities.get_entity(baking.name).entity.observations[0].kind == "fact"
    edit.revert(service)
    assert snapshot(service) == before
    edit.apply(service)  # redo
    assert service.entities.get_entity("Alex's garden").entity.entity_type == "Person"


def test_a_failure_mid_way_leaves_the_original_intact(alex, monkeypatch):
    service = alex
    proposal = service.splits.propose_entity_split("Alex")
    before, change = snapshot(service), service.history.last_change_id()
    calls = []

    def failing(items, **kwargs):
        calls.append(items)
        raise RuntimeError("disk full")

    monkeypatch.setattr(service.relations, "create_relations", failing)
    with pytest.raises(RuntimeError):
        SplitEntity("Alex", proposal.parts).apply(service)
    assert calls and snapshot(service) == before and service.history.last_change_id() == change


def test_refusals_write_nothing(alex):
    service = alex
    proposal = service.splits.propose_entity_split("Alex", method="tfidf")
    assert proposal.method == "tfidf"
    part = SplitPart("Alex - garden", "Person", GARDEN[:2])
    change = service.history.last_change_id()
    for parts, error in (([replace(part, name="Bob")], ConflictError),
                         ([replace(part, observations=("not an observation of Alex",))], NotFoundError),
                         ([part, replace(part, name="Other")], ValidationError),
                         ([replace(part, relations=(RelationInput("Bob", "Greenhouse", "owns"),))], NotFoundError),
                         ([], ValidationError)):
        with pytest.raises(error):
            service.splits.split_entity("Alex", parts)
    with pytest.raises(ValidationError):
        service.splits.split_entity("Alex", [part], relation_names="includes")
    with pytest.raises(NotFoundError):
        service.splits.propose_entity_split("Nobody")
    with pytest.raises(ValidationError):
        service.splits.propose_entity_split("Alex", method="lda")
    assert service.history.last_change_id() == change
    service.splits.split_entity("Alex", [part], relation_names="contiene")
    assert {r.relation_type for r in service.entities.get_entity("Alex - garden").relations} == {"contiene", "parte_de"}


def test_split_decisions_in_the_review_queue(alex, monkeypatch):
    service = alex
    proposal = service.splits.propose_entity_split("Alex")
    assert proposal.quality < splitting.QUALITY_FLOOR and not proposal.suggested
    assert review.review(service, kinds=["split"])[0].total == 0  # below the floor: not in the queue
    monkeypatch.setattr(splitting, "QUALITY_FLOOR", proposal.quality)  # a memory whose topics stand further apart
    [section] = review.review(service, kinds=["split"])
    assert section.total == 1 and section.items[0].subjects == ("Alex",) and section.items[0].options[0] == "split"
    assert [p["name"] for p in section.items[0].evidence["parts"]] == [p.name for p in proposal.parts]
    before = snapshot(service)
    edit = review.decide(service, section.items[0].key, "split")
    assert [o.content for o in service.entities.get_entity("Alex").entity.live_observations] == [GARDEN[0]]
    edit.revert(service)
    assert snapshot(service) == before
    keep = review.decide(service, section.items[0].key, "keep")
    assert review.review(service, kinds=["split"])[0].total == 0
    keep.revert(service)
    assert review.review(service, kinds=["split"])[0].total == 1


def test_the_queue_clusters_a_candidate_again_only_when_its_observations_change(alex, monkeypatch):
    """Each candidate's quality is kept under a digest of its live observations: reading the queue again does
    not cluster an unchanged entity; a new observation proposes it afresh."""
    service = alex
    proposed = []
    propose = service.splits.propose_entity_split
    monkeypatch.setattr(service.splits, "propose_entity_split",
                        lambda name, method=None: proposed.append(name) or propose(name, method))
    assert review.review(service, kinds=["split"])[0].total == 0 and proposed == ["Alex"]
    assert review.review(service, kinds=["split"])[0].total == 0 and proposed == ["Alex"]
    service.entities.add_observations([("Alex", [ObservationInput("Collects vintage fountain pens")])])
    service.search.wait_for_vectors()
    assert review.review(service, kinds=["split"])[0].total == 0 and proposed == ["Alex", "Alex"]
    assert review.review(service, kinds=["split"])[0].total == 0 and proposed == ["Alex", "Alex"]


def test_parts_are_named_by_their_distinctive_terms_as_written():
    texts = ["The slider animations use CSS transitions", "Slider animation timing is 300 ms",
             "animations pause on hover in the slider", "Ocean theme colours for the slider",
             "The ocean theme uses deep blue", "the ocean palette has five colours",
             "Fixed the GitHub Actions cache", "GitHub Actions runs the tests on push", "added a GitHub Actions badge"]
    terms = splitting.topic_terms(texts, np.array([0, 0, 0, 1, 1, 1, 2, 2, 2]), "Hero Slider")
    # never the entity's own name, never two forms of one word, never what was done; a phrase as written
    assert terms == [["Animations"], ["Ocean Theme"], ["GitHub Actions"]]
    assert splitting.topic_name("Hero Slider", terms[2], 2, set()) == "Hero Slider - GitHub Actions"


DEBIAN = json.loads((Path(__file__).parent / "fixtures" / "split_debian_packages.json").read_text(encoding="utf-8"))


def test_what_an_entity_says_of_itself_stays_on_it():
    texts = ["TeX Live: LaTeX fundamental packages", "ae -- Virtual fonts for T1 encoded CMR-fonts",
             "Fix: the parser now reads nested lists without recursion", "Status: done",
             "Homepage: http://www.tug.org/texlive/", "Debtags: made-of::font, role::app-data, use::typesetting",
             "Account =======", "The texlive-latex-base package is installed by default", "Priority: high"]
    assert splitting.about_itself(texts).tolist() == [True, False, False, True, True, True, False, False, True]


def test_large_debian_packages_are_not_suggested_for_splitting(memory_address):
    """Two of Debian's packages that pass the threshold (a list of 60 CTAN packages, a module's manual cut into
    sections): their topics do not stand apart (quality below the floor): neither is in the queue; a proposal
    keeps the package's summary and fields on it and names no part from a web address."""
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    service = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    try:
        service.entities.create_entities([EntityInput(e["name"], e["entityType"], tuple(
            ObservationInput(t) for t in e["observations"])) for e in DEBIAN["entities"]])
        assert service.splits.find_split_candidates()[0] == 2
        for entity in DEBIAN["entities"]:
            proposal = service.splits.propose_entity_split(entity["name"])
            summary, fields = entity["observations"][0], [t for t in entity["observations"] if t.startswith(
                ("Homepage:", "Debtags:"))]
            assert summary in proposal.staying and set(fields) <= set(proposal.staying)
            assert not {"Https", "Http", "Com", "Www", "Org"} & {w for p in proposal.parts for w in p.name.split()}
            assert proposal.quality < splitting.QUALITY_FLOOR and not proposal.suggested
            assert proposal.to_dict()["suggested"] is False
        assert review.review(service, kinds=["split"])[0].total == 0
    finally:
        service.close()
