"""Impressions are not accesses: what a search, a use and the migration record."""

from __future__ import annotations

import json
import time
from importlib import resources

import apsw
import pytest
from anyio.from_thread import start_blocking_portal
from mcp import Client

from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

DAY = 86400.0


def _notes(service: MemoryService) -> None:
    now = time.time()
    service.entities.create_entities([
        EntityInput("Redis", "Tool", (ObservationInput("in-memory cache and message broker"),), created_at=now - 90 * DAY),
        EntityInput("Memcached", "Tool", (ObservationInput("distributed memory cache"),), created_at=now - 30 * DAY),
        EntityInput("Varnish", "Tool", (ObservationInput("HTTP cache in front of web servers"),), created_at=now - 5 * DAY),
        EntityInput("Postgres", "Tool", (ObservationInput("relational database with a buffer cache"),),
                    created_at=now - 400 * DAY),
        EntityInput("Kafka", "Tool", (ObservationInput("event log"),), created_at=now - 10 * DAY),
    ])
    service.relations.create_relations([RelationInput("Redis", "Kafka", "feeds")])


def _signals(service: MemoryService) -> tuple[list[tuple], list[tuple], list[tuple]]:
    conn = service.database.read()
    access = conn.execute("SELECT entity_id, access_count FROM entity_access ORDER BY entity_id").fetchall()
    days = conn.execute("SELECT entity_id, day, count FROM entity_access_days ORDER BY entity_id").fetchall()
    pairs = conn.execute("SELECT a_id, b_id, co_count FROM co_occurrences ORDER BY a_id, b_id").fetchall()
    return access, days, pairs


def _id(service: MemoryService, name: str) -> int:
    return service.entities.get_entity(name).entity.id


def test_a_search_records_impressions_with_ranks_and_no_access(service):
    _notes(service)
    outcome = service.search.query("cache", limit=3)
    service.usage.wait_for_signals()
    conn = service.database.read()
    assert conn.execute("SELECT query, k_limit, origin FROM search_events").fetchall() == [("cache", 3, "cli")]
    logged = conn.execute("SELECT entity_id, rank FROM search_results ORDER BY rank").fetchall()
    assert logged == [(r.entity_id, r.rank) for r in outcome.results] and len(logged) == 3
    assert _signals(service) == ([], [], [])
    shown = service.entities.get_entity(outcome.results[0].name)
    assert (shown.access_count, shown.access_days, shown.impression_count) == (0, 0, 1)
    assert shown.last_impression == pytest.approx(time.time(), abs=60)


def test_a_use_right_after_a_search_finds_its_log_written_first(service):
    """A search's log waits for a quiet moment; a use right after it writes it first, so the use labels it."""
    _notes(service)
    outcome = service.search.query("cache", limit=3, origin="stdio")
    service.usage.mark_used([outcome.results[0].name], search_id=outcome.search_id, origin="stdio")
    labels = service.database.read().execute("SELECT event_id, entity_id FROM implicit_feedback").fetchall()
    assert labels == [(outcome.search_id, outcome.results[0].entity_id)]


def test_a_process_that_exits_without_closing_still_writes_its_search_log(tmp_path):
    import subprocess
    import sys

    db = tmp_path / "memory.db"
    script = (
        "import sys\n"
        "from limbic.core.embedding.base import HashingEmbedder\n"
        "from limbic.core.models import EntityInput, ObservationInput\n"
        "from limbic.core.service import MemoryService\n"
        "from limbic.core.store.backend import open_database\n"
        "service = MemoryService(open_database(sys.argv[1]), HashingEmbedder())\n"
        "service.entities.create_entities([EntityInput('Redis', 'Tool', (ObservationInput('in-memory cache'),))])\n"
        "service.search.query('cache')\n"  # no close(): the log is still written before the process ends
    )
    subprocess.run([sys.executable, "-c", script, str(db)], check=True, timeout=120)
    conn = apsw.Connection(str(db))
    assert conn.execute("SELECT query FROM search_events").fetchall() == [("cache",)]
    conn.close()


def test_replaying_identical_searches_keeps_the_ranking(service):
    _notes(service)
    first = service.search.query("memory cache", limit=3)
    for _ in range(12):
        again = service.search.query("memory cache", limit=3)
        service.usage.wait_for_signals()
        assert [r.name for r in again.results] == [r.name for r in first.results]
        assert [r.final_score for r in again.results] == pytest.approx([r.final_score for r in first.results],
                                                                        rel=1e-6)
    assert _signals(service) == ([], [], [])
    impressions = service.database.read().execute("SELECT sum(impression_count) FROM entity_impressions")
    assert impressions.fetchone()[0] == 13 * 3


def test_open_nodes_records_accesses_and_co_occurrences(service):
    _notes(service)
    service.entities.open_nodes(["Redis", "Kafka", "Nobody"])
    service.usage.wait_for_signals()
    redis, kafka = _id(service, "Redis"), _id(service, "Kafka")
    access, days, pairs = _signals(service)
    assert access == [(redis, 1), (kafka, 1)] and len(days) == 2
    assert pairs == [(min(redis, kafka), max(redis, kafka), 1)]
    service.entities.open_nodes(["Redis"], record=False)
    service.usage.wait_for_signals()
    assert _signals(service)[0] == access


def test_get_entity_is_a_use_only_when_asked(service):
    _notes(service)
    for _ in range(3):
        service.entities.get_entity("Varnish")  # internal reads: undo snapshots, import, refreshes
    service.usage.wait_for_signals()
    assert _signals(service) == ([], [], [])
    before = service.entities.get_entity("Varnish", record=True)
    service.usage.wait_for_signals()
    after = service.entities.get_entity("Varnish")
    assert (before.access_count, after.access_count, after.access_days) == (0, 1, 1)


def test_mark_used_records_accesses_and_co_occurrences_at_once(service):
    _notes(service)
    assert service.usage.mark_used(["Memcached", "Varnish", "Memcached"]) == ["Memcached", "Varnish"]
    memcached, varnish = _id(service, "Memcached"), _id(service, "Varnish")
    access, _days, pairs = _signals(service)  # written before mark_used returned
    assert access == [(memcached, 1), (varnish, 1)]
    assert pairs == [(memcached, varnish, 1)]
    with pytest.raises(NotFoundError, match="Ghost"):
        service.usage.mark_used(["Redis", "Ghost"])
    with pytest.raises(ValidationError):
        service.usage.mark_used([])
    assert _signals(service) == (access, _days, pairs)  # a refused call records nothing


def test_uses_raise_salience_and_impressions_do_not(service):
    _notes(service)
    first = service.search.query("cache", limit=4).results
    last = first[-1]
    for _ in range(8):
        service.search.query("cache", limit=4)
    service.usage.wait_for_signals()
    again = service.search.query("cache", limit=4, record=False).results
    assert [(r.name, r.importance) for r in again] == [(r.name, r.importance) for r in first]
    service.usage.mark_used([last.name])
    used = {r.name: r for r in service.search.query("cache", limit=4, record=False).results}[last.name]
    assert (last.importance, last.salience_boost) == (0.0, 1.0)
    assert used.importance > 0 and used.final_score > last.final_score


def test_mcp_mark_used_and_get_entity_are_uses(service):
    _notes(service)
    server = build_server(service)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(server)) as client:
        tools = {t.name: t for t in portal.call(client.list_tools).tools}
        assert "impression" in tools["search_semantic"].description
        assert "use" in tools["open_nodes"].description and "mark_used" in tools["search_semantic"].description
        found = portal.call(client.call_tool, "search_semantic", {"query": "cache", "limit": 3})
        assert not found.is_error
        used = portal.call(client.call_tool, "mark_used", {"names": ["Redis", "Varnish"]})
        assert used.structured_content == {"used": ["Redis", "Varnish"]}
        refused = portal.call(client.call_tool, "mark_used", {"names": ["Redis", "Ghost"]})
        assert refused.is_error and "Ghost" in refused.content[0].text
        assert portal.call(client.call_tool, "mark_used", {"names": []}).is_error
        detail = portal.call(client.call_tool, "get_entity", {"name": "Redis"}).structured_content
        service.usage.wait_for_signals()
        assert detail["accessCount"] == 1 and detail["impressionCount"] >= 0
    assert service.entities.get_entity("Redis").access_count == 2
    assert service.entities.get_entity("Varnish").access_count == 1


def _schema_v2(path) -> apsw.Connection:
    """A database as schema version 2 left it (migrations 001 and 002 only), with usage history."""
    conn = apsw.Connection(str(path))
    folder = resources.files("limbic.core.store") / "migrations"
    for name in ("001_initial.sql", "002_embedding_models.sql"):
        conn.execute((folder / name).read_text(encoding="utf-8"))
    conn.execute("PRAGMA user_version = 2")
    conn.execute("""
        INSERT INTO entities(id, name, entity_type, status, created_at, updated_at) VALUES
            (1, 'Alpha', 'T', 'active', 1000, 1000), (2, 'Beta', 'T', 'active', 1000, 1000),
            (3, 'Gamma', 'T', 'archived', 1000, 1000);
        INSERT INTO entity_access VALUES (1, 7, 1700000000), (2, 3, 1690000000);
        INSERT INTO entity_access_days VALUES (1, '2023-11-14', 5), (1, '2023-11-13', 2), (2, '2023-07-22', 3);
        INSERT INTO co_occurrences VALUES (1, 2, 3, 1690000000);
        INSERT INTO search_events VALUES (1, 1690000000, 'alpha', 5, 'hybrid', 'cosine_heavy', 'mcp', 3.5),
                                         (2, 1700000000, 'beta', 5, 'hybrid', 'cosine_heavy', 'gui', 2.0);
        INSERT INTO search_results VALUES (1, 1, 1, 1, 0.5, 0.5, 0.9), (1, 2, 2, 2, 0.4, 0.4, 0.8),
                                          (2, 2, 1, 1, 0.5, 0.5, 0.9), (2, 9, 2, 2, 0.4, 0.4, 0.8);
        INSERT INTO settings VALUES ('scoring_params', '{"gamma": 0.05}');
    """)
    return conn


def test_migration_keeps_an_old_databases_history(tmp_path):  # SQLite only: a schema-2 file upgraded
    path = tmp_path / "old.db"
    _schema_v2(path).close()
    service = MemoryService(open_database(path), None)
    try:
        assert service.database.schema_version >= 3
        access, days, pairs = _signals(service)
        assert access == [(1, 7), (2, 3)]
        assert days == [(1, "2023-11-13", 2), (1, "2023-11-14", 5), (2, "2023-07-22", 3)]
        assert pairs == [(1, 2, 3)]
        alpha, beta, gamma = (service.entities.get_entity(n) for n in ("Alpha", "Beta", "Gamma"))
        assert (alpha.access_count, alpha.access_days, beta.access_count) == (7, 2, 3)
        assert (alpha.impression_count, alpha.last_impression) == (1, 1690000000)
        assert (beta.impression_count, beta.last_impression) == (2, 1700000000)
        assert gamma.impression_count == 0
        conn = service.database.read()
        assert conn.execute("SELECT count(*) FROM search_results").fetchone()[0] == 4
        assert service.search.scoring_params().gamma == 0.05
    finally:
        service.close()


def test_mcp_search_id_feedback_and_tuning_resource(service):
    _notes(service)
    server = build_server(service)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(server)) as client:
        found = portal.call(client.call_tool, "search_semantic", {"query": "cache", "limit": 3}).structured_content
        search_id = found["searchId"]
        assert isinstance(search_id, int) and search_id > 0
        service.usage.wait_for_signals()
        shown = found["results"][0]["name"]
        used = portal.call(client.call_tool, "mark_used", {"names": [shown], "searchId": search_id})
        assert used.structured_content == {"used": [shown]}
        unknown = portal.call(client.call_tool, "mark_used", {"names": [shown], "searchId": search_id + 1})
        assert unknown.is_error and "searchId" in unknown.content[0].text
        assert portal.call(client.call_tool, "mark_used", {"names": [shown], "searchId": "12"}).is_error
        resource = portal.call(client.read_resource, "memory://tuning")
        state = json.loads(resource.contents[0].text)
    assert state["counts"]["searches"] == 1 and state["counts"]["labelled_searches"] == 1
    assert state["eventsNeeded"] == 49 and state["savedParams"] == service.search.scoring_params().to_dict()
    assert state["shadow"]["baseline_probability"] == 0.1 and state["lastTuning"] is None
    labels = service.database.read().execute("SELECT event_id, source FROM implicit_feedback").fetchall()
    assert labels == [(search_id, "mark_used")]
