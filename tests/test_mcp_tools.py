"""The MCP tools through the SDK's in-memory client against ``build_server``: happy and error paths.

Every refused call is checked to have written nothing: the change log id and the graph are the same
before and after.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from mcp import Client

from limbic.core.mcp.schemas import graph_out
from limbic.core.mcp.server import KNOWLEDGE_GRAPH_URI, ToolCallRecord, build_server
from limbic.core.models import STATUSES, EntityInput, ObservationInput
from limbic.core.search.params import ScoringParams
from limbic.core.search.presets import preset

REFERENCE_TOOLS = {
    "create_entities", "create_relations", "add_observations", "delete_entities", "delete_observations",
    "delete_relations", "read_graph", "search_nodes", "open_nodes",
}
EXTENDED_TOOLS = {"search_semantic", "rename_entity", "merge_entities", "set_status", "end_relation", "get_entity"}


@dataclass
class Harness:
    portal: Any
    client: Client
    service: Any
    records: list[ToolCallRecord] = field(default_factory=list)

    def call(self, tool: str, arguments: dict | None = None):
        return self.portal.call(self.client.call_tool, tool, arguments or {})

    def ok(self, tool: str, arguments: dict | None = None) -> dict:
        result = self.call(tool, arguments)
        assert not result.is_error, result.content[0].text
        return result.structured_content

    def snapshot(self):
        graph = self.service.entities.read_graph(include_ended=True)
        return self.service.history.last_change_id(), graph_out(graph.entities, graph.relations)

    def refused(self, tool: str, arguments: Any, *needles: str) -> str:
        """Call, expect isError whose text names each needle, and check nothing was written."""
        before = self.snapshot()
        result = self.call(tool, arguments)
        text = result.content[0].text
        assert result.is_error, f"{tool} accepted {arguments!r}: {text}"
        for needle in needles:
            assert needle.lower() in text.lower(), text
        assert text.strip() != f"Error executing tool {tool}", "an unexpected crash, not a refusal"
        assert self.snapshot() == before
        return text


@pytest.fixture
def mcp(service):
    records: list[ToolCallRecord] = []
    server = build_server(service, on_call=records.append)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(server)) as client:
        yield Harness(portal, client, service, records)


@pytest.fixture
def people(mcp):
    mcp.ok("create_entities", {"entities": [
        {"name": "Alice", "entityType": "person", "observations": ["likes green tea", "works at Acme"]},
        {"name": "Bob", "entityType": "person", "observations": ["plays chess"]},
        {"name": "Acme", "entityType": "company", "observations": ["makes widgets"]},
    ]})
    mcp.ok("create_relations", {"relations": [
        {"from": "Alice", "to": "Acme", "relationType": "works_at"},
        {"from": "Bob", "to": "Alice", "relationType": "knows"},
    ]})
    return mcp


def test_tool_list_has_reference_names_titles_and_annotations(mcp):
    tools = {t.name: t for t in mcp.portal.call(mcp.client.list_tools).tools}
    assert REFERENCE_TOOLS | EXTENDED_TOOLS <= set(tools)
    assert tools["create_entities"].description == "Create multiple new entities in the knowledge graph"
    assert tools["read_graph"].annotations.read_only_hint is True
    assert tools["delete_entities"].annotations.destructive_hint is True
    assert "refused" in tools["create_relations"].description.lower()  # the documented difference
    schema = tools["add_observations"].input_schema
    assert schema["required"] == ["observations"]


def test_create_entities_returns_only_new_ones_with_status(mcp):
    first = mcp.ok("create_entities", {"entities": [
        {"name": "Alice", "entityType": "person", "observations": ["likes tea"], "status": "paused"}]})
    assert first == {"entities": [
        {"name": "Alice", "entityType": "person", "observations": ["likes tea"], "status": "paused"}]}
    result = mcp.call("create_entities", {"entities": [
        {"name": "Alice", "entityType": "robot", "observations": []},
        {"name": "Carol", "entityType": "person", "observations": []}]})
    assert [e["name"] for e in result.structured_content["entities"]] == ["Carol"]
    assert json.loads(result.content[0].text) == result.structured_content["entities"]  # like the reference


@pytest.mark.parametrize(("entities", "needle"), [
    ([{"name": "", "entityType": "t", "observations": []}], "empty"),
    ([{"name": "ok", "entityType": "t", "observations": [], "status": "sleeping"}], "status"),
    ([{"name": "bad\x07bell", "entityType": "t", "observations": []}], "control"),
    ([{"name": "x" * 513, "entityType": "t", "observations": []}], "512"),
    ([{"name": "fine", "entityType": "t", "observations": ["y" * 10_001]}], "10000"),
    ([{"name": "fine", "entityType": "t", "observations": []}, {"name": "two", "observations": []}], "entityType"),
])
def test_create_entities_refuses_bad_input_and_writes_nothing(mcp, entities, needle):
    mcp.refused("create_entities", {"entities": entities}, needle)
    assert mcp.service.entities.entity_names() == []


def test_create_relations_skips_duplicates_and_keeps_context(people):
    result = people.ok("create_relations", {"relations": [
        {"from": "Alice", "to": "Acme", "relationType": "works_at"},
        {"from": "Acme", "to": "Bob", "relationType": "sponsors", "context": "chess club"}]})
    assert result == {"relations": [{"from": "Acme", "to": "Bob", "relationType": "sponsors", "context": "chess club"}]}


def test_create_relations_refuses_unknown_endpoints_naming_them(people):
    people.refused("create_relations", {"relations": [
        {"from": "Alice", "to": "Bob", "relationType": "likes"},
        {"from": "Ghost", "to": "Phantom", "relationType": "haunts"}]}, "Ghost", "Phantom")


def test_add_observations_adds_only_new_contents_with_kind(people):
    result = people.ok("add_observations", {"observations": [
        {"entityName": "Alice", "contents": ["likes green tea", "speaks French"], "kind": "fact"},
        {"entityName": "Bob", "contents": ["chess club member"]}]})
    assert result == {"results": [
        {"entityName": "Alice", "addedObservations": ["speaks French"]},
        {"entityName": "Bob", "addedObservations": ["chess club member"]}]}
    kinds = {o["content"]: o["kind"] for o in people.ok("get_entity", {"name": "Alice"})["observations"]}
    assert kinds["speaks French"] == "fact"


def test_add_observations_supersedes_keeps_history(people):
    people.ok("add_observations", {"observations": [
        {"entityName": "Alice", "contents": ["works at Globex"], "supersedes": "works at Acme"}]})
    alice = people.ok("open_nodes", {"names": ["Alice"]})["entities"][0]
    assert alice["observations"] == ["likes green tea", "works at Globex"]
    chain = {o["content"]: o for o in people.ok("get_entity", {"name": "Alice"})["observations"]}
    assert chain["works at Acme"]["supersededAt"] is not None
    assert chain["works at Globex"]["supersedes"] == chain["works at Acme"]["id"]


def test_add_observations_refusals(people):
    people.refused("add_observations", {"observations": [
        {"entityName": "Alice", "contents": ["fine"]},
        {"entityName": "Nobody", "contents": ["x"]}]}, "Nobody")
    people.refused("add_observations", {"observations": [
        {"entityName": "Alice", "contents": ["a", "b"], "supersedes": "likes green tea"}]}, "exactly one")
    people.refused("add_observations", {"observations": [
        {"entityName": "Alice", "contents": ["new"], "supersedes": "never said"}]}, "never said")
    people.refused("add_observations", {"observations": [{"entityName": "Alice", "contents": "one string"}]},
                   "contents")


def test_deletions_answer_like_the_reference_server(people):
    assert people.ok("delete_observations", {"deletions": [
        {"entityName": "Alice", "observations": ["works at Acme"]},
        {"entityName": "Nobody", "observations": ["x"]}]}) == {
        "success": True, "message": "Observations deleted successfully"}
    assert people.ok("delete_relations", {"relations": [{"from": "Bob", "to": "Alice", "relationType": "knows"}]}) == {
        "success": True, "message": "Relations deleted successfully"}
    result = people.call("delete_entities", {"entityNames": ["Acme", "Nobody"]})
    assert result.content[0].text == "Entities deleted successfully"
    graph = people.ok("read_graph")
    assert [e["name"] for e in graph["entities"]] == ["Alice", "Bob"]
    assert graph["relations"] == []
    assert graph["entities"][0]["observations"] == ["likes green tea"]
    people.refused("delete_entities", {"entityNames": "Alice"}, "entityNames")


def test_read_graph_modes(people):
    full = people.ok("read_graph")
    assert set(full) == {"entities", "relations"}
    assert {"from": "Bob", "to": "Alice", "relationType": "knows"} in full["relations"]
    assert people.ok("read_graph", {"mode": "names"}) == {"names": ["Alice", "Bob", "Acme"], "total": 3}
    page = people.ok("read_graph", {"mode": "page", "offset": 1, "limit": 1})
    assert [e["name"] for e in page["entities"]] == ["Bob"]
    assert page["relations"] == [{"from": "Bob", "to": "Alice", "relationType": "knows"}]
    assert (page["offset"], page["limit"], page["total"]) == (1, 1, 3)
    summary = people.ok("read_graph", {"mode": "summary"})["summary"]
    assert (summary["entities"], summary["relations"], summary["entityTypes"]) == (3, 2, {"person": 2, "company": 1})
    people.refused("read_graph", {"mode": "page", "limit": 0}, "limit")
    people.refused("read_graph", {"mode": "page", "offset": -1}, "offset")
    people.refused("read_graph", {"mode": "everything"}, "mode")


def test_search_nodes_is_substring_search_with_touching_relations(people):
    found = people.ok("search_nodes", {"query": "CHESS"})
    assert [e["name"] for e in found["entities"]] == ["Bob"]
    assert found["relations"] == [{"from": "Bob", "to": "Alice", "relationType": "knows"}]
    assert people.ok("search_nodes", {"query": '"tea" OR NEAR(x*'}) == {"entities": [], "relations": []}
    people.refused("search_nodes", {"query": "q" * 2001}, "query")


def test_open_nodes_ignores_unknown_names_and_records_access(people):
    opened = people.ok("open_nodes", {"names": ["Acme", "Nobody"]})
    assert [e["name"] for e in opened["entities"]] == ["Acme"]
    assert opened["relations"] == [{"from": "Alice", "to": "Acme", "relationType": "works_at"}]
    people.service.usage.wait_for_signals()
    assert people.ok("get_entity", {"name": "Acme"})["accessCount"] == 1


def test_search_semantic_returns_scoring_breakdown(people):
    result = people.ok("search_semantic", {"query": "chess", "limit": 2})
    assert result["mode"] in ("hybrid", "semantic")
    assert result["model"] == people.service.embedder.name
    assert result["knn"] == "exact"  # a small memory: no HNSW graph
    top = result["results"][0]
    assert top["name"] == "Bob"
    assert {"distance", "limbic_score", "final_score", "routing_strategy", "scoring"} <= set(top)
    assert set(top["scoring"]) == {"importance", "temporal_factor", "cooc_boost", "salience_boost",
                                   "status_multiplier", "metadata_penalty", "date_match", "feedback_boost"}
    assert (top["scoring"]["date_match"], top["scoring"]["feedback_boost"]) == (0.0, 1.0)  # no date, no use yet
    assert len(result["results"]) <= 2
    for bad in (0, -3, 101, 10**12, "ten", 2.5, True):
        people.refused("search_semantic", {"query": "chess", "limit": bad}, "limit")
    people.refused("search_semantic", {"query": "   "}, "query")


def test_search_semantic_uses_the_saved_scoring_parameters(people):
    people.ok("set_status", {"entityNames": ["Bob"], "status": "archived"})
    people.service.search.save_scoring_params(ScoringParams().replace(status_archived=0.25))
    bob = next(r for r in people.ok("search_semantic", {"query": "chess"})["results"] if r["name"] == "Bob")
    assert bob["scoring"]["status_multiplier"] == 0.25


def test_search_semantic_preset_chooses_the_formula(people):
    five_years_ago = time.time() - 5 * 365 * 86_400
    people.service.entities.create_entities([EntityInput("Carol", "person", (ObservationInput("plays chess at the club"),),
                                                created_at=five_years_ago)])
    def carol(arguments):
        return next(r for r in people.ok("search_semantic", arguments)["results"] if r["name"] == "Carol")
    # the seed decays a never-accessed memory from its creation (five years: the floor 0.1); default does not
    assert carol({"query": "chess", "preset": "seed"})["scoring"]["temporal_factor"] == pytest.approx(0.1)
    # (≈ 1: a search may record an access as this runs; a memory used seconds ago has not decayed either)
    assert carol({"query": "chess", "preset": "default"})["scoring"]["temporal_factor"] == pytest.approx(1.0)
    assert people.service.search.scoring_params() == preset("default")  # what a call without a preset uses
    people.refused("search_semantic", {"query": "chess", "preset": "best"}, "preset", "default", "seed")
    tools = {t.name: t for t in people.portal.call(people.client.list_tools).tools}
    assert tools["search_semantic"].input_schema["properties"]["preset"]["enum"] == ["default", "seed"]


def test_rename_and_merge(people):
    renamed = people.ok("rename_entity", {"oldName": "Acme", "newName": "Acme Corp"})
    assert renamed["name"] == "Acme Corp"
    assert {"from": "Alice", "to": "Acme Corp", "relationType": "works_at"} in people.ok("read_graph")["relations"]
    people.refused("rename_entity", {"oldName": "Alice", "newName": "Bob"}, "Bob")
    people.refused("rename_entity", {"oldName": "Nobody", "newName": "Somebody"}, "Nobody")
    people.ok("create_entities", {"entities": [{"name": "Robert", "entityType": "person", "observations": ["plays go"]}]})
    merged = people.ok("merge_entities", {"sourceNames": ["Robert"], "targetName": "Bob"})
    assert merged["observations"] == ["plays chess", "plays go"]
    assert "Robert" not in people.ok("read_graph", {"mode": "names"})["names"]
    people.refused("merge_entities", {"sourceNames": ["Bob"], "targetName": "Bob"}, "itself")
    people.refused("merge_entities", {"sourceNames": ["Ghost"], "targetName": "Bob"}, "Ghost")


def test_set_status_lists_its_values_and_refuses_others(people):
    result = people.ok("set_status", {"entityNames": ["Alice", "Bob"], "status": "archived"})
    assert [e["status"] for e in result["entities"]] == ["archived", "archived"]
    schema = people.portal.call(people.client.list_tools).tools
    status = next(t for t in schema if t.name == "set_status").input_schema["properties"]["status"]
    assert tuple(status["enum"]) == STATUSES
    people.refused("set_status", {"entityNames": ["Alice"], "status": "asleep"},
                   "status: Input should be 'active', 'paused', 'completed' or 'archived'")
    people.refused("set_status", {"entityNames": ["Alice"], "status": "archivado"}, "status")
    people.refused("set_status", {"entityNames": ["Acme", "Nobody"], "status": "paused"}, "Nobody")


def test_end_relation_keeps_history(people):
    ended = people.ok("end_relation", {"relation": {"from": "Bob", "to": "Alice", "relationType": "knows"}})
    assert ended["active"] is False and ended["endedAt"] is not None
    assert {"from": "Bob", "to": "Alice", "relationType": "knows"} not in people.ok("read_graph")["relations"]
    relations = people.ok("get_entity", {"name": "Bob"})["relations"]
    assert [(r["relationType"], r["active"]) for r in relations] == [("knows", False)]
    people.refused("end_relation", {"relation": {"from": "Bob", "to": "Alice", "relationType": "knows"}}, "no active")


def test_get_entity_details_and_unknown(people):
    detail = people.ok("get_entity", {"name": "Alice"})
    assert detail["name"] == "Alice" and detail["degree"] == 2 and detail["createdAt"].endswith("Z")
    assert [o["content"] for o in detail["observations"]] == ["likes green tea", "works at Acme"]
    people.refused("get_entity", {"name": "Nobody"}, "Nobody")
    people.refused("get_entity", {}, "name")


def test_resource_holds_the_graph_and_listen_announces_updates(people):
    contents = people.portal.call(people.client.read_resource, KNOWLEDGE_GRAPH_URI).contents[0]
    assert contents.mime_type == "application/json"
    assert [e["name"] for e in json.loads(contents.text)["entities"]] == ["Alice", "Bob", "Acme"]

    async def listen_while_writing():
        async with people.client.listen(resource_subscriptions=[KNOWLEDGE_GRAPH_URI]) as subscription:
            await people.client.call_tool("add_observations", {
                "observations": [{"entityName": "Bob", "contents": ["plays go"]}]})
            with anyio.fail_after(10):
                async for event in subscription:
                    return event

    assert people.portal.call(listen_while_writing).uri == KNOWLEDGE_GRAPH_URI


def test_writes_by_another_process_are_announced_too(people, memory_address):
    from limbic.core.models import EntityInput
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    other = MemoryService(open_database(memory_address))  # its own connections, like another process

    async def listen_while_other_writes():
        async with people.client.listen(resource_subscriptions=[KNOWLEDGE_GRAPH_URI]) as subscription:
            await anyio.to_thread.run_sync(other.entities.create_entities, [EntityInput("Dora", "person")])
            with anyio.fail_after(10):
                async for event in subscription:
                    return event

    try:
        assert people.portal.call(listen_while_other_writes).uri == KNOWLEDGE_GRAPH_URI
    finally:
        other.close()


def test_legacy_resources_subscribe_gets_updated_notifications(service):
    import mcp_types

    server = build_server(service)
    received: list[str] = []

    async def scenario():
        got = anyio.Event()

        async def on_message(message):
            if isinstance(message, mcp_types.ServerNotification) and isinstance(
                    message, mcp_types.ResourceUpdatedNotification):
                received.append(message.params.uri)
                got.set()

        async with Client(server, mode="legacy", message_handler=on_message) as client:
            assert client.server_capabilities.resources.subscribe is True
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.subscribe_resource(KNOWLEDGE_GRAPH_URI)
            await client.call_tool("create_entities", {"entities": [
                {"name": "Zoe", "entityType": "person", "observations": []}]})
            with anyio.fail_after(10):
                await got.wait()

    anyio.run(scenario)
    assert received == [KNOWLEDGE_GRAPH_URI]


def test_on_call_records_successes_and_failures(people):
    people.records.clear()
    people.call("open_nodes", {"names": ["Alice"]})
    people.call("get_entity", {"name": "Nobody"})
    people.call("search_nodes", {"query": "x" * 1000})
    ok, failed, long = people.records
    assert (ok.tool, ok.error, ok.arguments) == ("open_nodes", None, '{"names":["Alice"]}')
    assert ok.duration_ms > 0 and ok.at > 1.7e9
    assert failed.tool == "get_entity" and "Nobody" in failed.error
    assert len(long.arguments) == 240 and long.arguments.endswith("…")


def test_a_failing_on_call_callback_does_not_break_calls(service):
    def explode(record):
        raise RuntimeError("log is broken")

    server = build_server(service, on_call=explode)

    async def scenario():
        async with Client(server) as client:
            result = await client.call_tool("read_graph", {})
            return result.is_error

    assert anyio.run(scenario) is False


def test_unknown_keys_are_refused_naming_the_key(people):
    message = people.refused("create_entities", {"entities": [
        {"name": "Dora", "entityType": "person", "observations": [], "stauts": "paused"}]},
        "invalid arguments: entities.0.stauts: unknown key")
    assert "pydantic" not in message and "http" not in message
    people.refused("open_nodes", {"names": [], "nmes": 3}, "nmes: unknown key")
    people.refused("add_observations", {"observations": [{"entityName": "Alice", "contents": "x"}]},
                   "observations.0.contents: Input should be a valid list")
    assert "Dora" not in people.ok("read_graph", {"mode": "names"})["names"]
    schemas = {t.name: t.input_schema for t in people.portal.call(people.client.list_tools).tools}
    assert all(schema.get("additionalProperties") is False for schema in schemas.values())
    assert schemas["create_entities"]["$defs"]["EntityIn"]["additionalProperties"] is False


def test_search_nodes_with_limit_pages_through_the_unpaged_results(mcp):
    mcp.ok("create_entities", {"entities": [
        {"name": f"pkg{i}", "entityType": "package", "observations": [f"image tool {i}" if i % 3 else "other"]}
        for i in range(12)]})
    mcp.ok("create_relations", {"relations": [
        {"from": f"pkg{i}", "to": f"pkg{(i + 1) % 12}", "relationType": "depends"} for i in range(12)]})
    whole = mcp.ok("search_nodes", {"query": "IMAGE"})
    assert set(whole) == {"entities", "relations"} and len(whole["entities"]) == 8
    pages, offset = [], 0
    while True:
        page = mcp.ok("search_nodes", {"query": "IMAGE", "offset": offset, "limit": 3})
        assert (page["offset"], page["limit"], page["total"]) == (offset, 3, 8)
        if not page["entities"]:
            break
        pages.append(page)
        offset += 3
    assert [e for p in pages for e in p["entities"]] == whole["entities"]
    paged_relations = {json.dumps(r, sort_keys=True) for p in pages for r in p["relations"]}
    assert paged_relations == {json.dumps(r, sort_keys=True) for r in whole["relations"]}
    mcp.refused("search_nodes", {"query": "image", "limit": 0}, "limit")


def test_read_graph_accepts_limit_and_offset_and_keeps_its_modes(people):
    whole = people.ok("read_graph")
    assert set(whole) == {"entities", "relations"}
    first = people.ok("read_graph", {"limit": 2})
    rest = people.ok("read_graph", {"offset": 2})
    assert (first["total"], first["offset"], rest["offset"], rest["limit"]) == (len(whole["entities"]), 0, 2, 100)
    assert first["entities"] + rest["entities"] == whole["entities"]
    assert people.ok("read_graph", {"mode": "names"})["total"] == len(whole["entities"])


def test_max_observations_keeps_the_matching_ones(mcp):
    contents = ["born in Lyon", "plays chess on Sundays", "likes green tea", "chess club treasurer", "owns a cat"]
    mcp.ok("create_entities", {"entities": [{"name": "Eve", "entityType": "person", "observations": contents}]})
    whole = mcp.ok("search_nodes", {"query": "chess"})
    assert whole["entities"][0]["observations"] == contents and "omittedObservations" not in whole["entities"][0]
    trimmed = mcp.ok("search_nodes", {"query": "chess", "maxObservations": 2})["entities"][0]
    assert trimmed["observations"] == ["plays chess on Sundays", "chess club treasurer"]
    assert trimmed["omittedObservations"] == 3
    result = mcp.ok("search_semantic", {"query": "chess club", "maxObservations": 1})["results"][0]
    assert (result["observations"], result["omittedObservations"]) == (["chess club treasurer"], 4)
    full = mcp.ok("search_semantic", {"query": "chess club"})["results"][0]
    assert full["observations"] == contents and "omittedObservations" not in full
    mcp.refused("search_nodes", {"query": "chess", "maxObservations": -1}, "maxObservations")
