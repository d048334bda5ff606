"""Helpers of the import/export tests: a comparable snapshot of a stored graph, a fresh service."""

from __future__ import annotations

from pathlib import Path

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

FIXTURES = Path(__file__).parent / "fixtures" / "memory"
FIXTURE_FILES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".json", ".jsonl"))


def fresh_service(address: str | Path) -> MemoryService:
    """A service on the memory at ``address`` (a file path or a ``postgresql://`` URL), hashing embedder."""
    return MemoryService(open_database(address), HashingEmbedder(), origin="cli")


def snapshot(service: MemoryService) -> tuple[dict, list]:
    """Everything that defines the graph, timestamps rounded to the microsecond as the ISO export keeps them.

    (Rounding to the millisecond made a value near a boundary round differently after the trip.)
    """
    graph = service.entities.read_graph(include_ended=True)
    entities = {
        e.name: (e.entity_type, e.status, round(e.created_at, 6), round(e.updated_at, 6), tuple(sorted(
            (o.content, o.kind, o.weight, o.superseded_at is not None, round(o.created_at, 6),
             None if o.expires_at is None else round(o.expires_at, 6)) for o in e.observations)))
        for e in graph.entities
    }
    relations = sorted((r.source, r.target, r.relation_type, r.active, r.context, round(r.created_at, 6))
                       for r in graph.relations)
    return entities, relations
