"""An in-memory copy of the stored vectors for exact KNN with matrix products, aggregated per entity.

sqlite-vec's brute-force scan was the slowest stage of a search (11.5 ms of 22 ms at 10,000 entities
on 2 cores). The copy holds the entity vectors (``entity_embeddings``) and the observation vectors
(``observation_embeddings``) made by the search's model in one ``(n, d) float32`` matrix, rows grouped
by entity; vectors of another model, and observations that are superseded, are left out (the
full-text branch still finds them). A search is one matrix-vector product over it (memory-bound:
about 4.7 ms for 60,000 × 384 on this project's 2-core machine) and one ``maximum.reduceat`` per
entity group; the cosines of the full-text candidates come from the same pass (:class:`Similarities`).

An entity's semantic similarity is the best of its entity (passage) vector and its live observations'
vectors (measured against the entity vector alone and soft-max with ``limbic eval
locomo``, docs/evaluation.md); observations past their ``expires_at`` do
not count, nor does an entity's passage vector once one of its observations expired, until the sweep has
made it again without that text (docs/lifecycle.md "Expiry"). The copy follows the database through the ``changes`` log: every write that changes a
vector is logged with its entity ids in the same transaction (service mutations and ``reembed``), so
before each search the index reloads just the rows of the entities changed since the last change id
it saw — by this process or any other — into a small block of recent rows, marking their old rows dead
(the main matrix is not copied), and everything when the model or the dimension changed.
sqlite-vec stays the store of record.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from limbic.core.store import Connection, expiry, reads, vec_rows, vector_meta
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE, vector_dimension
from limbic.core.vectors import approximate
from limbic.core.vectors.blocks import Block, Vectors, one_blas_thread
from limbic.core.vectors.server_graph import ServerGraphs
from limbic.core.vectors.similarities import ApproximateSimilarities, Similarities

one_blas_thread()  # once, on the importing thread (the main thread of the app and the CLI): threadpoolctl lets the
# first thread that sets the limit keep it, and a thread it did not start would stay listed as a dummy thread

FULL_RELOAD_SHARE = 0.25  # reload everything when more than this share of the entities changed
COMPACT_SHARE = 0.05  # merge the recent block into the main one past this share of its rows

def _load(conn: Connection, table: str, meta: Sequence[tuple[Any, ...]], dimension: int, entity_ids: list[int] | None,
          passage_expiry: dict[int, float] | None = None) -> Vectors:
    """The vectors of ``table`` that ``meta`` lists (:func:`~limbic.core.store.vector_meta.entity_vectors` or
    :func:`~limbic.core.store.vector_meta.observation_vectors` rows; only those of ``entity_ids`` when given); an
    entity (passage) vector expires at ``passage_expiry[entity id]`` when given
    (:func:`~limbic.core.store.expiry.next_expiry`)."""
    if not meta:
        return Vectors.empty(dimension)
    keys = np.array([r[0] for r in meta], dtype=np.int64)
    owner = np.array([r[1 if len(r) > 1 else 0] for r in meta], dtype=np.int64)
    is_observation = len(meta[0]) > 1
    ends = passage_expiry or {}
    expires = np.array([float(r[2]) if len(r) > 2 else ends.get(r[0], np.inf) for r in meta], dtype=np.float64)
    rows: Iterable[tuple[Any, ...]]
    if entity_ids is None:
        rows = vec_rows.scan(conn, table)
    else:
        rows = vec_rows.read(conn, table, keys.tolist())
    position = {int(k): i for i, k in enumerate(keys.tolist())}
    unit = np.zeros((len(keys), dimension), dtype=np.float32)
    found = np.zeros(len(keys), dtype=bool)
    for rowid, blob in rows:  # straight into the matrix: no list of blobs, no joined copy of them
        at = position.get(rowid)
        if at is not None:
            unit[at] = np.frombuffer(blob, dtype=np.float32)
            found[at] = True
    if not found.all():
        keys, owner, expires, unit = keys[found], owner[found], expires[found], unit[found]
    norms = np.linalg.norm(unit, axis=1, keepdims=True)
    np.divide(unit, np.where(norms == 0, 1.0, norms), out=unit)
    observation = keys if is_observation else np.full(len(keys), -1, dtype=np.int64)
    order = np.argsort(owner, kind="stable")
    if np.any(order != np.arange(len(order))):
        owner, observation, expires, unit = owner[order], observation[order], expires[order], unit[order]
    return Vectors(owner, observation, expires, unit)


class VectorIndex:
    """Cosine KNN over cached entity and observation vectors (thread-safe, shared by a service): an exact
    scan, or, for a main block with an HNSW graph (``graphs``), candidates the graph proposes, each scored
    exactly (:class:`~limbic.core.vectors.similarities.ApproximateSimilarities`).

    The copy is a sorted main block and a small block of the entities changed since the main block was
    built: a change reloads only those entities' rows into the small block and marks their rows of the
    main block dead, so a search right after a write does not copy the whole matrix. When the small block
    passes :data:`COMPACT_SHARE` of the main block's rows, the two are merged into a new main block.
    """

    def __init__(self, graphs: approximate.GraphBuilder | ServerGraphs | None = None) -> None:
        """``graphs``: builds the HNSW graph of a large main block (:mod:`limbic.core.vectors.approximate`), or
        has the database server's index propose (:mod:`limbic.core.vectors.server_graph`; either:
        :func:`~limbic.core.vectors.server_graph.graph_builder`); ``None`` keeps every search an exact scan."""
        self.graphs = graphs
        self._lock = threading.Lock()
        self._state: tuple[str, int] | None = None  # (model, dimension) of the copy
        self._change_id = -1
        # (main, recent): one attribute, so that a search never pairs a new main block with an old recent one
        self._blocks = (Block.of(Vectors.empty(0)), Block.of(Vectors.empty(0)))

    def __len__(self) -> int:
        """Number of vectors held (entity and observation vectors, the current ones only)."""
        main, recent = self._blocks
        return int(len(main.vectors.owner) - len(main.dead) + len(recent.vectors.owner))

    @staticmethod
    def _read(conn: Connection, model: str, dimension: int, ids: list[int] | None) -> Vectors:
        entities = _load(conn, VECTOR_TABLE, vector_meta.entity_vectors(conn, model, ids), dimension, ids,
                         expiry.next_expiry(conn, ids))
        if vector_dimension(conn, OBSERVATION_VECTOR_TABLE) is None:
            return entities  # a database from before schema 4, not yet written to
        return entities.plus(_load(conn, OBSERVATION_VECTOR_TABLE, vector_meta.observation_vectors(conn, model, ids),
                                   dimension, ids))

    def refresh(self, conn: Connection, model: str) -> None:
        """Bring the copy up to date with what ``conn`` sees for ``model`` (call inside the caller's read snapshot)."""
        with self._lock:
            dimension = vector_dimension(conn)
            last = reads.last_change_id(conn)
            if dimension is None:
                self._state, self._change_id = None, last
                self._rebuild(Vectors.empty(0))
                return
            state = (model, dimension)
            if state == self._state and last == self._change_id:
                return
            changed: set[int] = set()
            if state == self._state and self._change_id >= 0:
                for change in reads.changes_since(conn, self._change_id, limit=1_000_000):
                    changed |= change.entity_ids
            known = len(self._blocks[0].groups.ids) if state == self._state else 0
            if state != self._state or len(changed) > FULL_RELOAD_SHARE * max(known, 1):
                self._rebuild(self._read(conn, model, dimension, None))
            elif changed:
                self._update(np.array(sorted(changed), dtype=np.int64), self._read(conn, model, dimension, sorted(changed)))
            self._state, self._change_id = state, last

    def _rebuild(self, vectors: Vectors) -> None:
        self._blocks = (Block.of(vectors), Block.of(Vectors.empty(vectors.unit.shape[1])))

    def _update(self, changed: np.ndarray, fresh: Vectors) -> None:
        """``changed`` entity ids now have the rows ``fresh``: they replace their rows in the recent block,
        and their rows of the main block are marked dead; past COMPACT_SHARE the blocks are merged."""
        main, held = self._blocks
        recent = held.vectors.without(changed).plus(fresh)
        dead = np.union1d(main.dead, np.flatnonzero(np.isin(main.vectors.owner, changed)))
        if len(recent.owner) > COMPACT_SHARE * max(len(main.vectors.owner), 1):
            superseded = np.union1d(np.unique(main.vectors.owner[dead]), recent.owner)
            self._rebuild(main.vectors.without(superseded).plus(recent))
            return
        self._blocks = (Block(main.vectors, main.groups, dead), Block.of(recent))

    def prepare(self, conn: Connection, model: str) -> None:
        """Load the copy for ``model`` now (call inside the caller's read snapshot) and, for a large one,
        ask for its KNN graph (made on a background thread), so that the first search finds both ready."""
        self.refresh(conn, model)
        if self.graphs is not None:
            self.graphs.graph_for(self._blocks[0].vectors)

    def similarities(self, conn: Connection, model: str, vector: np.ndarray, now: float) -> Similarities:
        """The cosine similarity of ``vector`` ``(d,) float32`` to every entity with a vector of ``model``
        (the query's embedder), after bringing the copy up to date; ``now`` (UTC seconds) decides which
        observations have expired. One matrix product over all the vectors held."""
        self.refresh(conn, model)
        main, recent = self._blocks  # replaced together, never changed in place
        if not len(main.groups.ids) and not len(recent.groups.ids):
            return Similarities(np.empty(0, np.int64), np.empty(0, np.float32))
        query = np.asarray(vector, dtype=np.float32)
        query = query / (float(np.linalg.norm(query)) or 1.0)
        graph = self.graphs.graph_for(main.vectors) if self.graphs is not None else None
        if graph is not None:
            return ApproximateSimilarities(main, recent, graph, query, now)
        sims, best = main.similarities(query, now)
        ids = main.groups.ids
        lookups: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...] = (
            (main.groups.observations, main.groups.observation_rows, sims),)
        if len(recent.groups.ids):
            recent_sims, recent_best = recent.similarities(query, now)
            at = np.searchsorted(ids, recent.groups.ids)
            held = at < len(ids)
            held[held] = ids[at[held]] == recent.groups.ids[held]
            best[at[held]] = recent_best[held]
            ids = np.insert(ids, at[~held], recent.groups.ids[~held])
            best = np.insert(best, at[~held], recent_best[~held])
            lookups += ((recent.groups.observations, recent.groups.observation_rows, recent_sims),)
        live = np.isfinite(best)
        if live.all():
            return Similarities(ids, best, lookups)
        return Similarities(ids[live], best[live], lookups)

    def observation_vectors(self, model: str, observation_ids: list[int]) -> dict[int, np.ndarray]:
        """The held unit vectors ``(d,) float32`` of ``observation_ids`` made by ``model``, as the copy stands (not
        refreshed here: an observation written since the last refresh is simply not found; the caller reads it
        from the store). For the contradiction check, which compares a new observation with its neighbours'."""
        if self._state is None or self._state[0] != model:
            return {}
        wanted = np.asarray(observation_ids, dtype=np.int64)
        found: dict[int, np.ndarray] = {}
        for block in self._blocks:  # the recent block last: its rows replace the main block's
            held, rows = block.groups.observations, block.groups.observation_rows
            if not len(held) or not len(wanted):
                continue
            at = np.minimum(np.searchsorted(held, wanted), len(held) - 1)
            hit = held[at] == wanted
            live = ~np.isin(rows[at[hit]], block.dead)
            for observation_id, row in zip(wanted[hit][live].tolist(), rows[at[hit]][live].tolist(), strict=True):
                found[observation_id] = block.vectors.unit[row]
        return found

    def search(self, conn: Connection, model: str, vector: np.ndarray, k: int,
               now: float) -> tuple[list[int], dict[int, float]]:
        """The ``k`` nearest entities to ``vector`` ``(d,) float32`` by aggregated cosine distance ``1 − sim``
        (:meth:`similarities`, then :meth:`Similarities.nearest`): ``(ids, {id: distance})``, nearest first,
        one entry per entity; ties go to the lower id."""
        return self.similarities(conn, model, vector, now).nearest(k)
