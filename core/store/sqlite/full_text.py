"""The full-text index of a SQLite memory: FTS5 tables ``entity_fts``, ``observation_fts``, ``reflection_fts``
and ``entity_cjk_fts`` (migrations ``005``/``009``/``012``/``016``), ranked by FTS5's own ``bm25()``.

``entity_fts`` and ``entity_cjk_fts`` are written here, by the store
(:func:`~limbic.core.store.indexing.write_entity_text`); the other two by the triggers of their migrations.
:class:`FullText` is the full-text half of :class:`~limbic.core.store.sqlite.operations.SqliteOperations`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from limbic.core.errors import ValidationError
from limbic.core.store.expiry import current
from limbic.core.store.text_search import CJK_TABLE, FTS_TOKENIZER, cjk_documents

if TYPE_CHECKING:
    from limbic.core.store.sqlite.connection import SqliteConnection

# the table each index holds a row of (FTS5's N counts them all)
_ROWS = {"entity_fts": "entities", "observation_fts": "observations", "reflection_fts": "reflections",
         CJK_TABLE: CJK_TABLE}
# per-connection fts5vocab tables over each full-text index (temp schema: nothing is written)
_VOCAB = {"entity_fts": "limbic_fts_vocab", "observation_fts": "limbic_observation_fts_vocab",
          CJK_TABLE: "limbic_cjk_fts_vocab"}
# BM25 of the whole expression, computed only for the rows that match a rare piece
_RARE_ROWS = """
SELECT rowid, -bm25(entity_fts) FROM entity_fts
WHERE entity_fts MATCH ?1 AND +rowid IN (SELECT rowid FROM entity_fts WHERE entity_fts MATCH ?2)
"""
# ``rank, rowid``: SQLite's sorter keeps the best ``LIMIT`` rows as it goes, faster than FTS5's own
# ``ORDER BY rank`` (18 against 32 ms for 35,000 matches at all of Debian), with ties to the lower id
_ALL_ROWS = "SELECT rowid, -rank FROM entity_fts WHERE entity_fts MATCH ? ORDER BY rank, rowid LIMIT ?"
_OBSERVATION_MATCHES = f"""
SELECT DISTINCT o.entity_id FROM observation_fts f JOIN observations o ON o.id = f.rowid
WHERE observation_fts MATCH ?1 AND +f.rowid IN (
    SELECT id FROM observations WHERE entity_id IN (SELECT value FROM json_each(?2)) AND {current('?3')})
"""


class FullText:
    """FTS5 reads and the writes of ``entity_fts`` on :attr:`conn` (the methods of
    :class:`~limbic.core.store.operations.Operations` under "full text")."""

    __slots__ = ()
    conn: SqliteConnection

    def tokenizer(self) -> Callable[[str], list[str]]:
        """:data:`~limbic.core.store.text_search.FTS_TOKENIZER` through apsw, as FTS5 tokenizes a query."""
        tokenize = self.conn.fts5_tokenizer(FTS_TOKENIZER[0], list(FTS_TOKENIZER[1:]))

        def run(term: str) -> list[str]:
            found = tokenize(term.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None,
                             include_offsets=False, include_colocated=False)
            return [str(token) for token in found]

        return run

    def document_frequencies(self, table: str, tokens: Sequence[str]) -> dict[str, int]:
        """Through a per-connection ``fts5vocab`` table in the ``temp`` schema (nothing is written to the file)."""
        vocab = _VOCAB[table]
        self.conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, '{table}', 'row')")
        return dict(self.conn.execute(f"SELECT term, doc FROM temp.{vocab} WHERE term IN (SELECT value FROM json_each(?))",
                                      (json.dumps(list(tokens)),)))

    def text_rows(self, table: str) -> int:
        return int(self.conn.execute(f"SELECT count(*) FROM {_ROWS[table]}").get)

    def _matching(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """The rows of an FTS5 ``MATCH`` query. The expression is built to be valid; should SQLite still
        refuse it, the caller gets a ValidationError without SQLite's message."""
        try:
            return self.conn.execute(sql, args).fetchall()
        except apsw.SQLError as exc:
            raise ValidationError("the query could not be searched as text; try other words") from exc

    def text_matches(self, table: str, expression: str, limit: int | None, only_ids: Sequence[int] | None,
                     columns: Sequence[str] | None) -> list[tuple[int, float]]:
        """FTS5's ``bm25()``: ``only_ids`` as ``+rowid IN`` (a filter on the match's own scan), ``columns`` as
        ``{col …} :``."""
        match = expression if columns is None else f"{{{' '.join(columns)}}} : ({expression})"
        where = f"{table} MATCH ?1"
        args: tuple[Any, ...] = (match,)
        if only_ids is not None:
            where += " AND +rowid IN (SELECT value FROM json_each(?2))"
            args += (json.dumps([int(i) for i in only_ids]),)
        sql = f"SELECT rowid, -bm25({table}) FROM {table} WHERE {where}"
        if limit is not None:
            sql += f" ORDER BY rank, rowid LIMIT {int(limit)}"
        rows = [(int(r), float(s)) for r, s in self._matching(sql, args)]
        return rows if limit is not None else sorted(rows, key=lambda row: (-row[1], row[0]))

    def best_text_entities(self, expression: str, count: int, rare: str | None,
                           common_bound: float) -> list[tuple[int, float]]:
        """The rows matching ``rare`` scored first, kept when ``count`` of them beat ``common_bound``."""
        if rare is not None and count > 0:
            rows = self._matching(_RARE_ROWS, (expression, rare))
            if len(rows) >= count:
                rows.sort(key=lambda row: (-row[1], row[0]))
                if rows[count - 1][1] > common_bound * (1.0 + 1e-6) + 1e-9:
                    return [(int(rowid), float(score)) for rowid, score in rows[:count]]
        return [(int(rowid), float(score)) for rowid, score in self._matching(_ALL_ROWS, (expression, count))]

    def entities_with_current_observation_text(self, expression: str, entity_ids: Sequence[int],
                                               now: float) -> set[int]:
        """One FTS5 query over the current observations of ``entity_ids``."""
        listed = json.dumps([int(i) for i in entity_ids])
        return {int(r[0]) for r in self._matching(_OBSERVATION_MATCHES, (expression, listed, now))}

    def write_entity_text(self, rows: Sequence[tuple[int, str, str, str]]) -> None:
        """``entity_fts`` rows, and the ``entity_cjk_fts`` rows of those holding CJK text (``cjk_documents``)."""
        if not rows:
            return
        self.delete_entity_text([int(r[0]) for r in rows])
        self.conn.executemany("INSERT INTO entity_fts(rowid, name, entity_type, obs_text) VALUES (?, ?, ?, ?)", rows)
        if cjk := cjk_documents(rows):
            self.conn.executemany(f"INSERT INTO {CJK_TABLE}(rowid, name, entity_type, obs_text) VALUES (?, ?, ?, ?)", cjk)

    def delete_entity_text(self, entity_ids: Iterable[int]) -> None:
        listed = (json.dumps([int(i) for i in entity_ids]),)
        self.conn.execute("DELETE FROM entity_fts WHERE rowid IN (SELECT value FROM json_each(?))", listed)
        self.conn.execute(f"DELETE FROM {CJK_TABLE} WHERE rowid IN (SELECT value FROM json_each(?))", listed)
