"""MemoryService: transactions, limits, upsert semantics, relations, merge, supersede, notifications."""

from __future__ import annotations

import pytest
from _backends import on_postgres

from limbic.core.errors import ConflictError, NotFoundError, ValidationError
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.models import RelationInput as R
from limbic.core.search import full_text


def counts(service):
    conn = service.database.read()
    found = {
        table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in ("entities", "observations", "relations", "changes", "entity_embeddings")
    }
    # the entity full-text index's rows: FTS5's table, or the documents of its PostgreSQL counterpart
    index_rows = "SELECT count(*) FROM fts_docs WHERE ix = 1" if on_postgres(conn) else "SELECT count(*) FROM entity_fts"
    found["entity_fts"] = conn.execute(index_rows).fetchone()[0]
    return found


def text_matches(service, text):
    """Names of the entities the full-text index finds for ``text``, best first."""
    conn = service.database.read()
    with conn:
        ids, _ = full_text.ranked_matches(conn, full_text.full_text_query(conn, text), 10)
    names = {e.id: e.name for e in service.entities.read_graph().entities}
    return [names[i] for i in ids]


def test_create_entities_skips_existing_and_returns_created(service):
    first = service.entities.create_entities([E("Ada", "Person", (O("Wrote the first program"),))])
    assert [e.name for e in first] == ["Ada"]
    again = service.entities.create_entities([E("Ada", "Robot"), E("Babbage", "Person")])
    assert [e.name for e in again] == ["Babbage"]
    assert service.entities.get_entity("Ada").entity.entity_type == "Person"


def test_upsert_keeps_type_and_status_when_omitted(service):
    service.entities.upsert_entities([E("Ada", "Person", status="paused")])
    report = service.entities.upsert_entities([E("Ada", None, (O("Mathematician"),))])
    entity = service.entities.get_entity("Ada").entity
    assert (entity.entity_type, entity.status) == ("Person", "paused")
    assert report.updated == ["Ada"] and report.observations_added == 1
    service.entities.upsert_entities([E("Ada", "Scientist", status="archivado")])
    entity = service.entities.get_entity("Ada").entity
    assert (entity.entity_type, entity.status) == ("Scientist", "archived")


def test_duplicate_observations_are_skipped(service):
    service.entities.create_entities([E("Ada", "Person", (O("Likes tea"),))])
    result = service.entities.add_observations([("Ada", [O("Likes tea"), O("Likes chess"), O("Likes chess")])])
    assert result == [("Ada", ["Likes chess"])]
    assert len(service.entities.get_entity("Ada").entity.observations) == 2


def test_failed_multi_item_call_writes_nothing(service):
    service.entities.create_entities([E("Ada", "Person")])
    before = counts(service)
    with pytest.raises(NotFoundError) as err:
        service.entities.add_observations([("Ada", [O("new fact")]), ("Nobody", [O("x")])])
    assert err.value.missing == ["Nobody"]
    with pytest.raises(NotFoundError) as err:
        service.relations.create_relations([R("Ada", "Ghost", "knows"), R("Phantom", "Ada", "knows")])
    assert err.value.missing == ["Ghost", "Phantom"]
    with pytest.raises(ValidationError):
        service.entities.create_entities([E("Fine", "Person"), E("x" * 513, "Person")])
    with pytest.raises(ValidationError):
        service.entities.upsert_entities([E("Fine", "Person"), E("Bad", "Person", status="sleeping")])
    assert counts(service) == before


def test_limits_are_enforced_with_clear_messages(service):
    with pytest.raises(ValidationError, match="limit is 512"):
        service.entities.create_entities([E("n" * 513, "T")])
    with pytest.raises(ValidationError, match="limit is 10,000"):
        service.entities.create_entities([E("a", "T", (O("o" * 10_001),))])
    with pytest.raises(ValidationError, match="limit is 1,000"):
        service.entities.create_entities([E(f"e{i}", "T") for i in range(1001)])
    with pytest.raises(ValidationError, match="must not be empty"):
        service.entities.create_entities([E("   ", "T")])
    with pytest.raises(ValidationError, match="control characters"):
        service.entities.create_entities([E("bad\x00name", "T")])
    with pytest.raises(ValidationError, match="limit is 2,000"):
        service.search.query("q" * 2001)


def test_fts_and_vectors_follow_every_write(service):
    service.entities.create_entities([E("Ada", "Person", (O("analytical engine notes"),))])
    assert text_matches(service, "engine") == ["Ada"]
    service.entities.delete_observations([("Ada", ["analytical engine notes"])])
    assert text_matches(service, "engine") == []
    service.entities.rename_entity("Ada", "Ada Lovelace")
    assert text_matches(service, "lovelace") == text_matches(service, "ada") == ["Ada Lovelace"]
    assert counts(service)["entity_fts"] == 1
    service.entities.delete_entities(["Ada Lovelace"])
    assert counts(service)["entity_fts"] == 0 and counts(service)["entity_embeddings"] == 0


def test_relations_create_end_delete(service):
    service.entities.create_entities([E("A", "T"), E("B", "T")])
    created = service.relations.create_relations([R("A", "B", "knows", context="met at work"), R("A", "B", "knows")])
    assert len(created) == 1 and created[0].context == "met at work"
    ended = service.relations.end_relation(R("A", "B", "knows"))
    assert not ended.active and ended.ended_at is not None
    assert service.entities.read_graph().relations == ()
    assert len(service.entities.read_graph(include_ended=True).relations) == 1
    with pytest.raises(NotFoundError):
        service.relations.end_relation(R("A", "B", "knows"))
    assert service.relations.create_relations([R("A", "B", "knows")])  # may be re-created once ended
    assert service.relations.delete_relations([R("A", "B", "knows")]) == 2


def test_rename_conflict_and_merge(service):
    service.entities.create_entities([E("A", "T", (O("one"), O("shared"))), E("B", "T", (O("two"), O("shared"))), E("C", "T")])
    service.relations.create_relations([R("B", "C", "uses"), R("A", "B", "knows"), R("A", "C", "uses")])
    service.usage.record_access(["A", "B"], at=1_700_000_000)
    with pytest.raises(ConflictError):
        service.entities.rename_entity("A", "B")
    merged = service.entities.merge_entities(["B"], "A")
    assert sorted(o.content for o in merged.observations) == ["one", "shared", "two"]
    graph = service.entities.read_graph()
    assert [e.name for e in graph.entities] == ["A", "C"]
    assert [(r.source, r.target, r.relation_type) for r in graph.relations] == [("A", "C", "uses")]
    detail = service.entities.get_entity("A")
    assert detail.access_count == 2 and detail.access_days == 1
    with pytest.raises(ConflictError):
        service.entities.merge_entities(["A"], "A")


def test_supersede_and_update_observation(service):
    service.entities.create_entities([E("Ada", "Person", (O("Lives in London"),))])
    new = service.entities.supersede_observation("Ada", "Lives in London", O("Lives in Paris", kind="fact"))
    observations = service.entities.get_entity("Ada").entity.observations
    old = next(o for o in observations if o.content == "Lives in London")
    assert old.superseded_at is not None and new.supersedes == old.id
    assert [o.content for o in service.entities.get_entity("Ada").entity.live_observations] == ["Lives in Paris"]
    with pytest.raises(NotFoundError):
        service.entities.supersede_observation("Ada", "Lives in London", O("Lives in Rome"))
    edited = service.entities.update_observation("Ada", "Lives in Paris", "Lives in Lyon", kind="event")
    assert (edited.content, edited.kind) == ("Lives in Lyon", "event")


def test_subscribers_get_changes_after_commit(service):
    seen = []
    unsubscribe = service.subscribe(seen.extend)
    service.entities.create_entities([E("A", "T")], origin="mcp")
    assert seen[-1].origin == "mcp" and seen[-1].op == "create_entities"
    assert seen[-1].change_id == service.history.changes_since(0)[-1].change_id
    unsubscribe()
    service.entities.create_entities([E("B", "T")])
    assert len(seen) == 1
    assert [c.op for c in service.history.changes_since(0)] == ["create_entities", "create_entities"]


def test_open_nodes_and_search_nodes_follow_reference_semantics(service):
    service.entities.create_entities([E("Alpha", "Project", (O("Uses Redis cache"),)), E("Beta", "Tool"), E("Gamma", "Tool")])
    service.relations.create_relations([R("Alpha", "Beta", "uses"), R("Beta", "Gamma", "wraps")])
    found = service.search.search_nodes("redis")
    assert [e.name for e in found.entities] == ["Alpha"]
    assert [(r.source, r.target) for r in found.relations] == [("Alpha", "Beta")]
    opened = service.entities.open_nodes(["Beta", "Nobody"])
    assert [e.name for e in opened.entities] == ["Beta"]
    assert len(opened.relations) == 2
    service.entities.open_nodes(["Alpha", "Gamma"])
    service.usage.wait_for_signals()
    conn = service.database.read()
    assert conn.execute("SELECT a_id, b_id, co_count FROM co_occurrences").fetchall() == [(1, 3, 1)]


def test_read_graph_page_and_stats(service):
    service.entities.create_entities([E(f"e{i}", "T", (O(f"fact {i}"),)) for i in range(25)])
    page = service.entities.read_graph_page(offset=20, limit=10)
    assert [e.name for e in page.entities] == [f"e{i}" for i in range(20, 25)] and page.total_entities == 25
    stats = service.entities.stats()
    assert (stats.entities, stats.observations, stats.embedded_entities) == (25, 25, 25)


def test_scoring_params_round_trip(service):
    params = service.search.scoring_params().replace(gamma=0.05, beta_sal=0.8)
    service.search.save_scoring_params(params)
    assert service.search.scoring_params() == params


def test_search_logs_event_and_impressions_not_access(service):
    service.entities.create_entities([E("Redis", "Tool", (O("in-memory cache"),)), E("Postgres", "Tool", (O("database"),))])
    outcome = service.search.query("cache", limit=5)
    assert outcome.results[0].name == "Redis"
    service.usage.wait_for_signals()
    conn = service.database.read()
    assert conn.execute("SELECT query, k_limit FROM search_events").fetchall() == [("cache", 5)]
    redis = service.entities.get_entity("Redis")
    assert (redis.access_count, redis.impression_count) == (0, 1)


def test_search_nodes_ignores_case_beyond_ascii(service):
    service.entities.create_entities([E("Ёлка", "Дерево", (O("ÉCOLE du Soir"),)), E("plain", "T", (O("50%_off"),))])
    assert [e.name for e in service.search.search_nodes("ёЛКА").entities] == ["Ёлка"]
    assert [e.name for e in service.search.search_nodes("école").entities] == ["Ёлка"]
    assert [e.name for e in service.search.search_nodes("дерево").entities] == ["Ёлка"]
    assert [e.name for e in service.search.search_nodes("%_OFF").entities] == ["plain"]
    assert service.search.search_nodes("%x_").entities == ()


def test_transaction_keeps_all_or_nothing_and_notifies_once(service):
    seen = []
    service.subscribe(seen.extend)
    with service.transaction("batch", origin="import"):
        service.entities.create_entities([E("A", "T")])
        with pytest.raises(NotFoundError):
            service.entities.add_observations([("Ghost", [O("x")])])  # refused alone, the batch goes on
        service.entities.add_observations([("A", [O("seen inside")])])
        assert [o.content for o in service.entities.get_entity("A").entity.observations] == ["seen inside"]
    assert [(c.op, c.origin) for c in seen] == [("batch", "import")]
    assert service.history.changes_since(0)[-1].entity_ids == {service.entities.get_entity("A").entity.id}
    before = counts(service)
    with pytest.raises(RuntimeError), service.transaction("failing"):
        service.entities.create_entities([E("B", "T")])
        raise RuntimeError("crash in the middle")
    assert counts(service) == before and len(seen) == 1
