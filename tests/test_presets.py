"""Presets: ``seed`` is the published formula as written, ``default`` fuses both branches and keeps the limbic factors as
bounded priors; ``explain`` agrees with ``rerank``; the stemmed full-text index and its migration."""

from __future__ import annotations

import dataclasses
import json
import time

import numpy as np
import pytest
from _embedder_helpers import real_model_dir
from _scoring_helpers import DAY, NOW, candidate_set, random_candidate_set
from _store_helpers import database_at_version

from limbic.core.cli.main import main as cli_main
from limbic.core.embedding.onnx_embedder import OnnxEmbedder
from limbic.core.errors import ValidationError
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.search.params import ScoringParams
from limbic.core.search.pipeline import rerank, run_search
from limbic.core.search.presets import PRESETS, preset
from limbic.core.search.scoring import explain
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.core.vectors.vector_index import VectorIndex


def test_seed_is_the_shipped_formula_and_default_differs_only_where_issue_9_says():
    assert preset("seed") == ScoringParams()
    assert list(PRESETS) == ["default", "seed"]
    seed, default = preset("seed").to_dict(), preset("default").to_dict()
    assert {k: v for k, v in default.items() if seed[k] != v} == {
        "relevance_fusion": 1, "limbic_ratio": 1, "created_decay": 0.0,
        "bm25_ceiling_share": 1.0, "bm25_exponent": 2.0, "beta_sal": 0.25, "gamma": 0.0, "context_weight": 0.5,
        "observation_weight": 0.4, "observation_ceiling_share": 1.0, "date_weight": 0.3,
        "feedback_weight": 1.0}
    assert default["prior_exponent"] == 1.0
    with pytest.raises(ValidationError, match="default, seed"):
        preset("best")


def test_default_fuses_branches_seed_takes_the_cosine():
    # index 0: the keyword hit (BM25 best, cosine 0.30); index 1: the cosine's favourite (0.60, no keyword)
    # its one observation holds the keyword match (observation_fts BM25 8.0, cosine 0.30)
    cs = dataclasses.replace(
        candidate_set([{"distance": 0.70, "knn_rank": 2, "fts_rank": 1, "bm25": 8.0},
                       {"distance": 0.40, "knn_rank": 1, "fts_rank": 0, "bm25": None}]),
        observation_row=[0], observation_cosine=[0.30], observation_bm25=[8.0])
    seed = rerank(cs, preset("seed"))
    default = rerank(cs, preset("default"))
    assert [r.entity_id for r in seed] == [2, 1]
    assert [r.entity_id for r in default] == [1, 2]
    assert default[0].base_relevance == pytest.approx(0.5 * 0.30 / 0.60 + 0.5 * 1.0)
    assert default[1].base_relevance == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)


def test_a_partial_keyword_match_does_not_beat_a_clearly_closer_cosine():
    # index 0: the paraphrase's target (cosine 0.37, no shared word); index 1: a weaker cosine (0.28) that
    # matches some query words; the query's ceiling (Σ idf) is 17
    def order(bm25):
        rows = [{"distance": 0.63, "knn_rank": 1, "fts_rank": 0, "bm25": None},
                {"distance": 0.72, "knn_rank": 2, "fts_rank": 1, "bm25": bm25}]
        return [r.entity_id for r in rerank(candidate_set(rows, bm25_ceiling=17.0), preset("default"))]
    assert order(5.0) == [1, 2]    # matches 30 % of what the query can score: the cosine decides
    assert order(17.0) == [2, 1]   # matches every query word: the keyword evidence decides
    seed_like = preset("default").replace(bm25_ceiling_share=0.0, bm25_exponent=1.0)
    weak = candidate_set([{"distance": 0.63, "knn_rank": 1, "fts_rank": 0, "bm25": None},
                          {"distance": 0.72, "knn_rank": 2, "fts_rank": 1, "bm25": 6.7}], bm25_ceiling=17.0)
    assert [r.entity_id for r in rerank(weak, seed_like)] == [2, 1]  # ÷ best alone: the weak match gets 1.0


def test_usage_prior_reorders_near_ties_but_never_a_clear_relevance_gap():
    old = {"created_at": NOW - 300 * DAY}
    used = {"access_count": 50, "access_days": 20, "last_access": NOW - 3600.0, **old}
    def order(gap_bm25):
        rows = [{"distance": 0.40, "fts_rank": 1, "bm25": 10.0, **old},        # most relevant, never used
                {"distance": 0.40, "fts_rank": 2, "bm25": gap_bm25, **used}]  # as similar, less keyword evidence
        return [r.entity_id for r in rerank(candidate_set(rows), preset("default"))]
    assert order(9.0) == [2, 1]   # a near tie (base 0.905 vs 1.0): the used memory goes first
    assert order(2.0) == [1, 2]   # base 0.52 vs 1.0: usage (salience ≤ 1.6) does not override relevance
    seed = rerank(candidate_set([{"distance": 0.10, "fts_rank": 1, **old}, {"distance": 0.60, "fts_rank": 2, **used}]),
                  preset("seed"))
    assert [r.entity_id for r in seed] == [2, 1]  # the seed lets usage beat cosine 0.9 with cosine 0.4


def test_never_accessed_memories_do_not_decay_in_default():
    cs = candidate_set([{"distance": 0.3, "created_at": NOW - 900 * DAY}, {"distance": 0.3, "created_at": NOW}])
    assert [r.temporal_factor for r in rerank(cs, preset("default"))] == [1.0, 1.0]
    seed = sorted(rerank(cs, preset("seed")), key=lambda r: r.entity_id)
    assert seed[0].temporal_factor == pytest.approx(max(0.1, np.exp(-1e-4 * 900 * 24)))
    assert seed[1].temporal_factor == 1.0


@pytest.mark.parametrize("name", list(PRESETS))
def test_explain_agrees_with_rerank(name):
    params = preset(name)
    cs = random_candidate_set(60, seed=3)
    results = rerank(cs, params, limit=len(cs))
    position = {int(eid): i for i, eid in enumerate(cs.entity_ids)}
    for result in results:
        shown = explain(cs, params, position[result.entity_id])
        assert shown["rank"] == result.rank
        assert shown["final_score"] == result.final_score and shown["limbic_score"] == result.limbic_score
        assert shown["base"] == result.base_relevance and shown["importance"] == result.importance
        assert shown["temporal_factor"] == result.temporal_factor and shown["cooc_boost"] == result.cooc_boost
        assert shown["distance"] == result.distance
        assert shown["limbic_score"] == pytest.approx(shown["base"] * shown["prior"])
    with pytest.raises(IndexError):
        explain(cs, params, len(cs))


@pytest.mark.model
def test_default_ranks_the_keyword_hit_first_where_cosine_is_wrong(memory_address):
    svc = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    svc.entities.create_entities([
        EntityInput("Ticket 17", "note", (ObservationInput("E4021 appeared on the display again this morning"),)),
        EntityInput("Ticket 18", "note", (ObservationInput("my laser printing device shows a fault number and stops"),)),
        EntityInput("Garden", "note", (ObservationInput("tomatoes need water every evening"),)),
        EntityInput("Trip", "note", (ObservationInput("train to Lyon leaves at nine"),)),
    ])
    query = "printer error code E4021"
    outcome = run_search(svc.database.read(), svc.embedder, query, 2, preset("default"), vectors=VectorIndex())
    cs = outcome.candidate_set
    distance = dict(zip(cs.names, cs.distance.tolist(), strict=True))
    assert distance["Ticket 18"] < distance["Ticket 17"]  # the cosine prefers the wrong ticket
    assert [n for n, r in zip(cs.names, cs.fts_rank.tolist(), strict=True) if r == 1] == ["Ticket 17"]
    assert outcome.results[0].name == "Ticket 17"
    assert rerank(cs, preset("seed"))[0].name == "Ticket 18"
    svc.close()


def test_cli_search_preset(memory_address, capsys):
    db = memory_address
    svc = MemoryService(open_database(db), None)
    svc.entities.create_entities([EntityInput("Café Müller", "Place", (ObservationInput("a café in Berlin"),),
                                     created_at=time.time() - 400 * DAY)])
    svc.close()

    def temporal(*extra):
        assert cli_main(["--db", db, "search", "café", "--json", *extra]) == 0
        return json.loads(capsys.readouterr().out)["results"][0]["scoring"]["temporal_factor"]

    assert temporal("--preset", "seed") == pytest.approx(np.exp(-1e-4 * 400 * 24), rel=1e-3)
    assert temporal("--preset", "default") == pytest.approx(1.0)  # ≈: the search above may count as a use
    with pytest.raises(SystemExit) as refused:
        cli_main(["--db", db, "search", "café", "--preset", "best"])
    assert refused.value.code == 2
    assert "default" in capsys.readouterr().err


# SQLite only: an FTS5 index of an old file rebuilt by its migration (PostgreSQL starts at schema 12)
def test_migration_005_rebuilds_the_index_stemmed_keeping_every_entity(tmp_path):
    path = tmp_path / "old.db"
    conn = database_at_version(path, 2)
    conn.execute("INSERT INTO entities(id, name, entity_type, status, created_at, updated_at) "
                 "VALUES (1, 'Support', 'note', 'active', 0, 0), (2, 'Empty', 'note', 'active', 0, 0)")
    conn.execute("INSERT INTO observations(entity_id, content, created_at) VALUES "
                 "(1, 'joined the support groups', 0), (1, 'running weekly', 0)")
    conn.execute("INSERT INTO entity_fts(rowid, name, entity_type, obs_text) VALUES "
                 "(1, 'Support', 'note', 'joined the support groups | running weekly'), (2, 'Empty', 'note', '')")
    assert conn.execute("SELECT rowid FROM entity_fts WHERE entity_fts MATCH 'group'").fetchall() == []
    conn.close()

    database = open_database(path)
    read = database.read()
    assert "porter" in read.execute("SELECT sql FROM sqlite_master WHERE name = 'entity_fts'").fetchone()[0]
    rows = read.execute("SELECT rowid, obs_text FROM entity_fts ORDER BY rowid").fetchall()
    assert rows == [(1, "joined the support groups | running weekly"), (2, "")]
    assert read.execute("SELECT rowid FROM entity_fts WHERE entity_fts MATCH 'group run'").fetchall() == [(1,)]
    database.close()


@pytest.mark.model
def test_candidates_only_full_text_found_get_their_real_cosine(memory_address):
    svc = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    svc.entities.create_entities([EntityInput(f"Bird {i}", "note", (ObservationInput(f"a small garden bird, kind {i}"),))
                         for i in range(6)] + [
        EntityInput("Invoice", "note", (ObservationInput("quarterly tax invoice for the sparrow account"),))])
    read = svc.database.read()
    outcome = run_search(read, svc.embedder, "sparrow", 1, preset("default"), vectors=VectorIndex())
    cs = outcome.candidate_set
    only_fts = (cs.knn_rank == 0) & (cs.fts_rank > 0)
    assert cs.names[int(np.flatnonzero(only_fts)[0])] == "Invoice"
    assert np.isnan(cs.distance[only_fts]).all()
    every = run_search(read, svc.embedder, "sparrow", 7, preset("default"), vectors=VectorIndex()).candidate_set
    knn_distance = dict(zip(every.names, every.distance.tolist(), strict=True))
    assert cs.cosine_distance[only_fts][0] == pytest.approx(knn_distance["Invoice"], abs=1e-5)
    in_memory = run_search(read, svc.embedder, "sparrow", 1, preset("default"), vectors=VectorIndex())
    assert in_memory.candidate_set.cosine_distance.tolist() == pytest.approx(cs.cosine_distance.tolist(), abs=1e-5)
    assert cs.bm25_ceiling > 0.0
    svc.close()
