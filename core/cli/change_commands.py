"""``limbic changes [--entity NAME] [--limit N] [--json]``: who changed what, newest first;
``limbic timeline [--agent NAME | --origin ORIGIN] [--since WHEN] [--until WHEN] [--limit N] [--json]``: what an
agent searched and was shown, opened or marked used, and wrote, newest first.

Each line is one committed change (or step): when (UTC), who (``app``, ``cli``, ``import``, ``agent (stdio)``,
``alice (MCP)`` for the MCP token ``alice``; :func:`limbic.core.service.history.origin_label`), the operation
and how many entities it touched (the timeline: the entities themselves).
"""

from __future__ import annotations

import argparse
import re
import time

from limbic.core.cli.common import open_service, print_json
from limbic.core.lifecycle.expiry import parse_instant
from limbic.core.models import TimelineEvent, iso
from limbic.core.service.history import STEP_VERBS, origin_label

AGO = re.compile(r"(\d+(?:\.\d+)?)([mhd])")
AGO_SECONDS = {"m": 60.0, "h": 3600.0, "d": 86_400.0}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("changes", help="the change log: who changed what, newest first",
                                   description="The memory's change log, newest first, with who made each "
                                               "change (the origin: app, cli, import, stdio, mcp:NAME).")
    parser.add_argument("--entity", metavar="NAME", help="only the changes that touched this entity")
    parser.add_argument("--limit", type=int, default=50, help="at most this many changes (default 50)")
    parser.add_argument("--json", action="store_true", help="print JSON (origin as stored)")
    parser.set_defaults(handler=run)
    timeline = subparsers.add_parser(
        "timeline", help="what an agent searched and was shown, opened or used, and wrote",
        description="An agent's timeline, newest first: each search with the entities it showed, every entity "
                    "opened or marked used (with the search that showed it, if any), and each write (the search "
                    "log, the use log and the change log).")
    who = timeline.add_mutually_exclusive_group()
    who.add_argument("--agent", metavar="NAME", help="the agent of the MCP token NAME (default: every agent)")
    who.add_argument("--origin", metavar="ORIGIN", help="an origin as stored: stdio, gui, cli, mcp:NAME…")
    timeline.add_argument("--since", metavar="WHEN", help="from this moment: an ISO 8601 date or date-time (UTC "
                          "unless it says otherwise), or a time ago such as 90m, 2h, 7d")
    timeline.add_argument("--until", metavar="WHEN", help="up to this moment (same forms; a date is its whole day)")
    timeline.add_argument("--limit", type=int, default=100, help="at most this many steps (default 100)")
    timeline.add_argument("--json", action="store_true", help="print JSON (origin as stored, times in ISO 8601)")
    timeline.set_defaults(handler=run_timeline)


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


def moment(text: str | None, what: str, *, end_of_day: bool = False) -> float | None:
    """``--since``/``--until``: an ISO 8601 date or date-time, or a time ago (``90m``, ``2h``, ``7d``), as UTC
    seconds. Raises ValidationError."""
    if text is None:
        return None
    ago = AGO.fullmatch(text.strip())
    if ago:
        return time.time() - float(ago.group(1)) * AGO_SECONDS[ago.group(2)]
    return parse_instant(text, what, end_of_day=end_of_day)


def describe(event: TimelineEvent) -> str:
    """One step of a timeline in words: ``searched “query” → 3 shown: A, B, C``, ``opened A (shown by search
    #N)``, ``opened B`` (no logged search showed it)…"""
    names = ", ".join(event.entities)
    if event.kind == "search":
        return f"searched “{event.detail}” → {len(event.entities)} shown" + (f": {names}" if names else "")
    if event.kind == "wrote":
        return f"{event.detail.replace('_', ' ')}" + (f": {names}" if names else "")
    searches = ", ".join(f"#{i}" for i in event.searches)
    return f"{STEP_VERBS[event.kind]} {names}" + (f" (shown by search {searches})" if searches else "")


def run_timeline(args: argparse.Namespace) -> int:
    since = moment(args.since, "--since")
    until = moment(args.until, "--until", end_of_day=True)
    service = open_service(args, origin="cli", embedder=None)  # reading the logs needs no model
    try:
        events = service.history.timeline(args.agent, origin=args.origin, since=since, until=until, limit=args.limit)
    finally:
        service.close()
    if args.json:
        print_json([{"at": iso(e.at), "origin": e.origin, "kind": e.kind,
                     **({"query": e.detail, "mode": e.mode} if e.kind == "search" else
                        {"op": e.detail} if e.kind == "wrote" else {}),
                     "entities": list(e.entities), "searchIds": list(e.searches)} for e in events])
        return 0
    for e in events:
        when = (iso(e.at) or "")[:19].replace("T", " ")
        print(f"{when}  {origin_label(e.origin):<24} {describe(e)}")
    return 0
