"""Re-embed the stored entities after the embedding model changed (issue 3, "Lifecycle"), or after an
upgrade to schema 4 (observation vectors, issue 9 item 5).

``entity_embedding_meta`` (migration 2) and ``observation_embedding_meta`` (migration 4) record the
model that made each vector. :func:`reembed` selects the entities whose entity vector or one of whose
live observation vectors is missing or was made by another model, and embeds them again in batches,
one transaction per batch, through the store's own indexing code
(:func:`limbic.core.store.indexing.reindex`), so the passages are exactly the ones the service writes
(observations that already have a current vector are not embedded again). An interrupted run loses
at most the batch in flight; running it again continues where it stopped. When the new model's
dimension differs, both vec0 tables are recreated first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import apsw

from limbic.core.embedding.base import Embedder
from limbic.core.store.database import (
    OBSERVATION_VECTOR_TABLE,
    VECTOR_TABLE,
    Database,
    put_setting,
    vector_dimension,
)
from limbic.core.store.indexing import reindex


@dataclass(frozen=True, slots=True)
class ReembedReport:
    """Outcome of :func:`reembed`: entities embedded, entities that needed it, table recreated, seconds."""

    model: str
    embedded: int
    stale: int
    recreated_table: bool
    seconds: float


_MISSING_OBSERVATION_VECTORS = (
    "SELECT o.entity_id FROM observations o LEFT JOIN observation_embedding_meta m ON m.observation_id = o.id "
    "WHERE o.superseded_at IS NULL AND (m.model IS NULL OR m.model != ?1 OR m.entity_id != o.entity_id{missing})"
)


def stale_vector_count(conn: apsw.Connection, model: str) -> int:
    """Entities without an entity vector made by ``model`` plus live observations without an observation
    vector made by ``model``."""
    count = conn.execute(
        "SELECT (SELECT count(*) FROM entities e LEFT JOIN entity_embedding_meta m ON m.entity_id = e.id "
        "        WHERE m.model IS NOT ?1)"
        " + (SELECT count(*) FROM observations o LEFT JOIN observation_embedding_meta m "
        "    ON m.observation_id = o.id WHERE o.superseded_at IS NULL AND m.model IS NOT ?1)",
        (model,),
    ).get
    return int(count) if isinstance(count, int) else 0


def stale_entity_ids(database: Database, model: str) -> list[int]:
    """Ids (ascending) of entities without an entity vector made by ``model``, or with a live observation
    that has none."""
    conn = database.read()
    tables = {t for t in (VECTOR_TABLE, OBSERVATION_VECTOR_TABLE) if vector_dimension(conn, t) is not None}
    missing_vector = f" OR e.id NOT IN (SELECT rowid FROM {VECTOR_TABLE})" if VECTOR_TABLE in tables else ""
    missing_observation = (f" OR o.id NOT IN (SELECT rowid FROM {OBSERVATION_VECTOR_TABLE})"
                           if OBSERVATION_VECTOR_TABLE in tables else "")
    rows: list[tuple[Any, ...]] = conn.execute(
        "SELECT e.id FROM entities e LEFT JOIN entity_embedding_meta m ON m.entity_id = e.id "
        f"WHERE m.model IS NULL OR m.model != ?1{missing_vector} "
        f"UNION {_MISSING_OBSERVATION_VECTORS.format(missing=missing_observation)} ORDER BY 1",
        (model,),
    ).fetchall()
    return [int(row[0]) for row in rows]


def reembed(database: Database, embedder: Embedder, progress: Callable[[int, int], None] | None = None,
            batch_size: int = 64) -> ReembedReport:
    """Embed again every entity whose stored vector was not made by ``embedder.name``.

    Args:
        database: the open store.
        embedder: the new model; vectors are ``(n, embedder.dimension) float32``.
        progress: called as ``progress(done, total)`` after each committed batch.
        batch_size: entities per transaction (the write lock is held while a batch is embedded).

    Returns: a :class:`ReembedReport`. Raises StoreBusyError when another process holds the write lock
    past the busy timeout; the batches committed before stay.
    """
    started = time.perf_counter()
    with database.maintenance() as conn:
        recreated = database.ensure_vector_table(conn, embedder.dimension, embedder.name)
    stale = stale_entity_ids(database, embedder.name)
    done = 0
    if progress:
        progress(0, len(stale))
    for start in range(0, len(stale), max(1, batch_size)):
        batch = stale[start : start + batch_size]
        with database.write("system", "reembed") as txn:  # logged: views and vector caches follow
            reindex(database, txn.conn, batch, embedder)
            txn.touch(batch)
        done += len(batch)
        if progress:
            progress(done, len(stale))
    with database.maintenance() as conn:
        put_setting(conn, "embedding_model", embedder.name)
    return ReembedReport(embedder.name, done, len(stale), recreated, time.perf_counter() - started)
