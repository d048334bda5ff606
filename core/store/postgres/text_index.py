"""Keeping the PostgreSQL full-text index in step with the rows, inside the writing transaction.

SQLite's FTS5 triggers rewrite ``observation_fts`` and ``reflection_fts`` as rows change. PostgreSQL's
triggers (``postgres/migrations``) can only queue the changed ids in ``fts_pending``: the tokens must be
FTS5's own (:mod:`limbic.core.store.postgres.full_text`), which only the application has. So every write
transaction, before it commits, indexes what its statements queued (:func:`flush_pending_text`): a reader
never sees a row without its postings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import psycopg

from limbic.core.store.postgres import full_text
from limbic.core.store.postgres.full_text import OBSERVATION_FTS, REFLECTION_FTS

if TYPE_CHECKING:
    from limbic.core.store.postgres.connection import PgConnection

_QUEUED = (
    "WITH queued AS (DELETE FROM fts_pending RETURNING ix, doc) "
    "SELECT q.ix, q.doc, o.id IS NOT NULL OR r.id IS NOT NULL, e.name, o.content, r.author, r.mood, r.content "
    "FROM queued q "
    "LEFT JOIN observations o ON q.ix = ?1 AND o.id = q.doc "
    "LEFT JOIN entities e ON e.id = o.entity_id "
    "LEFT JOIN reflections r ON q.ix = ?2 AND r.id = q.doc "
    "ORDER BY q.ix, q.doc")
"""The ids queued in ``fts_pending`` (taken off the queue) with the texts of those still there, in one round trip:
``(ix, id, present, entity name, content, author, mood, reflection content)``."""


def flush_pending_text(conn: PgConnection) -> None:
    """Index the observations and reflections queued in ``fts_pending`` (in the open transaction; the queue is
    read through ``conn``, so commands it deferred go in the same round trip)."""
    queued: dict[int, list[int]] = {}
    docs: dict[int, list[tuple[int, Sequence[str | None]]]] = {OBSERVATION_FTS: [], REFLECTION_FTS: []}
    for ix, doc, present, name, content, author, mood, said in conn.execute(_QUEUED, (OBSERVATION_FTS, REFLECTION_FTS)):
        queued.setdefault(int(ix), []).append(int(doc))
        if present:
            docs[int(ix)].append((int(doc), (name, content) if ix == OBSERVATION_FTS else (author, mood, said)))
    for ix in (OBSERVATION_FTS, REFLECTION_FTS):
        if ids := queued.get(ix):
            _replace(conn.raw, ix, ids, docs[ix])


def _replace(raw: psycopg.Connection[Any], ix: int, ids: list[int],
             docs: Sequence[tuple[int, Sequence[str | None]]]) -> None:
    present = {doc for doc, _ in docs}
    gone = [doc for doc in ids if doc not in present]
    if gone:
        full_text.delete_documents(raw, ix, gone)
    if docs:
        full_text.write_documents(raw, ix, docs)
