"""KNN candidates from the database server's approximate nearest-neighbour index, for a memory that has one.

On SQLite a large block of held vectors gets a faiss HNSW graph that each process builds (or binds from
``<database>-knn.npz``) to propose KNN candidates (:mod:`limbic.core.vectors.approximate`). A memory on
PostgreSQL has the server's HNSW indexes instead (its database's
:attr:`~limbic.core.store.database.Database.nearest_index`), shared by every process on every machine and kept
current by each write: nothing is built on the machine and no file is kept there. Exactly as with the faiss
graph, proposals only choose which entities enter the KNN pool; every proposed entity is then scored exactly from
all of its float32 rows in the process's copy, so no similarity shown is approximate.

Below :data:`~limbic.core.vectors.approximate.APPROXIMATE_FROM` held rows the exact scan of the copy runs, as on
SQLite, and the server's tables have no index (core/store/postgres/nearest.py says why); the first process to
hold a larger copy asks for them, and scans exactly until they are valid.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from limbic.core.store.database import Database, NearestIndex
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE
from limbic.core.vectors.approximate import (
    APPROXIMATE_FROM,
    MIN_PROPOSED,
    PROPOSED_PER_RESULT,
    GraphBuilder,
    vector_keys,
)


class ServerGraph:
    """The server's index bound to one block of held vectors: ``keys`` ``(g,) int64`` ascending (an observation
    id, or minus the entity id for an entity's own vector) and ``rows`` ``(g,) int64`` their block rows."""

    def __init__(self, index: NearestIndex, keys: np.ndarray, rows: np.ndarray) -> None:
        self._index = index
        self.keys = keys
        self.rows = rows

    def propose(self, query: np.ndarray, wanted: int) -> np.ndarray:
        """Block rows near ``query`` ``(d,) float32`` (unit length): the nearest
        ``max(PROPOSED_PER_RESULT × wanted, MIN_PROPOSED)`` rows of each vector table (at most what the index
        gives), those the block does not hold left out, ``(r,) int64``."""
        count = max(PROPOSED_PER_RESULT * int(wanted), MIN_PROPOSED)
        observations, entities = self._index.nearest((OBSERVATION_VECTOR_TABLE, VECTOR_TABLE), query, count)
        wanted_keys = np.asarray(observations + [-rowid for rowid in entities], dtype=np.int64)
        at = np.minimum(np.searchsorted(self.keys, wanted_keys), max(len(self.keys) - 1, 0))
        held = (self.keys[at] == wanted_keys) if len(self.keys) else np.zeros(len(wanted_keys), bool)
        return self.rows[at[held]]


class ServerGraphs:
    """The counterpart of :class:`~limbic.core.vectors.approximate.GraphBuilder` (``graph_for``, ``wait``) for a
    memory whose server keeps the index: a block of at least ``min_rows`` held vectors gets a
    :class:`ServerGraph` once the index is ready."""

    def __init__(self, index: NearestIndex, min_rows: int = APPROXIMATE_FROM) -> None:
        self._index = index
        self.min_rows = min_rows
        self._bound: tuple[Any, ServerGraph] | None = None

    def graph_for(self, vectors: Any) -> ServerGraph | None:
        """The proposer of a block's ``vectors`` (with ``owner`` and ``observation``), or None for a small block
        or while the server's index is being built (asks for it)."""
        bound = self._bound
        if bound is not None and bound[0] is vectors:
            return bound[1]
        if len(vectors.owner) < self.min_rows or not self._index.ready():
            return None
        keys = vector_keys(vectors.owner, vectors.observation)
        order = np.argsort(keys, kind="stable")
        graph = ServerGraph(self._index, keys[order], order.astype(np.int64))
        self._bound = (vectors, graph)
        return graph

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a build of the server's index under way (tests, benchmarks)."""
        self._index.wait(timeout)


def graph_builder(database: Database) -> GraphBuilder | ServerGraphs:
    """What proposes KNN candidates for a large vector copy of ``database``: its server's index when it keeps one,
    else a faiss graph each process builds beside :attr:`~limbic.core.store.database.Database.path`."""
    index = database.nearest_index
    return ServerGraphs(index) if index is not None else GraphBuilder(database.path)
