"""KNN candidates from pgvector's HNSW indexes, for a memory on PostgreSQL.

On SQLite a large block of held vectors gets a faiss HNSW graph that each process builds (or binds from
``<database>-knn.npz``) to propose KNN candidates (:mod:`limbic.core.vectors.approximate`). On PostgreSQL the
server already keeps an HNSW index (``vector_cosine_ops``) on ``entity_embeddings`` and
``observation_embeddings``, shared by every process on every machine and kept current by each write, so it
proposes instead: nothing to build, no file on the machine. Exactly as with the faiss graph, proposals only
choose which entities enter the KNN pool; every proposed entity is then scored exactly from all of its float32
rows in the process's copy, so no similarity shown is approximate.

Below :data:`~limbic.core.vectors.approximate.APPROXIMATE_FROM` held rows the exact scan of the copy runs
instead, as on SQLite: measured at 10k Debian entities (60,044 vectors), the copy's exact product answers a
whole search faster than one HNSW query to the server (docs/performance.md "Team memory on PostgreSQL").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from limbic.core.store.database import Database
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE
from limbic.core.vectors.approximate import APPROXIMATE_FROM, MIN_PROPOSED, PROPOSED_PER_RESULT, vector_keys

MAX_EF_SEARCH = 1000
"""pgvector's largest ``hnsw.ef_search``: the most candidates one index scan can return."""


class ServerGraph:
    """pgvector's indexes bound to one block of held vectors: ``keys`` ``(g,) int64`` ascending (an observation
    id, or minus the entity id for an entity's own vector) and ``rows`` ``(g,) int64`` their block rows."""

    def __init__(self, database: Database, keys: np.ndarray, rows: np.ndarray) -> None:
        self._database = database
        self.keys = keys
        self.rows = rows

    def propose(self, query: np.ndarray, wanted: int) -> np.ndarray:
        """Block rows near ``query`` ``(d,) float32`` (unit length): the nearest
        ``max(PROPOSED_PER_RESULT × wanted, MIN_PROPOSED)`` rows of each vector table (at most
        :data:`MAX_EF_SEARCH`), those the block does not hold left out, ``(r,) int64``."""
        count = min(max(PROPOSED_PER_RESULT * int(wanted), MIN_PROPOSED), MAX_EF_SEARCH)
        conn: Any = self._database.read()
        conn.register_vectors()
        vector = np.ascontiguousarray(query, dtype=np.float32)
        conn.raw.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(count),))
        found: list[int] = []
        for table, sign in ((OBSERVATION_VECTOR_TABLE, 1), (VECTOR_TABLE, -1)):
            found += [sign * int(r[0]) for r in conn.raw.execute(
                f"SELECT rowid FROM {table} ORDER BY embedding <=> %s LIMIT %s", (vector, count))]
        wanted_keys = np.asarray(found, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.keys, wanted_keys), max(len(self.keys) - 1, 0))
        held = (self.keys[at] == wanted_keys) if len(self.keys) else np.zeros(len(wanted_keys), bool)
        return self.rows[at[held]]


class ServerGraphs:
    """The PostgreSQL counterpart of :class:`~limbic.core.vectors.approximate.GraphBuilder` (``graph_for``,
    ``wait``): a block of at least ``min_rows`` held vectors gets a :class:`ServerGraph` at once."""

    def __init__(self, database: Database, min_rows: int = APPROXIMATE_FROM) -> None:
        self._database = database
        self.min_rows = min_rows
        self._bound: tuple[Any, ServerGraph] | None = None

    def graph_for(self, vectors: Any) -> ServerGraph | None:
        """The proposer of a block's ``vectors`` (with ``owner`` and ``observation``), or None for a small block."""
        bound = self._bound
        if bound is not None and bound[0] is vectors:
            return bound[1]
        if len(vectors.owner) < self.min_rows:
            return None
        keys = vector_keys(vectors.owner, vectors.observation)
        order = np.argsort(keys, kind="stable")
        graph = ServerGraph(self._database, keys[order], order.astype(np.int64))
        self._bound = (vectors, graph)
        return graph

    def wait(self, timeout: float | None = None) -> None:
        """Nothing is built on this machine: returns at once."""
