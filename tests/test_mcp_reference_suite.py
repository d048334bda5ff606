"""The reference server's own test cases (``src/memory/__tests__/knowledge-graph.test.ts`` of
modelcontextprotocol/servers), ported as a black-box test over stdio and run against both servers.

Each case starts from an empty memory (the previous case's entities are deleted through the tools), runs
its calls, and every call's outcome must be identical on both servers: the error flag, the structured
content, and the text **byte for byte**. The file-persistence cases become a restart of each server on
the same store. Not ported: the checks of the JSONL file's own lines (Limbic keeps the memory in SQLite or PostgreSQL;
``MEMORY_FILE_PATH`` is covered by ``test_mcp_memory_file.py``). The one deliberate difference (docs/mcp.md)
(relations to missing entities are refused) does not occur in these cases. Limbic runs with the ``agent`` (default)
and the ``reference`` tool profiles.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _backends import BACKENDS, address_on
from _mcp_helpers import (
    ReferenceUnavailable,
    limbic_params,
    reference_params,
    reference_server_script,
    stdio_client,
)

pytestmark = pytest.mark.npm

Call = tuple[str, dict[str, Any]]


def entities(*items: tuple[str, str, list[str]]) -> Call:
    return ("create_entities", {"entities": [{"name": n, "entityType": t, "observations": o} for n, t, o in items]})


def relations(*items: tuple[str, str, str]) -> Call:
    return ("create_relations", {"relations": [{"from": f, "to": t, "relationType": r} for f, t, r in items]})


READ: Call = ("read_graph", {})
SEARCH_SETUP = [entities(("Alice", "person", ["works at Acme Corp", "likes programming"]),
                         ("Bob", "person", ["works at TechCo"]), ("Acme Corp", "company", ["tech company"])),
                relations(("Alice", "Acme Corp", "works_at"), ("Bob", "Acme Corp", "competitor"))]
OPEN_SETUP = [entities(("Alice", "person", []), ("Bob", "person", []), ("Charlie", "person", [])),
              relations(("Alice", "Bob", "knows"), ("Bob", "Charlie", "knows"))]
ALICE_BOB = entities(("Alice", "person", []), ("Bob", "person", []))

CASES: dict[str, list[Call]] = {
    "createEntities: should create new entities": [
        entities(("Alice", "person", ["works at Acme Corp"]), ("Bob", "person", ["likes programming"])), READ],
    "createEntities: should not create duplicate entities": [
        entities(("Alice", "person", ["works at Acme Corp"])), entities(("Alice", "person", ["works at Acme Corp"])),
        READ],
    "createEntities: should handle empty entity arrays": [("create_entities", {"entities": []})],
    "createRelations: should create new relations": [ALICE_BOB, relations(("Alice", "Bob", "knows")), READ],
    "createRelations: should not create duplicate relations": [
        ALICE_BOB, relations(("Alice", "Bob", "knows")), relations(("Alice", "Bob", "knows")), READ],
    "createRelations: should handle empty relation arrays": [("create_relations", {"relations": []})],
    "addObservations: should add observations to existing entities": [
        entities(("Alice", "person", ["works at Acme Corp"])),
        ("add_observations", {"observations": [{"entityName": "Alice", "contents": ["likes coffee", "has a dog"]}]}),
        READ],
    "addObservations: should not add duplicate observations": [
        entities(("Alice", "person", ["works at Acme Corp"])),
        ("add_observations", {"observations": [{"entityName": "Alice", "contents": ["likes coffee"]}]}),
        ("add_observations", {"observations": [{"entityName": "Alice", "contents": ["likes coffee", "has a dog"]}]}),
        READ],
    "addObservations: should throw error for non-existent entity": [
        ("add_observations", {"observations": [{"entityName": "NonExistent", "contents": ["some observation"]}]})],
    "deleteEntities: should delete entities": [
        ALICE_BOB, ("delete_entities", {"entityNames": ["Alice"]}), READ],
    "deleteEntities: should cascade delete relations when deleting entities": [
        *OPEN_SETUP, ("delete_entities", {"entityNames": ["Bob"]}), READ],
    "deleteEntities: should handle deleting non-existent entities": [
        ("delete_entities", {"entityNames": ["NonExistent"]}), READ],
    "deleteObservations: should delete observations from entities": [
        entities(("Alice", "person", ["works at Acme Corp", "likes coffee"])),
        ("delete_observations", {"deletions": [{"entityName": "Alice", "observations": ["likes coffee"]}]}), READ],
    "deleteObservations: should handle deleting from non-existent entities": [
        ("delete_observations", {"deletions": [{"entityName": "NonExistent", "observations": ["some observation"]}]})],
    "deleteRelations: should delete specific relations": [
        ALICE_BOB, relations(("Alice", "Bob", "knows"), ("Alice", "Bob", "works_with")),
        ("delete_relations", {"relations": [{"from": "Alice", "to": "Bob", "relationType": "knows"}]}), READ],
    "readGraph: should return empty graph when file does not exist": [READ],
    "readGraph: should return complete graph with entities and relations": [
        entities(("Alice", "person", ["works at Acme Corp"])), relations(("Alice", "Alice", "self")), READ],
    **{f"searchNodes: {title}": [*SEARCH_SETUP, ("search_nodes", {"query": query})] for title, query in (
        ("should search by entity name", "Alice"), ("should search by entity type", "company"),
        ("should search by observation content", "programming"), ("should be case insensitive", "ALICE"),
        ("should include relations where at least one endpoint matches", "Acme"),
        ("should include outgoing relations to unmatched entities", "Alice"),
        ("should return empty graph for no matches", "NonExistent"))},
    **{f"openNodes: {title}": [*OPEN_SETUP, ("open_nodes", {"names": names})] for title, names in (
        ("should open specific nodes by name", ["Alice", "Bob"]),
        ("should include all relations connected to opened nodes", ["Alice", "Bob"]),
        ("should include relations connected to opened nodes", ["Bob"]),
        ("should include outgoing relations to nodes not in the open set", ["Alice"]),
        ("should include incoming relations from nodes not in the open set", ["Charlie"]),
        ("should handle opening non-existent nodes", ["NonExistent"]),
        ("should handle empty node list", []))},
}
# file persistence: written by one server process, read back (search, open) by the next one on the same store
PERSISTED = [entities(("Alice", "person", ["persistent data", "works at Acme"]), ("Bob", "person", [])),
             relations(("Alice", "Bob", "knows"), ("Alice", "Alice", "self"))]
REREAD = [READ, ("search_nodes", {"query": "Alice"}), ("open_nodes", {"names": ["Alice", "Bob"]})]


@pytest.fixture(scope="module")
def reference_script():
    try:
        return reference_server_script()
    except ReferenceUnavailable as exc:
        pytest.skip(f"reference server not installable, npm unreachable: {exc}")


async def _outcome(client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    return {"error": bool(result.is_error), "structured": result.structured_content,
            "text": [c.text for c in result.content]}


async def _run(params, errlog) -> dict[str, Any]:
    outcomes: dict[str, list[dict[str, Any]]] = {}
    async with stdio_client(params, errlog) as client:
        for title, calls in CASES.items():
            outcomes[title] = [await _outcome(client, tool, arguments) for tool, arguments in calls]
            names = [e["name"] for e in (await client.call_tool("read_graph", {})).structured_content["entities"]]
            await client.call_tool("delete_entities", {"entityNames": names})
        written = [await _outcome(client, tool, arguments) for tool, arguments in PERSISTED]
    async with stdio_client(params, errlog) as client:
        reread = [await _outcome(client, tool, arguments) for tool, arguments in REREAD]
    return {"cases": outcomes, "persisted": written + reread}


@pytest.fixture(scope="module", params=[(b, p) for b in BACKENDS for p in ("agent", "reference")],
                ids=lambda param: "-".join(param))
def limbic_memory(request, tmp_path_factory):
    """The memory ``limbic mcp`` serves, on each backend, and the tool profile it serves."""
    backend, tools = request.param
    for address in address_on(backend, tmp_path_factory.mktemp("reference_suite_memory") / "limbic.db"):
        yield address, tools


@pytest.fixture(scope="module")
def runs(reference_script, limbic_memory, tmp_path_factory):
    folder = tmp_path_factory.mktemp("reference_suite")
    home = tmp_path_factory.mktemp("reference_suite_home")
    found: dict[str, dict[str, Any]] = {}

    async def both():
        async def run(key, params):
            found[key] = await _run(params, folder / f"{key}.stderr")

        async with anyio.create_task_group() as group:
            group.start_soon(run, "reference", reference_params(folder / "memory.jsonl"))
            group.start_soon(run, "limbic", limbic_params(limbic_memory[0], home, tools=limbic_memory[1]))

    anyio.run(both)
    return found


@pytest.mark.parametrize("title", list(CASES))
def test_reference_case_gives_byte_identical_results(runs, title):
    theirs, ours = runs["reference"]["cases"][title], runs["limbic"]["cases"][title]
    for (tool, _), reference, limbic in zip(CASES[title], theirs, ours, strict=True):
        assert limbic["error"] == reference["error"], f"{tool}: reference {reference}, limbic {limbic}"
        if reference["error"]:
            assert "NonExistent" in limbic["text"][0]
            continue
        assert limbic["structured"] == reference["structured"], tool
        assert [t.encode("utf-8") for t in limbic["text"]] == [t.encode("utf-8") for t in reference["text"]], tool


def test_the_ported_cases_check_something(runs):
    cases = runs["reference"]["cases"]
    assert cases["openNodes: should include incoming relations from nodes not in the open set"][-1]["structured"] == {
        "entities": [{"name": "Charlie", "entityType": "person", "observations": []}],
        "relations": [{"from": "Bob", "to": "Charlie", "relationType": "knows"}]}
    assert cases["addObservations: should throw error for non-existent entity"][0]["error"]
    assert cases["createEntities: should handle empty entity arrays"][0]["text"] == ["[]"]


def test_data_persists_across_server_restarts_identically(runs):
    theirs, ours = runs["reference"]["persisted"], runs["limbic"]["persisted"]
    assert ours == theirs
    assert [e["name"] for e in ours[-1]["structured"]["entities"]] == ["Alice", "Bob"]
