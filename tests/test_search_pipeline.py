"""The search pipeline on a real database: modes, signals, deboosts, hostile queries, pure re-rank, CLI."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from contextlib import contextmanager

import apsw
import numpy as np
import psycopg
import pytest
from _backends import on_postgres
from _memory_helpers import extra_memory

from limbic.core.cli.main import main as cli_main
from limbic.core.embedding.base import HashingEmbedder
from limbic.core.errors import ValidationError
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.search.candidates import CandidateSet
from limbic.core.search.params import ScoringParams
from limbic.core.search.pipeline import rerank, run_search
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.core.store.postgres.connection import PgConnection
from limbic.core.store.postgres.database import PgDatabase
from limbic.core.store.sqlite.database import SqliteDatabase
from limbic.core.vectors.vector_index import VectorIndex

DAY = 86400.0
NOW = time.time()

ENTITIES = [
    ("FastMCP", "Framework", ["Python framework for building MCP servers", "decorators turn functions into tools"]),
    ("sqlite-vec", "Library", ["vector search extension for SQLite", "brute-force KNN with cosine distance"]),
    ("FTS5", "Library", ["SQLite full text search with BM25 ranking", "unicode61 tokenizer removes diacritics"]),
    ("Limbic scoring", "Concept", ["re-ranks search candidates by salience, decay and co-occurrence"]),
    ("RRF", "Concept", ["reciprocal rank fusion merges the KNN and BM25 rankings", "k = 60"]),
    ("Old search notes", "Note", ["search experiments from last year", "BM25 versus vector search"]),
    ("Project SofIA", "Project", ["multi-agent system with specialised roles", "uses FastMCP for tools"]),
    ("Café Müller", "Place", ["a café in Berlin where the team met"]),
    ("Search notes 2026", "Note", ["search experiments from this year", "hybrid search wins"]),
]


def _build(service: MemoryService) -> None:
    service.entities.create_entities([
        EntityInput(name, etype, tuple(ObservationInput(o) for o in obs), created_at=NOW - 400 * DAY)
        for name, etype, obs in ENTITIES
    ])
    service.entities.add_observations([("Old search notes", [ObservationInput("file list: a.txt b.txt", kind="metadata"),
                                                     ObservationInput("size: 3 files", kind="metadata"),
                                                     ObservationInput("path: /tmp/search", kind="metadata")])])
    service.relations.create_relations([RelationInput("Project SofIA", "FastMCP", "uses"),
                              RelationInput("FastMCP", "sqlite-vec", "integrates"),
                              RelationInput("Limbic scoring", "RRF", "builds on"),
                              RelationInput("RRF", "FTS5", "merges"),
                              RelationInput("RRF", "sqlite-vec", "merges")])
    service.usage.record_access(["FastMCP", "Project SofIA"], at=NOW - 2 * DAY)
    service.usage.record_access(["FastMCP", "Project SofIA"], at=NOW - 1 * DAY)
    service.usage.record_access(["FastMCP"], at=NOW - 3600)
    service.entities.set_status(["Old search notes"], "archived")


@pytest.fixture
def graph(service):
    _build(service)
    return service


def _index(cs: CandidateSet, name: str) -> int:
    return cs.names.index(name)


def test_hybrid_search_returns_the_search_semantic_shape(graph):
    outcome = run_search(graph.database.read(), graph.embedder, "search with BM25 ranking", 5, ScoringParams(), now=NOW, vectors=VectorIndex())
    assert outcome.mode == "hybrid"
    assert 1 <= len(outcome.results) <= 5
    assert [r.rank for r in outcome.results] == list(range(1, len(outcome.results) + 1))
    finals = [r.final_score for r in outcome.results]
    assert finals == sorted(finals, reverse=True)
    first = outcome.results[0].to_dict()
    assert set(first) == {"name", "entityType", "observations", "distance", "rrf_score", "limbic_score",
                          "final_score", "routing_strategy", "scoring"}
    assert "FTS5" in [r.name for r in outcome.results]
    assert set(outcome.timings) >= {"encode", "knn", "fts", "signals", "score", "total"}
    json.dumps([r.to_dict() for r in outcome.results])  # plain JSON types


def test_signals_are_gathered_for_every_candidate(graph):
    cs = run_search(graph.database.read(), graph.embedder, "FastMCP SofIA search", 10, ScoringParams(),
                    now=NOW, vectors=VectorIndex()).candidate_set
    fast, sofia, notes = _index(cs, "FastMCP"), _index(cs, "Project SofIA"), _index(cs, "Old search notes")
    assert cs.access_count[fast] == 3 and cs.access_count[sofia] == 2 and cs.access_count[notes] == 0
    assert cs.access_days[fast] >= 2 and cs.access_days[notes] == 0
    assert cs.last_access[fast] == pytest.approx(NOW - 3600)
    assert np.isnan(cs.last_access[notes]) and cs.created_at[notes] == pytest.approx(NOW - 400 * DAY)
    assert cs.degree[fast] == 2 and cs.degree[sofia] == 1
    assert cs.statuses[notes] == "archived" and cs.statuses[fast] == "active"
    assert cs.metadata_share[notes] == pytest.approx(3 / 5)
    pairs = {(cs.names[a], cs.names[b]): (c, t) for a, b, c, t in
             zip(cs.cooc_a, cs.cooc_b, cs.cooc_count, cs.cooc_last, strict=True)}
    key = ("FastMCP", "Project SofIA") if fast < sofia else ("Project SofIA", "FastMCP")
    assert pairs[key][0] == 2 and pairs[key][1] == pytest.approx(NOW - DAY)
    assert cs.observations[fast] == ("Python framework for building MCP servers", "decorators turn functions into tools")


def test_archived_and_metadata_heavy_entity_is_deboosted(graph):
    outcome = run_search(graph.database.read(), graph.embedder, "BM25 versus vector search experiments", 8,
                         ScoringParams(), now=NOW, vectors=VectorIndex())
    neutral = ScoringParams(status_archived=1.0, metadata_penalty=1.0)
    plain = [r.name for r in rerank(outcome.candidate_set, neutral)]
    ranked = rerank(outcome.candidate_set, ScoringParams())
    assert plain.index("Old search notes") < plain.index("Search notes 2026")
    assert [r.name for r in ranked].index("Search notes 2026") < [r.name for r in ranked].index("Old search notes")
    notes = next(r for r in ranked if r.name == "Old search notes")
    assert notes.status_multiplier == 0.5 and notes.metadata_penalty == 0.7
    plain_notes = next(r for r in rerank(outcome.candidate_set, neutral) if r.name == "Old search notes")
    assert notes.limbic_score == pytest.approx(plain_notes.limbic_score * 0.5 * 0.7)


def test_fts_only_mode_without_embedder(graph):
    outcome = run_search(graph.database.read(), None, "BM25 ranking", 5, ScoringParams(), now=NOW)
    assert outcome.mode == "fts_only" and outcome.results
    for r in outcome.results:
        d = r.to_dict()
        assert d["distance"] is None and "rrf_score" not in d
        assert 0.2 <= r.base_relevance <= 0.8
    assert outcome.results[0].base_relevance == pytest.approx(0.8)  # FTS rank 1 → norm_rrf = 1
    assert run_search(graph.database.read(), None, "*** ???", 5, ScoringParams()).results == []


def test_semantic_mode_when_fts_finds_nothing(graph):
    outcome = run_search(graph.database.read(), graph.embedder, "zzqx wvut", 3, ScoringParams(), now=NOW, vectors=VectorIndex())
    assert outcome.mode == "semantic"
    assert len(outcome.results) == 3
    assert all("rrf_score" not in r.to_dict() and r.distance is not None for r in outcome.results)


def test_branches_fetch_limit_times_expansion(graph):
    cs = run_search(graph.database.read(), graph.embedder, "search", 1, ScoringParams(expansion_factor=2), vectors=VectorIndex()).candidate_set
    assert int((cs.knn_rank > 0).sum()) == 2
    assert int((cs.fts_rank > 0).sum()) <= 2


WRITING = re.compile(r"\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)


@contextmanager
def traced(conn):
    """The SQL statements run on ``conn`` inside the block: apsw's execution trace, or every psycopg cursor
    call on the PostgreSQL connection."""
    statements: list[str] = []
    if not on_postgres(conn):
        conn.exec_trace = lambda _cursor, sql, _bindings: statements.append(sql) or True
        try:
            yield statements
        finally:
            conn.exec_trace = None
        return
    execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany

    def text(cursor, query) -> str:
        return query if isinstance(query, str) else query.as_string(cursor.connection)

    def traced_execute(cursor, query, *args, **kwargs):
        if cursor.connection is conn.raw:
            statements.append(text(cursor, query))
        return execute(cursor, query, *args, **kwargs)

    def traced_executemany(cursor, query, *args, **kwargs):
        if cursor.connection is conn.raw:
            statements.append(text(cursor, query))
        return executemany(cursor, query, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(psycopg.Cursor, "execute", traced_execute)
        patch.setattr(psycopg.Cursor, "executemany", traced_executemany)
        yield statements


def test_search_is_read_only_and_set_based(backend, tmp_path):
    """The number of SQL statements does not grow with the number of candidates; nothing is written."""
    def count_statements(n_entities: int) -> tuple[int, int]:
        with extra_memory(backend, tmp_path, f"count{n_entities}.db") as address:
            svc = MemoryService(open_database(address), HashingEmbedder())
            svc.entities.create_entities([EntityInput(f"item {i}", "Thing", (ObservationInput(f"shared word item {i}"),))
                                 for i in range(n_entities)])
            svc.usage.record_access([f"item {i}" for i in range(min(n_entities, 20))])
            conn = svc.database.read()
            index = VectorIndex()  # kept between searches, as the service does
            run_search(conn, svc.embedder, "shared word", 100, ScoringParams(), vectors=index)
            before = None if on_postgres(conn) else conn.total_changes()
            with traced(conn) as statements:
                outcome = run_search(conn, svc.embedder, "shared word", 100, ScoringParams(), vectors=index)
            assert before is None or conn.total_changes() == before
            assert not [sql for sql in statements if WRITING.match(sql)]
            svc.close()
        return len(statements), len(outcome.candidate_set)

    small, small_n = count_statements(5)
    large, large_n = count_statements(150)
    assert large_n > 10 * small_n
    assert 0 < large == small <= 19  # 19: the vector copy reads the change log; observation evidence adds 4, feedback 1, expiry 1


@pytest.mark.parametrize("query", ['"', '""', "*", "fts*", "-x", "a:b", "NEAR(", "NEAR(a b, 2)", "(", ")",
                                   "AND OR NOT", "'; DROP TABLE entities; --", "😀", "Café", "MÜLLER straße",
                                   "a" * 2000, "x\ty", "col:FTS5 ^start"])
def test_hostile_queries_return_results_or_validation_errors(graph, query):
    for embedder in (graph.embedder, None):
        try:
            outcome = run_search(graph.database.read(), embedder, query, 5, ScoringParams(), vectors=VectorIndex())
        except ValidationError:
            continue
        except (apsw.Error, psycopg.Error) as exc:  # pragma: no cover - the failure this test exists to catch
            pytest.fail(f"a database error leaked for {query!r}: {exc}")
        assert len(outcome.results) <= 5


def test_found_by_plain_text_operators(graph):
    names = [r.name for r in run_search(graph.database.read(), None, "cafe muller", 5, ScoringParams()).results]
    assert names[0] == "Café Müller"


@pytest.mark.parametrize(("query", "limit"), [("", 5), ("   ", 5), ("a" * 2001, 5), ("x\x00y", 5),
                                               ("ok", 0), ("ok", 1001), ("ok", "5")])
def test_invalid_input_is_a_validation_error(graph, query, limit):
    with pytest.raises(ValidationError):
        run_search(graph.database.read(), graph.embedder, query, limit, ScoringParams(), vectors=VectorIndex())


def test_rerank_needs_no_database(memory_address):
    svc = MemoryService(open_database(memory_address), HashingEmbedder())
    _build(svc)
    outcome = run_search(svc.database.read(), svc.embedder, "FastMCP search tools", 6, ScoringParams(), now=NOW, vectors=VectorIndex())
    svc.close()
    cs = outcome.candidate_set
    for f in dataclasses.fields(cs):
        assert not isinstance(getattr(cs, f.name),
                              apsw.Connection | PgConnection | SqliteDatabase | PgDatabase | MemoryService)
    again = rerank(cs, ScoringParams())
    assert [r.to_dict() for r in again] == [r.to_dict() for r in outcome.results]
    heavy = rerank(cs, ScoringParams(beta_sal=2.0, cosine_heavy_weight=0.0, limbic_heavy_weight=0.0,
                                     balanced_weight=0.0))
    assert heavy[0].name == "FastMCP"  # the most used, most recent and best connected candidate


def test_vector_dimension_mismatch_is_a_clear_error(graph):
    with pytest.raises(ValidationError, match="dimensions"):
        run_search(graph.database.read(), HashingEmbedder(dimension=16), "FastMCP", 5, ScoringParams(), vectors=VectorIndex())


def test_service_search_uses_the_pipeline(graph):
    outcome = graph.search.query("FastMCP", limit=3)
    assert outcome.mode == "hybrid" and outcome.results[0].name == "FastMCP"
    graph.usage.wait_for_signals()


def test_cli_search_json_and_fts_only_note(memory_address, capsys):
    db = memory_address
    svc = MemoryService(open_database(db), None)
    _build(svc)
    svc.close()
    assert cli_main(["--db", str(db), "search", "BM25", "ranking", "--limit", "3", "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["query"] == "BM25 ranking" and data["mode"] == "fts_only"
    assert 1 <= len(data["results"]) <= 3
    assert set(data["results"][0]["scoring"]) == {"importance", "temporal_factor", "cooc_boost",
                                                  "salience_boost", "status_multiplier", "metadata_penalty",
                                                  "date_match", "feedback_boost"}
    assert "FTS-only" in captured.err and "limbic model install" in captured.err
    assert cli_main(["--db", str(db), "search", "café"]) == 0
    table = capsys.readouterr().out
    assert "Café Müller" in table and "mode fts_only" in table
    assert cli_main(["--db", str(db), "search", "x", "--limit", "0"]) == 2
    assert "limit" in capsys.readouterr().err
