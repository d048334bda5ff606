"""An HNSW graph over a large block of held vectors, to pick KNN candidates without a full scan (issue 11 item 5).

The exact product over every held vector reads the whole matrix: 540 MB and 20–26 ms for the 351,541
vectors of all of Debian (~63k entities) on this project's 2-core machine. Above
:data:`APPROXIMATE_FROM` rows, a block of vectors gets an HNSW graph (faiss ``IndexHNSWSQ``: 8-bit
scalar-quantised vectors, :data:`LINKS` links per node, inner product on unit vectors). The graph only
*proposes* rows: the caller re-scores every proposed entity exactly, from all of its float32 rows,
so a similarity is never approximate; what can differ from the exact scan is which entities are
proposed (measured in README "Measured performance": recall of the exact KNN pool).

The graph is built on a background thread (one faiss thread, so a core stays free for requests)
while searches scan exactly; it is then written next to the database as
``<database>-knn-<fingerprint>.faiss``, named by a hash of the block's rows, so the next process that
holds the same rows reads it in a fraction of a second instead of building it. Processes take turns
at building through a lock file, and the second finds the first one's file.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock, Timeout

APPROXIMATE_FROM = 100_000
"""Rows from which a block gets an HNSW graph. Below it the exact product is as fast (60,044 rows:
2.0 ms exact against 1.6 ms for the graph and the re-scoring, docs/performance.md)."""
LINKS = 16  # HNSW neighbours per node (faiss ``M``)
BUILD_DEPTH = 80  # candidates kept while linking a node (faiss ``efConstruction``)
PROPOSED_PER_RESULT = 10  # rows asked of the graph per entity wanted (at least MIN_PROPOSED)
MIN_PROPOSED = 300
BUILD_WAIT_SECONDS = 600.0

log = logging.getLogger(__name__)


def fingerprint(owner: np.ndarray, observation: np.ndarray, unit: np.ndarray) -> str:
    """A hex digest of a block's rows: entity ids ``(n,) int64``, observation ids ``(n,) int64`` and
    vectors ``(n, d) float32``, in row order. Two blocks with one fingerprint hold the same rows."""
    digest = hashlib.blake2b(digest_size=16)
    for array in (owner, observation, unit):
        digest.update(np.ascontiguousarray(array).data)
    return digest.hexdigest()


def cache_files(database: Path) -> list[Path]:
    """Every graph file (and the lock file) kept for ``database``."""
    folder = database.parent
    return sorted(folder.glob(f"{database.name}-knn-*.faiss")) + sorted(folder.glob(f"{database.name}-knn.lock"))


def propose(graph: Any, query: np.ndarray, wanted: int) -> np.ndarray:
    """Rows of the graph's block nearest to ``query`` ``(d,) float32`` (unit length): at least
    ``PROPOSED_PER_RESULT × wanted`` of them when the block has that many, ``(r,) int64``."""
    import faiss

    count = min(max(PROPOSED_PER_RESULT * int(wanted), MIN_PROPOSED), int(graph.ntotal))
    if count <= 0:
        return np.empty(0, np.int64)
    params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]  # missing from faiss's stubs
    params.efSearch = count
    _, rows = graph.search(np.ascontiguousarray(query, dtype=np.float32)[None, :], count, params=params)
    found = rows[0]
    return found[found >= 0].astype(np.int64)


def build(unit: np.ndarray) -> Any:
    """An HNSW graph over ``unit`` ``(n, d) float32`` (rows of length 1), row ``i`` labelled ``i``."""
    import faiss

    quantizer = faiss.ScalarQuantizer.QT_8bit  # a QuantizerType (the stubs say ScalarQuantizer)
    graph = faiss.IndexHNSWSQ(unit.shape[1], quantizer, LINKS, faiss.METRIC_INNER_PRODUCT)  # type: ignore[arg-type]
    graph.hnsw.efConstruction = BUILD_DEPTH
    graph.train(unit)
    graph.add(unit)
    return graph


class GraphBuilder:
    """Builds, stores and reads the graphs of the blocks a :class:`~limbic.core.store.vector_index.VectorIndex`
    holds, one at a time on a daemon thread.

    ``database``: the database file the vectors come from (graphs are kept next to it), or ``None`` to
    keep them in memory only. ``min_rows``: blocks with fewer rows get no graph.
    """

    def __init__(self, database: Path | None, min_rows: int = APPROXIMATE_FROM) -> None:
        self._database = database
        self.min_rows = min_rows
        self._lock = threading.Lock()
        self._wanted: Any = None  # the newest vectors asked for (the graph is built for them)
        self._built: tuple[Any, Any] | None = None  # (vectors, graph)
        self._thread: threading.Thread | None = None
        self._failed: Any = None  # the vectors whose build failed (not tried again)

    def graph_for(self, vectors: Any) -> Any:
        """The graph of a block's ``vectors`` (with ``owner``, ``observation`` and ``unit``; rows marked
        dead later keep their graph), or ``None`` while it is being built or the block is small; asks for it."""
        built = self._built
        if built is not None and built[0] is vectors:
            return built[1]
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
        no limit); returns at once when none is being built."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._lock:
                vectors = self._wanted
                if vectors is None or (self._built is not None and self._built[0] is vectors):
                    self._thread = None
                    return
            try:
                graph = self._graph(vectors)
            except Exception:  # a failed build leaves the exact scan in place
                log.exception("building the KNN graph failed; searches stay exact")
                with self._lock:
                    self._failed, self._wanted, self._thread = vectors, None, None
                return
            self._built = (vectors, graph)

    def _graph(self, vectors: Any) -> Any:
        import faiss

        faiss.omp_set_num_threads(1)
        if self._database is None:
            return build(vectors.unit)
        name = fingerprint(vectors.owner, vectors.observation, vectors.unit)
        path = self._database.with_name(f"{self._database.name}-knn-{name}.faiss")
        lock = FileLock(str(self._database.with_name(f"{self._database.name}-knn.lock")))
        with contextlib.suppress(Timeout), lock.acquire(timeout=BUILD_WAIT_SECONDS):
            if path.exists():
                with contextlib.suppress(RuntimeError):
                    graph = faiss.read_index(str(path))
                    if graph.ntotal == len(vectors.owner):
                        return graph
            graph = build(vectors.unit)
            self._store(graph, path)
            return graph
        return build(vectors.unit)

    def _store(self, graph: Any, path: Path) -> None:
        """Write ``graph`` to ``path`` (whole or not at all) and remove the database's older graphs."""
        import faiss

        partial = path.with_suffix(".partial")
        try:
            faiss.write_index(graph, str(partial))
            os.replace(partial, path)
        except (OSError, RuntimeError):
            log.warning("could not keep the KNN graph in %s", path.parent)
            partial.unlink(missing_ok=True)
            return
        assert self._database is not None
        for old in self._database.parent.glob(f"{self._database.name}-knn-*.faiss"):
            if old != path:
                old.unlink(missing_ok=True)
