"""``limbic mcp``: serve the memory to AI agents over MCP (docs/mcp.md "Transports").

- ``limbic mcp``: stdio; stdout carries nothing but the protocol (messages go to stderr).
- ``limbic mcp --tools PROFILE``: the tools listed and served (``agent`` by default; docs/mcp.md "Tool profiles");
  ``--list`` prints them with their size in bytes and estimated tokens instead of serving.
- ``limbic mcp --http [--port P] [--host H --allow-remote] [--public-name NAME[:PORT]]``: Streamable HTTP with
  bearer tokens (docs/mcp.md "Teams").
- ``limbic mcp token [--rotate] | add NAME | list | revoke NAME``: the bearer tokens
  (:mod:`limbic.core.cli.token_commands`).
- ``limbic mcp config --client claude-desktop|claude-code|cursor|vscode [--http] [--tools PROFILE]``: a ready
  snippet.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading

from limbic.core.cli import token_commands
from limbic.core.cli.common import open_service
from limbic.core.mcp.config import CLIENTS, DEFAULT_HOST, DEFAULT_PORT, WHERE, client_config
from limbic.core.mcp.profiles import DEFAULT_PROFILE, PROFILES

TOOLS_HELP = (f"the tools served: a profile ({', '.join(PROFILES)}; default {DEFAULT_PROFILE}) or tool names "
              "separated by commas; `--list` shows them")

# The MCP SDK takes seconds to import: it is loaded by the handlers, never by `limbic --help` or other commands.


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mcp", help="serve the memory over MCP (stdio by default, or Streamable HTTP)",
        description="Serve the memory graph to AI agents over the Model Context Protocol. Without a "
                    "sub-command: stdio (what agent configurations launch). Over HTTP every request needs a "
                    "bearer token: this machine's (`limbic mcp token`) or a named one of the memory "
                    "(`limbic mcp token add NAME`); writes are logged with the token's name.",
    )
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--tools", metavar="PROFILE", default=None, help=TOOLS_HELP)
    parser.add_argument("--list", action="store_true", help="print the tools of --tools with their size in bytes "
                        "and estimated tokens, and exit")
    parser.add_argument("--project", metavar="NAME", help="the project of this server: new entities belong to it, "
                        "reads and searches see its memories and the global ones only")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"HTTP address (default {DEFAULT_HOST}, loopback only)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow a non-loopback --host (anyone who can reach it and has a token gets in; "
                             "tokens travel in clear: put a TLS reverse proxy such as Caddy or nginx in front)")
    parser.add_argument("--public-name", action="append", default=[], metavar="NAME[:PORT]",
                        help="a name clients use to reach this server through a reverse proxy "
                             "(memory.example.org): accepted as Host and Origin besides the bound address; "
                             "repeat the flag or separate names with commas")
    parser.set_defaults(handler=serve)
    sub = parser.add_subparsers(dest="mcp_command", metavar="{token,config}")
    token_commands.register(sub)

    config = sub.add_parser("config", help="print a ready configuration snippet for an MCP client")
    config.add_argument("--client", required=True, choices=CLIENTS)
    config.add_argument("--http", action="store_true", help="connect over HTTP (URL + bearer header)")
    config.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})")
    config.add_argument("--host", default=DEFAULT_HOST, help=f"HTTP address (default {DEFAULT_HOST})")
    config.add_argument("--tools", metavar="PROFILE", default=None, help=TOOLS_HELP + " (stdio snippets)")
    config.set_defaults(handler=config_command)


# --- serving ------------------------------------------------------------------------------------


def serve(args: argparse.Namespace) -> int:
    if args.list:
        return _list_tools(args)
    return _serve_http(args) if args.http else _serve_stdio(args)


def _tools(args: argparse.Namespace):
    """``--tools`` as a profile (a refusal is a one-line error before anything is served)."""
    from limbic.core.mcp.profiles import profile

    return profile(getattr(args, "tools", None))


def _list_tools(args: argparse.Namespace) -> int:
    """``limbic mcp --tools P --list``: each tool with the bytes of its description and input schema and an
    estimate of the tokens they take, as the server would list them. The list does not depend on the memory:
    it is read from a server on an empty scratch one (no model loaded, ``--db`` untouched)."""
    import tempfile
    from pathlib import Path

    import anyio

    from limbic.core.mcp.profiles import estimated_tokens, listed_bytes
    from limbic.core.mcp.server import build_server
    from limbic.core.service import MemoryService

    chosen = _tools(args)
    with tempfile.TemporaryDirectory(prefix="limbic-tools-") as scratch:
        service = MemoryService.open(str(Path(scratch) / "tools.db"), embedder=None, origin="mcp")
        try:
            listed = anyio.run(build_server(service, tools=chosen).list_tools)
        finally:
            service.close()
    print(f"{'tool':30} {'bytes':>7} {'~tokens':>8}")
    total = 0
    for tool in listed:
        size = listed_bytes(tool.description, tool.input_schema)
        total += size
        print(f"{tool.name:30} {size:7,} {estimated_tokens(size):8,}")
    print(f"{f'{len(listed)} tools ({chosen.name})':30} {total:7,} {estimated_tokens(total):8,}")
    return 0


def _open_memory(args: argparse.Namespace):
    """The service on ``--db``, else on the memory ``MEMORY_FILE_PATH`` names (its JSONL adopted once), else
    on the default database. Anything printed meanwhile goes to stderr, never to the protocol stream."""
    from limbic.core.mcp.memory_file import adopt_memory_file, memory_database, memory_file

    memory = memory_file() if getattr(args, "db", None) is None else None
    if memory is not None:
        args.db = str(memory_database(memory))
    with contextlib.redirect_stdout(sys.stderr):
        service = open_service(args, origin="mcp", background_vectors=True)  # agents never wait for the model
        if memory is not None:
            try:
                note = adopt_memory_file(service, memory)
            except BaseException:
                service.close()
                raise
            if note:
                print(note, file=sys.stderr, flush=True)
    return service


def _project(args: argparse.Namespace) -> str | None:
    """``--project``, validated (a refusal is a one-line error before anything is served)."""
    from limbic.core import validation

    return None if args.project is None else validation.label(args.project, "project")


def _serve_stdio(args: argparse.Namespace) -> int:
    import anyio

    from limbic.core.mcp.server import build_server
    from limbic.core.mcp.stdio import serve_stdio

    chosen, project = _tools(args), _project(args)
    service = _open_memory(args)
    service.search.start_warm_up()  # the agent's first search need not wait for the model and vectors
    try:
        anyio.run(serve_stdio, build_server(service, project=project, tools=chosen, tools_on_the_loop=True))
    finally:
        service.close()
    return 0


def _public_names(args: argparse.Namespace) -> list[str]:
    """``--public-name`` values, comma-separated ones split and each validated (ValidationError)."""
    from limbic.core.mcp.http import public_name

    return [public_name(n) for value in args.public_name for n in value.split(",") if n.strip()]


def _serve_http(args: argparse.Namespace) -> int:
    from limbic.core.mcp.http import HttpMcpServer, is_loopback
    from limbic.core.mcp.token import load_token, token_path

    public = _public_names(args)
    chosen = _tools(args)
    if not is_loopback(args.host):
        if not args.allow_remote:
            print(f"limbic: error: {args.host!r} is not a loopback address; add --allow-remote to serve "
                  "other machines", file=sys.stderr)
            return 2
        load_token()  # a non-loopback server never runs without a token: the file's is created if missing
        print(f"limbic: warning: serving MCP on {args.host}, reachable from other machines over plain HTTP: "
              "bearer tokens travel in clear. Put TLS termination in front (a reverse proxy such as Caddy or "
              "nginx, then --public-name NAME) or keep the port on a trusted network", file=sys.stderr)
    service = _open_memory(args)
    service.search.start_warm_up()  # the agent's first search need not wait for the model and vectors
    server = HttpMcpServer(service, host=args.host, port=args.port, allow_remote=args.allow_remote,
                           project=_project(args), public_names=public, tools=chosen)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.start()
        print(server.url, flush=True)
        print(f"limbic: MCP over Streamable HTTP at {server.url}; bearer tokens: {token_path()} "
              "(`limbic mcp token`) and the memory's named ones (`limbic mcp token list`); Ctrl-C stops",
              file=sys.stderr, flush=True)
        while not stop.wait(0.5):
            if not server.running:
                print("limbic: error: the HTTP server stopped unexpectedly", file=sys.stderr)
                return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.stop()
        service.close()
    return 0


def config_command(args: argparse.Namespace) -> int:
    chosen = _tools(args)
    print(client_config(args.client, http=args.http, host=args.host, port=args.port, db=getattr(args, "db", None),
                        tools=chosen.flag))
    note = WHERE[args.client]
    if args.http:
        note += " The HTTP server must be running (the app's MCP panel, or `limbic mcp --http`)."
    print(note, file=sys.stderr)
    return 0
