"""``limbic mcp token``: the bearer tokens of the MCP HTTP transport (docs/mcp.md "Teams").

- ``limbic mcp token [--rotate]``: print (or replace) this machine's token file, the token named ``local``.
- ``limbic mcp token add NAME [--project P] [--tools PROFILE]``: a new named token, kept in the memory (``--db``)
  so that every ``limbic mcp --http`` server on that memory accepts it; the secret is printed once. With
  ``--project`` every call made with it is bound to that project (docs/lifecycle.md "Project scope");
  ``--tools``: the tool profile its clients are served (default: the server's; docs/mcp.md "Tool profiles").
- ``limbic mcp token list [--json]``: the named tokens (names and dates, never secrets).
- ``limbic mcp token revoke NAME``: servers refuse the token within seconds.
"""

from __future__ import annotations

import argparse
import sys

from limbic.core.cli.common import open_service, print_json
from limbic.core.models import iso


def register(mcp_commands: argparse._SubParsersAction) -> None:
    """Add ``token`` and its sub-commands to the sub-commands of ``limbic mcp``."""
    token = mcp_commands.add_parser(
        "token", help="bearer tokens of the HTTP transport: this machine's (default) and named ones",
        description="Without a sub-command: print this machine's token (the token file, named 'local'). "
                    "Named tokens live in the memory: every server on it accepts them, and each write is "
                    "logged with the token's name (origin mcp:NAME).")
    token.add_argument("--rotate", action="store_true", help="replace this machine's token with a new one first")
    token.set_defaults(handler=token_command)
    sub = token.add_subparsers(dest="token_command", metavar="{add,list,revoke}")
    add = sub.add_parser("add", help="create a named token and print its secret (shown once)")
    add.add_argument("name", help="1-64 letters, digits, '-', '_' or '.' (who uses it: alice, ci-bot)")
    add.add_argument("--project", metavar="NAME", help="bind the token to this project: its calls see and change "
                     "that project's memories and the global ones only")
    add.add_argument("--tools", metavar="PROFILE", help="the tools its clients are served: a profile (agent, "
                     "curation, reference, all, seed) or tool names separated by commas; default: the server's")
    add.set_defaults(handler=add_command, writes=True)
    listing = sub.add_parser("list", help="list the named tokens (never their secrets)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=list_command)
    revoke = sub.add_parser("revoke", help="revoke a named token (servers refuse it within seconds)")
    revoke.add_argument("name")
    revoke.set_defaults(handler=revoke_command, writes=True)


def token_command(args: argparse.Namespace) -> int:
    from limbic.core.mcp.token import load_token, rotate_token

    token = rotate_token() if args.rotate else load_token()
    print(token)
    if args.rotate:
        print("limbic: token rotated; update the clients that use HTTP", file=sys.stderr)
    return 0


def _service(args: argparse.Namespace):
    return open_service(args, origin="cli", embedder=None)  # tokens need no model


def add_command(args: argparse.Namespace) -> int:
    from limbic.core.mcp.profiles import profile

    tools = None if args.tools is None else profile(args.tools).flag
    service = _service(args)
    try:
        secret = service.projects.add_token(args.name, project=args.project, tools=tools)
    finally:
        service.close()
    print(secret)
    served = f"the tools of {tools}" if tools else "the server's tools"
    bound = f"; its calls are bound to project {args.project!r}" if args.project else ""
    print(f"limbic: token {args.name!r} created; it will not be shown again. Clients send it as "
          f"'Authorization: Bearer <token>' and are served {served}; their writes are logged as mcp:{args.name}"
          f"{bound}", file=sys.stderr)
    return 0


def list_command(args: argparse.Namespace) -> int:
    service = _service(args)
    try:
        tokens = service.projects.list_tokens()
        tools = {t.name: service.projects.token_tools(t.name) for t in tokens}
    finally:
        service.close()
    if args.json:
        print_json([{"name": t.name, "created": iso(t.created_at), "revoked": iso(t.revoked_at), "project": t.project,
                     "tools": tools[t.name]} for t in tokens])
        return 0
    print(f"{'name':<24} {'created':<20} {'revoked':<20} {'project':<16} tools")
    print(f"{'local':<24} {'-':<20} {'-':<20} {'-':<16} the server's (this machine's token file: `limbic mcp token`)")
    for t in tokens:
        served = tools[t.name] or "the server's"
        print(f"{t.name:<24} {_when(t.created_at):<20} {_when(t.revoked_at) if t.revoked else '-':<20} "
              f"{t.project or '-':<16} {served}")
    return 0


def _when(at: float | None) -> str:
    return (iso(at) or "-")[:19].replace("T", " ")


def revoke_command(args: argparse.Namespace) -> int:
    service = _service(args)
    try:
        token = service.projects.revoke_token(args.name)
    finally:
        service.close()
    print(f"limbic: token {token.name!r} revoked ({_when(token.revoked_at)} UTC); servers refuse it within "
          "seconds", file=sys.stderr)
    return 0
