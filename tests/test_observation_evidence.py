"""Observation evidence: the best single observation's fused relevance (docs/scoring.md "Observation evidence").

Real memories (a SQLite file, a PostgreSQL database) through ``MemoryService`` with the deterministic hashing
embedder (no model files).
"""

from __future__ import annotations

import numpy as np
import pytest
from _store_helpers import database_at_version

from limbic.core.learning import codec
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.search.full_text import match_expression
from limbic.core.search.pipeline import rerank
from limbic.core.search.presets import preset
from limbic.core.search.scoring import explain, score_candidates
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.core.store.indexing import observation_passage
from limbic.core.store.text_search import matches


def _matches(svc: MemoryService, *words: str, name_only: bool = False) -> list[int]:
    """Ids of the observations whose index row holds any of ``words`` (in the entity's name only, if asked)."""
    expression = match_expression(list(words))
    assert expression is not None
    read = svc.database.read()
    with read:
        return sorted(rowid for rowid, _ in matches(read, "observation_fts", expression,
                                                    columns=["name"] if name_only else None))


def _observation_id(svc: MemoryService, content: str) -> int:
    read = svc.database.read()
    with read:
        return int(read.execute("SELECT id FROM observations WHERE content = ?", (content,)).get)


def test_the_observation_index_follows_every_write(service):
    service.entities.create_entities([EntityInput("Garden", "place", (ObservationInput("tomatoes ripen in august"),))])
    ripen = _observation_id(service, "tomatoes ripen in august")
    assert _matches(service, "tomato") == [ripen]  # stemmed, as entity_fts
    service.entities.add_observations([("Garden", [ObservationInput("the shed roof leaks")])])
    leaks = _observation_id(service, "the shed roof leaks")
    assert _matches(service, "roof") == [leaks]
    service.entities.update_observation("Garden", "the shed roof leaks", "the shed roof was repaired")
    assert _matches(service, "leaks") == [] and _matches(service, "repaired") == [leaks]
    service.entities.delete_observations([("Garden", ["the shed roof was repaired"])])
    assert _matches(service, "roof") == []
    assert _matches(service, "garden", name_only=True) == [ripen]  # each observation is indexed with its entity's name
    service.entities.rename_entity("Garden", "Allotment")
    assert _matches(service, "garden", name_only=True) == []
    assert _matches(service, "allotment", name_only=True) == [ripen]
    service.entities.create_entities([EntityInput("Orchard", "place", (ObservationInput("plums in september"),))])
    service.entities.merge_entities(["Orchard"], "Allotment")
    plums = _observation_id(service, "plums in september")
    assert _matches(service, "allotment", name_only=True) == [ripen, plums]
    assert _matches(service, "orchard", name_only=True) == []
    service.entities.delete_entities(["Allotment"])  # observations go with the entity (cascade)
    assert _matches(service, "tomato", "plums") == []


def test_migration_indexes_the_observations_of_an_existing_database(tmp_path):  # SQLite only: a schema-8 file
    path = tmp_path / "old.db"
    conn = database_at_version(path, 8)
    conn.execute("INSERT INTO entities(id, name, entity_type, status, created_at, updated_at) "
                 "VALUES (1, 'Support', 'note', 'active', 0, 0)")
    conn.execute("INSERT INTO observations(id, entity_id, content, created_at) VALUES "
                 "(7, 1, 'joined the support groups', 0), (8, 1, 'running weekly', 0)")
    conn.close()
    database = open_database(path)
    read = database.read()
    with read:
        assert read.execute("SELECT rowid FROM observation_fts WHERE observation_fts MATCH 'group'").fetchall() == [(7,)]
        assert read.execute("SELECT rowid FROM observation_fts WHERE observation_fts MATCH 'run'").fetchall() == [(8,)]
    database.close()


def _long(name: str, facts: list[str]) -> EntityInput:
    return EntityInput(name, "session", tuple(ObservationInput(f) for f in facts))


FILLER = [f"we talked about the weather on day {i} and the bus timetable" for i in range(12)]


def test_a_session_holding_the_question_in_one_turn_ranks_first(service):
    """Both sessions hold every query word; only one holds them in one turn (one observation)."""
    service.entities.create_entities([
        _long("Scattered", ["my sister called", "a kitten video", *FILLER[:3], "the shelter was crowded",
                            "my sister again", "we adopted a routine", "shelter volunteers", "a kitten sleeps"]),
        _long("Together", [*FILLER, "my sister adopted a kitten from the shelter last week"]),
    ])
    query = "sister adopted kitten shelter"
    without = service.search.query(query, 2, preset("default").replace(observation_weight=0.0), record=False)
    assert [r.name for r in without.results] == ["Scattered", "Together"]
    ranked = service.search.query(query, 2, preset("default"), record=False)
    assert [r.name for r in ranked.results] == ["Together", "Scattered"]
    together = ranked.candidate_set.names.index("Together")
    shown = explain(ranked.candidate_set, preset("default"), together)
    p = preset("default")
    own = (1 - p.bm25_weight) * shown["cosine_rel"] + p.bm25_weight * shown["bm25_rel"]
    assert shown["observation"] > (1 - p.bm25_weight) * shown["cosine_rel"]  # a keyword hit lifted it
    assert shown["base"] == pytest.approx((1 - p.observation_weight) * own + p.observation_weight * shown["observation"])


def test_a_superseded_observation_gives_no_evidence(service):
    service.entities.create_entities([_long("Plans", ["we will move to lisbon in spring", *FILLER[:2]])])
    service.entities.supersede_observation("Plans", "we will move to lisbon in spring", ObservationInput("we stay in porto"))
    outcome = service.search.query("move to lisbon", 5, preset("default"), record=False)
    assert len(outcome.candidate_set.observation_row) == 0
    assert "we stay in porto" in outcome.results[0].observations


def test_the_logged_set_re_ranks_with_its_observation_evidence(service):
    service.entities.create_entities([
        _long("Scattered", ["my sister adopted a kitten", *FILLER[:3], "the shelter was crowded"]),
        _long("Together", [*FILLER, "my sister adopted a kitten from the shelter last week"]),
    ])
    outcome = service.search.query("sister adopted kitten shelter", 2, preset("default"), record=False)
    assert len(outcome.candidate_set.observation_row) >= 2
    restored = codec.unpack(codec.pack(outcome.candidate_set))
    for mu in (0.0, 0.5, 1.0):
        p = preset("default").replace(observation_weight=mu)
        np.testing.assert_array_equal(score_candidates(restored, p).base, score_candidates(outcome.candidate_set, p).base)
        assert [r.entity_id for r in rerank(restored, p)] == [r.entity_id for r in rerank(outcome.candidate_set, p)]


def test_the_seed_preset_ignores_observation_evidence(service):
    assert preset("seed").observation_weight == 0.0
    service.entities.create_entities([_long("Together", [*FILLER[:2], "my sister adopted a kitten"])])
    outcome = service.search.query("sister kitten", 1, preset("seed"), record=False)
    scores = score_candidates(outcome.candidate_set, preset("seed"))
    assert not scores.observation.any()


def test_each_matched_observation_carries_its_own_vector_s_cosine(service):
    service.entities.create_entities([_long("Together", [*FILLER[:2], "my sister adopted a kitten"])])
    service.search.wait_for_vectors()
    cs = service.search.query("sister kitten", 1, preset("default"), record=False).candidate_set
    query = service.embedder.embed_query("sister kitten")
    vector = service.embedder.embed([observation_passage("Together", "my sister adopted a kitten")])[0]
    expected = float(query @ vector / (np.linalg.norm(query) * np.linalg.norm(vector)))
    assert cs.observation_cosine.tolist() == pytest.approx([expected], abs=1e-6)
    assert cs.observation_row.tolist() == [0] and cs.observation_bm25[0] > 0
