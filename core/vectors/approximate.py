"""An HNSW graph over a large block of held vectors, to pick KNN candidates without a full scan.

The exact product over every held vector reads the whole matrix: 540 MB and 20–26 ms for the 351,541
vectors of all of Debian (~63k entities) on this project's 2-core machine. Above
:data:`APPROXIMATE_FROM` rows, a block of vectors gets an HNSW graph (faiss ``IndexHNSWSQ``: 8-bit
scalar-quantised vectors, :data:`LINKS` links per node, inner product on unit vectors). The graph only
*proposes* rows: the caller re-scores every proposed entity exactly, from all of its float32 rows, so
a similarity is never approximate; what can differ from the exact scan is which entities are proposed
(``tests/bench/bench_knn_graph.py``; docs/performance.md).

A graph node is a vector *key* (an observation id, or minus the entity id for an entity's own vector)
with a fingerprint of the vector's bytes. A graph made for other rows is reused: its nodes whose key
and fingerprint match a row of the block are bound to that row, nodes of vectors since deleted or
changed are left out of every answer, and the block's rows the graph lacks are added to it. It is built
again from scratch when more than :data:`STALE_SHARE` of its nodes are stale.

The work runs on a background thread (one faiss thread, so a core stays free for requests) while
searches scan exactly. The graph is kept next to the database as ``<database>-knn.npz`` (written whole
or not at all; written again when built anew or once :data:`STORE_SHARE` of its nodes were added), so
the next process, or this one after a restart, binds it in about a second instead of building it
(66–76 s for all of Debian). Processes take turns through ``<database>-knn.lock``
(:mod:`limbic.core.vectors.turns`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from limbic.core.vectors.turns import turn, turn_file

APPROXIMATE_FROM = 100_000
"""Rows from which a block gets an HNSW graph. Below it the exact scan costs little more and stays
exact (60,044 rows: KNN stage 2.1 ms exact against 1.25 ms with a graph, whose top 10 differed in 3 %
of searches; docs/performance.md)."""
LINKS = 16  # HNSW neighbours per node (faiss ``M``)
BUILD_DEPTH = 80  # candidates kept while linking a node (faiss ``efConstruction``)
PROPOSED_PER_RESULT = 10  # graph nodes asked per entity wanted (at least MIN_PROPOSED)
MIN_PROPOSED = 300
STALE_SHARE = 0.3  # build the graph again when more of its nodes than this are stale
STORE_SHARE = 0.01  # rewrite the stored graph when this share of nodes or more was added to it
LOCK_WAIT_SECONDS = 600.0

log = logging.getLogger(__name__)
_FINGERPRINT_ROWS = 8192
_MIX = np.random.default_rng(20261124).integers(1, 2**63, size=4096, dtype=np.uint64) | np.uint64(1)


def vector_keys(owner: np.ndarray, observation: np.ndarray) -> np.ndarray:
    """Each row's key ``(n,) int64``: its observation id, or ``-entity id`` for an entity's own vector
    (``observation == -1``)."""
    return np.where(observation >= 0, observation, -owner).astype(np.int64)


def fingerprints(unit: np.ndarray) -> np.ndarray:
    """A 64-bit fingerprint of each row's bytes ``(n,) uint64`` (exact integer arithmetic, so the same
    vector always gets the same fingerprint); ``unit`` is ``(n, d) float32``."""
    bits = np.ascontiguousarray(unit, dtype=np.float32).view(np.uint32)
    mix = _MIX[: bits.shape[1]]
    out = np.empty(len(bits), dtype=np.uint64)
    for start in range(0, len(bits), _FINGERPRINT_ROWS):  # in slices: a uint64 copy of all rows is 2× the matrix
        out[start : start + _FINGERPRINT_ROWS] = (bits[start : start + _FINGERPRINT_ROWS].astype(np.uint64) * mix).sum(
            axis=1, dtype=np.uint64)
    return out


class Proposer(Protocol):
    """What proposes KNN candidates for a block: a faiss graph bound to it (:class:`BoundGraph`), or the
    server's pgvector indexes (:class:`~limbic.core.vectors.server_graph.ServerGraph`)."""

    def propose(self, query: np.ndarray, wanted: int) -> np.ndarray:
        """Block rows ``(r,) int64`` near ``query`` ``(d,) float32`` (unit length), for ``wanted`` entities."""
        ...


@dataclass(frozen=True, slots=True)
class Graph:
    """An HNSW ``index`` and, per node, the ``keys`` ``(g,) int64`` and ``prints`` ``(g,) uint64`` of the
    vector it was made from."""

    index: Any
    keys: np.ndarray
    prints: np.ndarray


@dataclass(frozen=True, slots=True)
class BoundGraph:
    """A :class:`Graph` bound to one block: ``rows`` ``(g,) int64`` the block row of each node, ``-1``
    for a stale node."""

    graph: Graph
    rows: np.ndarray

    def propose(self, query: np.ndarray, wanted: int) -> np.ndarray:
        """Block rows near ``query`` ``(d,) float32`` (unit length): the graph's nearest
        ``max(PROPOSED_PER_RESULT × wanted, MIN_PROPOSED)`` nodes, stale ones left out, ``(r,) int64``."""
        import faiss

        index = self.graph.index
        count = min(max(PROPOSED_PER_RESULT * int(wanted), MIN_PROPOSED), int(index.ntotal))
        if count <= 0:
            return np.empty(0, np.int64)
        params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]  # missing from faiss's stubs
        params.efSearch = count
        _, nodes = index.search(np.ascontiguousarray(query, dtype=np.float32)[None, :], count, params=params)
        found = nodes[0][nodes[0] >= 0]
        rows = self.rows[found]
        return rows[rows >= 0]


def build(unit: np.ndarray) -> Any:
    """A new HNSW index over ``unit`` ``(n, d) float32`` (rows of length 1), row ``i`` as node ``i``."""
    import faiss

    quantizer = faiss.ScalarQuantizer.QT_8bit  # a QuantizerType (the stubs say ScalarQuantizer)
    index = faiss.IndexHNSWSQ(unit.shape[1], quantizer, LINKS, faiss.METRIC_INNER_PRODUCT)  # type: ignore[arg-type]
    index.hnsw.efConstruction = BUILD_DEPTH
    index.train(unit)
    index.add(unit)
    return index


def bind(graph: Graph, keys: np.ndarray, prints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The block row of each node of ``graph`` (``-1`` when stale) and the block rows no node stands for,
    for a block whose rows have ``keys`` ``(n,) int64`` and fingerprints ``prints`` ``(n,) uint64``."""
    order = np.argsort(keys, kind="stable")
    at = np.minimum(np.searchsorted(keys[order], graph.keys), max(len(keys) - 1, 0))
    rows = order[at] if len(keys) else np.zeros(len(graph.keys), np.int64)
    valid = (keys[rows] == graph.keys) & (prints[rows] == graph.prints) if len(keys) else rows < 0
    rows = np.where(valid, rows, -1).astype(np.int64)
    covered = np.zeros(len(keys), dtype=bool)
    covered[rows[valid]] = True
    return rows, np.flatnonzero(~covered)


def cache_files(database: Path) -> list[Path]:
    """The graph file and lock file kept for ``database`` (those that exist)."""
    return [p for p in (database.with_name(f"{database.name}-knn.npz"), turn_file(database, "knn")) if p.exists()]


class GraphBuilder:
    """Keeps the graph of the main block a :class:`~limbic.core.vectors.vector_index.VectorIndex` holds:
    reads, extends, builds and stores it on a daemon thread.

    ``database``: the database file the vectors come from (the graph is kept next to it), or ``None`` to
    keep it in memory only. ``min_rows``: blocks with fewer rows get no graph.
    """

    def __init__(self, database: Path | None, min_rows: int = APPROXIMATE_FROM) -> None:
        self._database = database
        self.min_rows = min_rows
        self._lock = threading.Lock()
        self._wanted: Any = None  # the newest vectors asked for
        self._bound: tuple[Any, BoundGraph] | None = None  # (vectors, their bound graph)
        self._graph: Graph | None = None  # the newest graph, bound or not
        self._thread: threading.Thread | None = None
        self._failed: Any = None  # the vectors whose graph failed (not tried again)

    def graph_for(self, vectors: Any) -> BoundGraph | None:
        """The graph bound to a block's ``vectors`` (with ``owner``, ``observation`` and ``unit``; rows
        marked dead later keep it), or ``None`` while it is being made or the block is small; asks for it."""
        bound = self._bound
        if bound is not None and bound[0] is vectors:
            return bound[1]
        if len(vectors.owner) < self.min_rows or vectors is self._failed:
            return None
        with self._lock:
            self._wanted = vectors
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="limbic-knn-graph", daemon=True)
                self._thread.start()
        return None

    def wait(self, timeout: float | None = None) -> None:
        """Block until the graph asked for last is ready or has failed (``timeout`` seconds, ``None`` =
        no limit); returns at once when none is being made."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._lock:
                vectors = self._wanted
                if vectors is None or (self._bound is not None and self._bound[0] is vectors):
                    self._thread = None
                    return
            try:
                bound = self._make(vectors)
            except Exception:  # a failure leaves the exact scan in place
                log.exception("making the KNN graph failed; searches stay exact")
                with self._lock:
                    self._failed, self._wanted, self._thread = vectors, None, None
                return
            self._bound = (vectors, bound)

    def _make(self, vectors: Any) -> BoundGraph:
        import faiss

        faiss.omp_set_num_threads(1)
        keys = vector_keys(vectors.owner, vectors.observation)
        prints = fingerprints(vectors.unit)
        if self._database is None:
            return self._extend(self._graph, vectors.unit, keys, prints)[0]
        with turn(self._database, "knn", LOCK_WAIT_SECONDS) as held:
            if not held:  # another process held the turn too long, or the folder is read-only
                return self._extend(self._graph, vectors.unit, keys, prints)[0]
            stored = self._read()
            bound, added = self._extend(stored or self._graph, vectors.unit, keys, prints)
            if stored is None or added < 0 or added >= STORE_SHARE * stored.index.ntotal:
                self._store(bound.graph)  # a few added nodes are not worth rewriting the file: the next process adds them
            return bound

    def _extend(self, graph: Graph | None, unit: np.ndarray, keys: np.ndarray,
                prints: np.ndarray) -> tuple[BoundGraph, int]:
        """``graph`` bound to the block, with the rows it lacks added (to a copy: the graph in use is
        never changed), or a new graph when there is none, it has another dimension or is too stale;
        and how many nodes were added (``-1``: a new graph)."""
        import faiss

        started = time.perf_counter()
        if graph is not None and graph.index.d == unit.shape[1]:
            rows, missing = bind(graph, keys, prints)
            stale = int((rows < 0).sum())
            if stale <= STALE_SHARE * max(len(rows), 1):
                if len(missing):
                    index = faiss.clone_index(graph.index)
                    index.add(np.ascontiguousarray(unit[missing]))
                    graph = Graph(index, np.concatenate([graph.keys, keys[missing]]),
                                  np.concatenate([graph.prints, prints[missing]]))
                    rows = np.concatenate([rows, missing])
                log.debug("KNN graph bound: %d nodes, %d stale, %d added in %.1f s", len(rows), stale, len(missing),
                          time.perf_counter() - started)
                self._graph = graph
                return BoundGraph(graph, rows), len(missing)
        graph = Graph(build(unit), keys, prints)
        log.debug("KNN graph built: %d nodes in %.1f s", len(keys), time.perf_counter() - started)
        self._graph = graph
        return BoundGraph(graph, np.arange(len(keys), dtype=np.int64)), -1

    def _path(self) -> Path:
        assert self._database is not None
        return self._database.with_name(f"{self._database.name}-knn.npz")

    def _read(self) -> Graph | None:
        """The stored graph, when it is newer than the one held (else the one held)."""
        import faiss

        path = self._path()
        held = self._graph
        try:
            with np.load(path) as stored:
                if held is not None and int(stored["size"]) == int(held.index.ntotal) \
                        and np.array_equal(stored["keys"], held.keys):
                    return held
                return Graph(faiss.deserialize_index(stored["index"]), stored["keys"], stored["prints"])
        except (OSError, KeyError, ValueError, RuntimeError):
            return None

    def _store(self, graph: Graph) -> None:
        """Write ``graph`` next to the database, whole or not at all."""
        import faiss

        path = self._path()
        partial = path.with_name(path.name + ".partial")
        try:
            with partial.open("wb") as out:
                np.savez(out, index=faiss.serialize_index(graph.index), keys=graph.keys, prints=graph.prints,
                         size=np.int64(graph.index.ntotal))
            os.replace(partial, path)
        except (OSError, RuntimeError):
            log.warning("could not keep the KNN graph in %s", path.parent)
            partial.unlink(missing_ok=True)
