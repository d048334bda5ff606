"""Helpers of the MCP tests and benchmark: clients over each transport, the reference server, a script.

The reference server ``@modelcontextprotocol/server-memory`` is installed with npm once into a cache
directory (``LIMBIC_NPM_CACHE``, default ``~/.cache/limbic-tests/npm``) and reused by later sessions.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

REFERENCE_PACKAGE = "@modelcontextprotocol/server-memory"
LIMBIC = str(Path(sys.executable).with_name("limbic"))
_NETWORK_HINTS = ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNREFUSED", "ECONNRESET", "network", "ENETUNREACH")


class ReferenceUnavailable(Exception):
    """npm or the registry cannot be reached; the message says why (tests skip with it)."""


def npm_cache_dir() -> Path:
    return Path(os.environ.get("LIMBIC_NPM_CACHE", Path.home() / ".cache" / "limbic-tests" / "npm"))


def reference_server_script() -> Path:
    """Install the reference server with npm (once) and return its ``dist/index.js``.

    Raises:
        ReferenceUnavailable: no ``node``/``npm`` on PATH, or the registry is unreachable.
        RuntimeError: npm failed for another reason (a real failure, not skipped).
    """
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise ReferenceUnavailable("node/npm not found on PATH")
    folder = npm_cache_dir()
    script = folder / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    if script.is_file():
        return script
    folder.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder), REFERENCE_PACKAGE],
            capture_output=True, text=True, timeout=240,
        )
    except subprocess.TimeoutExpired as exc:
        raise ReferenceUnavailable(f"npm install timed out after {exc.timeout} s (registry unreachable?)") from exc
    if done.returncode != 0:
        output = done.stdout + done.stderr
        if any(hint in output for hint in _NETWORK_HINTS):
            raise ReferenceUnavailable(f"npm registry unreachable: {output.strip()[-300:]}")
        raise RuntimeError(f"npm install {REFERENCE_PACKAGE} failed:\n{output}")
    return script


def reference_params(memory_file: Path):
    """Stdio parameters of the reference server on ``memory_file`` (MEMORY_FILE_PATH, made absolute: the
    server resolves a relative path against its own install directory)."""
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command="node", args=[str(reference_server_script())],
                                 env={"MEMORY_FILE_PATH": str(Path(memory_file).resolve())})


def limbic_params(db: Path | str, home: Path | str | None = None, tools: str | None = None):
    """Stdio parameters of ``limbic --db DB mcp [--tools TOOLS]`` (a file path or a ``postgresql://`` URL) with LIMBIC_HOME (no model there: FTS-only search), and the
    PYTHONPATH of the tests when set (the code under test, when it is not the installed package)."""
    from mcp.client.stdio import StdioServerParameters

    env = {"LIMBIC_HOME": str(home or os.environ["LIMBIC_HOME"])}
    if os.environ.get("PYTHONPATH"):  # a checkout run from its source tree serves its own code, not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return StdioServerParameters(command=LIMBIC, args=["--db", str(db), "mcp", *(["--tools", tools] if tools else [])],
                                 env=env)


@asynccontextmanager
async def stdio_client(params, errlog_path: Path | None = None):
    """An SDK ``Client`` over stdio; the server's stderr goes to ``errlog_path`` (or is discarded)."""
    from mcp import Client
    from mcp.client.stdio import stdio_client as transport

    with open(errlog_path or os.devnull, "w", encoding="utf-8") as errlog:
        async with Client(transport(params, errlog=errlog)) as client:
            yield client


@asynccontextmanager
async def http_client(url: str, token: str | None):
    """An SDK ``Client`` over Streamable HTTP sending ``Authorization: Bearer <token>``."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            yield client


def outcome(result) -> dict[str, Any]:
    """A call result as plain data: ``error`` flag, ``structured`` content and parsed ``text``."""
    text = "".join(getattr(c, "text", "") for c in result.content)
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = text
    return {"error": bool(result.is_error), "structured": result.structured_content, "text": parsed}


# The scripted sequence run against every transport and against the reference server: every one of the
# nine tools, happy paths and the error paths the reference server also has.
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("create_entities", {"entities": [
        {"name": "Alice", "entityType": "person", "observations": ["likes tea", "works at Acme"]},
        {"name": "Bob", "entityType": "person", "observations": ["plays chess"]},
        {"name": "Acme", "entityType": "company", "observations": ["makes widgets"]},
    ]}),
    ("create_entities", {"entities": [
        {"name": "Alice", "entityType": "robot", "observations": ["ignored"]},
        {"name": "Carol", "entityType": "person", "observations": []},
    ]}),
    ("create_relations", {"relations": [
        {"from": "Alice", "to": "Acme", "relationType": "works_at"},
        {"from": "Bob", "to": "Alice", "relationType": "knows"},
    ]}),
    ("create_relations", {"relations": [
        {"from": "Alice", "to": "Acme", "relationType": "works_at"},
        {"from": "Carol", "to": "Bob", "relationType": "knows"},
    ]}),
    ("add_observations", {"observations": [
        {"entityName": "Alice", "contents": ["likes tea", "speaks French"]},
        {"entityName": "Bob", "contents": ["chess club member"]},
    ]}),
    ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}),
    ("search_nodes", {"query": "chess"}),
    ("search_nodes", {"query": "ACME"}),
    ("search_nodes", {"query": "no such text"}),
    ("open_nodes", {"names": ["Alice", "Nobody"]}),
    ("delete_observations", {"deletions": [
        {"entityName": "Alice", "observations": ["works at Acme"]},
        {"entityName": "Nobody", "observations": ["x"]},
    ]}),
    ("delete_relations", {"relations": [{"from": "Bob", "to": "Alice", "relationType": "knows"}]}),
    ("read_graph", {}),
    ("delete_entities", {"entityNames": ["Carol", "Nobody"]}),
    ("read_graph", {}),
    ("open_nodes", {"names": ["Bob", "Acme"]}),
    ("create_entities", {"entities": "not a list"}),
    ("open_nodes", {}),
]

# Limbic's extended tools, run after SCRIPT on the same graph (happy and error paths).
EXTENDED_SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("rename_entity", {"oldName": "Acme", "newName": "Acme Corp"}),
    ("rename_entity", {"oldName": "Alice", "newName": "Bob"}),
    ("set_status", {"entityNames": ["Bob"], "status": "paused"}),
    ("set_status", {"entityNames": ["Bob"], "status": "sleepy"}),
    ("end_relation", {"relation": {"from": "Alice", "to": "Acme Corp", "relationType": "works_at"}}),
    ("end_relation", {"relation": {"from": "Alice", "to": "Acme Corp", "relationType": "works_at"}}),
    ("create_entities", {"entities": [{"name": "Robert", "entityType": "person", "observations": ["plays go"]}]}),
    ("merge_entities", {"sourceNames": ["Robert"], "targetName": "Bob"}),
    ("merge_entities", {"sourceNames": ["Bob"], "targetName": "Bob"}),
    ("get_entity", {"name": "Bob"}),
    ("get_entity", {"name": "Nobody"}),
    ("read_graph", {"mode": "names"}),
    ("read_graph", {"mode": "page", "offset": 1, "limit": 1}),
    ("read_graph", {"mode": "summary"}),
    ("read_graph", {"mode": "page", "limit": 0}),
    ("search_semantic", {"query": "chess", "limit": 0}),
]
EXTENDED_ERRORS = 7

_VOLATILE = {"createdAt", "updatedAt", "endedAt", "supersededAt", "lastAccess", "accessCount", "accessDays",
             "embeddedEntities", "embeddingModel"}


def stable(value: Any) -> Any:
    """``value`` without what differs between two runs of the same script (clock times, access counts
    recorded in the background, the embedding model)."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


# Deliberate differences, run after SCRIPT: (tool, arguments, Limbic's outcome, the reference's outcome), an
# outcome being "error" or the structured content (Limbic's with ``strip_extras`` applied).
DIFFERENCES: list[tuple[str, dict[str, Any], Any, Any]] = [
    # A relation to an unknown entity: refused, where the reference server stores it dangling.
    ("create_relations", {"relations": [{"from": "Alice", "to": "Ghost", "relationType": "haunts"}]},
     "error", {"relations": [{"from": "Alice", "to": "Ghost", "relationType": "haunts"}]}),
    # An empty (blank) entity name: refused by validation.
    ("create_entities", {"entities": [{"name": "  ", "entityType": "x", "observations": []}]},
     "error", {"entities": [{"name": "  ", "entityType": "x", "observations": []}]}),
    # The same name twice in one call, the same text twice in one list: stored once.
    ("create_entities", {"entities": [{"name": "Twin", "entityType": "a", "observations": ["same", "same"]},
                                      {"name": "Twin", "entityType": "b", "observations": []}]},
     {"entities": [{"name": "Twin", "entityType": "a", "observations": ["same"]}]},
     {"entities": [{"name": "Twin", "entityType": "a", "observations": ["same", "same"]},
                   {"name": "Twin", "entityType": "b", "observations": []}]}),
    # Observations are trimmed, and duplicates within one call are added once.
    ("add_observations", {"observations": [{"entityName": "Bob", "contents": ["x", "x", "  padded  "]}]},
     {"results": [{"entityName": "Bob", "addedObservations": ["x", "padded"]}]},
     {"results": [{"entityName": "Bob", "addedObservations": ["x", "x", "  padded  "]}]}),
]


def strip_extras(value: Any) -> Any:
    """Drop Limbic's documented additions (``status`` on entities, ``context`` on relations)."""
    if isinstance(value, dict):
        drop = {"status"} if "entityType" in value else {"context"} if "relationType" in value else set()
        return {k: strip_extras(v) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [strip_extras(v) for v in value]
    return value


@contextmanager
def portal_client(server):
    """A blocking portal and an in-memory SDK ``Client`` of ``server``, usable from synchronous code."""
    from anyio.from_thread import start_blocking_portal
    from mcp import Client

    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(server)) as client:
        yield portal, client
