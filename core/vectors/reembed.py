"""Re-embed the stored entities after the embedding model changed, or after an
upgrade (observation vectors in schema 4, pending marks in schema 7).

``entity_embedding_meta`` and ``observation_embedding_meta`` record the model that made each vector.
:func:`reembed` marks pending (:mod:`limbic.core.vectors.pending`) every entity that lacks a vector of
the model — its entity vector, or a live observation's
(:func:`~limbic.core.store.vector_meta.stale_entity_ids`) — and fills the marks: texts are read in one snapshot, embedded with no lock held, and written
in short transactions, so the passages are exactly the ones the service writes and texts that already
have a current vector are not embedded again. An interrupted run loses at most the step in flight;
running it again continues where it stopped. When the new model's dimension differs, both vec0 tables
are recreated first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from limbic.core.embedding.base import Embedder
from limbic.core.store import reads
from limbic.core.store.database import Database, WriteTransaction
from limbic.core.store.indexing import mark_pending
from limbic.core.store.schema import LANDED_OP, ensure_vector_table, put_setting
from limbic.core.store.vector_meta import stale_entity_ids
from limbic.core.vectors.pending import FILL_BATCH, fill


@dataclass(frozen=True, slots=True)
class ReembedReport:
    """Outcome of :func:`reembed`: entities embedded, entities that needed it, table recreated, seconds."""

    model: str
    embedded: int
    stale: int
    recreated_table: bool
    seconds: float


def reembed(database: Database, embedder: Embedder, progress: Callable[[int, int], None] | None = None,
            batch_size: int = FILL_BATCH) -> ReembedReport:
    """Embed every entity that lacks a vector of ``embedder.name`` (and whatever else is pending).

    Args:
        database: the open store.
        embedder: the new model; vectors are ``(n, embedder.dimension) float32``.
        progress: called as ``progress(done, total)`` (entities) after each committed step.
        batch_size: entities per step (the model runs with no lock held; each step commits on its own).

    Returns: a :class:`ReembedReport` (``embedded``: entities whose vectors were written). Raises
    StoreBusyError when another process holds the write lock past the busy timeout; the steps committed
    before stay.
    """
    started = time.perf_counter()
    with database.maintenance() as conn:
        recreated = ensure_vector_table(conn, embedder.dimension, embedder.name)
    stale = stale_entity_ids(database.read(), embedder.name)
    with database.write("system", "reembed") as txn:
        mark_pending(txn.conn, stale, time.time())
    total = reads.pending_vector_count(database.read())
    if progress:
        progress(0, total)

    def write(body: Callable[[WriteTransaction], list[int]]) -> list[int]:
        with database.write("system", LANDED_OP) as txn:  # logged: vector caches follow
            return body(txn)

    done = 0

    def step(landed: int, _total: int) -> None:
        nonlocal done
        done = landed
        if progress:
            progress(landed, max(total, landed))

    fill(database, embedder, write, progress=step, limit=max(1, batch_size))
    with database.maintenance() as conn:
        put_setting(conn, "embedding_model", embedder.name)
    return ReembedReport(embedder.name, done, len(stale), recreated, time.perf_counter() - started)
