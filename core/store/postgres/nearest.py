"""pgvector's HNSW indexes on the vector tables: a PostgreSQL memory's
:class:`~limbic.core.store.database.NearestIndex`.

The server keeps HNSW indexes (``vector_cosine_ops``) on ``entity_embeddings`` and ``observation_embeddings``,
shared by every process on every machine and kept current by each write; core/vectors/server_graph.py has them
propose the rows its vector copy scores exactly. The tables get them only once a copy is large enough to use
them: measured at 10k Debian entities (60,044 vectors), one HNSW query to the server (4.5 ms) costs more than the
copy's whole exact scan, and the index (98 MB, larger than the table) would only slow every write down. So the
first process to ask (:meth:`HnswIndexes.ready`) builds them on the server (``CREATE INDEX CONCURRENTLY``: writes
go on meanwhile) on a thread of its own.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg

from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE

if TYPE_CHECKING:
    from limbic.core.store.postgres.connection import PgConnection

log = logging.getLogger(__name__)
INDEXES = {OBSERVATION_VECTOR_TABLE: f"{OBSERVATION_VECTOR_TABLE}_hnsw", VECTOR_TABLE: f"{VECTOR_TABLE}_hnsw"}
MAX_EF_SEARCH = 1000
"""pgvector's largest ``hnsw.ef_search``: the most rows one index scan can return."""


class HnswIndexes:
    """The HNSW indexes of one memory (module docstring).

    Args:
        read: the memory's read connection (``PgDatabase.read``).
        connect: a new connection of its own, for the build (``CREATE INDEX CONCURRENTLY`` runs outside any
            transaction and takes its time).
    """

    def __init__(self, read: Callable[[], PgConnection], connect: Callable[[], psycopg.Connection[Any]]) -> None:
        self._read = read
        self._connect = connect
        self._indexed = False
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def ready(self) -> bool:
        """Whether both indexes are valid; when not, a build starts on a thread of its own (one at a time)."""
        if self._indexed:
            return True
        valid = self._read().execute(
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

    def nearest(self, tables: Sequence[str], vector: np.ndarray, count: int) -> list[list[int]]:
        """The rowids of each table's ``count`` rows nearest ``vector`` (at most :data:`MAX_EF_SEARCH`), from one
        index scan each with ``hnsw.ef_search`` = ``count``."""
        count = min(count, MAX_EF_SEARCH)
        conn = self._read()
        conn.register_vectors()
        vector = np.ascontiguousarray(vector, dtype=np.float32)
        conn.raw.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(count),))
        return [[int(r[0]) for r in conn.raw.execute(
            f"SELECT rowid FROM {table} ORDER BY embedding <=> %s LIMIT %s", (vector, count))] for table in tables]

    def _build(self) -> None:
        """Build the missing (or failed) indexes on the server, on a connection of this thread's own."""
        try:
            raw = self._connect()
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
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
