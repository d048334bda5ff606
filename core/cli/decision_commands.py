"""``limbic decisions [--limit N] [--json]`` and ``limbic undo [ID] [--json]``: the log of applied decisions and
undoing one (docs/curation.md "Decisions and undo").

``decisions`` lists, newest first, every decision applied from the app's Review view, over MCP
(``resolve_conflict``, ``merge_entities``, ``set_status``, ``execute_entity_split``) or by ``limbic gc
--archive/--delete``: its id, when, who, what, and whether it was undone. ``undo`` takes back one exactly —
every row it changed, ids and statuses included — by its id, or the newest still standing.
"""

from __future__ import annotations

import argparse

from limbic.core.cli.common import open_service, print_json
from limbic.core.models import iso
from limbic.core.service import decision_log
from limbic.core.service.history import origin_label
from limbic.core.store.decision_log import DecisionRow


def register(subparsers: argparse._SubParsersAction) -> None:
    listed = subparsers.add_parser("decisions", help="the decisions applied (Review, MCP, gc), newest first",
                                   description="The log of applied decisions, newest first: id, when, who, what, "
                                   "and whether it was undone. `limbic undo ID` takes one back.")
    listed.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    listed.add_argument("--json", action="store_true", help="print JSON")
    listed.set_defaults(handler=run_decisions)
    undo = subparsers.add_parser("undo", help="undo an applied decision exactly (default: the newest standing)",
                                 description="Undo one decision of `limbic decisions` exactly, as one "
                                 "transaction: every row it changed comes back, ids and statuses included.")
    undo.add_argument("id", nargs="?", type=int, help="the decision's id (default: the newest not undone)")
    undo.add_argument("--json", action="store_true", help="print JSON")
    undo.set_defaults(handler=run_undo, writes=True)


def _line(row: DecisionRow) -> str:
    when = (iso(row.made_at) or "")[:19].replace("T", " ")
    undone = f"  (undone by {origin_label(row.undone_by or '')})" if row.undone else ""
    return f"{row.id:>6}  {when}  {origin_label(row.origin):<20} {row.kind}: {row.description}{undone}"


def run_decisions(args: argparse.Namespace) -> int:
    service = open_service(args, embedder=None)  # reading the log needs no model
    try:
        rows = service.history.decisions(args.limit)
    finally:
        service.close()
    if args.json:
        print_json([{**r.to_dict(), "madeAt": iso(r.made_at), "undoneAt": iso(r.undone_at)} for r in rows])
        return 0
    if not rows:
        print("no decision has been applied yet")
    for row in rows:
        print(_line(row))
    return 0


def run_undo(args: argparse.Namespace) -> int:
    service = open_service(args)
    try:
        row = decision_log.undo(service, args.id, origin="cli")
    finally:
        service.close()
    if args.json:
        print_json({**row.to_dict(), "madeAt": iso(row.made_at), "undoneAt": iso(row.undone_at)})
        return 0
    print(f"undone: {row.kind}: {row.description} (decision {row.id}, made by {origin_label(row.origin)})")
    return 0
