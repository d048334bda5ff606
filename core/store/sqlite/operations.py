"""What SQLite does its own way (:class:`~limbic.core.store.operations.Operations`), bound to one connection.

The vector tables are sqlite-vec ``vec0`` tables, which answer ``rowid = ?`` with a look-up but scan every
vector for ``rowid IN (…)`` (``EXPLAIN QUERY PLAN``: ``SCAN … VIRTUAL TABLE INDEX 0:1``). Measured with MiniLM
vectors, 40 rowids: reading took 32.8 ms at 10k entities (50,044 observation vectors) and 160 ms at all of
Debian (287,875) with ``IN``, 1.9 and 5.3 ms one ``rowid = ?`` each; so they get one statement per rowid.
A vector is stored as the bytes of its little-endian float32 array, as the store passes it. The full text is
:class:`~limbic.core.store.sqlite.full_text.FullText`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from limbic.core.store.sqlite.full_text import FullText

if TYPE_CHECKING:
    from limbic.core.store.sqlite.connection import SqliteConnection

SCAN_CACHE_KIB = 8192
"""The page cache (KiB) of a connection while it scans a whole vector table: the pages are read once, so they
need not fill the connection's 64 MB (the vector copy's load, the duplicate finders). sqlite-vec keeps 1,024
vectors in one chunk (1.5 MB at 384 dimensions); a cache that cannot hold a chunk reads it again for every vector
(measured at 10k: 0.21 s with 4 or 64 MB, 3.2 s with 1 MB)."""
_VECTOR_DIMENSION = re.compile(r"float\[(\d+)\]")
# one row per candidate: the best cosine over the query vectors of the searches among its latest
# ``labels`` labels (implicit_feedback_entity gives them newest first without a sort)
_LABELS = """
SELECT c.value, (
    SELECT MAX(1.0 - vec_distance_cosine(v.vector, ?3))
    FROM (SELECT f.event_id FROM implicit_feedback f WHERE f.entity_id = c.value AND f.event_id IS NOT NULL
          ORDER BY f.id DESC LIMIT ?4) AS latest
    JOIN search_query_vectors v ON v.event_id = latest.event_id
    WHERE v.model = ?2 AND length(v.vector) = length(?3))
FROM json_each(?1) AS c
"""


class SqliteOperations(FullText):
    """SQLite's operations on :attr:`conn` (module docstring)."""

    __slots__ = ("conn",)

    def __init__(self, conn: SqliteConnection) -> None:
        self.conn = conn

    # --- the change log and the read state ----------------------------------------------------------

    def last_change_id(self) -> int:
        return int(self.conn.execute("SELECT coalesce(max(id), 0) FROM changes").get)

    def pending_vector_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM pending_vectors").get or 0)

    def json_ids_contain(self, column: str, value: str) -> str:
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value = {value})"

    def json_id_rows(self, column: str, alias: str) -> str:
        return f"json_each({column}) {alias}"

    # --- SQL functions spelled differently ----------------------------------------------------------

    def greatest(self, first: str, second: str) -> str:
        return f"max({first}, {second})"

    def least(self, first: str, second: str) -> str:
        return f"min({first}, {second})"

    def ascii_folded(self, column: str) -> str:
        return f"{column} COLLATE NOCASE"

    def holds_text(self, text: str, part: str) -> str:
        return f"instr({text}, {part}) > 0"

    # --- the schema ---------------------------------------------------------------------------------

    def table_columns(self, table: str) -> list[str]:
        return [str(r[1]) for r in self.conn.execute(f"PRAGMA table_info({table})")]

    def vector_dimension(self, table: str) -> int | None:
        """Read from the ``vec0`` table's declaration in ``sqlite_master``."""
        row = self.conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
        found = _VECTOR_DIMENSION.search(row[0]) if row else None
        return int(found.group(1)) if found else None

    def create_vector_table(self, table: str, dimension: int) -> None:
        self.conn.execute(f"CREATE VIRTUAL TABLE {table} USING vec0(embedding float[{int(dimension)}] "
                          "distance_metric=cosine)")

    def after_bulk_load(self) -> None:
        return None

    # --- vector rows ----------------------------------------------------------------------------------

    def read_vectors(self, table: str, rowids: Sequence[int]) -> list[tuple[int, bytes]]:
        """One ``rowid = ?`` statement per rowid (module docstring)."""
        rows = self.conn.executemany(f"SELECT rowid, embedding FROM {table} WHERE rowid = ?",
                                     [(int(rowid),) for rowid in rowids])
        return [(int(rowid), bytes(blob)) for rowid, blob in rows]

    def scan_vectors(self, table: str) -> Iterator[tuple[int, bytes]]:
        """The connection's page cache is held to :data:`SCAN_CACHE_KIB` meanwhile."""
        size = self.conn.execute("PRAGMA cache_size").get
        self.conn.execute(f"PRAGMA cache_size = -{SCAN_CACHE_KIB}")  # a smaller size gives the pages beyond it back
        try:
            for rowid, blob in self.conn.execute(f"SELECT rowid, embedding FROM {table}"):
                yield int(rowid), bytes(blob)
        finally:
            self.conn.execute(f"PRAGMA cache_size = {int(size)}")

    def insert_vectors(self, table: str, rows: Sequence[tuple[int, bytes]]) -> None:
        self.conn.executemany(f"INSERT INTO {table}(rowid, embedding) VALUES (?, ?)", [(int(r), b) for r, b in rows])

    def delete_vectors(self, table: str, rowids: Sequence[int]) -> None:
        self.conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(int(rowid),) for rowid in rowids])

    def replacing_vectors(self, table: str, rows: Sequence[tuple[int, bytes]]) -> list[tuple[str, Sequence[Any]]]:
        return [*((f"DELETE FROM {table} WHERE rowid = ?", (int(rowid),)) for rowid, _ in rows),
                *((f"INSERT INTO {table}(rowid, embedding) VALUES (?, ?)", (int(rowid), blob)) for rowid, blob in rows)]

    def feedback_cosines(self, ids: Sequence[int], model: str, query: np.ndarray, labels: int) -> dict[int, float]:
        """Computed by sqlite-vec's ``vec_distance_cosine`` in the query."""
        best: dict[int, float] = {}
        for entity, similarity in self.conn.execute(
                _LABELS, (json.dumps([int(i) for i in ids]), model, query.tobytes(), labels)):
            if isinstance(entity, int) and isinstance(similarity, float):
                best[entity] = similarity
        return best
