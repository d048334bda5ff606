"""``limbic stats [--json]``: counts of the stored graph and its languages; ``limbic doctor [--json]``: whether
the memory has what its search needs (a model, its vectors, a model that reads its languages)."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from limbic.core.cli.common import open_service, print_json
from limbic.core.embedding import model_store
from limbic.core.embedding.languages import LanguageProfile, advice, summary


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("stats", help="counts of entities, relations, observations")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)
    doctor = subparsers.add_parser("doctor", help="check the memory's model, vectors and languages")
    doctor.add_argument("--json", action="store_true", help="print JSON")
    doctor.set_defaults(handler=run_doctor)


def _languages(found: LanguageProfile) -> dict:
    return {"languages": {language: round(share, 3) for language, share in found.shares.items()},
            "model_advice": advice(found)}


def run(args: argparse.Namespace) -> int:
    service = open_service(args, embedder=None)
    try:
        stats = service.entities.stats()
        found = service.entities.languages()
        data = asdict(stats) | {"database": service.shown_address} | _languages(found)
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
    print(f"languages     {summary(found)}")
    if data["model_advice"]:
        print(f"advice        {data['model_advice']}")
    return 0


def run_doctor(args: argparse.Namespace) -> int:
    active = model_store.resolve_active()
    service = open_service(args, embedder=None)
    try:
        stats = service.entities.stats()
        found = service.entities.languages()
        address = service.shown_address
    finally:
        service.close()
    model = f"{active[0].name} ({active[1]})" if active else None
    data = {"database": address, "model": model, "entities": stats.entities,
            "embedded_entities": stats.embedded_entities, "stored_vectors_model": stats.embedding_model,
            **_languages(found)}
    if args.json:
        print_json(data)
        return 0
    print(f"database      {address}")
    print(f"model         {model or 'none installed: search uses keywords only (limbic model install)'}")
    print(f"vectors       {stats.embedded_entities:,} of {stats.entities:,} entities "
          f"({stats.embedding_model or 'none stored'})")
    print(f"languages     {summary(found)}")
    print(f"advice        {data['model_advice'] or 'none'}")
    return 0
