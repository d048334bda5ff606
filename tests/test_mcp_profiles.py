"""Tool profiles (docs/mcp.md "Tool profiles"): each profile lists exactly its tools, each once, within its byte
budget as ``tools/list`` sends it; a tool outside the profile is refused with the profile that has it; the
``reference`` profile publishes the reference server's own definitions; a named token may carry its own profile;
the ``initialize`` answer carries the usage instructions."""

from __future__ import annotations

import json

import anyio
import pytest
from _mcp_helpers import http_client, outcome, portal_client

from limbic.core.cli.main import main
from limbic.core.embedding.base import HashingEmbedder
from limbic.core.errors import ValidationError
from limbic.core.mcp.http import HttpMcpServer
from limbic.core.mcp.profiles import PROFILES, TOOLS, listed_bytes, profile
from limbic.core.mcp.reference_defs import REFERENCE_DEFINITIONS
from limbic.core.mcp.server import build_server, instructions
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

REFERENCE_NINE = list(REFERENCE_DEFINITIONS)
AGENT = [*REFERENCE_NINE, "search_semantic", "mark_used", "resolve_conflict"]
ALIASES = [name for name in TOOLS if name.endswith("_tool")]
BUDGET = {"agent": 9_000, "all": 25_000}
"""Bytes of descriptions + input schemas (compact JSON) a profile may cost an agent's context."""


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    service = MemoryService(open_database(tmp_path_factory.mktemp("profiles") / "memory.db"), HashingEmbedder(),
                            origin="cli")
    yield service
    service.close()


def listed(service: MemoryService, tools: str) -> dict:
    with portal_client(build_server(service, tools=tools)) as (portal, client):
        return {t.name: t for t in portal.call(client.list_tools).tools}


@pytest.fixture(scope="module")
def lists(memory) -> dict[str, dict]:
    return {name: listed(memory, name) for name in PROFILES}


def test_each_profile_lists_exactly_its_tools_each_once(lists):
    assert list(lists["agent"]) == AGENT
    assert list(lists["reference"]) == REFERENCE_NINE
    assert set(lists["all"]) == set(TOOLS) - set(ALIASES)
    assert set(AGENT) < set(lists["curation"]) < set(lists["all"])
    assert {"get_entity", "merge_entities", "consolidation_report", "find_duplicate_observations",
            "execute_entity_split", "set_status"} <= set(lists["curation"])
    assert set(ALIASES) <= set(lists["seed"]) and not {a.removesuffix("_tool") for a in ALIASES} & set(lists["seed"])
    for name, tools in lists.items():
        assert len(tools) == len(set(tools)), name
        if name != "seed":
            assert not set(ALIASES) & set(tools), f"{name} lists an alias"
        descriptions = [t.description for t in tools.values()]
        assert len(descriptions) == len(set(descriptions)), f"{name} lists a tool twice under two names"


def test_profiles_cost_at_most_their_budget(lists):
    cost = {name: sum(listed_bytes(t.description, t.input_schema) for t in tools.values())
            for name, tools in lists.items()}
    assert cost["agent"] <= BUDGET["agent"] and cost["all"] <= BUDGET["all"], cost
    assert cost["reference"] == sum(len(d.encode()) + len(json.dumps(s, separators=(",", ":")))
                                    for _, d, s in REFERENCE_DEFINITIONS.values())


def test_the_reference_profile_publishes_the_reference_definitions(lists):
    for name, (title, description, schema) in REFERENCE_DEFINITIONS.items():
        tool = lists["reference"][name]
        assert (tool.title, tool.description, tool.input_schema) == (title, description, schema)
        assert lists["agent"][name].input_schema["additionalProperties"] is False  # ours elsewhere


def test_a_tool_outside_the_profile_is_refused_naming_the_profile_that_has_it(memory):
    with portal_client(build_server(memory, tools="agent")) as (portal, client):
        refused = outcome(portal.call(client.call_tool, "merge_entities", {"sourceNames": ["a"], "targetName": "b"}))
        assert refused["error"]
        assert refused["text"] == ("tool 'merge_entities' is not enabled in profile agent; start the server with "
                                   "--tools curation (or a token with that profile: limbic mcp token add NAME "
                                   "--tools …)")
        alias = outcome(portal.call(client.call_tool, "find_split_candidates_tool", {}))
        assert alias["error"] and "--tools seed" in alias["text"]
        unknown = outcome(portal.call(client.call_tool, "no_such_tool", {}))
        assert unknown["error"] and "not enabled" not in unknown["text"]
        assert not outcome(portal.call(client.call_tool, "read_graph", {}))["error"]
    with portal_client(build_server(memory, tools="seed")) as (portal, client):  # the seed system's name answers
        found = outcome(portal.call(client.call_tool, "find_split_candidates_tool", {"limit": 5}))
        assert not found["error"] and found["structured"]["total"] == 0
        assert "--tools curation" in outcome(portal.call(client.call_tool, "find_split_candidates", {}))["text"]


def test_a_comma_list_of_tool_names_is_a_profile(memory):
    chosen = profile(" open_nodes, search_semantic ,open_nodes")
    assert chosen.tools == ("open_nodes", "search_semantic") and not chosen.named
    assert list(listed(memory, "search_semantic,open_nodes")) == ["open_nodes", "search_semantic"]
    with portal_client(build_server(memory, tools="open_nodes")) as (portal, client):
        text = outcome(portal.call(client.call_tool, "read_graph", {}))["text"]
        assert "not enabled in this server's tool list; start the server with --tools agent" in text
    assert profile("CURATION").name == "curation" and profile(None).name == profile("").name == "agent"
    for bad in ("agnet", "open_nodes,nope", ","):
        with pytest.raises(ValidationError, match="--tools takes a profile"):
            profile(bad)


def test_initialize_carries_the_usage_instructions(memory):
    with portal_client(build_server(memory, project="harbor")) as (_portal, client):
        text = client.instructions
    assert text == instructions("harbor") and len(text.encode()) <= 1024
    for needle in ("search_semantic", "open_nodes", "mark_used", "add_observations", "conflicts",
                   "resolve_conflict", "'harbor'"):
        assert needle in text, needle
    assert "No project" in instructions(None) and len(instructions(None).encode()) <= 1024
    with portal_client(build_server(memory, tools="reference")) as (_portal, client):
        plain = client.instructions  # names only the tools the profile lists
    assert "search_nodes" in plain
    assert "search_semantic" not in plain and "mark_used" not in plain and "resolve_conflict" not in plain


def test_a_named_token_is_served_its_own_profile(service):
    curator = service.projects.add_token("curator", tools="curation")
    plain = service.projects.add_token("plain")
    assert (service.projects.token_tools("curator"), service.projects.token_tools("plain")) == ("curation", None)
    with HttpMcpServer(service, tools="agent") as server:
        async def names(token):
            async with http_client(server.url, token) as client:
                return [t.name for t in (await client.list_tools()).tools], \
                    outcome(await client.call_tool("get_entity", {"name": "nobody"}))["text"]

        async def scenario():
            return await names(curator), await names(plain), await names(server.token)

        (curated, curated_call), (agent, agent_call), (local, _) = anyio.run(scenario)
    assert "get_entity" in curated and "not enabled" not in curated_call
    assert agent == local == AGENT and "not enabled in profile agent" in agent_call


def test_cli_lists_a_profile_with_bytes_and_tokens_and_config_carries_it(capsys):
    assert main(["mcp", "--tools", "agent", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["tool", "bytes", "~tokens"] and len(lines) == len(AGENT) + 2
    assert lines[-1].startswith(f"{len(AGENT)} tools (agent)")
    total = int(lines[-1].split()[-2].replace(",", ""))
    assert total == sum(int(line.split()[1].replace(",", "")) for line in lines[1:-1]) <= BUDGET["agent"]
    assert main(["mcp", "--tools", "nope", "--list"]) == 2
    assert "unknown tool nope" in capsys.readouterr().err
    assert main(["mcp", "config", "--client", "cursor"]) == 0
    entry = json.loads(capsys.readouterr().out)["mcpServers"]["limbic"]
    assert entry["args"][-3:] == ["mcp", "--tools", "agent"]
    assert main(["mcp", "config", "--client", "claude-code", "--tools", "curation"]) == 0
    assert capsys.readouterr().out.strip().endswith("mcp --tools curation")


def test_cli_token_add_takes_a_profile(tmp_path, capsys):
    db = str(tmp_path / "tokens.db")
    assert main(["--db", db, "mcp", "token", "add", "curator", "--tools", "curation"]) == 0
    assert "the tools of curation" in capsys.readouterr().err
    assert main(["--db", db, "mcp", "token", "add", "bad", "--tools", "nope"]) == 2
    assert main(["--db", db, "mcp", "token", "list", "--json"]) == 0
    assert [(t["name"], t["tools"]) for t in json.loads(capsys.readouterr().out)] == [("curator", "curation")]
