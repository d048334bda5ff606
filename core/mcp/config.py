"""Ready configuration snippets for MCP clients (``limbic mcp config`` and the app's MCP panel).

Stdio snippets launch this installation's ``limbic mcp`` with absolute paths and the tool profile
(``--tools``, docs/mcp.md "Tool profiles"); HTTP snippets carry the URL and the bearer token of
:mod:`limbic.core.mcp.http` (the HTTP server's profile is chosen where it runs, or by a named token's).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from limbic.core.mcp.profiles import DEFAULT_PROFILE
from limbic.core.mcp.token import load_token
from limbic.core.store.backend import shareable_form

CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode")
SERVER_NAME = "limbic"
DEFAULT_PORT = 8765
"""TCP port of ``limbic mcp --http`` and of the desktop app's embedded server."""
DEFAULT_HOST = "127.0.0.1"
"""Address the HTTP server binds by default: loopback only."""

WHERE = {
    "claude-desktop": "Add to claude_desktop_config.json (Settings → Developer → Edit Config), then restart "
                      "Claude Desktop.",
    "claude-code": "Run this in your project (add --scope user for every project).",
    "cursor": "Add to ~/.cursor/mcp.json (or .cursor/mcp.json in a project).",
    "vscode": "Add to .vscode/mcp.json in your workspace (or MCP: Open User Configuration).",
}
"""Where each client's snippet goes, one sentence per client."""


def _limbic_command(db: str | Path | None, tools: str) -> tuple[str, list[str]]:
    """The command and arguments that launch ``limbic mcp --tools TOOLS`` for this installation (absolute paths;
    a PostgreSQL address without its password)."""
    found = shutil.which("limbic") or str(Path(sys.executable).with_name("limbic"))
    db_args = ["--db", shareable_form(db)] if db else []
    return found, [*db_args, "mcp", "--tools", tools]


def _env() -> dict[str, str]:
    home = os.environ.get("LIMBIC_HOME")
    return {"LIMBIC_HOME": str(Path(home).expanduser().resolve())} if home else {}


def client_config(client: str, *, http: bool = False, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                  db: str | Path | None = None, tools: str = DEFAULT_PROFILE) -> str:
    """The snippet for ``client`` (one of :data:`CLIENTS`): JSON for config files, a shell command for Claude Code.
    ``tools``: the ``--tools`` value a stdio snippet starts the server with.

    Raises:
        ValueError: an unknown client name.
    """
    if client not in CLIENTS:
        raise ValueError(f"unknown MCP client {client!r}; expected one of {', '.join(CLIENTS)}")
    if http:
        bracketed = f"[{host}]" if ":" in host else host
        url = f"http://{bracketed}:{port}/mcp"
        header = f"Bearer {load_token()}"
        if client == "claude-code":
            return shlex.join(["claude", "mcp", "add", "--transport", "http", SERVER_NAME, url,
                               "--header", f"Authorization: {header}"])
        entry: dict[str, Any]
        if client == "claude-desktop":
            entry = {"command": "npx", "args": ["-y", "mcp-remote", url, "--header", "Authorization:${LIMBIC_AUTH}"],
                     "env": {"LIMBIC_AUTH": header}}
            return json.dumps({"mcpServers": {SERVER_NAME: entry}}, indent=2)
        entry = {"url": url, "headers": {"Authorization": header}}
        if client == "vscode":
            return json.dumps({"servers": {SERVER_NAME: {"type": "http", **entry}}}, indent=2)
        return json.dumps({"mcpServers": {SERVER_NAME: entry}}, indent=2)
    env = _env()
    command, command_args = _limbic_command(db, tools)
    if client == "claude-code":
        env_flags = [flag for key, value in env.items() for flag in ("--env", f"{key}={value}")]
        return shlex.join(["claude", "mcp", "add", *env_flags, SERVER_NAME, "--", command, *command_args])
    entry = {"command": command, "args": command_args} | ({"env": env} if env else {})
    if client == "vscode":
        return json.dumps({"servers": {SERVER_NAME: {"type": "stdio", **entry}}}, indent=2)
    return json.dumps({"mcpServers": {SERVER_NAME: entry}}, indent=2)
