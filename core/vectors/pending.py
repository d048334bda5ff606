"""Vectors computed outside the write transaction: pending marks, and filling them.

A write commits its text, its FTS rows and a *pending mark* for each entity it touched in one
transaction, with no model call (:func:`limbic.core.store.indexing.reindex`). Filling a mark is three
steps, only the last of which holds the write lock (the rows they read and write:
:mod:`limbic.core.store.pending_vectors`):

1. :func:`plan` reads, in one read snapshot, the texts of the pending entities that have no vector of
   the model for their current text (observation passages whose hash differs or that have none; the
   entity passage when :func:`~limbic.core.store.indexing.entity_passage` gives one);
2. :func:`embed` runs the model on them, batches sorted by length, ``(n, d) float32``, holding the
   embedding turn that processes sharing the file take one at a time (:mod:`limbic.core.vectors.turns`);
3. :func:`land` writes the vectors and their meta rows in a short write transaction and removes each
   mark, but only for entities whose mark still has the generation that was read in step 1: a write
   made meanwhile bumped it, so that entity is filled again from its new text.

The marks are rows of ``pending_vectors`` (migration 007): a crash between the text commit and the
vector commit loses nothing, and the next :func:`fill` computes what was pending. Only new or changed
texts are embedded: appending one observation to an entity embeds that one observation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from limbic.core.embedding.base import Embedder, holding_memory
from limbic.core.store import Connection, pending_vectors, reads
from limbic.core.store.database import Database, WriteTransaction
from limbic.core.store.indexing import entity_passage, observation_passage, text_hash
from limbic.core.store.pending_vectors import pending_entities, store_observation_vectors
from limbic.core.store.schema import ensure_vector_table
from limbic.core.vectors.turns import model_turn

FILL_BATCH = 64
"""Entities per :func:`fill` step (one read, one model run of their texts, one short write transaction)."""


@dataclass(frozen=True, slots=True)
class Work:
    """The texts of one step of :func:`fill`.

    ``generations``: ``{entity id: generation}`` read with the texts; ``passages``: ``(entity id, text,
    hash)`` of entity vectors to make; ``observations``: ``(observation id, entity id, text, hash)``."""

    generations: dict[int, int]
    passages: list[tuple[int, str, int]]
    observations: list[tuple[int, int, str, int]]

    @property
    def texts(self) -> list[str]:
        """Every text to embed: passages first, then observations."""
        return [p[1] for p in self.passages] + [o[2] for o in self.observations]


def plan(conn: Connection, generations: dict[int, int], embedder: Embedder) -> Work:
    """What the pending entities ``generations`` need (call inside one read snapshot)."""
    entities, stored, live = pending_vectors.texts(conn, list(generations), time.time())
    passages: list[tuple[int, str, int]] = []
    observations: list[tuple[int, int, str, int]] = []
    for eid, name, etype, status, model, digest in entities:
        contents = [content for _, content in live.get(eid, [])]
        passage = entity_passage(name, etype, status, contents, embedder)
        if model != embedder.name or digest != text_hash(passage):
            passages.append((int(eid), passage, text_hash(passage)))
        for oid, content in live.get(eid, []):
            text = observation_passage(name, content)
            if stored.get(oid) != (embedder.name, text_hash(text)):
                observations.append((oid, int(eid), text, text_hash(text)))
    return Work(dict(generations), passages, observations)


def embed(work: Work, embedder: Embedder, batch_size: int = 64) -> np.ndarray:
    """The vectors of ``work.texts`` in that order, ``(n, embedder.dimension) float32``; the model runs on
    batches of similar length (sorted), so that little of each batch is padding."""
    texts = work.texts
    out = np.empty((len(texts), embedder.dimension), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), batch_size):
        chosen = order[start : start + batch_size]
        out[chosen] = np.asarray(embedder.embed([texts[i] for i in chosen]), dtype=np.float32)
    return out


def land(database: Database, txn: WriteTransaction, work: Work, vectors: np.ndarray, embedder: Embedder) -> list[int]:
    """Write the vectors of ``work`` for the entities whose mark is unchanged, and remove those marks.

    Runs in the caller's write transaction (``txn``); the entities landed are touched, so the change
    log tells vector caches and views. Entities deleted meanwhile lose their mark with them (cascade).
    Returns the ids of the entities landed.
    """
    conn = txn.conn
    current = pending_vectors.generations(conn, list(work.generations))
    ready = {e for e, g in work.generations.items() if current.get(e) == g}
    if not ready:
        return []
    ensure_vector_table(conn, embedder.dimension, embedder.name)
    now = time.time()
    passage_rows = [(i, p) for i, p in enumerate(work.passages) if p[0] in ready]
    offset = len(work.passages)
    observation_rows = [(offset + i, o) for i, o in enumerate(work.observations) if o[1] in ready]
    pending_vectors.store_entity_vectors(conn, [(p[0], p[2], vectors[i].tobytes()) for i, p in passage_rows],
                                         embedder.name, now)
    store_observation_vectors(conn, [(o[0], o[1], o[3], vectors[i]) for i, o in observation_rows], embedder.name, now)
    landed = sorted(ready)
    pending_vectors.clear(conn, {e: work.generations[e] for e in landed})
    txn.touch(landed)
    return landed


Writer = Callable[[Callable[[WriteTransaction], list[int]]], list[int]]
"""Runs its argument in one write transaction (logged, published) and returns what it returned."""


def fill_step(database: Database, embedder: Embedder, write: Writer, limit: int = FILL_BATCH,
              only: Sequence[int] | None = None, queued_before: float | None = None) -> tuple[int, int]:
    """Fill up to ``limit`` pending entities (among ``only``, and marked before ``queued_before``, when
    given; :func:`pending_entities`): returns ``(entities landed, texts embedded)``; ``(0, 0)`` when
    nothing is pending. ``write`` opens the short write transaction."""
    conn = database.read()
    with conn:
        generations = pending_entities(conn, limit, only, queued_before)
        if not generations:
            return 0, 0
        work = plan(conn, generations, embedder)
    if work.texts:
        with model_turn(database.path):  # one process embeds at a time (core/vectors/turns.py)
            vectors = embed(work, embedder)
    else:
        vectors = np.empty((0, embedder.dimension), dtype=np.float32)
    landed = write(lambda txn: land(database, txn, work, vectors, embedder))
    return len(landed), len(work.texts)


def fill(database: Database, embedder: Embedder, write: Writer, *,
         progress: Callable[[int, int], None] | None = None, limit: int = FILL_BATCH,
         only: Sequence[int] | None = None) -> int:
    """Fill every pending mark (of ``only`` when given), step by step (:func:`fill_step`);
    ``progress(done, total)`` (entities) after each step, where ``total`` is the number pending when
    called plus those marked meanwhile. Returns the number of texts embedded. The embedder keeps its working
    memory from step to step and gives it back at the end (:func:`~limbic.core.embedding.base.holding_memory`)."""
    done, embedded = 0, 0
    total = reads.pending_vector_count(database.read()) if only is None else len(only)
    with holding_memory(embedder):  # the model's memory is given back once, at the end, not after every step
        while True:
            landed, texts = fill_step(database, embedder, write, limit, only)
            if not landed and not texts:
                return embedded
            done, embedded = done + landed, embedded + texts
            if progress:
                progress(done, max(total, done + (reads.pending_vector_count(database.read()) if only is None else 0)))
