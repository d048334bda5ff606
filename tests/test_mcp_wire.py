"""Every request gets exactly one answer: a one-shot ``printf '…' | limbic mcp`` (a real subprocess whose
stdin closes right after the requests), and lone surrogates refused over stdio and HTTP without a write.
"""

from __future__ import annotations

import json
import os
import subprocess

import httpx2
import pytest
from _mcp_helpers import LIMBIC

from limbic.core.mcp.http import HttpMcpServer

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
# A lone surrogate can only be written as a JSON escape: json.dumps keeps "\ud800" escaped (ensure_ascii).
SURROGATE_CALLS = [
    ("search_nodes", {"query": "a\ud800b"}),
    ("create_entities", {"entities": [{"name": "Ghost\udc00", "entityType": "t", "observations": []}]}),
    ("add_observations", {"observations": [{"entityName": "Alice", "contents": ["ok", "bad \udfff"]}]}),
    ("search_semantic", {"query": "\ud83d"}),
]


def call(request_id: int, tool: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}


def one_shot(tmp_path, limbic_home, messages: list[dict]) -> list[dict]:
    """Pipe ``messages`` into ``limbic mcp`` at once, close stdin, and return every reply printed."""
    env = os.environ | {"LIMBIC_HOME": str(limbic_home)}
    stdin = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run([LIMBIC, "--db", str(tmp_path / "m.db"), "mcp"], input=stdin, capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_a_one_shot_pipe_gets_a_reply_to_every_request(tmp_path, limbic_home):
    messages = [INITIALIZE, INITIALIZED,
                call(2, "create_entities", {"entities": [
                    {"name": "Alice", "entityType": "person", "observations": ["likes tea"]}]}),
                call(3, "search_semantic", {"query": "tea"}),
                call(4, "open_nodes", {"names": ["Alice"]}),
                {"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
                call(6, "read_graph", {})]
    replies = one_shot(tmp_path, limbic_home, messages)
    by_id = {reply["id"]: reply for reply in replies}
    assert sorted(by_id) == [1, 2, 3, 4, 5, 6] and len(replies) == 6
    # The requests are served concurrently (as the SDK does), so only the write's own reply has known content.
    assert all("result" in reply and not reply["result"].get("isError") for reply in replies)
    assert by_id[2]["result"]["structuredContent"]["entities"][0]["name"] == "Alice"
    assert "search_semantic" in {tool["name"] for tool in by_id[5]["result"]["tools"]}
    assert "results" in by_id[3]["result"]["structuredContent"]


def test_lone_surrogates_are_refused_over_stdio_and_the_rest_is_served(tmp_path, limbic_home):
    messages = [INITIALIZE, INITIALIZED, call(2, "create_entities", {"entities": [
        {"name": "Alice", "entityType": "person", "observations": ["likes tea"]}]})]
    messages += [call(10 + i, tool, arguments) for i, (tool, arguments) in enumerate(SURROGATE_CALLS)]
    messages.append(call(20, "read_graph", {}))
    replies = one_shot(tmp_path, limbic_home, messages)
    by_id = {reply["id"]: reply for reply in replies}
    assert len(replies) == len(by_id) == 2 + len(SURROGATE_CALLS) + 1
    for i in range(len(SURROGATE_CALLS)):
        error = by_id[10 + i]["error"]
        assert error["code"] == -32602 and "lone surrogate" in error["message"]
    assert "params.arguments.query" in by_id[10]["error"]["message"]
    assert "params.arguments.entities[0].name" in by_id[11]["error"]["message"]
    assert "U+DFFF" in by_id[12]["error"]["message"]
    # Requests are served concurrently, so read the memory after the process has exited.
    graph = one_shot(tmp_path, limbic_home, [INITIALIZE, INITIALIZED, call(2, "read_graph", {})])[-1]
    assert graph["result"]["structuredContent"] == {
        "entities": [{"name": "Alice", "entityType": "person", "observations": ["likes tea"]}], "relations": []}


@pytest.fixture
def http_server(service):
    server = HttpMcpServer(service)
    server.start()
    yield server
    server.stop()


def test_lone_surrogates_are_refused_over_http_without_a_write(http_server, service):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "Authorization": f"Bearer {http_server.token}"}
    tool, arguments = SURROGATE_CALLS[1]
    body = json.dumps(call(7, tool, arguments)).encode("ascii")
    assert b"\\udc00" in body
    reply = httpx2.post(http_server.url, content=body, headers=headers, timeout=30)
    assert reply.status_code == 400
    error = reply.json()
    assert error["id"] == 7 and error["error"]["code"] == -32602
    assert "entities[0].name" in error["error"]["message"] and "U+DC00" in error["error"]["message"]
    assert service.entities.entity_names() == []
    ok = httpx2.post(http_server.url, content=json.dumps(INITIALIZE).encode(), headers=headers, timeout=30)
    assert ok.status_code == 200


def test_a_stray_print_while_serving_goes_to_stderr_not_the_wire():
    """The event loop writes answers to the stdout pipe; meanwhile fd 1 points at stderr, and is given back after."""
    import sys

    script = (
        "import anyio, os, sys\n"
        "from limbic.core.mcp.stdio import _stdout_pipe\n"
        "async def main():\n"
        "    async with _stdout_pipe() as out:\n"
        "        print('stray', flush=True)\n"
        "        os.write(1, b'stray fd\\n')\n"
        "        await out.write('answer\\n')\n"
        "        await out.flush()\n"
        "    print('after', flush=True)\n"
        "anyio.run(main)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["answer", "after"]
    assert done.stderr.splitlines() == ["stray", "stray fd"]


def test_a_client_that_closes_its_end_gets_a_quiet_stop(tmp_path, limbic_home):
    """The reader of the server's stdout goes away mid-session: one line on stderr, exit code 0, no traceback."""
    env = os.environ | {"LIMBIC_HOME": str(limbic_home)}
    server = subprocess.Popen([LIMBIC, "--db", str(tmp_path / "m.db"), "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1
    server.stdout.close()  # the client stops reading
    for request_id in (2, 3):
        server.stdin.write((json.dumps(call(request_id, "read_graph", {})) + "\n").encode())
        server.stdin.flush()
    server.stdin.close()
    errors = server.stderr.read().decode()
    assert server.wait(timeout=60) == 0
    assert "Traceback" not in errors
    assert "the client closed the connection" in errors
