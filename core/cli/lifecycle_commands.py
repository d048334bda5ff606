"""``limbic gc``: the lifecycle's upkeep from the command line (docs/lifecycle.md).

``gc`` sweeps the text of expired observations out of the indexes (the rows stay, shown as expired).
"""

from __future__ import annotations

import argparse

from limbic.core.cli.common import open_service, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    gc = subparsers.add_parser("gc", help="sweep expired observations out of the search indexes")
    gc.add_argument("--json", action="store_true", help="print JSON")
    gc.set_defaults(handler=run_gc)


def run_gc(args: argparse.Namespace) -> int:
    service = open_service(args)
    try:
        swept = service.sweep_expired(origin="cli")
    finally:
        service.close()
    if args.json:
        print_json({"swept": {"entities": list(swept.entities), "expiredObservations": swept.expired}})
        return 0
    print(f"expired text swept from {len(swept.entities):,} entities; "
          f"{swept.expired:,} expired observations kept as history")
    for name in swept.entities[:20]:
        print(f"  {name}")
    return 0
