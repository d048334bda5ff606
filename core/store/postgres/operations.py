"""What PostgreSQL does its own way (:class:`~limbic.core.store.operations.Operations`), bound to one connection.

The vector tables are pgvector tables (``rowid bigint`` primary key, ``embedding vector(d)``), read in one
statement through ``vector_send`` (big-endian float4 after a 4-byte header) and written from float32 arrays.
The full text is the FTS5-exact index of :mod:`limbic.core.store.postgres.full_text`. What a search asks before
anything else (the vector tables' dimensions, the last change id, the entities waiting for vectors, the
full-text statistics) is read once per read snapshot (:meth:`PgConnection.in_snapshot`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from limbic.core.store.expiry import current
from limbic.core.store.postgres import full_text, schema
from limbic.core.store.schema import VECTOR_TABLES
from limbic.core.store.text_search import CJK_TABLE, cjk_documents

if TYPE_CHECKING:
    from limbic.core.store.postgres.connection import PgConnection

_INDEX = {"entity_fts": full_text.ENTITY_FTS, "observation_fts": full_text.OBSERVATION_FTS,
          "reflection_fts": full_text.REFLECTION_FTS, CJK_TABLE: full_text.ENTITY_CJK_FTS}
_READ_STATE = ("read state",)
_TEXT_ROWS = ("full-text rows",)
_LABELS = """
SELECT c.id, v.vector FROM unnest(?1::bigint[]) AS c(id)
CROSS JOIN LATERAL (SELECT f.event_id FROM implicit_feedback f WHERE f.entity_id = c.id AND f.event_id IS NOT NULL
                    ORDER BY f.id DESC LIMIT ?3) AS latest
JOIN search_query_vectors v ON v.event_id = latest.event_id
WHERE v.model = ?2 AND length(v.vector) = ?4
"""
_LIVE_OF_ENTITIES = f"SELECT id FROM observations WHERE entity_id IN (SELECT value FROM json_each(?1)) AND {current('?2')}"
_ENTITIES_OF = "SELECT DISTINCT entity_id FROM observations WHERE id IN (SELECT value FROM json_each(?))"
_QUOTED = re.compile(r'"(?:[^"]|"")*"')


def pieces_of(expression: str) -> list[str]:
    """The pieces of an expression of quoted pieces joined with ``OR`` (the inverse of its quoting)."""
    return [piece[1:-1].replace('""', '"') for piece in _QUOTED.findall(expression)]


def _from_pg(data: bytes) -> bytes:
    return np.frombuffer(data, dtype=">f4", offset=4).astype("<f4").tobytes()


class PgOperations:
    """PostgreSQL's operations on :attr:`conn` (module docstring)."""

    __slots__ = ("conn",)

    def __init__(self, conn: PgConnection) -> None:
        self.conn = conn

    # --- the change log and the read state ----------------------------------------------------------

    def _read_state(self) -> tuple[dict[str, int | None], int, int]:
        """The vector tables' dimensions, the last change id and the entities waiting for vectors, read in one
        statement once per read snapshot (:func:`~limbic.core.store.postgres.schema.read_state`)."""
        state: tuple[dict[str, int | None], int, int] = self.conn.in_snapshot(
            _READ_STATE, lambda: schema.read_state(self.conn, VECTOR_TABLES))
        return state

    def last_change_id(self) -> int:
        return self._read_state()[1]

    def pending_vector_count(self) -> int:
        return self._read_state()[2]

    def json_ids_contain(self, column: str, value: str) -> str:
        """``jsonb`` containment."""
        return f"{column}::jsonb @> jsonb_build_array({value}::bigint)"

    def json_id_rows(self, column: str, alias: str) -> str:
        return f"jsonb_array_elements_text(CAST({column} AS jsonb)) {alias}(value)"

    # --- SQL functions spelled differently ----------------------------------------------------------

    def greatest(self, first: str, second: str) -> str:
        return f"greatest({first}, {second})"

    def least(self, first: str, second: str) -> str:
        return f"least({first}, {second})"

    def ascii_folded(self, column: str) -> str:
        """``lower()`` of a ``"C"`` text folds ASCII only, as SQLite's ``NOCASE``; ``lower(name)`` is indexed."""
        return f"lower({column})"

    def holds_text(self, text: str, part: str) -> str:
        return f"strpos({text}, {part}) > 0"

    # --- the schema ---------------------------------------------------------------------------------

    def table_columns(self, table: str) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
            "AND table_schema = current_schema() ORDER BY ordinal_position", (table,))]

    def vector_dimension(self, table: str) -> int | None:
        if table in VECTOR_TABLES:
            return self._read_state()[0][table]
        return schema.vector_dimension(self.conn, table)

    def create_vector_table(self, table: str, dimension: int) -> None:
        schema.create_vector_table(self.conn, table, dimension)

    def after_bulk_load(self) -> None:
        """``VACUUM (ANALYZE)``: without statistics a search's signals query took 51 ms instead of 4 at 10k; without
        the visibility map the full-text postings are read from the table, not from their index alone, and
        autovacuum's pass over the copy competes with the first minute of searches."""
        self.conn.execute("VACUUM (ANALYZE)")

    # --- vector rows ----------------------------------------------------------------------------------

    def read_vectors(self, table: str, rowids: Sequence[int]) -> list[tuple[int, bytes]]:
        wanted = [int(rowid) for rowid in rowids]
        found = {int(r): _from_pg(bytes(v)) for r, v in self.conn.raw.execute(
            f"SELECT rowid, vector_send(embedding) FROM {table} WHERE rowid = ANY(%s)", (wanted,))}
        return [(rowid, found[rowid]) for rowid in wanted if rowid in found]

    def scan_vectors(self, table: str) -> Iterator[tuple[int, bytes]]:
        with self.conn.raw.cursor() as cursor:
            for rowid, data in cursor.execute(f"SELECT rowid, vector_send(embedding) FROM {table}"):
                yield int(rowid), _from_pg(bytes(data))

    def insert_vectors(self, table: str, rows: Sequence[tuple[int, bytes]]) -> None:
        self.conn.register_vectors()
        self.conn.raw.cursor().executemany(
            f"INSERT INTO {table}(rowid, embedding) VALUES (%s, %s)",
            [(int(rowid), np.frombuffer(blob, dtype=np.float32)) for rowid, blob in rows])

    def delete_vectors(self, table: str, rowids: Sequence[int]) -> None:
        self.conn.raw.execute(f"DELETE FROM {table} WHERE rowid = ANY(%s)", ([int(rowid) for rowid in rowids],))

    def replacing_vectors(self, table: str, rows: Sequence[tuple[int, bytes]]) -> list[tuple[str, Sequence[Any]]]:
        self.conn.register_vectors()
        return [(f"DELETE FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))",
                 (json.dumps([int(rowid) for rowid, _ in rows]),)),
                *((f"INSERT INTO {table}(rowid, embedding) VALUES (?, ?)",
                   (int(rowid), np.frombuffer(blob, dtype=np.float32))) for rowid, blob in rows)]

    def feedback_cosines(self, ids: Sequence[int], model: str, query: np.ndarray, labels: int) -> dict[int, float]:
        """The query vectors read, the cosines computed here in float32."""
        best: dict[int, float] = {}
        rows = self.conn.execute(_LABELS, ([int(i) for i in ids], model, labels, query.nbytes)).fetchall()
        if not rows:
            return best
        stored = np.frombuffer(b"".join(bytes(cast(bytes, v)) for _, v in rows), dtype=np.float32).reshape(len(rows), -1)
        norms = np.linalg.norm(stored, axis=1) * np.linalg.norm(query)
        cosine = (stored @ query) / np.where(norms == 0, np.float32(1.0), norms)
        for (entity, _), similarity in zip(rows, cosine.tolist(), strict=True):
            key = int(cast(int, entity))
            if key not in best or similarity > best[key]:
                best[key] = similarity
        return best

    # --- full text ------------------------------------------------------------------------------------

    def tokenizer(self) -> Callable[[str], list[str]]:
        """FTS5's own tokenizer, with which the index is written."""
        return full_text.query_tokens

    def _statistics(self, tokens: Sequence[str]) -> tuple[dict[int, int], dict[int, dict[str, int]]]:
        """Row counts and the document frequencies of ``tokens`` in every index, read in one statement once per
        read snapshot (a search asks for both indexes' in turn); the row counts are kept for :meth:`text_rows`
        too."""
        found: tuple[dict[int, int], dict[int, dict[str, int]]] = self.conn.in_snapshot(
            ("full-text statistics", frozenset(tokens)), lambda: full_text.statistics(self.conn.raw, list(tokens)))
        self.conn.in_snapshot(_TEXT_ROWS, lambda: found[0])
        return found

    def document_frequencies(self, table: str, tokens: Sequence[str]) -> dict[str, int]:
        return self._statistics(tokens)[1][_INDEX[table]]

    def text_rows(self, table: str) -> int:
        """The index's own count, kept as it is written (``count(*)`` scans the table)."""
        counts = self.conn.in_snapshot(_TEXT_ROWS, lambda: full_text.row_counts(self.conn.raw))
        return int(counts.get(_INDEX[table], 0))

    def text_matches(self, table: str, expression: str, limit: int | None, only_ids: Sequence[int] | None,
                     columns: Sequence[str] | None) -> list[tuple[int, float]]:
        """FTS5's BM25 computed in SQL (:func:`~limbic.core.store.postgres.full_text.ranked`)."""
        ix = _INDEX[table]
        positions = None if columns is None else [full_text.COLUMNS[ix].index(c) for c in columns]
        return full_text.ranked(self.conn.raw, ix, pieces_of(expression), limit, only_ids=only_ids, columns=positions)

    def best_text_entities(self, expression: str, count: int, rare: str | None,
                           common_bound: float) -> list[tuple[int, float]]:
        """Every match ranked (the index reads a piece's postings at once; no pruning by rare pieces)."""
        return self.text_matches("entity_fts", expression, count, None, None)

    def entities_with_current_observation_text(self, expression: str, entity_ids: Sequence[int],
                                               now: float) -> set[int]:
        """The current observations of ``entity_ids``, those of them ``expression`` matches, and their entities."""
        live = [int(r[0]) for r in self.conn.execute(_LIVE_OF_ENTITIES,
                                                     (json.dumps([int(i) for i in entity_ids]), now))]
        matched = [i for i, _ in self.text_matches("observation_fts", expression, None, live, None)]
        return {int(r[0]) for r in self.conn.execute(_ENTITIES_OF, (json.dumps(matched),))}

    def write_entity_text(self, rows: Sequence[tuple[int, str, str, str]]) -> None:
        """``entity_fts`` documents, and the ``entity_cjk_fts`` ones of those holding CJK text (``cjk_documents``)."""
        full_text.write_documents(self.conn.raw, full_text.ENTITY_FTS, [(r[0], r[1:]) for r in rows],
                                  clear=(full_text.ENTITY_CJK_FTS,))  # in the same round trip
        if cjk := cjk_documents(rows):
            full_text.write_documents(self.conn.raw, full_text.ENTITY_CJK_FTS, [(r[0], r[1:]) for r in cjk])

    def delete_entity_text(self, entity_ids: Iterable[int]) -> None:
        listed = [int(i) for i in entity_ids]
        full_text.delete_documents(self.conn.raw, full_text.ENTITY_FTS, listed)
        full_text.delete_documents(self.conn.raw, full_text.ENTITY_CJK_FTS, listed)
