"""Copying a whole memory between any two backends (``limbic db copy SRC DST``).

Every table is copied row for row under the same ids: entities, observations, relations, usage history,
impressions, search logs with their candidates and query vectors, implicit feedback, the use log, the change log, settings,
tuning history, reflections, the decision queues, and the vectors with their metadata, so nothing needs to be
embedded again. The full-text index is written anew on the destination (it is derived from the rows: FTS5
there, FTS5-exact postings on PostgreSQL). The destination must be empty; the whole copy is one transaction
on it, checked by counting every table on both sides before it commits: a copy that does not add up leaves
the destination as it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from limbic.core.errors import ConflictError, LimbicError
from limbic.core.store import vec_rows
from limbic.core.store.connection import Connection
from limbic.core.store.database import Database
from limbic.core.store.indexing import write_entity_text
from limbic.core.store.schema import (
    OBSERVATION_VECTOR_TABLE,
    VECTOR_TABLE,
    ensure_vector_table,
    vector_dimension,
)

# parents before children (foreign keys); observations' own ``supersedes`` links are set after all rows
TABLES = ("settings", "entities", "observations", "relations", "entity_access", "entity_access_days",
          "co_occurrences", "logged_params", "search_events", "search_results", "search_candidates",
          "search_query_vectors", "implicit_feedback", "entity_impressions", "tuning_applications", "changes",
          "entity_embedding_meta", "observation_embedding_meta", "pending_vectors", "conflict_checks", "conflicts",
          "curation_kept", "reflections", "reflection_vectors", "mcp_tokens", "decisions", "use_events")
BATCH = 2_000


class CopyError(LimbicError):
    """The copy could not be made or did not add up (nothing was written to the destination)."""


@dataclass(frozen=True, slots=True)
class CopyReport:
    """Rows copied per table (``rows``: table → count, the same on both sides), vectors copied, and the wall
    time in seconds."""

    rows: dict[str, int]
    vectors: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "vectors": self.vectors, "seconds": round(self.seconds, 3)}


def _rows(conn: Connection, table: str, names: list[str]) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of ``table`` (``names`` columns) in batches, by their first column."""
    rows = conn.execute(f"SELECT {', '.join(names)} FROM {table} ORDER BY {names[0]}").fetchall()
    for start in range(0, len(rows), BATCH):
        yield [tuple(r) for r in rows[start:start + BATCH]]


def _count(conn: Connection, table: str) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table}").get)


def _require_empty(conn: Connection) -> None:
    if _count(conn, "entities") or _count(conn, "changes") or _count(conn, "search_events"):
        raise ConflictError("the destination memory is not empty; copy into a new database")


def copy_memory(source: Database, destination: Database,
                progress: Callable[[str, int], None] | None = None) -> CopyReport:
    """Copy every row of ``source`` into the empty ``destination`` (either backend each), in one transaction.

    Args:
        progress: called with ``(table, rows copied)`` after each table.
    Raises:
        ConflictError: the destination holds a memory already.
        CopyError: a table's count differs after the copy (the destination is left as it was).
    """
    started = time.perf_counter()
    read = source.read()
    copied: dict[str, int] = {}
    vectors = 0
    with read, destination.maintenance() as conn:
        _require_empty(conn)
        dimension = vector_dimension(read)
        if dimension is not None:
            model = source.get_setting("embedding_model") or ""
            ensure_vector_table(conn, dimension, model)
        conn.execute("DELETE FROM settings")
        for table in TABLES:
            names = [c for c in read.ops.table_columns(table) if c in set(conn.ops.table_columns(table))]
            if not names:
                continue
            insert = f"INSERT INTO {table}({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})"
            links: list[tuple[int, int]] = []
            for batch in _rows(read, table, names):
                if table == "observations":  # a link may point at a later row: set once all rows are in
                    at = names.index("supersedes")
                    links += [(int(r[at]), int(r[0])) for r in batch if r[at] is not None]
                    batch = [r[:at] + (None,) + r[at + 1:] for r in batch]
                conn.executemany(insert, batch)
            if links:
                conn.executemany("UPDATE observations SET supersedes = ? WHERE id = ?", links)
            copied[table] = _count(read, table)
            if _count(conn, table) != copied[table]:
                raise CopyError(f"table {table}: {copied[table]} rows in the source, "
                                f"{_count(conn, table)} in the copy; nothing was copied")
            if progress is not None:
                progress(table, copied[table])
        for table in (VECTOR_TABLE, OBSERVATION_VECTOR_TABLE):
            if dimension is None or vector_dimension(read, table) is None:
                continue
            rows = list(vec_rows.scan(read, table))
            for start in range(0, len(rows), BATCH):
                vec_rows.insert(conn, table, rows[start:start + BATCH])
            vectors += len(rows)
        write_entity_text(conn, [int(r[0]) for r in conn.execute("SELECT id FROM entities ORDER BY id")], time.time())
    destination.read().ops.after_bulk_load()  # PostgreSQL's statistics now, not at autovacuum's next pass
    return CopyReport(copied, vectors, time.perf_counter() - started)
