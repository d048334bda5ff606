"""The rows of vectors computed outside the write transaction: pending marks, the texts they need, and landing
the vectors with their meta rows (the steps are :mod:`limbic.core.vectors.pending`'s).

A mark is a row of ``pending_vectors`` (migration 007): ``(entity id, generation, queued_at)``; a write bumps
the generation of a mark already there (:func:`~limbic.core.store.indexing.mark_pending`). Meta rows
(``entity_embedding_meta``, ``observation_embedding_meta``) record the model and the hash of the text each
vector was made from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from limbic.core.store import vec_rows
from limbic.core.store.connection import Connection
from limbic.core.store.expiry import current
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE


def pending_entities(conn: Connection, limit: int, only: Sequence[int] | None = None,
                     queued_before: float | None = None) -> dict[int, int]:
    """Up to ``limit`` pending entities (among ``only`` when given; only marks queued before
    ``queued_before``, UTC seconds, when given), oldest mark first: ``{entity id: generation}``."""
    clauses: list[str] = []
    args: list[Any] = [limit]
    if only is not None:
        clauses.append("entity_id IN (SELECT value FROM json_each(?2))")
        args.append(json.dumps([int(i) for i in only]))
    if queued_before is not None:
        clauses.append(f"queued_at < ?{len(args) + 1}")
        args.append(queued_before)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    return {int(e): int(g) for e, g in conn.execute(
        f"SELECT entity_id, generation FROM pending_vectors{where} ORDER BY queued_at, entity_id LIMIT ?1", args)}


def generations(conn: Connection, entity_ids: Sequence[int]) -> dict[int, int]:
    """``{entity id: generation}`` of the marks of ``entity_ids`` there now (an entity without one is absent)."""
    return {int(e): int(g) for e, g in conn.execute(
        "SELECT entity_id, generation FROM pending_vectors WHERE entity_id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(int(i) for i in entity_ids)),))}


def texts(conn: Connection, entity_ids: Sequence[int], at: float) -> tuple[
        list[tuple[Any, ...]], dict[int, tuple[str, int]], dict[int, list[tuple[int, str]]]]:
    """What the vectors of ``entity_ids`` are made from (call inside one read snapshot):

    - each entity that exists: ``(id, name, entity_type, status, model, text hash)`` of its entity vector's
      meta row (model and hash None without one);
    - ``{observation id: (model, text hash)}`` of the observation vectors the entities have;
    - ``{entity id: [(observation id, content)]}``, the observations current at ``at`` (UTC seconds: an expired
      text is not embedded again), by entity then id.
    """
    ids = json.dumps(sorted(int(i) for i in entity_ids))
    entities: list[tuple[Any, ...]] = conn.execute(
        "SELECT e.id, e.name, e.entity_type, e.status, m.model, m.text_hash FROM entities e "
        "LEFT JOIN entity_embedding_meta m ON m.entity_id = e.id WHERE e.id IN (SELECT value FROM json_each(?))",
        (ids,)).fetchall()
    stored = {int(oid): (model, digest) for oid, model, digest in conn.execute(
        "SELECT observation_id, model, text_hash FROM observation_embedding_meta "
        "WHERE entity_id IN (SELECT value FROM json_each(?))", (ids,))}
    live: dict[int, list[tuple[int, str]]] = {}
    for oid, eid, content in conn.execute(
            f"SELECT id, entity_id, content FROM observations WHERE {current('?2')} "
            "AND entity_id IN (SELECT value FROM json_each(?1)) ORDER BY entity_id, id", (ids, at)):
        live.setdefault(int(eid), []).append((int(oid), content))
    return entities, stored, live


def store_entity_vectors(conn: Connection, rows: Sequence[tuple[int, int, bytes]], model: str, at: float) -> None:
    """Put the entity vectors ``rows`` of ``(entity id, passage hash, vector bytes)`` made by ``model`` in place
    of those the entities had, with their meta rows (``at``: UTC seconds), in the caller's write transaction (the
    vector table exists)."""
    vec_rows.delete(conn, VECTOR_TABLE, [r[0] for r in rows])
    vec_rows.insert(conn, VECTOR_TABLE, [(r[0], r[2]) for r in rows])
    conn.executemany(
        "INSERT INTO entity_embedding_meta(entity_id, model, updated_at, text_hash) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(entity_id) DO UPDATE SET model = excluded.model, updated_at = excluded.updated_at, "
        "text_hash = excluded.text_hash",
        [(r[0], model, at, r[1]) for r in rows])


def store_observation_vectors(conn: Connection, rows: Sequence[tuple[int, int, int, np.ndarray]], model: str,
                              at: float) -> None:
    """Insert the vectors of observations with their meta rows, in the caller's write transaction: ``rows`` of
    ``(observation id, entity id, passage hash, (d,) float32 vector)`` by ``model``, replacing any they had (the
    vector table exists); ``at``: UTC seconds. A text is then embedded once
    (:func:`limbic.core.vectors.pending.plan` leaves it out)."""
    vectors = vec_rows.replacing(conn, OBSERVATION_VECTOR_TABLE,
                                 [(r[0], np.asarray(r[3], dtype=np.float32).tobytes()) for r in rows])
    conn.execute_all([*vectors, *((
        "INSERT INTO observation_embedding_meta(observation_id, entity_id, model, text_hash, updated_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT(observation_id) DO UPDATE SET entity_id = excluded.entity_id, "
        "model = excluded.model, text_hash = excluded.text_hash, updated_at = excluded.updated_at",
        (r[0], r[1], model, r[2], at)) for r in rows)])


def clear(conn: Connection, marks: Mapping[int, int]) -> None:
    """Remove the marks ``{entity id: generation}`` that still have that generation, in the caller's write
    transaction."""
    conn.executemany("DELETE FROM pending_vectors WHERE entity_id = ? AND generation = ?",
                     [(int(e), int(g)) for e, g in marks.items()])
