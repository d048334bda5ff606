"""``limbic db copy SRC DST [--json]``: copy a whole memory between any two backends (docs/team.md)."""

from __future__ import annotations

import argparse
import sys

from limbic.core.cli.common import print_json
from limbic.core.errors import ValidationError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("db", help="copy a memory between SQLite files and PostgreSQL databases",
                                   description="Work on whole memories, by address: a SQLite file path or a "
                                   "postgresql://user@host/database URL.")
    commands = parser.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    copy = commands.add_parser(
        "copy", help="copy everything of SRC into the empty memory DST",
        description="Copy a whole memory (entities, observations, relations, usage history, search logs, "
        "settings, tuning history, reflections, decisions and vectors) into an empty memory, in one "
        "transaction checked by counting every table. Either address may be a file or a postgresql:// URL.")
    copy.add_argument("source", metavar="SRC", help="the memory to copy (file path or postgresql:// URL)")
    copy.add_argument("destination", metavar="DST", help="an empty or new memory (file path or postgresql:// URL)")
    copy.add_argument("--json", action="store_true", help="print the counts as JSON")
    copy.set_defaults(handler=run_copy, writes=True)


def run_copy(args: argparse.Namespace) -> int:
    from limbic.core.store.backend import checked_address, open_database
    from limbic.core.store.copying import copy_memory

    try:
        source_address, target_address = checked_address(args.source), checked_address(args.destination)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    if source_address == target_address:
        raise ValidationError("SRC and DST are the same memory")
    source = open_database(source_address)
    try:
        destination = open_database(target_address)
        try:
            report = copy_memory(source, destination)
            shown = (source.shown_address, destination.shown_address)
        finally:
            destination.close()
    finally:
        source.close()
    if args.json:
        print_json({"source": shown[0], "destination": shown[1], **report.to_dict()})
        return 0
    total = sum(report.rows.values())
    print(f"copied {report.rows.get('entities', 0):,} entities, {report.rows.get('observations', 0):,} observations, "
          f"{report.rows.get('relations', 0):,} relations and {report.vectors:,} vectors "
          f"({total:,} rows in {len(report.rows)} tables, counts checked) in {report.seconds:.1f} s")
    print(f"  from {shown[0]}\n  to   {shown[1]}", file=sys.stderr)
    return 0
