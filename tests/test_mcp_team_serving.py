"""``limbic mcp`` for a team: a non-loopback HTTP server warns that tokens travel in clear, accepts the public
name of a reverse proxy in front of it; the stdio transport logs its writes with the origin ``stdio``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess

import anyio
import httpx2
from _mcp_helpers import LIMBIC, limbic_params, outcome, stdio_client

from limbic.core.cli.main import main
from limbic.core.mcp.token import load_token
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_non_loopback_bind_warns_about_tls_and_accepts_the_public_name(tmp_path, limbic_home):
    port = _free_port()
    command = [LIMBIC, "--db", str(tmp_path / "team.db"), "mcp", "--http", "--host", "0.0.0.0", "--allow-remote",
               "--port", str(port), "--public-name", "memory.example.org,proxy.example.org:8443"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=os.environ | {"LIMBIC_HOME": str(limbic_home)})
    try:
        url = process.stdout.readline().strip()
        assert url == f"http://127.0.0.1:{port}/mcp"
        headers = JSON_HEADERS | {"Authorization": f"Bearer {load_token()}"}

        def status(extra: dict) -> int:
            return httpx2.post(url, json=INITIALIZE, headers=headers | extra, timeout=30).status_code

        assert status({"Host": "memory.example.org"}) == 200
        assert status({"Host": "proxy.example.org:8443", "Origin": "https://proxy.example.org:8443"}) == 200
        assert status({"Host": "evil.example"}) == 421
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        err = process.stderr.read()
    warning = [line for line in err.splitlines() if "warning" in line]
    assert len(warning) == 1
    assert "in clear" in warning[0] and "TLS" in warning[0] and "Caddy" in warning[0]


def test_loopback_bind_does_not_warn_and_a_bad_public_name_is_one_line(tmp_path, capsys):
    assert main(["--db", str(tmp_path / "x.db"), "mcp", "--http", "--public-name", "https://x.org"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "public name" in err


def test_mcp_help_documents_public_names(capsys):
    try:
        main(["mcp", "--help"])
    except SystemExit:
        pass
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--public-name NAME[:PORT]" in help_text and "reverse proxy" in help_text


def test_stdio_writes_are_logged_as_stdio(tmp_path, limbic_home):
    db = tmp_path / "stdio.db"

    async def scenario():
        async with stdio_client(limbic_params(db, limbic_home)) as client:
            return outcome(await client.call_tool("create_entities", {"entities": [
                {"name": "Ada", "entityType": "person", "observations": ["writes programs"]}]}))

    assert not anyio.run(scenario)["error"]
    service = MemoryService(open_database(db))
    try:
        assert [c.origin for c in service.history.entity_history("Ada")] == ["stdio"]
    finally:
        service.close()
