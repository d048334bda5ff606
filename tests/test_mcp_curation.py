"""The curation tools over MCP: in process, over stdio (``limbic mcp``) and Streamable HTTP, with hostile input
refused cleanly and nothing half-written; ``migrate`` reads only under the home and data folders; the
reference tools answer as before when the optional additions are unused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from _mcp_helpers import http_client, limbic_params, outcome, portal_client, stdio_client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from limbic.core.io.migrate import allowed_folders, checked_path
from limbic.core.mcp.http import HttpMcpServer
from limbic.core.mcp.schemas import graph_out
from limbic.core.mcp.server import build_server
from limbic.core.paths import data_dir

MEMORY_FILE = "\n".join(json.dumps(r) for r in [
    {"type": "entity", "name": "Alice", "entityType": "person", "observations": ["likes tea", "works at Acme"]},
    {"type": "entity", "name": "Acme", "entityType": "company", "observations": ["makes widgets"]},
    {"type": "relation", "from": "Alice", "to": "Acme", "relationType": "works_at"},
    {"type": "relation", "from": "Acme", "to": "Alice", "relationType": "contains"},
]) + "\n"


def memory_file() -> Path:
    """The test memory file in the data folder (LIMBIC_HOME/data), where migrate may read."""
    path = data_dir() / "incoming.jsonl"
    path.write_text(MEMORY_FILE, encoding="utf-8")
    return path


GARDEN = [f"waters the tomato garden on day {i}" for i in range(8)]
SKY = [f"points the telescope at a galaxy on night {i}" for i in range(8)]
BREAD = [f"bakes sourdough bread with rye flour batch {i}" for i in range(8)]


def script(path: Path) -> list[tuple[str, str, dict]]:
    """The curation calls every transport answers, labelled: happy paths and refusals."""
    alice_works = {"from": "Alice", "to": "Acme", "relationType": "works_at"}
    garden = {"name": "Big - garden", "observations": GARDEN, "relations": [
        {"from": "Big", "to": "Acme", "relationType": "sponsors"}]}
    return [
        ("first", "migrate", {"path": str(path)}),
        ("again", "migrate", {"path": str(path)}),
        ("etc", "migrate", {"path": "/etc/passwd"}),
        ("relative", "migrate", {"path": "relative/file.jsonl"}),
        ("missing", "migrate", {"path": str(path.parent / "missing.jsonl")}),
        ("big", "create_entities", {"entities": [{"name": "Big", "entityType": "Hobby",
                                                  "observations": GARDEN + SKY + BREAD}]}),
        ("big relation", "create_relations", {"relations": [{"from": "Big", "to": "Acme", "relationType": "sponsors"}]}),
        ("candidates", "find_split_candidates", {}),
        ("candidates lower", "find_split_candidates", {"thresholds": {"Hobby": 30, "person": 5}}),
        ("analysis", "analyze_entity_split", {"entityName": "Big", "method": "tfidf"}),
        ("proposal", "propose_entity_split", {"entityName": "Big"}),
        ("split taken", "execute_entity_split", {"entityName": "Big", "parts": [{**garden, "name": "Acme"}]}),
        ("split foreign", "execute_entity_split", {"entityName": "Big", "parts": [
            {"name": "Big - x", "observations": ["not one of Big's"]}]}),
        ("split", "execute_entity_split", {"entityName": "Big", "relationNames": "contiene", "parts": [
            garden, {"name": "Big - sky", "entityType": "Astronomy", "observations": SKY}]}),
        ("supersede", "add_observations", {"observations": [{
            "entityName": "Alice", "contents": ["drinks green tea"], "kind": "preference", "supersedes": "likes tea"}]}),
        ("filtered", "open_nodes", {"names": ["Alice"], "kinds": ["Preference"], "includeSuperseded": True}),
        ("history", "open_nodes", {"names": ["Alice"], "includeSuperseded": True}),
        ("plain", "open_nodes", {"names": ["Alice"]}),
        ("reflect", "add_reflection", {"targetType": "entity", "target": "Alice", "author": "sofia",
                                       "content": "Alice switched from black tea to green tea", "mood": "Insight"}),
        ("reflect relation", "add_reflection", {"targetType": "relation", "target": alice_works, "author": "nolan",
                                                "content": "Acme hired Alice last spring"}),
        ("reflect global", "add_reflection", {"targetType": "global", "author": "nolan", "content": "tidy memory"}),
        ("reflect nobody", "add_reflection", {"targetType": "entity", "target": "Nobody", "author": "x",
                                              "content": "y"}),
        ("reflect session", "add_reflection", {"targetType": "session", "target": "Alice", "author": "x",
                                               "content": "y"}),
        ("reflect global target", "add_reflection", {"targetType": "global", "target": "Alice", "author": "x",
                                                     "content": "y"}),
        ("search", "search_reflections", {"query": "green tea"}),
        ("search nolan", "search_reflections", {"query": "Acme", "author": "NOLAN", "targetType": "relation"}),
        ("search empty", "search_reflections", {"query": "  "}),
        ("with reflections", "open_nodes", {"names": ["Alice", "Acme"], "includeReflections": True}),
        ("detail", "get_entity", {"name": "Alice"}),
        ("report", "consolidation_report", {"limit": 2}),
        ("report bad", "consolidation_report", {"kinds": ["nonsense"]}),
        ("found", "find_duplicate_observations", {"threshold": 0.95}),
        ("nobody", "find_duplicate_observations", {"entityName": "Nobody"}),
        ("bad", "find_duplicate_observations", {"threshold": 2}),
    ]


def check(outcomes: dict[str, dict], path: Path) -> None:
    o = outcomes
    assert [c["entityName"] for c in o["candidates"]["structured"]["candidates"]] == ["Big"]
    assert o["candidates lower"]["structured"]["total"] == 0
    assert o["candidates lower"]["structured"]["thresholds"]["Hobby"] == 30
    analysis = o["analysis"]["structured"]
    assert analysis["needsSplit"] and analysis["method"] == "tfidf" and analysis["observationCount"] == 24
    assert sum(t["size"] for t in analysis["topics"]) == 23 and analysis["stayingObservations"] == GARDEN[:1]
    assert analysis["suggested"] is (analysis["quality"] >= 0.4)
    proposal = o["proposal"]["structured"]
    assert len(proposal["relationsToCreate"]) == 2 * len(proposal["parts"]) >= 4
    assert o["split taken"]["error"] and "exists" in o["split taken"]["text"]
    assert o["split foreign"]["error"] and "no live observation" in o["split foreign"]["text"]
    done = o["split"]["structured"]
    assert done["created"] == ["Big - garden", "Big - sky"] and done["movedObservations"] == 16
    assert done["movedRelations"] == 1 and done["relationsCreated"][0]["relationType"] == "contiene"
    assert not o["first"]["error"] and o["first"]["structured"]["entitiesCreated"] == 2
    assert o["first"]["structured"]["relationsCreated"] == 2 and o["first"]["structured"]["path"] == str(path.resolve())
    assert not o["again"]["error"] and o["again"]["structured"]["addedNothing"]
    assert o["etc"]["error"] and "outside" in o["etc"]["text"]
    assert o["relative"]["error"] and "absolute" in o["relative"]["text"]
    assert o["missing"]["error"] and "no such file" in o["missing"]["text"]
    [alice] = o["filtered"]["structured"]["entities"]
    assert alice["observations"] == ["drinks green tea"] and alice["supersededObservations"] == []
    [alice] = o["history"]["structured"]["entities"]
    assert alice["observations"] == ["works at Acme", "drinks green tea"]
    assert alice["supersededObservations"] == ["likes tea"]
    assert o["plain"]["structured"]["entities"][0] == {"name": "Alice", "entityType": "person",
                                                       "observations": ["works at Acme", "drinks green tea"]}
    reflection = o["reflect"]["structured"]
    assert (reflection["entityName"], reflection["author"], reflection["mood"]) == ("Alice", "sofia", "insight")
    assert o["reflect relation"]["structured"]["relation"] == {"from": "Alice", "to": "Acme", "relationType": "works_at"}
    assert not o["reflect global"]["error"] and o["reflect global"]["structured"]["targetType"] == "global"
    for label in ("reflect nobody", "reflect session", "reflect global target", "search empty"):
        assert o[label]["error"], label
    assert o["search"]["structured"]["results"][0]["content"] == "Alice switched from black tea to green tea"
    assert [r["author"] for r in o["search nolan"]["structured"]["results"]] == ["nolan"]
    alice, acme = o["with reflections"]["structured"]["entities"]
    assert [r["content"][:5] for r in alice["reflections"]] == ["Alice", "Acme "]
    assert [r["targetType"] for r in acme["reflections"]] == ["relation"]
    detail = o["detail"]["structured"]
    assert [r["targetType"] for r in detail["reflections"]] == ["entity", "relation"]
    assert detail["inverseRelations"] == [
        {"from": "Alice", "to": "Acme", "relationType": "part_of", "inverseOf": "contains", "active": True}]
    report = o["report"]["structured"]
    assert [s["kind"] for s in report["sections"]][-5:] == ["duplicate", "duplicate_entity", "split", "orphan",
                                                            "placeholder"]
    assert report["totals"]["split"] == 0 and o["report bad"]["error"]
    assert not o["found"]["error"] and o["found"]["structured"]["threshold"] == 0.95
    assert o["nobody"]["error"] and "Nobody" in o["nobody"]["text"]
    assert o["bad"]["error"] and "threshold" in o["bad"]["text"]


async def run(client, calls) -> dict[str, dict]:
    return {label: outcome(await client.call_tool(tool, arguments)) for label, tool, arguments in calls}


def test_in_process(service):
    path = memory_file()
    with portal_client(build_server(service)) as (portal, client):
        check({label: outcome(portal.call(client.call_tool, t, a)) for label, t, a in script(path)}, path)


def test_over_stdio(tmp_path, memory_address, limbic_home):
    path = memory_file()

    params = limbic_params(memory_address, limbic_home, tools="all")

    async def scenario():
        async with stdio_client(params, tmp_path / "stderr.txt") as client:
            return await run(client, script(path))

    check(anyio.run(scenario), path)


def test_over_http(service):
    path = memory_file()
    server = HttpMcpServer(service)
    server.start()
    try:
        async def scenario():
            async with http_client(server.url, server.token) as client:
                return await run(client, script(path))

        check(anyio.run(scenario), path)
    finally:
        server.stop()


def test_migrate_refuses_paths_outside_the_allowed_folders(tmp_path, limbic_home):
    outside = tmp_path / "memory.jsonl"
    outside.write_text(MEMORY_FILE, encoding="utf-8")
    assert not any(outside.resolve().is_relative_to(folder) for folder in allowed_folders())
    with pytest.raises(Exception, match="outside"):
        checked_path(str(outside))
    link = data_dir() / "link.jsonl"  # a link inside the data folder to a file outside is still outside
    os.symlink(outside, link)
    with pytest.raises(Exception, match="outside"):
        checked_path(str(link))
    with pytest.raises(Exception, match="regular file"):
        checked_path(str(data_dir()))
    assert checked_path(str(memory_file())) == memory_file().resolve()


# --- hostile input ---------------------------------------------------------------------------------

TEXT = st.one_of(st.text(max_size=30), st.sampled_from(["", " ", "Alice", "/etc/passwd", "~/../../etc/shadow",
                                                          "\x00", "x" * 5000, '"', "*", "Alice OR Bob"]))
WRONG = st.one_of(st.integers(min_value=-2**40, max_value=2**40), st.floats(), st.none(), st.booleans(),
                  st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
VALUE = st.one_of(TEXT, WRONG)
CALLS = st.one_of(
    st.tuples(st.just("find_duplicate_observations"),
              st.fixed_dictionaries({}, optional={"entityName": VALUE, "threshold": VALUE, "limit": VALUE})),
    st.tuples(st.just("migrate"), st.fixed_dictionaries({"path": VALUE})),
    st.tuples(st.just("open_nodes"), st.fixed_dictionaries(
        {"names": st.one_of(st.lists(TEXT, max_size=3), VALUE)},
        optional={"kinds": st.one_of(st.lists(TEXT, max_size=3), VALUE), "includeSuperseded": VALUE})),
    st.tuples(st.just("get_entity"), st.fixed_dictionaries({"name": VALUE})),
    st.tuples(st.just("add_reflection"), st.fixed_dictionaries(
        {"targetType": st.one_of(st.sampled_from(["entity", "relation", "global"]), VALUE), "author": VALUE,
         "content": VALUE}, optional={"target": st.one_of(VALUE, st.fixed_dictionaries(
             {"from": TEXT, "to": TEXT, "relationType": TEXT})), "mood": VALUE})),
    st.tuples(st.sampled_from(["find_split_candidates", "find_split_candidates_tool"]), st.fixed_dictionaries(
        {}, optional={"limit": VALUE, "thresholds": st.one_of(VALUE, st.dictionaries(TEXT, VALUE, max_size=2))})),
    st.tuples(st.sampled_from(["analyze_entity_split", "propose_entity_split", "propose_entity_split_tool"]),
              st.fixed_dictionaries({"entityName": VALUE}, optional={"method": VALUE})),
    st.tuples(st.sampled_from(["execute_entity_split", "execute_entity_split_tool"]), st.fixed_dictionaries(
        {"entityName": VALUE, "parts": st.one_of(VALUE, st.lists(st.fixed_dictionaries(
            {"name": TEXT, "observations": st.one_of(st.lists(TEXT, max_size=2), VALUE)},
            optional={"entityType": VALUE, "relations": VALUE}), max_size=2))},
        optional={"relationNames": VALUE})),
    st.tuples(st.just("consolidation_report"), st.fixed_dictionaries(
        {}, optional={"kinds": st.one_of(VALUE, st.lists(st.one_of(TEXT, st.sampled_from(["split", "orphan"])),
                                                         max_size=3)), "limit": VALUE})),
    st.tuples(st.just("search_reflections"), st.fixed_dictionaries(
        {"query": VALUE}, optional={"author": VALUE, "mood": VALUE, "targetType": VALUE, "limit": VALUE})),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(call=CALLS)
def test_hostile_calls_are_refused_cleanly_and_write_nothing(served, call):
    service, portal, client = served
    tool, arguments = call
    graph = service.entities.read_graph(include_ended=True)
    before = service.history.last_change_id(), graph_out(graph.entities, graph.relations)
    result = portal.call(client.call_tool, tool, arguments)
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert text.strip() != f"Error executing tool {tool}", f"{tool} crashed on {arguments!r}"
    assert "Traceback" not in text and "sqlite" not in text.lower() and "psycopg" not in text.lower()
    if result.is_error:
        graph = service.entities.read_graph(include_ended=True)
        assert (service.history.last_change_id(), graph_out(graph.entities, graph.relations)) == before
