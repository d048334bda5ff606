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

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.io.migrate import allowed_folders, checked_path
from limbic.core.mcp.http import HttpMcpServer
from limbic.core.mcp.schemas import graph_out
from limbic.core.mcp.server import build_server
from limbic.core.paths import data_dir
from limbic.core.service import MemoryService
from limbic.core.store.database import Database

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


def script(path: Path) -> list[tuple[str, dict]]:
    """The curation calls every transport answers: happy paths and refusals."""
    return [
        ("migrate", {"path": str(path)}),
        ("migrate", {"path": str(path)}),
        ("migrate", {"path": "/etc/passwd"}),
        ("migrate", {"path": "relative/file.jsonl"}),
        ("migrate", {"path": str(path.parent / "missing.jsonl")}),
        ("add_observations", {"observations": [{"entityName": "Alice", "contents": ["drinks green tea"],
                                                "kind": "preference", "supersedes": "likes tea"}]}),
        ("open_nodes", {"names": ["Alice"], "kinds": ["Preference"], "includeSuperseded": True}),
        ("open_nodes", {"names": ["Alice"], "includeSuperseded": True}),
        ("open_nodes", {"names": ["Alice"]}),
        ("get_entity", {"name": "Alice"}),
        ("find_duplicate_observations", {"threshold": 0.95}),
        ("find_duplicate_observations", {"entityName": "Nobody"}),
        ("find_duplicate_observations", {"threshold": 2}),
    ]


def check(outcomes: list[dict], path: Path) -> None:
    first, again, etc, relative, missing, _, filtered, history, plain, detail, found, nobody, bad = outcomes
    assert not first["error"] and first["structured"]["entitiesCreated"] == 2
    assert first["structured"]["relationsCreated"] == 2 and first["structured"]["path"] == str(path.resolve())
    assert not again["error"] and again["structured"]["addedNothing"]
    assert etc["error"] and "outside" in etc["text"]
    assert relative["error"] and "absolute" in relative["text"]
    assert missing["error"] and "no such file" in missing["text"]
    [alice] = filtered["structured"]["entities"]
    assert alice["observations"] == ["drinks green tea"] and alice["supersededObservations"] == []
    [alice] = history["structured"]["entities"]
    assert alice["observations"] == ["works at Acme", "drinks green tea"]
    assert alice["supersededObservations"] == ["likes tea"]
    assert plain["structured"]["entities"][0] == {"name": "Alice", "entityType": "person",
                                                  "observations": ["works at Acme", "drinks green tea"]}
    assert detail["structured"]["inverseRelations"] == [
        {"from": "Alice", "to": "Acme", "relationType": "part_of", "inverseOf": "contains", "active": True}]
    assert not found["error"] and found["structured"]["threshold"] == 0.95
    assert nobody["error"] and "Nobody" in nobody["text"]
    assert bad["error"] and "threshold" in bad["text"]


async def run(client, calls) -> list[dict]:
    return [outcome(await client.call_tool(tool, arguments)) for tool, arguments in calls]


def test_in_process(service):
    path = memory_file()
    with portal_client(build_server(service)) as (portal, client):
        check([outcome(portal.call(client.call_tool, t, a)) for t, a in script(path)], path)


def test_over_stdio(tmp_path, limbic_home):
    path = memory_file()

    params = limbic_params(tmp_path / "stdio.db", limbic_home)

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
)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    service = MemoryService(Database(tmp_path_factory.mktemp("hostile") / "memory.db"), HashingEmbedder())
    with portal_client(build_server(service)) as (portal, client):
        yield service, portal, client
    service.close()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(call=CALLS)
def test_hostile_calls_are_refused_cleanly_and_write_nothing(served, call):
    service, portal, client = served
    tool, arguments = call
    graph = service.read_graph(include_ended=True)
    before = service.last_change_id(), graph_out(graph.entities, graph.relations)
    result = portal.call(client.call_tool, tool, arguments)
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert text.strip() != f"Error executing tool {tool}", f"{tool} crashed on {arguments!r}"
    assert "Traceback" not in text and "sqlite" not in text.lower()
    if result.is_error:
        graph = service.read_graph(include_ended=True)
        assert (service.last_change_id(), graph_out(graph.entities, graph.relations)) == before
