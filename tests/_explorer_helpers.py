"""The real corpus as the explorer tests use it: every memory file of ``../shared/corpus`` imported into one
database (327 entities, 266 relations, 1,681 observations) with the deterministic HashingEmbedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.io.importer import import_files
from limbic.core.service import MemoryService
from limbic.core.store.database import Database

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def corpus_or_skip() -> Path:
    """The corpus folder; the calling test skips when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"real corpus not found at {CORPUS}")
    return CORPUS


def corpus_files(corpus: Path) -> list[Path]:
    """The memory files of the corpus folder (its manifest left out)."""
    return sorted(p for p in corpus.iterdir() if p.suffix in (".json", ".jsonl") and p.name != "MANIFEST.json")


def corpus_database(corpus: Path, path: Path) -> Path:
    """Import every corpus file into a new database at ``path``; returns ``path``."""
    service = MemoryService(Database(path), HashingEmbedder(), origin="cli")
    try:
        report = import_files(service, corpus_files(corpus))
        assert report.ok, report.summary(limit=5)
        service.wait_for_vectors(timeout=60)
    finally:
        service.close()
    return path
