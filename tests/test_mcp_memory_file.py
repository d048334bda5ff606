"""``MEMORY_FILE_PATH`` names where the memory lives (``limbic mcp`` over stdio, real subprocesses): the
JSONL found there is imported once with a note on stderr, and two processes given the same path share
one memory."""

from __future__ import annotations

import json

import anyio
from _mcp_helpers import LIMBIC, outcome, stdio_client
from mcp.client.stdio import StdioServerParameters

# A memory file as the reference server writes it (one JSON object per line, no trailing newline).
REFERENCE_LINES = [
    {"type": "entity", "name": "Alice", "entityType": "person", "observations": ["likes tea"]},
    {"type": "entity", "name": "Acme", "entityType": "company", "observations": []},
    {"type": "relation", "from": "Alice", "to": "Acme", "relationType": "works_at"},
]


def params(memory_file, home) -> StdioServerParameters:
    return StdioServerParameters(command=LIMBIC, args=["mcp"],
                                 env={"LIMBIC_HOME": str(home), "MEMORY_FILE_PATH": str(memory_file)})


def test_memory_file_is_adopted_once_and_shared_by_two_processes(tmp_path, limbic_home):
    memory = tmp_path / "memory.jsonl"
    memory.write_text("\n".join(json.dumps(line) for line in REFERENCE_LINES), encoding="utf-8")

    async def scenario():
        async with stdio_client(params(memory, limbic_home), tmp_path / "first.txt") as first, \
                stdio_client(params(memory, limbic_home), tmp_path / "second.txt") as second:
            before = outcome(await second.call_tool("read_graph", {}))["structured"]
            await first.call_tool("add_observations", {"observations": [
                {"entityName": "Acme", "contents": ["makes widgets"]}]})
            after = outcome(await second.call_tool("open_nodes", {"names": ["Acme"]}))["structured"]
            return before, after

    before, after = anyio.run(scenario)
    assert before == {"entities": [{"name": "Alice", "entityType": "person", "observations": ["likes tea"]},
                                   {"name": "Acme", "entityType": "company", "observations": []}],
                      "relations": [{"from": "Alice", "to": "Acme", "relationType": "works_at"}]}
    assert after["entities"][0]["observations"] == ["makes widgets"]
    assert (tmp_path / "memory.limbic.db").is_file()
    notes = [(tmp_path / name).read_text(encoding="utf-8") for name in ("first.txt", "second.txt")]
    assert sum(f"imported {memory} once" in note for note in notes) == 1

    async def restart():
        async with stdio_client(params(memory, limbic_home), tmp_path / "third.txt") as third:
            return outcome(await third.call_tool("read_graph", {}))["structured"]

    graph = anyio.run(restart)
    assert [e["name"] for e in graph["entities"]] == ["Alice", "Acme"] and len(graph["relations"]) == 1
    assert "imported" not in (tmp_path / "third.txt").read_text(encoding="utf-8")
