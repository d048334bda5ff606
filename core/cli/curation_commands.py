"""``limbic report [--json] [--kind K]... [--limit N]`` (the consolidation report: what needs a decision) and
``limbic split-thresholds [TYPE=N]...`` (show or set how many observations an entity of a type may hold).

The report lists, by kind, how many decisions are open and the first ones: duplicate observations and
entities, entities to split, orphans, placeholders left by imports (and the lifecycle's kinds when present).
It reads the stored vectors only, so it needs no model. ``--json`` prints the ``consolidation_report`` shape.
"""

from __future__ import annotations

import argparse
import time

from limbic.core.cli.common import open_service, print_json
from limbic.core.errors import ValidationError
from limbic.core.models import iso
from limbic.core.service import review


def register(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser(
        "report", help="what in the memory needs a decision (duplicates, splits, orphans, placeholders, …)",
        description="The consolidation report: for each kind of decision, how many are open and the first "
        "ones with their options. Settle them in the app's Review view or its Curation window.")
    report.add_argument("--kind", action="append", metavar="KIND", help="only this kind (repeatable)")
    report.add_argument("--limit", type=int, default=10, metavar="N", help="items listed per kind (default 10)")
    report.add_argument("--json", action="store_true", help="print JSON (the consolidation_report shape)")
    report.set_defaults(handler=run_report)
    thresholds = subparsers.add_parser(
        "split-thresholds", help="show or set the observations an entity of a type may hold before splitting",
        description="Without arguments, print the thresholds (type: observations; * = any other type). "
        "With TYPE=N pairs, save them (e.g. Sesion=15 Project=30 '*=20').")
    thresholds.add_argument("pairs", nargs="*", metavar="TYPE=N")
    thresholds.set_defaults(handler=run_thresholds, writes=True)


def run_report(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    service = open_service(args, embedder=None)
    try:
        sections = review.review(service, args.kind, args.limit)
    finally:
        service.close()
    if args.json:
        out = [section.to_dict() for section in sections]
        for shown in out:
            for item in shown["items"]:
                item["createdAt"] = iso(item["createdAt"])
        print_json({"sections": out, "totals": {s.kind: s.total for s in sections},
                    "seconds": round(time.perf_counter() - started, 3)})
        return 0
    for section in sections:
        grouped = f" in {section.rows:,} rows" if section.rows != section.total else ""
        print(f"{section.kind}: {section.total:,}{grouped}")
        for decision in section.items:
            print(f"  {decision.title}  [{' / '.join(decision.options)}]  {decision.key}")
        if section.total > len(section.items):
            print(f"  … {section.total - len(section.items):,} more")
        for alike in section.families:
            print(f"  ▸ {alike.title}  [{' / '.join(alike.options)}]")
    return 0


def run_thresholds(args: argparse.Namespace) -> int:
    values: dict[str, int] = {}
    for pair in args.pairs:
        kind, _, count = pair.rpartition("=")
        if not kind or not count.strip().isdecimal():
            raise ValidationError(f"expected TYPE=N, got {pair!r}")
        values[kind] = int(count)
    service = open_service(args, embedder=None)
    try:
        saved = service.splits.set_split_thresholds(values) if values else service.splits.split_thresholds()
    finally:
        service.close()
    for kind, count in sorted(saved.items()):
        print(f"{kind}\t{count}")
    return 0
