"""Feedback from similar queries (docs/scoring.md "Feedback from similar queries"): a memory used after a
search is lifted for later queries like that search's, never for impressions alone.

Real memories (a SQLite file, a PostgreSQL database) through ``MemoryService`` with the deterministic hashing embedder (no model files).
"""

from __future__ import annotations

import numpy as np
import pytest
from _memory_helpers import extra_memory

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.search import feedback
from limbic.core.search.pipeline import rerank
from limbic.core.search.presets import preset
from limbic.core.search.scoring import explain
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.core.store.schema import latest_schema_version
from tests._store_helpers import database_at_version

QUERY = "which cache did the team choose for sessions"
REWORDED = "which cache did the team choose for user sessions"
UNRELATED = "who maintains the billing export job"


def _tools(service: MemoryService) -> None:
    service.entities.create_entities([
        EntityInput("Redis", "Tool", (ObservationInput("in-memory cache chosen for web sessions"),)),
        EntityInput("Memcached", "Tool", (ObservationInput("a distributed memory store the team runs"),)),
        EntityInput("Billing export", "Job", (ObservationInput("nightly billing export job, kept by Ana"),)),
    ])


def _similarity(outcome, name: str) -> float:
    cs = outcome.candidate_set
    return float(cs.feedback_similarity[cs.names.index(name)])


def _cosine(embedder: HashingEmbedder, a: str, b: str) -> float:
    return float(embedder.embed_query(a) @ embedder.embed_query(b))


def test_a_search_logs_its_query_vector_with_the_model(service, backend, tmp_path):
    _tools(service)
    outcome = service.search.query(QUERY, 3)
    service.usage.wait_for_signals()
    (model, blob), = service.database.read().execute(
        "SELECT model, vector FROM search_query_vectors WHERE event_id = ?", (outcome.search_id,)).fetchall()
    assert model == service.embedder.name
    assert np.array_equal(np.frombuffer(blob, dtype=np.float32), service.embedder.embed_query(QUERY))
    with extra_memory(backend, tmp_path, "text.db") as address:
        text_only = MemoryService(open_database(address), None, origin="cli")
        try:
            _tools(text_only)
            found = text_only.search.query("cache", 3)
            text_only.usage.wait_for_signals()
            assert found.search_id is not None and found.query_vector is None
            assert text_only.database.read().execute("SELECT count(*) FROM search_query_vectors").get == 0
        finally:
            text_only.close()


def test_a_use_after_a_search_lifts_the_memory_for_similar_queries_only(service):
    _tools(service)
    first = service.search.query(QUERY, 3)
    service.usage.wait_for_signals()
    assert np.isnan(first.candidate_set.feedback_similarity).all()  # nothing used yet
    assert [r.name for r in first.results][:2] == ["Redis", "Memcached"]
    service.usage.mark_used(["Memcached"], search_id=first.search_id)
    again = service.search.query(REWORDED, 3, record=False)
    expected = _cosine(service.embedder, QUERY, REWORDED)
    assert expected > preset("default").feedback_floor
    assert _similarity(again, "Memcached") == pytest.approx(expected, abs=1e-6)
    assert np.isnan(_similarity(again, "Redis"))
    params = preset("default")
    shown = explain(again.candidate_set, params, again.candidate_set.names.index("Memcached"))
    share = (expected - params.feedback_floor) / (1 - params.feedback_floor)
    assert shown["feedback_boost"] == pytest.approx(1 + params.feedback_weight * share)
    assert [r.name for r in again.results][:2] == ["Memcached", "Redis"]  # the use after a like query
    without = rerank(again.candidate_set, params.replace(feedback_weight=0.0))
    assert [r.name for r in without][:2] == ["Redis", "Memcached"]  # its access alone is not enough
    other = service.search.query(UNRELATED, 3, record=False)
    assert _cosine(service.embedder, QUERY, UNRELATED) < params.feedback_floor
    assert all(explain(other.candidate_set, params, i)["feedback_boost"] == 1.0 for i in range(len(other.candidate_set)))
    seed = service.search.query(REWORDED, 3, preset("seed"), record=False)
    assert all(explain(seed.candidate_set, preset("seed"), i)["feedback_boost"] == 1.0
               for i in range(len(seed.candidate_set)))


def test_impressions_alone_give_no_feedback(service):
    _tools(service)
    rankings = []
    for _ in range(4):
        outcome = service.search.query(QUERY, 3)
        service.usage.wait_for_signals()
        assert np.isnan(outcome.candidate_set.feedback_similarity).all()
        rankings.append([r.name for r in outcome.results])
    assert all(r == rankings[0] for r in rankings)


def test_opening_a_result_soon_after_the_search_is_feedback_too(service):
    _tools(service)
    first = service.search.query(QUERY, 3)
    service.usage.wait_for_signals()
    service.entities.open_nodes(["Redis"])
    service.usage.wait_for_signals()
    assert _similarity(service.search.query(QUERY, 3, record=False), "Redis") == pytest.approx(1.0, abs=1e-6)
    assert first.search_id is not None


def test_vectors_of_another_model_are_not_compared_and_clearing_the_log_drops_them(service):
    _tools(service)
    first = service.search.query(QUERY, 3)
    service.usage.wait_for_signals()
    service.usage.mark_used(["Redis"], search_id=first.search_id)
    with service.database.maintenance() as conn:
        conn.execute("UPDATE search_query_vectors SET model = 'another-model'")
    assert np.isnan(_similarity(service.search.query(QUERY, 3, record=False), "Redis"))
    service.learning.clear()
    assert service.database.read().execute("SELECT count(*) FROM search_query_vectors").get == 0


def test_a_schema_9_database_gets_the_query_vector_table_and_keeps_its_labels(tmp_path):  # SQLite: a schema-9 file
    path = tmp_path / "old.db"
    conn = database_at_version(path, 9)
    conn.execute("INSERT INTO entities(id, name, entity_type, created_at, updated_at) VALUES (1, 'Redis', 'Tool', 0, 0)")
    conn.execute("INSERT INTO search_events(id, at, query, k_limit, mode, strategy, origin, duration_ms) "
                 "VALUES (7, 0, 'cache', 3, 'hybrid', 'hybrid_balanced', 'mcp', 1.0)")
    conn.execute("INSERT INTO implicit_feedback(entity_id, event_id, at, source) VALUES (1, 7, 0, 'mark_used')")
    conn.close()
    database = open_database(path)
    try:
        read = database.read()
        assert read.execute("PRAGMA user_version").get == latest_schema_version() >= 10
        assert read.execute("SELECT count(*) FROM search_query_vectors").get == 0
        assert read.execute("SELECT entity_id, event_id FROM implicit_feedback").fetchall() == [(1, 7)]
    finally:
        database.close()


def test_only_a_memorys_latest_uses_count(service):
    """Past LABELS_PER_MEMORY uses, the oldest stop counting: the work per candidate stays bounded
    however often a memory was used."""
    _tools(service)
    first = service.search.query(QUERY, 3)
    service.usage.wait_for_signals()
    service.usage.mark_used(["Memcached"], search_id=first.search_id)  # the one use after this very query
    for i in range(feedback.LABELS_PER_MEMORY - 1):
        other = service.search.query(f"{UNRELATED} {i}", 3)
        service.usage.wait_for_signals()
        service.usage.mark_used(["Memcached"], search_id=other.search_id)
    assert _similarity(service.search.query(QUERY, 3, record=False), "Memcached") == pytest.approx(1.0, abs=1e-6)
    newest = service.search.query(f"{UNRELATED} newest", 3)
    service.usage.wait_for_signals()
    service.usage.mark_used(["Memcached"], search_id=newest.search_id)  # one more: the first use drops out
    assert _similarity(service.search.query(QUERY, 3, record=False), "Memcached") < preset("default").feedback_floor
