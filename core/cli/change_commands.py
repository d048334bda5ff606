"""``limbic changes [--entity NAME] [--limit N] [--json]``: who changed what, newest first.

Each line is one committed change: when (UTC), who (``app``, ``cli``, ``import``, ``agent (stdio)``,
``alice (MCP)`` for the MCP token ``alice``; :func:`limbic.core.service.history.origin_label`), the operation
and how many entities it touched.
"""

from __future__ import annotations

import argparse

from limbic.core.cli.common import open_service, print_json
from limbic.core.models import iso
from limbic.core.service.history import origin_label


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("changes", help="the change log: who changed what, newest first",
                                   description="The memory's change log, newest first, with who made each "
                                               "change (the origin: app, cli, import, stdio, mcp:NAME).")
    parser.add_argument("--entity", metavar="NAME", help="only the changes that touched this entity")
    parser.add_argument("--limit", type=int, default=50, help="at most this many changes (default 50)")
    parser.add_argument("--json", action="store_true", help="print JSON (origin as stored)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    service = open_service(args, origin="cli", embedder=None)  # reading the log needs no model
    try:
        changes = (service.history.entity_history(args.entity, args.limit) if args.entity
                   else service.history.recent_changes(args.limit))
    finally:
        service.close()
    if args.json:
        print_json([{"id": c.change_id, "at": iso(c.at), "origin": c.origin, "op": c.op,
                     "entities": len(c.entity_ids)} for c in changes])
        return 0
    for c in changes:
        when = (iso(c.at) or "")[:19].replace("T", " ")
        print(f"{when}  {origin_label(c.origin):<24} {c.op.replace('_', ' ')} ({len(c.entity_ids)} entities)")
    return 0
