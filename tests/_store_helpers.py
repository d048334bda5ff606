"""Helpers for tests of the store: a database file as an older release left it."""

from __future__ import annotations

import json
from pathlib import Path

import apsw

from limbic.core.store.schema import shipped_migrations


def database_at_version(path: Path, version: int) -> apsw.Connection:
    """A new database file at ``path`` with the migrations up to ``version`` applied (``PRAGMA
    user_version`` set), as a release of that schema wrote it; the caller adds rows and closes it."""
    conn = apsw.Connection(str(path))
    for number, _, sql in shipped_migrations():
        if number <= version:
            conn.execute(sql)
    conn.execute(f"PRAGMA user_version = {int(version)}")
    return conn


WORDS = "cache queue database index vector search graph memory agent tool python rust server client".split()


def fill(service, count, start=0):
    """Create entities ``entity <start>`` … with one to three observations of six random ``WORDS`` each."""
    import numpy as np

    from limbic.core.models import EntityInput, ObservationInput

    rng = np.random.default_rng(start)
    service.entities.create_entities([
        EntityInput(f"entity {i}", "T", tuple(ObservationInput(" ".join(rng.choice(WORDS, 6))) for _ in range(1 + i % 3)))
        for i in range(start, start + count)
    ])


def project_files(folder: Path) -> list[Path]:
    """Two memory files, ``alpha.jsonl`` and ``beta.jsonl``, each an entity ``Notes`` whose observation names its
    project: the same name, to be imported into two projects."""
    paths = []
    for project in ("alpha", "beta"):
        path = folder / f"{project}.jsonl"
        path.write_text(json.dumps({"type": "entity", "name": "Notes", "entityType": "doc",
                                    "observations": [f"{project} notes"]}) + "\n")
        paths.append(path)
    return paths
