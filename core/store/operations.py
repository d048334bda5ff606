"""What one storage engine does its own way: :class:`Operations`, reached as ``conn.ops`` from any connection.

The store writes its SQL once, in the subset both engines run (:mod:`limbic.core.store.postgres.rewriter` says
which), and asks the engine of the connection for everything else: the full-text index, the vector rows, the
read state a search asks first, the few SQL functions the engines spell differently, and what a bulk load
needs afterwards (Django's ``connection.ops``; docs/architecture.md "Storage backends"). Each engine implements
this once in its own package (``core/store/sqlite/operations.py``, ``core/store/postgres/operations.py``), bound
to one connection; the store's modules never test which engine a connection belongs to.

Vectors come and go as the bytes of a little-endian ``(d,) float32`` array; full-text tables are named by the
SQLite index they are (``entity_fts``, ``observation_fts``, ``reflection_fts``); expressions are the quoted
pieces joined with ``OR`` that :mod:`limbic.core.search.full_text` builds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np


class Operations(Protocol):
    """The engine's own ways, bound to one connection (module docstring)."""

    # --- the change log and the read state ----------------------------------------------------------

    def last_change_id(self) -> int:
        """The newest ``changes`` id (0 when none); on PostgreSQL read once per read snapshot."""
        ...

    def pending_vector_count(self) -> int:
        """How many entities wait for vectors; on PostgreSQL read once per read snapshot."""
        ...

    def json_ids_contain(self, column: str, value: str) -> str:
        """SQL: true when the JSON id list in ``column`` holds the integer ``value`` (an SQL expression, e.g.
        ``"?2"``)."""
        ...

    def json_id_rows(self, column: str, alias: str) -> str:
        """SQL ``FROM`` item: one row per element of the JSON id list in ``column``, as ``{alias}.value``
        (cast it to ``BIGINT``: it is text on PostgreSQL)."""
        ...

    # --- SQL functions spelled differently ----------------------------------------------------------

    def greatest(self, first: str, second: str) -> str:
        """SQL: the larger of two values (SQLite's scalar ``max``: NULL when either is NULL; PostgreSQL's
        ``greatest``: the other one)."""
        ...

    def least(self, first: str, second: str) -> str:
        """SQL: the smaller of two values (NULLs as :meth:`greatest`)."""
        ...

    def ascii_folded(self, column: str) -> str:
        """SQL: ``column`` compared without ASCII case (SQLite's ``COLLATE NOCASE``, PostgreSQL's ``lower()``
        of a ``"C"`` text), as the indexes on names are built; the values compared with it are given
        lower-cased."""
        ...

    def holds_text(self, text: str, part: str) -> str:
        """SQL: true when ``part`` occurs in ``text`` (case-sensitive; SQLite's ``instr``, PostgreSQL's
        ``strpos``)."""
        ...

    # --- the schema ---------------------------------------------------------------------------------

    def table_columns(self, table: str) -> list[str]:
        """The columns of ``table`` in their declared order (empty when the table does not exist)."""
        ...

    def vector_dimension(self, table: str) -> int | None:
        """The dimension of the vector table ``table``, or None when it does not exist."""
        ...

    def create_vector_table(self, table: str, dimension: int) -> None:
        """Create the vector table ``table`` (rowid → ``dimension`` floats, cosine distance), in the caller's
        transaction."""
        ...

    def after_bulk_load(self) -> None:
        """What the engine needs after a whole memory was loaded (PostgreSQL: statistics for the planner and
        the visibility map; SQLite: nothing). Outside a transaction."""
        ...

    # --- vector rows ----------------------------------------------------------------------------------

    def read_vectors(self, table: str, rowids: Sequence[int]) -> list[tuple[int, bytes]]:
        """``(rowid, vector bytes)`` of each of ``rowids`` present in ``table``, in the given order."""
        ...

    def scan_vectors(self, table: str) -> Iterator[tuple[int, bytes]]:
        """``(rowid, vector bytes)`` of every row of ``table``, in no particular order."""
        ...

    def insert_vectors(self, table: str, rows: Sequence[tuple[int, bytes]]) -> None:
        """Add ``(rowid, vector bytes)`` rows to ``table`` (the rowids must be absent)."""
        ...

    def delete_vectors(self, table: str, rowids: Sequence[int]) -> None:
        """Delete the rows ``rowids`` of ``table`` (absent ones are ignored)."""
        ...

    def replacing_vectors(self, table: str, rows: Sequence[tuple[int, bytes]]) -> list[tuple[str, Sequence[Any]]]:
        """The statements that put ``(rowid, vector bytes)`` rows in ``table`` in place of any those rowids had,
        as ``(sql, bindings)`` for the connection's ``execute_all``."""
        ...

    def feedback_cosines(self, ids: Sequence[int], model: str, query: np.ndarray, labels: int) -> dict[int, float]:
        """Each of ``ids`` used after a logged search with a query vector of ``model`` (among its latest
        ``labels`` relevance labels) → the highest cosine between ``query`` ``(d,) float32`` and those
        searches' query vectors (float32, as sqlite-vec's ``vec_distance_cosine``)."""
        ...

    # --- full text ------------------------------------------------------------------------------------

    def tokenizer(self) -> Callable[[str], list[str]]:
        """The index's tokenizer: a piece of query text → its tokens as the index stores them."""
        ...

    def document_frequencies(self, table: str, tokens: Sequence[str]) -> dict[str, int]:
        """Rows of the full-text index ``table`` holding each of ``tokens`` (absent: none)."""
        ...

    def text_rows(self, table: str) -> int:
        """Rows of the table whose full-text index is ``table`` (BM25's N)."""
        ...

    def text_matches(self, table: str, expression: str, limit: int | None, only_ids: Sequence[int] | None,
                     columns: Sequence[str] | None) -> list[tuple[int, float]]:
        """``(row id, −bm25)`` of the rows of ``table`` matching ``expression``, best first, ties to the lower id
        (:func:`limbic.core.store.text_search.matches`).

        Raises:
            ValidationError: the engine refused the expression (no engine message shown).
        """
        ...

    def best_text_entities(self, expression: str, count: int, rare: str | None,
                           common_bound: float) -> list[tuple[int, float]]:
        """The ``count`` best entities for ``expression`` (:func:`limbic.core.store.text_search.best_entities`).

        Raises:
            ValidationError: as :meth:`text_matches`.
        """
        ...

    def entities_with_current_observation_text(self, expression: str, entity_ids: Sequence[int],
                                               now: float) -> set[int]:
        """Those of ``entity_ids`` with an observation current at ``now`` (UTC seconds) that ``expression``
        matches in ``observation_fts``.

        Raises:
            ValidationError: as :meth:`text_matches`.
        """
        ...

    def write_entity_text(self, rows: Sequence[tuple[int, str, str, str]]) -> None:
        """Put ``(entity id, name, entity type, observation text)`` rows in ``entity_fts`` in place of those
        entities' rows, and in ``entity_cjk_fts`` those holding CJK text
        (:func:`~limbic.core.store.text_search.cjk_documents`; the others' rows there removed), in the caller's
        transaction."""
        ...

    def delete_entity_text(self, entity_ids: Iterable[int]) -> None:
        """Remove the ``entity_fts`` and ``entity_cjk_fts`` rows of ``entity_ids``, in the caller's transaction."""
        ...
