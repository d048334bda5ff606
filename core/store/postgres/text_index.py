"""Keeping the PostgreSQL full-text index in step with the rows, inside the writing transaction.

SQLite's FTS5 triggers rewrite ``observation_fts`` and ``reflection_fts`` as rows change. PostgreSQL's
triggers (``postgres/migrations``) can only queue the changed ids in ``fts_pending``: the tokens must be
FTS5's own (:mod:`limbic.core.store.postgres.full_text`), which only the application has. So every write
transaction, before it commits, indexes what its statements queued (:func:`flush_pending_text`): a reader
never sees a row without its postings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from limbic.core.store.postgres import full_text

ENTITIES, OBSERVATIONS, REFLECTIONS = 1, 2, 3


def flush_pending_text(raw: psycopg.Connection[Any]) -> None:
    """Index the observations and reflections queued in ``fts_pending`` (in the open transaction)."""
    queued: dict[int, list[int]] = {}
    for ix, doc in raw.execute("DELETE FROM fts_pending RETURNING ix, doc"):
        queued.setdefault(int(ix), []).append(int(doc))
    if ids := queued.get(OBSERVATIONS):
        docs: list[tuple[int, Sequence[str | None]]] = [(int(i), (name, content)) for i, name, content in raw.execute(
            "SELECT o.id, e.name, o.content FROM observations o JOIN entities e ON e.id = o.entity_id "
            "WHERE o.id = ANY(%s) ORDER BY o.id", (ids,))]
        _replace(raw, OBSERVATIONS, ids, docs)
    if ids := queued.get(REFLECTIONS):
        docs = [(int(i), (author, mood, content)) for i, author, mood, content in raw.execute(
            "SELECT id, author, mood, content FROM reflections WHERE id = ANY(%s) ORDER BY id", (ids,))]
        _replace(raw, REFLECTIONS, ids, docs)


def _replace(raw: psycopg.Connection[Any], ix: int, ids: list[int],
             docs: Sequence[tuple[int, Sequence[str | None]]]) -> None:
    present = {doc for doc, _ in docs}
    gone = [doc for doc in ids if doc not in present]
    if gone:
        full_text.delete_documents(raw, ix, gone)
    if docs:
        full_text.write_documents(raw, ix, docs)
