"""``limbic stats [--json]``: counts of the stored graph."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from limbic.core.cli.common import open_service, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("stats", help="counts of entities, relations, observations")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    service = open_service(args, embedder=None)
    try:
        stats = service.entities.stats()
        data = asdict(stats) | {"database": service.shown_address}
    finally:
        service.close()
    if args.json:
        print_json(data)
        return 0
    print(f"database      {data['database']}")
    print(f"entities      {stats.entities:,}")
    print(f"relations     {stats.relations:,}")
    print(f"observations  {stats.observations:,} (+{stats.superseded_observations:,} superseded)")
    print(f"vectors       {stats.embedded_entities:,} ({stats.embedding_model or 'no model'})")
    types = ", ".join(f"{t} {n}" for t, n in list(stats.entity_types.items())[:8])
    print(f"types         {types}")
    return 0
