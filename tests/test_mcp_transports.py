"""The MCP transports: ``limbic mcp`` over stdio (subprocess, SDK stdio client) and Streamable HTTP
(:class:`HttpMcpServer`, SDK streamable HTTP client) with its bearer token and DNS-rebinding protection.

Both transports must answer the scripted sequence exactly as the in-process server does.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess

import anyio
import httpx2
import pytest
from _mcp_helpers import (
    EXTENDED_ERRORS,
    EXTENDED_SCRIPT,
    LIMBIC,
    SCRIPT,
    http_client,
    limbic_params,
    outcome,
    stable,
    stdio_client,
)
from mcp import Client

from limbic.core.errors import ValidationError
from limbic.core.mcp.http import HttpMcpServer
from limbic.core.mcp.server import build_server
from limbic.core.mcp.token import load_token, rotate_token, token_path

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


async def run_script(client) -> list[dict]:
    """SCRIPT (the nine reference tools) then EXTENDED_SCRIPT (ours), results without volatile fields."""
    return [stable(outcome(await client.call_tool(tool, arguments))) for tool, arguments in SCRIPT + EXTENDED_SCRIPT]


def in_process_outcomes(service) -> list[dict]:
    async def scenario():
        async with Client(build_server(service)) as client:
            return await run_script(client)

    return anyio.run(scenario)


@pytest.fixture
def expected(tmp_path):
    """The scripted sequence's outcomes from the in-process server on a fresh database."""
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    service = MemoryService(open_database(tmp_path / "expected.db"))
    try:
        return in_process_outcomes(service)
    finally:
        service.close()


def check_script_outcomes(outcomes: list[dict]) -> None:
    """Spot checks that make the comparison meaningful on its own."""
    by_step = dict(enumerate(outcomes))
    assert [e["name"] for e in by_step[1]["structured"]["entities"]] == ["Carol"]
    assert by_step[5]["error"] and "Nobody" in by_step[5]["text"]
    assert [e["name"] for e in by_step[6]["structured"]["entities"]] == ["Bob"]
    assert by_step[16]["error"] and by_step[17]["error"]
    assert sum(o["error"] for o in outcomes[:len(SCRIPT)]) == 3
    extended = outcomes[len(SCRIPT):]
    assert [step["error"] for step in extended].count(True) == EXTENDED_ERRORS
    bob = extended[9]["structured"]  # get_entity Bob, after the status change and the merge
    assert (bob["status"], bob["degree"], bob["relations"]) == ("paused", 0, [])
    assert [o["content"] for o in bob["observations"]] == ["plays chess", "chess club member", "plays go"]
    assert extended[1]["error"] and "merge" in extended[1]["text"]
    assert extended[14]["error"] and "limit" in extended[14]["text"]


# --- stdio ---------------------------------------------------------------------------------------


def test_stdio_answers_the_script_like_the_in_process_server(tmp_path, expected):
    async def scenario():
        async with stdio_client(limbic_params(tmp_path / "stdio.db", tools="all"), tmp_path / "stderr.txt") as client:
            outcomes = await run_script(client)
            search = outcome(await client.call_tool("search_semantic", {"query": "chess"}))
            return outcomes, search

    outcomes, search = anyio.run(scenario)
    check_script_outcomes(outcomes)
    assert outcomes == expected
    assert search["structured"]["mode"] == "fts_only" and search["structured"]["model"] is None
    assert [r["name"] for r in search["structured"]["results"]] == ["Bob"]


def test_stdio_stdout_carries_only_protocol_messages(tmp_path, limbic_home):
    messages = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "read_graph", "arguments": {"mode": "summary"}}}]
    env = os.environ | {"LIMBIC_HOME": str(limbic_home)}
    process = subprocess.Popen([LIMBIC, "--db", str(tmp_path / "m.db"), "mcp"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    try:
        for message in messages:
            process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        replies = [json.loads(process.stdout.readline()) for _ in range(2)]
        process.stdin.close()
        rest = process.stdout.read()
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[0]["result"]["serverInfo"]["name"] == "limbic-memory"
    assert replies[1]["result"]["structuredContent"]["summary"]["entities"] == 0
    assert all(json.loads(line) for line in rest.splitlines() if line.strip())


# --- HTTP ----------------------------------------------------------------------------------------


@pytest.fixture
def http_server(service):
    server = HttpMcpServer(service)
    server.start()
    yield server
    server.stop()


def test_http_answers_the_script_like_the_in_process_server(http_server, expected):
    async def scenario():
        async with http_client(http_server.url, http_server.token) as client:
            outcomes = await run_script(client)
            search = outcome(await client.call_tool("search_semantic", {"query": "chess", "limit": 1}))
            bad = outcome(await client.call_tool("search_semantic", {"query": "chess", "limit": 0}))
            return outcomes, search, bad

    outcomes, search, bad = anyio.run(scenario)
    check_script_outcomes(outcomes)
    assert outcomes == expected
    assert search["structured"]["mode"] in ("hybrid", "semantic")
    assert [r["name"] for r in search["structured"]["results"]] == ["Bob"]
    assert bad["error"] and "limit" in bad["text"]


def post(url: str, headers: dict) -> httpx2.Response:
    return httpx2.post(url, json=INITIALIZE, headers=JSON_HEADERS | headers, timeout=30)


def test_http_requires_the_bearer_token(http_server):
    assert post(http_server.url, {}).status_code == 401
    assert post(http_server.url, {"Authorization": "Bearer wrong"}).status_code == 401
    assert post(http_server.url, {"Authorization": f"Basic {http_server.token}"}).status_code == 401
    response = post(http_server.url, {"Authorization": f"Bearer {http_server.token}"})
    assert response.status_code == 200
    assert response.headers["mcp-session-id"]


def test_http_refuses_foreign_host_and_origin(http_server):
    auth = {"Authorization": f"Bearer {http_server.token}"}
    assert post(http_server.url, auth | {"Host": "evil.example"}).status_code == 421
    assert post(http_server.url, auth | {"Host": f"evil.example:{http_server.port}"}).status_code == 421
    assert post(http_server.url, auth | {"Origin": "http://evil.example"}).status_code == 403
    assert post(http_server.url, auth | {"Origin": f"http://localhost:{http_server.port}"}).status_code == 200
    assert post(http_server.url, auth | {"Host": f"localhost:{http_server.port}"}).status_code == 200


def test_http_refuses_oversized_and_malformed_bodies_and_keeps_serving(http_server):
    headers = JSON_HEADERS | {"Authorization": f"Bearer {http_server.token}"}
    huge = httpx2.post(http_server.url, content=b"[" + b"0," * (3 * 1024 * 1024) + b"0]", headers=headers,
                       timeout=60)
    assert huge.status_code == 413
    broken = httpx2.post(http_server.url, content=b'{"jsonrpc": "2.0", "id": 1, "meth', headers=headers, timeout=30)
    assert broken.status_code == 400
    assert post(http_server.url, {"Authorization": f"Bearer {http_server.token}"}).status_code == 200


def test_http_serves_loopback_only_by_default(service):
    server = HttpMcpServer(service)
    assert server.host == "127.0.0.1"
    with pytest.raises(ValidationError, match="allow_remote"):
        HttpMcpServer(service, host="0.0.0.0")
    with pytest.raises(ValidationError, match="port"):
        HttpMcpServer(service, port=70000)
    assert HttpMcpServer(service, host="0.0.0.0", allow_remote=True).host == "0.0.0.0"
    with server:
        assert server.url.startswith("http://127.0.0.1:")
        with socket.create_connection(("127.0.0.1", server.port), timeout=5):
            pass
        outside = _non_loopback_address()
        if outside is not None:
            with pytest.raises(OSError):
                socket.create_connection((outside, server.port), timeout=5).close()


def _non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent for UDP connect
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_http_stop_frees_the_port_and_can_restart(service):
    server = HttpMcpServer(service)
    server.start()
    port = server.port
    assert server.running
    server.stop()
    assert not server.running
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
    again = HttpMcpServer(service, port=port)
    with again:
        assert post(again.url, {"Authorization": f"Bearer {again.token}"}).status_code == 200


def test_token_file_is_private_and_rotation_applies_to_a_running_server(http_server):
    path = token_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    old = load_token()
    assert old == http_server.token and len(old) >= 40
    new = rotate_token()
    assert new != old and load_token() == new
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert post(http_server.url, {"Authorization": f"Bearer {old}"}).status_code == 401
    assert post(http_server.url, {"Authorization": f"Bearer {new}"}).status_code == 200
    path.chmod(0o644)
    assert load_token() == new and stat.S_IMODE(path.stat().st_mode) == 0o600


# --- the CLI -------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_cli_http_serves_until_terminated(tmp_path, limbic_home):
    env = os.environ | {"LIMBIC_HOME": str(limbic_home)}
    port = _free_port()
    process = subprocess.Popen([LIMBIC, "--db", str(tmp_path / "h.db"), "mcp", "--http", "--port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        url = process.stdout.readline().strip()
        assert url == f"http://127.0.0.1:{port}/mcp"
        token = token_path().read_text().strip()

        async def scenario():
            async with http_client(url, token) as client:
                return outcome(await client.call_tool("read_graph", {"mode": "summary"}))

        assert anyio.run(scenario)["structured"]["summary"]["entities"] == 0
        assert post(url, {}).status_code == 401
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_cli_refuses_a_remote_host_without_the_flag(limbic_home, capsys):
    from limbic.core.cli.main import main

    assert main(["mcp", "--http", "--host", "0.0.0.0"]) == 2
    assert "--allow-remote" in capsys.readouterr().err


def test_cli_token_and_rotation(capsys):
    from limbic.core.cli.main import main

    assert main(["mcp", "token"]) == 0
    first = capsys.readouterr().out.strip()
    assert main(["mcp", "token"]) == 0
    assert capsys.readouterr().out.strip() == first
    assert main(["mcp", "token", "--rotate"]) == 0
    rotated = capsys.readouterr().out.strip()
    assert rotated != first and rotated == load_token()


@pytest.mark.parametrize("client", ["claude-desktop", "cursor", "vscode"])
def test_cli_config_prints_ready_json(client, capsys, tmp_path):
    from limbic.core.cli.main import main

    assert main(["--db", str(tmp_path / "x.db"), "mcp", "config", "--client", client]) == 0
    config = json.loads(capsys.readouterr().out)
    entry = (config["servers"] if client == "vscode" else config["mcpServers"])["limbic"]
    assert entry["command"] == LIMBIC
    assert entry["args"] == ["--db", str(tmp_path / "x.db"), "mcp", "--tools", "agent"]
    assert entry["env"] == {"LIMBIC_HOME": os.environ["LIMBIC_HOME"]}

    assert main(["mcp", "config", "--client", client, "--http", "--port", "9999"]) == 0
    text = capsys.readouterr().out
    assert "http://127.0.0.1:9999/mcp" in text and f"Bearer {load_token()}" in text
    json.loads(text)


def test_cli_config_for_claude_code_is_a_command(capsys):
    from limbic.core.cli.main import main

    assert main(["mcp", "config", "--client", "claude-code"]) == 0
    assert capsys.readouterr().out.strip().endswith(f"limbic -- {LIMBIC} mcp --tools agent")
    assert main(["mcp", "config", "--client", "claude-code", "--http"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("claude mcp add --transport http limbic http://127.0.0.1:8765/mcp --header")
