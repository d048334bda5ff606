"""The use log behind an agent's timeline: every use an agent made (``open_nodes``, ``get_entity``, ``mark_used``) is
in its own timeline, whether a search showed the entity first or not, linked to the search it answered when there
is one; looking records nothing; the log keeps the newest uses past its retention; an older memory's labelled uses
come into it when it is upgraded. Named MCP tokens call the tools over Streamable HTTP; each backend."""

from __future__ import annotations

import json

import anyio
from _backends import on_postgres
from _mcp_helpers import http_client, outcome
from _timeline_helpers import PEOPLE, two_agents_at_work

from limbic.core.cli.main import main
from limbic.core.embedding.base import HashingEmbedder
from limbic.core.learning.shadow import ShadowConfig
from limbic.core.mcp.http import HttpMcpServer
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database


def _uses_logged(service) -> int:
    return int(service.database.read().execute("SELECT count(*) FROM use_events").fetchone()[0])


def _direct_agents(service) -> dict:
    """carol opens two entities and gets a third without searching, then searches, opens what it showed first and
    marks it used; dave only opens an entity. Returns carol's search answer and what she opened after it."""
    service.entities.create_entities([EntityInput(n, t, (ObservationInput(o),)) for n, t, o in PEOPLE])
    carol, dave = service.projects.add_token("carol"), service.projects.add_token("dave")
    seen: dict = {}
    with HttpMcpServer(service) as server:
        async def scenario():
            async with http_client(server.url, carol) as client:
                async def call(tool, arguments):
                    answer = outcome(await client.call_tool(tool, arguments))
                    assert not answer["error"], answer
                    return answer["structured"]

                await call("open_nodes", {"names": ["Ada Lovelace", "Charles Babbage"]})
                await call("get_entity", {"name": "Grace Hopper"})
                seen["search"] = await call("search_semantic", {"query": "analytical engine", "limit": 2})
                service.usage.wait_for_signals()  # the search is logged before the use that answers it
                seen["opened"] = seen["search"]["results"][0]["name"]
                await call("open_nodes", {"names": [seen["opened"]]})
                await call("mark_used", {"names": [seen["opened"]], "searchId": seen["search"]["searchId"]})
            async with http_client(server.url, dave) as client:
                assert not outcome(await client.call_tool("open_nodes", {"names": ["Analytical Engine"]}))["error"]

        anyio.run(scenario)
    service.usage.wait_for_signals()
    return seen


def test_an_agent_that_opens_without_searching_finds_its_uses_in_its_timeline(service, memory_address, capsys):
    seen = _direct_agents(service)
    carol = service.history.timeline("carol")
    assert [e.kind for e in carol] == ["used", "opened", "search", "opened", "opened"]  # newest first
    used, after, search, got, opened = carol
    assert opened.entities == ("Ada Lovelace", "Charles Babbage") and opened.searches == ()  # no search before
    assert got.entities == ("Grace Hopper",) and got.searches == ()
    assert search.searches == (seen["search"]["searchId"],)
    assert after.entities == (seen["opened"],) and after.searches == search.searches  # it answered that search
    assert used.entities == (seen["opened"],) and used.searches == search.searches  # labelled already: still linked
    assert {e.origin for e in carol} == {"mcp:carol"}
    assert opened.at < got.at < search.at <= after.at

    dave = service.history.timeline("dave")
    assert [(e.kind, e.entities, e.searches) for e in dave] == [("opened", ("Analytical Engine",), ())]
    assert "mcp:dave" in service.history.timeline_origins()  # an agent that only opened is listed

    assert main(["--db", memory_address, "timeline", "--agent", "carol"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].endswith("opened Ada Lovelace, Charles Babbage")
    assert lines[1].endswith(f"opened {seen['opened']} (shown by search #{seen['search']['searchId']})")
    assert main(["--db", memory_address, "timeline", "--agent", "dave", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [(e["kind"], e["entities"], e["searchIds"]) for e in printed] == [("opened", ["Analytical Engine"], [])]


def test_a_use_links_the_search_it_named_and_only_its_own_origin_s_searches(service):
    service.entities.create_entities([EntityInput(n, t, (ObservationInput(o),)) for n, t, o in PEOPLE])
    found = service.search.query("analytical engine", 3)  # by the CLI
    service.usage.wait_for_signals()
    shown = [r.name for r in found.results]
    service.usage.mark_used([shown[0]], search_id=found.search_id, origin="mcp:erin")  # names the CLI's search
    service.entities.open_nodes([shown[1]], origin="mcp:erin")  # shown to the CLI, not to erin
    service.usage.wait_for_signals()
    assert [(e.kind, e.entities, e.searches) for e in service.history.timeline("erin")] == [
        ("opened", (shown[1],), ()), ("used", (shown[0],), (found.search_id,))]


def test_looking_is_not_using(service):
    service.entities.create_entities([EntityInput(n, t, (ObservationInput(o),)) for n, t, o in PEOPLE])
    outcome_ = service.search.query("analytical engine", 3)  # logged, with its impressions: not a use
    shown = [r.name for r in outcome_.results]
    service.entities.get_entity(shown[0])  # the app's inspector
    service.entities.get_entity_by_id(outcome_.results[1].entity_id)  # the app's hover
    service.entities.open_nodes(shown, record=False)  # an internal read
    service.usage.wait_for_signals()
    assert _uses_logged(service) == 0
    assert [e.kind for e in service.history.timeline(origin="cli")] == ["search", "wrote"]


def test_the_use_log_keeps_its_newest_uses_past_the_retention(service):
    service.entities.create_entities([EntityInput(n, t, (ObservationInput(o),)) for n, t, o in PEOPLE])
    service.learning.save_config(ShadowConfig(retention=3))
    service.usage.mark_used(["Ada Lovelace", "Charles Babbage"], origin="mcp:carol")
    service.entities.open_nodes(["Grace Hopper"], origin="mcp:carol")
    service.usage.wait_for_signals()
    service.usage.mark_used(["Analytical Engine"], origin="mcp:carol")
    assert _uses_logged(service) == 3  # four uses, the oldest dropped
    steps = [(e.kind, e.entities) for e in service.history.timeline("carol")]
    assert steps == [("used", ("Analytical Engine",)), ("opened", ("Grace Hopper",)), ("used", ("Charles Babbage",))]
    accesses = service.entities.get_entity("Ada Lovelace").access_count
    assert accesses == 1  # the use log's retention drops no access


def test_an_older_memory_keeps_its_agents_uses_once_upgraded(memory_address):
    service = MemoryService(open_database(memory_address), HashingEmbedder(), origin="cli")
    try:
        two_agents_at_work(service)
        before = service.history.timeline()
        with service.database.maintenance() as conn:  # the memory as schema 16 left it: no use log
            conn.execute("DROP TABLE use_events")
            if on_postgres(conn):
                conn.execute("DROP FUNCTION use_events_rowid()")
                conn.execute("DELETE FROM limbic_schema WHERE version = 17")
            else:
                conn.execute("PRAGMA user_version = 16")
    finally:
        service.close()
    service = MemoryService(open_database(memory_address), HashingEmbedder(), origin="cli")
    try:
        assert service.history.timeline() == before  # every use it logged answered a search: all of them kept
        service.entities.open_nodes(["COBOL"], origin="mcp:bob")
        service.usage.wait_for_signals()
        assert service.history.timeline("bob")[0].entities == ("COBOL",)
        assert _uses_logged(service) == 4  # alice's open and use, bob's get and open
    finally:
        service.close()
