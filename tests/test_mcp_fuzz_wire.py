"""Fuzz of every tool over stdio (a real ``limbic mcp`` subprocess, raw JSON-RPC lines) with text that
holds lone surrogates, control characters, right-to-left text and combining marks: every request gets
exactly one reply with its id, and a refused call (a JSON-RPC error or an ``isError`` result) changes
nothing in the memory.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import threading
from typing import Any

import pytest
from _mcp_helpers import LIMBIC
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

INITIALIZE_PARAMS = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}
REPLY_TIMEOUT = 60.0

PIECES = st.one_of(
    st.characters(categories=["Cs"]),                                    # lone surrogates
    st.characters(max_codepoint=0x1F),                                   # control characters
    st.sampled_from(["\u202e", "\u202b", "\u200f", "\u05d0\u05d1\u05d2", "\u0627\u0644\u0639"]),  # RTL
    st.characters(categories=["Mn"]),                                    # combining marks
    st.sampled_from(["Alice", "Bob", " ", "tea", "e\u0301", "\ufeff"]),
)
TEXT = st.lists(PIECES, max_size=6).map("".join)
NAME = st.one_of(st.sampled_from(["Alice", "Bob"]), TEXT)
TEXTS = st.lists(TEXT, max_size=3)
RELATION = st.fixed_dictionaries({"from": NAME, "to": NAME, "relationType": TEXT})

CALLS = st.one_of(
    st.tuples(st.just("create_entities"), st.fixed_dictionaries({"entities": st.lists(st.fixed_dictionaries(
        {"name": NAME, "entityType": TEXT, "observations": TEXTS}), max_size=2)})),
    st.tuples(st.just("create_relations"), st.fixed_dictionaries({"relations": st.lists(RELATION, max_size=2)})),
    st.tuples(st.just("add_observations"), st.fixed_dictionaries({"observations": st.lists(st.fixed_dictionaries(
        {"entityName": NAME, "contents": TEXTS}), max_size=2)})),
    st.tuples(st.just("delete_entities"), st.fixed_dictionaries({"entityNames": st.lists(TEXT, max_size=2)})),
    st.tuples(st.just("delete_observations"), st.fixed_dictionaries({"deletions": st.lists(st.fixed_dictionaries(
        {"entityName": NAME, "observations": TEXTS}), max_size=2)})),
    st.tuples(st.just("delete_relations"), st.fixed_dictionaries({"relations": st.lists(RELATION, max_size=2)})),
    st.tuples(st.just("read_graph"), st.fixed_dictionaries({}, optional={"mode": TEXT})),
    st.tuples(st.just("search_nodes"), st.fixed_dictionaries({"query": TEXT})),
    st.tuples(st.just("open_nodes"), st.fixed_dictionaries({"names": st.lists(NAME, max_size=2)})),
    st.tuples(st.just("search_semantic"), st.fixed_dictionaries({"query": TEXT})),
    st.tuples(st.just("rename_entity"), st.fixed_dictionaries({"oldName": TEXT, "newName": TEXT})),
    st.tuples(st.just("merge_entities"), st.fixed_dictionaries({"sourceNames": st.lists(TEXT, max_size=2),
                                                                "targetName": NAME})),
    st.tuples(st.just("set_status"), st.fixed_dictionaries({"entityNames": st.lists(TEXT, max_size=2),
                                                            "status": TEXT})),
    st.tuples(st.just("end_relation"), st.fixed_dictionaries({"relation": RELATION})),
    st.tuples(st.just("get_entity"), st.fixed_dictionaries({"name": TEXT})),
)


class StdioServer:
    """``limbic mcp`` in a subprocess, spoken to in raw JSON-RPC lines (``json.dumps`` escapes surrogates)."""

    def __init__(self, db, home) -> None:
        env = os.environ | {"LIMBIC_HOME": str(home)}
        self.process = subprocess.Popen([LIMBIC, "--db", str(db), "mcp", "--tools", "all"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self.ids = itertools.count(1)
        threading.Thread(target=self._read, daemon=True).start()
        assert "result" in self.request("initialize", INITIALIZE_PARAMS)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.strip():
                self.replies.put(json.loads(line))

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode("ascii") + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its one reply; fails on a timeout or a reply to another id."""
        request_id = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        reply = self.replies.get(timeout=REPLY_TIMEOUT)
        assert reply.get("id") == request_id, reply
        return reply

    def graph(self) -> dict[str, Any]:
        return self.request("tools/call", {"name": "read_graph", "arguments": {}})["result"]["structuredContent"]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz_wire")
    running = StdioServer(folder / "memory.db", folder)
    running.request("tools/call", {"name": "create_entities", "arguments": {"entities": [
        {"name": "Alice", "entityType": "person", "observations": ["likes tea"]},
        {"name": "Bob", "entityType": "person", "observations": []}]}})
    yield running
    running.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(call=CALLS)
def test_every_request_gets_one_reply_and_a_refusal_writes_nothing(server, call):
    tool, arguments = call
    before = server.graph()
    reply = server.request("tools/call", {"name": tool, "arguments": arguments})
    assert ("error" in reply) != ("result" in reply)
    refused = "error" in reply or reply["result"].get("isError")
    if refused:
        assert server.graph() == before, (tool, reply)
    assert server.replies.empty()
    decoded = json.dumps(json.loads(json.dumps(arguments)), ensure_ascii=False)  # escaped pairs join up
    if any("\ud800" <= ch <= "\udfff" for ch in decoded):
        assert reply["error"]["code"] == -32602 and "lone surrogate" in reply["error"]["message"]
