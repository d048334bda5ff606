"""Expiry: an observation past its expiry never matches (full text, vectors, substring), is swept out of the
indexes for good, and stays in the database shown as expired; TTL over MCP, the CLI, import and export."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from _mcp_helpers import portal_client

from limbic.core.errors import ValidationError
from limbic.core.lifecycle.expiry import expiry_time, parse_instant
from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.search.full_text import full_text_query, ranked_matches
from limbic.core.service import review
from limbic.core.store.indexing import entity_passage, text_hash

SOON = 2.0  # seconds until the short-lived observation expires (room for a loaded machine to write it first)


def _branch_ranks(service, query: str, name: str) -> tuple[int, int]:
    """(knn rank, full-text rank) of ``name`` in a search for ``query``; (0, 0) when neither branch found it."""
    found = service.search.query(query, limit=5, record=False).candidate_set
    if name not in found.names:
        return 0, 0
    i = found.names.index(name)
    return int(found.knn_rank[i]), int(found.fts_rank[i])


def _indexed(conn, word: str) -> int:
    """Rows of the entity full-text index matching ``word``: the index itself, before readers leave out what
    expired."""
    return len(ranked_matches(conn, full_text_query(conn, word), 100)[0])


@pytest.fixture
def short_lived(service):
    service.entities.create_entities([
        E("deploy notes", "Note", (O("quokka quasar quince", expires_at=time.time() + SOON),)),
        E("stable notes", "Note", (O("kept forever quokka", ), O("another fact"))),
        E("filler", "Note", (O("unrelated words here"),)),
    ])
    return service


def test_expired_text_stops_matching_at_its_expiry_without_a_sweep(short_lived):
    service = short_lived
    assert all(_branch_ranks(service, "quasar quince", "deploy notes"))
    assert service.search.search_nodes("quasar").entities
    time.sleep(SOON + 0.1)
    assert _branch_ranks(service, "quasar quince", "deploy notes") == (0, 0)
    assert not service.search.search_nodes("quasar").entities
    assert [e.name for e in service.search.search_nodes("quokka").entities] == ["stable notes"]
    # nothing was swept: the full-text row still holds the text, readers leave it out
    conn = service.database.read()
    assert _indexed(conn, "quasar") == 1
    detail = service.entities.get_entity("deploy notes")
    assert detail.entity.observations[0].expired(time.time())


def test_the_sweep_takes_the_text_out_of_both_indexes_and_keeps_the_rest(short_lived):
    service = short_lived
    time.sleep(SOON + 0.1)
    report = service.lifecycle.sweep_expired()
    assert report.entities == ("deploy notes",) and report.expired == 1
    conn = service.database.read()
    assert _indexed(conn, "quasar") == 0
    expired_id = service.entities.get_entity("deploy notes").entity.observations[0].id
    assert not conn.execute("SELECT 1 FROM observation_embedding_meta WHERE observation_id = ?", (expired_id,)).fetchall()
    digest = conn.execute("SELECT m.text_hash FROM entity_embedding_meta m JOIN entities e ON e.id = m.entity_id "
                          "WHERE e.name = 'deploy notes'").get
    assert digest == text_hash(entity_passage("deploy notes", "Note", "active", [], service.embedder))
    # nothing else is lost: the row stays (expired), the other memories keep their text and vectors
    assert [o.content for o in service.entities.get_entity("deploy notes").entity.observations] == ["quokka quasar quince"]
    assert _indexed(conn, "forever") == 1
    assert conn.execute("SELECT count(*) FROM observation_embedding_meta").get == 3
    assert _branch_ranks(service, "kept forever", "stable notes")[1] == 1
    assert service.lifecycle.sweep_expired().entities == ()  # swept once


def test_an_expiry_in_the_past_is_out_of_the_indexes_at_once(service):
    service.entities.create_entities([E("old", "Note", (O("zebra zucchini", expires_at=time.time() - 60), O("plain text")))])
    conn = service.database.read()
    assert _indexed(conn, "zebra") == 0
    assert conn.execute("SELECT count(*) FROM observation_embedding_meta").get == 1
    assert service.lifecycle.expired_observations() == 1


def test_the_passage_vector_is_masked_from_the_expiry_until_the_sweep(short_lived):
    service = short_lived
    vector = service.embedder.embed_query("quokka quasar quince")
    conn = service.database.read()
    ids = service.search.search_nodes("deploy notes").entities[0].id
    before = service.index.similarities(conn, service.embedder.name, vector, time.time()).distances([ids])
    after = service.index.similarities(conn, service.embedder.name, vector, time.time() + SOON + 1).distances([ids])
    assert ids in before and ids not in after
    time.sleep(SOON + 0.1)
    service.lifecycle.sweep_expired()
    swept = service.index.similarities(conn, service.embedder.name, vector, time.time()).distances([ids])
    assert ids in swept  # made again from what is left (name and type)


def test_setting_terms_is_undoable_and_reindexes(service):
    from limbic.core.service.lifecycle_edits import SetObservationTerms

    service.entities.create_entities([E("a", "T", (O("walrus words"),))])
    edit = SetObservationTerms("a", "walrus words", time.time() - 1, 0.5)
    edit.apply(service)
    observation = service.entities.get_entity("a").entity.observations[0]
    assert observation.weight == 0.5 and observation.expired(time.time())
    assert not service.search.search_nodes("walrus").entities
    edit.revert(service)
    observation = service.entities.get_entity("a").entity.observations[0]
    assert (observation.weight, observation.expires_at) == (1.0, None)
    assert service.search.search_nodes("walrus").entities
    with pytest.raises(ValidationError):
        service.lifecycle.set_observation_terms("a", "walrus words", expires_at=None, weight=1.5)


def test_expiry_values_from_the_boundaries():
    assert parse_instant("2026-03-01T00:00:00Z") == parse_instant("2026-03-01") == 1_772_323_200.0
    assert parse_instant("2026-03-01T01:00:00+01:00") == 1_772_323_200.0
    assert expiry_time(None, 2, 1000.0) == 1000.0 + 2 * 86_400
    assert expiry_time(None, None, 1000.0) is None
    for bad in (("tomorrow", None), (None, 0), (None, -1), ("2026-03-01", 3)):
        with pytest.raises(ValidationError):
            expiry_time(*bad, 1000.0)


def test_mcp_accepts_expires_at_and_ttl_days(service):
    with portal_client(build_server(service)) as (portal, client):
        def call(tool, arguments):
            return portal.call(client.call_tool, tool, arguments)

        created = call("create_entities", {"entities": [
            {"name": "ticket", "entityType": "Task", "observations": ["due soon"], "ttlDays": 2}]})
        assert created.structured_content == {"entities": [
            {"name": "ticket", "entityType": "Task", "observations": ["due soon"]}]}
        added = call("add_observations", {"observations": [
            {"entityName": "ticket", "contents": ["gone already"], "expiresAt": "2001-01-01T00:00:00Z"}]})
        assert added.structured_content["results"] == [{"entityName": "ticket", "addedObservations": ["gone already"]}]
        assert added.structured_content["notes"] == [  # accepted, and the answer says what it means
            "ticket: expiresAt 2001-01-01T00:00:00Z is in the past; 1 observation stored already expired "
            "(kept as history, left out of reads and search)"]
        both = call("add_observations", {"observations": [
            {"entityName": "ticket", "contents": ["x"], "expiresAt": "2030-01-01", "ttlDays": 1}]})
        assert both.is_error and "not both" in both.content[0].text
        bad = call("add_observations", {"observations": [
            {"entityName": "ticket", "contents": ["x"], "expiresAt": "next week"}]})
        assert bad.is_error and "ISO 8601" in bad.content[0].text
        opened = call("open_nodes", {"names": ["ticket"]}).structured_content
        assert opened["entities"][0]["observations"] == ["due soon"]  # the expired one is not current
        shown = call("get_entity", {"name": "ticket"}).structured_content
        assert {o["content"]: o["expired"] for o in shown["observations"]} == {"due soon": False, "gone already": True}
    observations = {o.content: o for o in service.entities.get_entity("ticket").entity.observations}
    assert observations["due soon"].expires_at == pytest.approx(time.time() + 2 * 86_400, abs=60)
    assert observations["gone already"].expires_at == 978_307_200.0
    assert "x" not in observations


def test_gc_sweeps_and_reports(memory_address, capsys):
    from limbic.core.cli.main import main
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.service import MemoryService

    service = MemoryService.open(memory_address, embedder=HashingEmbedder())
    service.entities.create_entities([E("short", "Note", (O("brief fact", expires_at=time.time() + 0.3),))])
    service.close()
    time.sleep(0.4)
    assert main(["--db", memory_address, "gc", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["swept"] == ["short"] and out["action"] is None


def test_import_reads_ttl_days_and_export_writes_expires_at(service, tmp_path):
    from limbic.core.io.exporter import export_graph
    from limbic.core.io.importer import import_file

    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"type": "entity", "name": "n", "entityType": "T", "observations": [
        {"content": "lasts a day", "createdAt": "2026-01-01T00:00:00Z", "ttlDays": 1}]}) + "\n")
    import_file(service, source)
    observation = service.entities.get_entity("n").entity.observations[0]
    assert observation.expires_at == parse_instant("2026-01-02T00:00:00Z")
    out = tmp_path / "out.jsonl"
    with out.open("wb") as stream:
        export_graph(service, "jsonl", stream)
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert exported[0]["observationDetails"][0]["expiresAt"] == "2026-01-02T00:00:00Z"
    assert np.isfinite(observation.expires_at)


@pytest.mark.parametrize("option", ["delete", "renew"])
def test_expired_observations_are_decisions_undone_exactly(service, option):
    service.entities.create_entities([E("old", "Note", (O("stale fact", expires_at=time.time() - 60, weight=0.5), O("kept")))])
    before = service.snapshots.snapshot_entities(["old"])
    [section] = review.review(service, ["expired"])
    [decision] = section.items
    assert decision.evidence["observation"] == "stale fact" and decision.options == ("delete", "renew")
    edit = review.decide(service, decision.key, option)
    assert review.review(service, ["expired"])[0].total == 0
    current = [o.content for o in service.entities.get_entity("old").entity.observations if o.current(time.time())]
    assert current == (["kept"] if option == "delete" else ["stale fact", "kept"])
    edit.revert(service)
    assert service.snapshots.snapshot_entities(["old"]) == before
