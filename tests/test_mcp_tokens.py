"""Named MCP tokens: kept in the memory (only their SHA-256), managed by the service and ``limbic mcp token``,
accepted by every HTTP server on the memory, refused once revoked; each write logged with its token's name."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from _mcp_helpers import http_client, outcome

from limbic.core.cli.main import main
from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.mcp.http import HttpMcpServer
from limbic.core.mcp.token import load_token
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def post(url: str, token: str, headers: dict | None = None) -> httpx2.Response:
    return httpx2.post(url, json=INITIALIZE, headers=JSON_HEADERS | {"Authorization": f"Bearer {token}"}
                       | (headers or {}), timeout=30)


def origins(service: MemoryService) -> list[tuple[str, str]]:
    """``(origin, op)`` of every logged change, oldest first, read from the ``changes`` table itself."""
    return [(r[0], r[1]) for r in service.database.read().execute("SELECT origin, op FROM changes ORDER BY id")]


def create(name: str):
    return {"entities": [{"name": name, "entityType": "person", "observations": [f"{name} was here"]}]}


# --- the service ---------------------------------------------------------------------------------


def test_add_list_revoke_and_look_up(service, memory_address, backend):
    secret = service.projects.add_token("alice")
    assert len(secret) >= 40
    assert service.projects.token_name(secret) == "alice"
    assert service.projects.token_name(secret + "x") is None and service.projects.token_name("") is None
    (token,) = service.projects.list_tokens()
    assert token.name == "alice" and not token.revoked and abs(token.created_at - time.time()) < 60
    assert not hasattr(token, "token_hash")
    stored = service.database.read().execute("SELECT token_hash FROM mcp_tokens").get
    assert stored == hashlib.sha256(secret.encode()).hexdigest()
    service.database.close()
    if backend == "sqlite":
        assert secret.encode() not in Path(memory_address).read_bytes()
    reopened = MemoryService(open_database(memory_address))
    try:
        revoked = reopened.projects.revoke_token("alice")
        assert revoked.revoked and reopened.projects.token_name(secret) is None
        assert reopened.projects.revoke_token("alice").revoked_at == revoked.revoked_at  # again: nothing changes
        assert [op for _o, op in origins(reopened)] == ["add_token", "revoke_token"]
    finally:
        reopened.close()


@pytest.mark.parametrize("name", ["", "a" * 65, "has space", "slash/", "ünï", "local", None, 7])
def test_bad_names_are_refused(service, name):
    with pytest.raises(ValidationError):
        service.projects.add_token(name)
    assert service.projects.list_tokens() == []


def test_duplicate_and_unknown_names(service):
    service.projects.add_token("ci-bot.v2_1")
    service.projects.revoke_token("ci-bot.v2_1")
    with pytest.raises(ValidationError, match="exists already"):
        service.projects.add_token("ci-bot.v2_1")  # a revoked token keeps its name
    with pytest.raises(NotFoundError, match="no token named 'bob'"):
        service.projects.revoke_token("bob")
    with pytest.raises(ValidationError, match="rotate"):
        service.projects.revoke_token("local")
    assert [t.name for t in service.projects.list_tokens()] == ["ci-bot.v2_1"]


# --- the CLI -------------------------------------------------------------------------------------


def test_cli_token_add_list_revoke(tmp_path, capsys):
    db = str(tmp_path / "team.db")
    assert main(["--db", db, "mcp", "token", "add", "alice"]) == 0
    out, err = capsys.readouterr()
    secret = out.strip()
    assert len(secret) >= 40 and "will not be shown again" in err
    assert main(["--db", db, "mcp", "token", "add", "alice"]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main(["--db", db, "mcp", "token", "add", "bad name"]) == 2
    assert main(["--db", db, "mcp", "token", "list"]) == 0
    listing = capsys.readouterr().out
    assert "alice" in listing and "local" in listing and secret not in listing
    assert main(["--db", db, "mcp", "token", "revoke", "alice"]) == 0
    assert "revoked" in capsys.readouterr().err
    assert main(["--db", db, "mcp", "token", "list", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["name"] == "alice" and row["created"].endswith("Z") and row["revoked"].endswith("Z")
    assert main(["--db", db, "mcp", "token", "revoke", "nobody"]) == 2
    assert "no token named 'nobody'" in capsys.readouterr().err
    assert main(["mcp", "token"]) == 0  # the machine's token file still works as before
    assert capsys.readouterr().out.strip() == load_token()


# --- HTTP ----------------------------------------------------------------------------------------


def test_writes_are_attributed_to_the_token_name_and_a_revoked_token_is_refused(service, memory_address, capsys):
    alice = service.projects.add_token("alice")
    with HttpMcpServer(service, token_cache_seconds=0.5) as server:
        async def scenario():
            async with http_client(server.url, alice) as client:
                assert not outcome(await client.call_tool("create_entities", create("Ada")))["error"]
                assert not outcome(await client.call_tool("add_observations", {"observations": [
                    {"entityName": "Ada", "contents": ["writes programs"]}]}))["error"]
            async with http_client(server.url, server.token) as client:
                assert not outcome(await client.call_tool("create_entities", create("Bob")))["error"]

        anyio.run(scenario)
        assert ("mcp:alice", "create_entities") in origins(service)
        assert ("mcp:alice", "add_observations") in origins(service)
        assert ("mcp:local", "create_entities") in origins(service)
        assert [c.origin for c in service.history.entity_history("Ada")] == ["mcp:alice", "mcp:alice"]

        assert post(server.url, alice).status_code == 200
        service.projects.revoke_token("alice")
        time.sleep(0.6)  # the server's answer about a named token is trusted 0.5 s here (2 s by default)
        assert post(server.url, alice).status_code == 401
        assert post(server.url, server.token).status_code == 200
        assert post(server.url, "never-issued").status_code == 401

    assert main(["--db", memory_address, "changes", "--entity", "Ada"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all("alice (MCP)" in line for line in lines)
    assert "add observations" in lines[0] and "create entities" in lines[1]
    assert main(["--db", memory_address, "changes", "--json", "--limit", "3"]) == 0
    assert [c["origin"] for c in json.loads(capsys.readouterr().out)] == ["cli", "mcp:local", "mcp:alice"]


def test_a_token_added_by_another_process_is_accepted_at_once(service, memory_address):
    with HttpMcpServer(service) as server:
        assert post(server.url, "x" * 43).status_code == 401
        other = MemoryService(open_database(memory_address))  # another server's (or the CLI's) connection
        try:
            secret = other.projects.add_token("bob")
        finally:
            other.close()
        assert post(server.url, secret).status_code == 200


def test_public_names_are_accepted_as_host_and_origin(service):
    with HttpMcpServer(service, public_names=["memory.example.org", "Team.Example.org:8443"]) as server:
        token = server.token
        assert post(server.url, token, {"Host": "memory.example.org"}).status_code == 200
        assert post(server.url, token, {"Host": "team.example.org:8443"}).status_code == 200
        assert post(server.url, token, {"Host": "memory.example.org",
                                        "Origin": "https://memory.example.org"}).status_code == 200
        assert post(server.url, token, {"Host": "evil.example"}).status_code == 421
        assert post(server.url, token, {"Host": "memory.example.org:9999"}).status_code == 421
        assert post(server.url, token, {"Origin": "https://evil.example"}).status_code == 403
        assert post(server.url, token, {"Host": f"127.0.0.1:{server.port}"}).status_code == 200


@pytest.mark.parametrize("name", ["https://memory.example.org", "memory.example.org/mcp", "a b", "x:99999", ""])
def test_malformed_public_names_are_refused(service, name):
    with pytest.raises(ValidationError, match="public name"):
        HttpMcpServer(service, public_names=[name])
