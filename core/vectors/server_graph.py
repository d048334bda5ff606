"""KNN candidates from pgvector's HNSW indexes, for a memory on PostgreSQL.

On SQLite a large block of held vectors gets a faiss HNSW graph that each process builds (or binds from
``<database>-knn.npz``) to propose KNN candidates (:mod:`limbic.core.vectors.approximate`). On PostgreSQL the
server keeps HNSW indexes (``vector_cosine_ops``) on ``entity_embeddings`` and ``observation_embeddings``
instead, shared by every process on every machine and kept current by each write: nothing is built on the
machine and no file is kept there. Exactly as with the faiss graph, proposals only choose which entities enter
the KNN pool; every proposed entity is then scored exactly from all of its float32 rows in the process's copy,
so no similarity shown is approximate.

Below :data:`~limbic.core.vectors.approximate.APPROXIMATE_FROM` held rows the exact scan of the copy runs, as on
SQLite, and the tables have no HNSW index: measured at 10k Debian entities (60,044 vectors), one HNSW query to
the server (4.5 ms) costs more than the copy's whole exact scan, and the index (98 MB, larger than the table)
would only slow every write down. The first process to hold a larger copy builds the indexes on the server
(``CREATE INDEX CONCURRENTLY``: writes go on meanwhile) on a thread of its own, and scans exactly until they
are valid.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import numpy as np

from limbic.core.store.backend import server_connection as connect
from limbic.core.store.database import Database
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE
from limbic.core.vectors.approximate import APPROXIMATE_FROM, MIN_PROPOSED, PROPOSED_PER_RESULT, vector_keys

log = logging.getLogger(__name__)
INDEXES = {OBSERVATION_VECTOR_TABLE: f"{OBSERVATION_VECTOR_TABLE}_hnsw", VECTOR_TABLE: f"{VECTOR_TABLE}_hnsw"}
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
        self._indexed = False
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def graph_for(self, vectors: Any) -> ServerGraph | None:
        """The proposer of a block's ``vectors`` (with ``owner`` and ``observation``), or None for a small block
        or while the server's indexes are being built (asks for them)."""
        bound = self._bound
        if bound is not None and bound[0] is vectors:
            return bound[1]
        if len(vectors.owner) < self.min_rows or not self._indexes_ready():
            return None
        keys = vector_keys(vectors.owner, vectors.observation)
        order = np.argsort(keys, kind="stable")
        graph = ServerGraph(self._database, keys[order], order.astype(np.int64))
        self._bound = (vectors, graph)
        return graph

    def _indexes_ready(self) -> bool:
        if self._indexed:
            return True
        valid = self._database.read().execute(
            "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname IN (SELECT value FROM json_each(?)) AND i.indisvalid",
            (json.dumps(list(INDEXES.values())),)).get
        self._indexed = int(valid) == len(INDEXES)
        if not self._indexed:
            with self._lock:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._build, name="limbic-pg-hnsw", daemon=True)
                    self._thread.start()
        return self._indexed

    def _build(self) -> None:
        """Build the missing (or failed) HNSW indexes on the server, on a connection of this thread's own."""
        try:
            raw = connect(self._database.address)  # type: ignore[attr-defined]
        except Exception as exc:  # the server is away: the next search asks again
            log.info("HNSW indexes not built now: %s", exc)
            return
        try:
            for table, name in INDEXES.items():
                building = raw.execute("SELECT count(*) FROM pg_stat_progress_create_index p JOIN pg_class c "
                                       "ON c.oid = p.index_relid WHERE c.relname = %s", (name,)).fetchone()
                invalid = raw.execute("SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                                      "WHERE c.relname = %s AND NOT i.indisvalid", (name,)).fetchone()
                if invalid and invalid[0] and building and not building[0]:  # a build that failed: start again
                    raw.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
                raw.execute(f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} "
                            "USING hnsw (embedding vector_cosine_ops)")
            log.debug("HNSW indexes ready")
        except Exception:
            log.exception("building the HNSW indexes failed; searches scan the vector copy exactly")
        finally:
            raw.close()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a build of the server's indexes under way (tests, benchmarks)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
