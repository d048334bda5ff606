"""Which stored vectors a model made: reads of ``entity_embedding_meta`` and ``observation_embedding_meta``
for the readers outside the store that hold or compare stored vectors (the vector copy, re-embedding,
duplicates, entity splitting)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from limbic.core.store.connection import Connection
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE, vector_dimension


def live_observations(conn: Connection, model: str, now: float) -> list[tuple[int, int]]:
    """``(observation id, entity id)`` of the live observations (not superseded, not expired at ``now``, UTC
    seconds) with a vector made by ``model``, by observation id ascending."""
    return conn.execute(
        "SELECT m.observation_id, m.entity_id FROM observation_embedding_meta m "
        "JOIN observations o ON o.id = m.observation_id "
        "WHERE m.model = ?1 AND o.superseded_at IS NULL AND (o.expires_at IS NULL OR o.expires_at > ?2)"
        " ORDER BY m.observation_id", (model, now)).fetchall()


def observations_of_model(conn: Connection, model: str, observation_ids: Sequence[int]) -> set[int]:
    """The ones of ``observation_ids`` whose vector was made by ``model``."""
    return {int(i) for i, in conn.execute(
        "SELECT observation_id FROM observation_embedding_meta WHERE model = ? AND observation_id IN "
        "(SELECT value FROM json_each(?))", (model, json.dumps(list(observation_ids))))}


def entities_of_model(conn: Connection, model: str) -> list[int]:
    """Ids of the entities whose entity vector was made by ``model``, ascending."""
    return [r[0] for r in conn.execute(
        "SELECT entity_id FROM entity_embedding_meta WHERE model = ? ORDER BY entity_id", (model,))]


def stale_vector_count(conn: Connection, model: str) -> int:
    """Vectors of ``model`` that are missing: entities without their entity vector plus live observations
    without their observation vector."""
    count = conn.execute(
        "SELECT (SELECT count(*) FROM entities e LEFT JOIN entity_embedding_meta m ON m.entity_id = e.id "
        "        WHERE m.model IS NULL OR m.model != ?1)"
        " + (SELECT count(*) FROM observations o LEFT JOIN observation_embedding_meta m "
        "    ON m.observation_id = o.id WHERE o.superseded_at IS NULL AND (m.model IS NULL OR m.model != ?1))",
        (model,),
    ).get
    return int(count) if isinstance(count, int) else 0


def entity_coverage(conn: Connection, model: str) -> tuple[int, int]:
    """``(embedded, total)`` entities: ``total`` counts every entity, ``embedded`` those whose entity vector was
    made by ``model`` and that wait for no newer vector (no pending mark)."""
    row = conn.execute(
        "SELECT count(*), coalesce(sum(CASE WHEN m.entity_id IS NOT NULL AND p.entity_id IS NULL THEN 1 ELSE 0 END), 0)"
        " FROM entities e LEFT JOIN entity_embedding_meta m ON m.entity_id = e.id AND m.model = ?1"
        " LEFT JOIN pending_vectors p ON p.entity_id = e.id", (model,)).fetchone()
    return int(row[1]), int(row[0])


_STALE_ENTITIES = """
SELECT e.id FROM entities e
WHERE NOT EXISTS (SELECT 1 FROM entity_embedding_meta m WHERE m.entity_id = e.id AND m.model = ?1{entity_vector})
UNION
SELECT o.entity_id FROM observations o LEFT JOIN observation_embedding_meta m ON m.observation_id = o.id
WHERE o.superseded_at IS NULL AND (m.model IS NULL OR m.model != ?1 OR m.entity_id != o.entity_id{observation_vector})
"""


def stale_entity_ids(conn: Connection, model: str) -> list[int]:
    """Ids (ascending) of entities that lack a vector of ``model``: their entity vector, or the vector of
    a live observation (a meta row whose vector row is missing counts as missing)."""
    tables = {t for t in (VECTOR_TABLE, OBSERVATION_VECTOR_TABLE) if vector_dimension(conn, t) is not None}
    entity_vector = f" AND e.id IN (SELECT rowid FROM {VECTOR_TABLE})" if VECTOR_TABLE in tables else ""
    observation_vector = (f" OR o.id NOT IN (SELECT rowid FROM {OBSERVATION_VECTOR_TABLE})"
                          if OBSERVATION_VECTOR_TABLE in tables else "")
    rows: list[tuple[Any, ...]] = conn.execute(
        _STALE_ENTITIES.format(entity_vector=entity_vector, observation_vector=observation_vector) + " ORDER BY 1",
        (model,),
    ).fetchall()
    return [int(row[0]) for row in rows]


_ENTITY_VECTORS = "SELECT entity_id FROM entity_embedding_meta WHERE model = ?1"
_OBSERVATION_VECTORS = (
    "SELECT m.observation_id, m.entity_id, coalesce(o.expires_at, 'inf') FROM observation_embedding_meta m "
    "JOIN observations o ON o.id = m.observation_id WHERE +m.model = ?1 AND o.superseded_at IS NULL"
)  # +m.model: a refresh of a few entities looks them up by entity_id (every row has the one model)
_ONLY = " AND {column} IN (SELECT value FROM json_each(?2))"


def entity_vectors(conn: Connection, model: str, entity_ids: Sequence[int] | None = None) -> list[tuple[int]]:
    """``(entity id,)`` of each entity vector made by ``model`` (of ``entity_ids`` when given), in no particular
    order."""
    if entity_ids is None:
        return conn.execute(_ENTITY_VECTORS, (model,)).fetchall()
    return conn.execute(_ENTITY_VECTORS + _ONLY.format(column="entity_id"),
                        (model, json.dumps([int(i) for i in entity_ids]))).fetchall()


def observation_vectors(conn: Connection, model: str,
                        entity_ids: Sequence[int] | None = None) -> list[tuple[int, int, float | str]]:
    """``(observation id, entity id, expires_at)`` of each vector made by ``model`` of an observation not
    superseded (of ``entity_ids``' observations when given), in no particular order; ``expires_at`` is UTC
    seconds, or infinity (``float()`` of it) for one that never expires."""
    if entity_ids is None:
        return conn.execute(_OBSERVATION_VECTORS, (model,)).fetchall()
    return conn.execute(_OBSERVATION_VECTORS + _ONLY.format(column="m.entity_id"),
                        (model, json.dumps([int(i) for i in entity_ids]))).fetchall()
