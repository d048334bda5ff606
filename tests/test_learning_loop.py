"""The learning loop on a real database: shadow A/B logging, exact replay, retention, implicit feedback,
the auto-tuner (grid, EMA, guard, undo) and its CLI."""

from __future__ import annotations

import json
import random
import time

import numpy as np
import pytest
from _learning_helpers import build_usage_log

from limbic.core.cli.main import main as cli_main
from limbic.core.errors import NotFoundError
from limbic.core.learning import codec
from limbic.core.learning.shadow import BASELINE, TREATMENT, ShadowConfig, assign_treatment
from limbic.core.learning.tuner import NotEnoughFeedbackError, grid_search
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.search.params import ScoringParams
from limbic.core.search.pipeline import rerank
from limbic.core.search.presets import SEED
from limbic.core.service import MemoryService
from limbic.core.store import search_log
from limbic.core.store.backend import open_database

DAY = 86400.0


def _tools(service: MemoryService) -> None:
    now = time.time()
    rows = [("Redis", "in-memory cache and message broker", 90), ("Memcached", "distributed memory cache", 30),
            ("Varnish", "HTTP cache in front of web servers", 5), ("Postgres", "database with a buffer cache", 400),
            ("Kafka", "event log", 10)]
    service.entities.create_entities([EntityInput(n, "Tool", (ObservationInput(o),), created_at=now - d * DAY) for n, o, d in rows])
    service.usage.record_access(["Postgres", "Kafka"], at=now - DAY)
    service.usage.record_access(["Postgres"], at=now - 2 * DAY)


def _event(service: MemoryService, search_id: int) -> tuple:
    return service.database.read().execute(
        "SELECT e.query, e.treatment, e.preset, p.params FROM search_events e "
        "JOIN logged_params p ON p.id = e.params_id WHERE e.id = ?", (search_id,)).fetchone()


def test_a_logged_search_replays_to_the_same_ranking(service):
    _tools(service)
    params = ScoringParams(beta_sal=1.3, gamma=0.2)
    outcome = service.search.query("cache", limit=3, params=params)
    service.usage.wait_for_signals()
    query, treatment, preset, params_json = _event(service, outcome.search_id)
    assert (query, treatment, preset) == ("cache", assign_treatment("cache", ShadowConfig()), None)
    (blob,) = service.database.read().execute(
        "SELECT data FROM search_candidates WHERE event_id = ?", (outcome.search_id,)).fetchone()
    replayed = codec.unpack(blob)
    assert len(blob) < 2000 and np.array_equal(replayed.entity_ids, outcome.candidate_set.entity_ids)
    again = rerank(replayed, ScoringParams.from_json(params_json))
    assert [(r.entity_id, r.final_score, r.limbic_score) for r in again] == \
        [(r.entity_id, r.final_score, r.limbic_score) for r in outcome.results]
    logged = service.database.read().execute(
        "SELECT entity_id, rank, baseline_rank, bm25_rank FROM search_results WHERE event_id = ? ORDER BY rank",
        (outcome.search_id,)).fetchall()
    cs = outcome.candidate_set
    where = {int(e): i for i, e in enumerate(cs.entity_ids)}
    assert logged == [(r.entity_id, r.rank, int(cs.knn_rank[where[r.entity_id]]) or None,
                       int(cs.fts_rank[where[r.entity_id]]) or None) for r in outcome.results]
    service.search.query("cache", limit=3, params=SEED)
    service.usage.wait_for_signals()
    presets = [p for (p,) in service.database.read().execute("SELECT preset FROM search_events ORDER BY at")]
    assert presets[-1] in ("default", "seed")


def test_hash_assignment_is_deterministic_and_random_follows_the_probability():
    config = ShadowConfig(baseline_probability=0.5)
    queries = [f"query number {i}" for i in range(200)]
    first = [assign_treatment(q, config) for q in queries]
    assert first == [assign_treatment(q, config) for q in queries]
    assert assign_treatment("Query  NUMBER 3", config) == first[3]  # case and spacing do not matter
    assert 60 < first.count(BASELINE) < 140
    always = ShadowConfig(assignment="random", baseline_probability=1.0)
    never = ShadowConfig(assignment="random", baseline_probability=0.0)
    rng = random.Random(1)
    assert {assign_treatment(q, always, rng) for q in queries} == {BASELINE}
    assert {assign_treatment(q, never, rng) for q in queries} == {TREATMENT}
    draws = [assign_treatment("same", ShadowConfig(assignment="random", baseline_probability=0.1), rng)
             for _ in range(2000)]
    assert 120 < draws.count(BASELINE) < 280


def test_the_baseline_never_reaches_the_caller(service):
    _tools(service)
    service.learning.save_config(ShadowConfig(baseline_probability=1.0))
    params = ScoringParams(beta_sal=2.0, cosine_heavy_weight=0.0)  # salience decides: not the cosine order
    outcome = service.search.query("cache", limit=3, params=params)
    service.usage.wait_for_signals()
    assert _event(service, outcome.search_id)[1] == BASELINE
    cs = outcome.candidate_set
    cosine = [int(cs.entity_ids[i]) for i in np.argsort(np.where(cs.knn_rank > 0, cs.knn_rank, 10**9))[:3]]
    returned = [r.entity_id for r in outcome.results]
    assert returned == [r.entity_id for r in rerank(cs, params)] and returned != cosine
    assert service.entities.get_entity("Postgres").entity.id == returned[0]


def test_retention_drops_the_oldest_searches_and_clear_empties_the_log(service, tmp_path):
    _tools(service)
    service.learning.save_config(ShadowConfig(retention=4))
    ids = []
    for i in range(7):
        ids.append(service.search.query(f"cache {i}", limit=2).search_id)
        service.usage.wait_for_signals()
    conn = service.database.read()
    kept = [r[0] for r in conn.execute("SELECT id FROM search_events ORDER BY at")]
    assert kept == ids[3:]
    assert conn.execute("SELECT count(DISTINCT event_id) FROM search_results").fetchone()[0] == 4
    assert conn.execute("SELECT count(*) FROM search_candidates").fetchone()[0] == 4
    with pytest.raises(NotFoundError, match="searchId"):
        service.usage.mark_used(["Redis"], search_id=ids[0])
    assert service.learning.clear() == 4
    assert service.learning.counts()["searches"] == 0
    totals = conn.execute("SELECT sum(impression_count) FROM entity_impressions").fetchone()[0]
    assert totals == 7 * 2  # impression totals stay


def test_a_use_soon_after_a_search_by_the_same_origin_is_feedback(service):
    _tools(service)
    shown = service.search.query("cache", limit=3, origin="mcp")
    other = service.search.query("cache", limit=3, origin="gui")
    service.usage.wait_for_signals()
    first, second = shown.results[0].name, shown.results[1].name
    service.entities.open_nodes([first], origin="mcp")
    service.entities.get_entity(second, record=True, origin="mcp")
    service.usage.mark_used(["Kafka"], origin="mcp")  # not shown: a use, but no label
    service.usage.wait_for_signals()
    conn = service.database.read()
    labels = conn.execute("SELECT event_id, entity_id, source FROM implicit_feedback ORDER BY id").fetchall()
    ids = {r.name: r.entity_id for r in shown.results}
    assert labels == [(shown.search_id, ids[first], "open_nodes"), (shown.search_id, ids[second], "get_entity")]
    assert other.search_id not in {event for event, _, _ in labels}
    # the window: a use more than 30 minutes after the search labels nothing
    with service.database.maintenance() as write:
        assert search_log.label_recent(write, [ids[first], ids[second]], time.time() + 1801, "mcp", 1800,
                                       "open_nodes") == 0
        assert search_log.label_recent(write, [shown.results[2].entity_id], time.time() + 1700, "mcp", 1800,
                                       "open_nodes") == 1


def test_tune_finds_the_better_setting_applies_ten_percent_and_can_undo(service):
    build_usage_log(service)
    service.search.save_scoring_params(SEED)
    history = service.learning.history()
    assert len(history) == 60
    result = service.learning.tune(SEED, history=history)
    assert result.best_values == {"gamma": 0.001, "beta_sal": 1.0} and result.gain > 0.1
    by_beta = {p.values["beta_sal"]: p.quality.ndcg for p in result.points if p.values["gamma"] == 0.01}
    assert by_beta[1.0] > by_beta[0.5] > by_beta[0.1]
    assert result.current.ndcg == pytest.approx(by_beta[0.5])
    applied = service.learning.apply(SEED, result.best_values, kind="tune", gain=result.gain, events=len(history))
    assert applied.beta_sal == pytest.approx(0.9 * 0.5 + 0.1 * 1.0)
    assert applied.gamma == pytest.approx(0.9 * 0.01 + 0.1 * 0.001)
    assert service.search.scoring_params() == applied
    (last,) = service.learning.applications(1)
    assert (last.kind, last.old, last.new, last.events) == ("tune", SEED, applied, 60)
    undone = service.learning.undo()
    assert undone.id == last.id and service.search.scoring_params() == SEED
    with pytest.raises(NotFoundError):
        service.learning.undo()


def test_the_tuner_refuses_below_fifty_labelled_searches(service):
    build_usage_log(service, topics=50)
    with pytest.raises(NotEnoughFeedbackError, match="Only 49 events, minimum 50 required"):
        grid_search(service.learning.history(limit=49), SEED)
    assert grid_search(service.learning.history(), SEED).best.searches == 50


def test_cli_tune_analyze_tune_and_history(memory_address, capsys):
    db = memory_address
    from limbic.core.embedding.base import HashingEmbedder

    service = MemoryService(open_database(db), HashingEmbedder())
    build_usage_log(service)
    service.search.save_scoring_params(SEED)
    service.close()
    assert cli_main(["--db", db, "tune", "--analyze", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["labelled_searches"] == 60 and report["saved"]["searches"] == 60
    assert 0 < report["saved"]["ndcg"] < 1 and report["cosine"]["ndcg"] is not None
    assert cli_main(["--db", db, "tune", "--tune", "--dry-run", "--beta-sal-range", "0.5,2.0",
                     "--param", "lambda_hourly=0,1e-4", "--json"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry["target"]["beta_sal"] == 2.0 and dry["applied"] is None and dry["gain"] > 0
    assert cli_main(["--db", db, "tune", "--tune"]) == 0
    assert "applied by EMA" in capsys.readouterr().out
    assert cli_main(["--db", db, "tune", "--set-gamma", "0.1", "--set-beta", "1.5", "--json"]) == 0
    capsys.readouterr()
    assert cli_main(["--db", db, "tune", "--undo"]) == 0
    assert cli_main(["--db", db, "tune", "--tune", "--param", "nonsense=1"]) == 2
    assert "nonsense" in capsys.readouterr().err
    assert cli_main(["--db", db, "history", "config", "--assignment", "random", "--baseline-probability",
                     "0.25", "--retention", "500", "--json"]) == 0
    settings = json.loads(capsys.readouterr().out)["settings"]
    assert (settings["assignment"], settings["baseline_probability"], settings["retention"]) == ("random", 0.25, 500)
    assert cli_main(["--db", db, "history", "config", "--baseline-probability", "1.5"]) == 2
    assert "baseline_probability" in capsys.readouterr().err
    assert cli_main(["--db", db, "history", "clear"]) == 0
    assert "deleted 60" in capsys.readouterr().out
    assert cli_main(["--db", db, "tune", "--tune"]) == 2
    assert "Only 0 events, minimum 50 required" in capsys.readouterr().err
