"""What search reads of its candidates, in set-based queries over ``json_each`` id lists, on either backend.

:mod:`limbic.core.search.signals` turns these rows into a candidate set; :mod:`limbic.core.search.context`
and :mod:`limbic.core.search.feedback` into the context and feedback signals (docs/scoring.md). Nothing here
writes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from limbic.core.store.connection import Connection

_ENTITY_SIGNALS = """
SELECT e.id, e.name, e.entity_type, e.status, e.created_at,
       COALESCE(a.access_count, 0), a.last_access,
       (SELECT COUNT(*) FROM entity_access_days d WHERE d.entity_id = e.id),
       (SELECT COUNT(*) FROM relations r WHERE r.from_id = e.id AND r.active = 1)
     + (SELECT COUNT(*) FROM relations r WHERE r.to_id = e.id AND r.active = 1),
       e.project
FROM entities e LEFT JOIN entity_access a ON a.entity_id = e.id
WHERE e.id IN (SELECT value FROM json_each(?1)) AND (?2 IS NULL OR e.project IS NULL OR e.project = ?2)
"""
_LIVE_OBSERVATIONS = """
SELECT id, entity_id, content, kind, created_at, weight FROM observations
WHERE entity_id IN (SELECT value FROM json_each(?1))
  AND superseded_at IS NULL AND (expires_at IS NULL OR expires_at > ?2)
ORDER BY entity_id, id
"""
_CO_OCCURRENCES = """
SELECT a_id, b_id, co_count, last_co FROM co_occurrences
WHERE a_id IN (SELECT value FROM json_each(?1)) AND b_id IN (SELECT value FROM json_each(?1))
"""


def entity_signals(conn: Connection, ids: Sequence[int], project: str | None) -> dict[int, tuple[Any, ...]]:
    """Each of ``ids`` that exists and is in ``project`` or global (``project`` None: any) → ``(id, name,
    entity_type, status, created_at, access_count, last_access, access days, active degree, project)``."""
    return {int(r[0]): tuple(r) for r in conn.execute(_ENTITY_SIGNALS, (json.dumps([int(i) for i in ids]), project))}


def live_observations(conn: Connection, ids: Sequence[int], now: float) -> list[tuple[int, int, str, str, float, float]]:
    """The observations of ``ids`` current at ``now`` (UTC seconds: not superseded, not expired), by entity then
    id: ``(id, entity_id, content, kind, created_at, weight)``."""
    return [tuple(r) for r in conn.execute(_LIVE_OBSERVATIONS, (json.dumps([int(i) for i in ids]), now))]


def co_occurrences(conn: Connection, ids: Sequence[int]) -> list[tuple[int, int, int, float]]:
    """The co-occurrences among ``ids``: ``(a_id, b_id, co_count, last_co)`` (``a_id < b_id``)."""
    return [tuple(r) for r in conn.execute(_CO_OCCURRENCES, (json.dumps([int(i) for i in ids]),))]


# Two index seeks per side (same creation time, then the nearest other time within the window): a row-value
# comparison on (created_at, id) seeks on created_at only and scanned every entity of one import (10 ms at 10k).
_NEIGHBOURS = """
SELECT x.id, CASE WHEN b.entity_type = x.entity_type THEN x.before END,
       CASE WHEN a.entity_type = x.entity_type THEN x.after END
FROM (SELECT e.id, e.entity_type,
  coalesce((SELECT max(p.id) FROM entities p WHERE p.created_at = e.created_at AND p.id < e.id),
           (SELECT p.id FROM entities p WHERE p.created_at < e.created_at AND p.created_at >= e.created_at - ?2
             ORDER BY p.created_at DESC, p.id DESC LIMIT 1)) AS before,
  coalesce((SELECT min(n.id) FROM entities n WHERE n.created_at = e.created_at AND n.id > e.id),
           (SELECT n.id FROM entities n WHERE n.created_at > e.created_at AND n.created_at <= e.created_at + ?2
             ORDER BY n.created_at, n.id LIMIT 1)) AS after
  FROM entities e WHERE e.id IN (SELECT value FROM json_each(?1))) x
LEFT JOIN entities b ON b.id = x.before LEFT JOIN entities a ON a.id = x.after
"""


def creation_neighbours(conn: Connection, ids: Sequence[int], window_seconds: float) -> list[tuple[int, int | None, int | None]]:
    """For each of ``ids`` that exists: ``(id, before, after)``, the entities created just before and just after it
    (creation time, then id) within ``window_seconds`` and of the same entity type, else None (index
    ``entities_created``, schema 8)."""
    return [tuple(r) for r in conn.execute(_NEIGHBOURS, (json.dumps([int(i) for i in ids]), window_seconds))]


def feedback_cosines(conn: Connection, ids: Sequence[int], model: str, query_vector: np.ndarray,
                     labels: int) -> dict[int, float]:
    """Each of ``ids`` used after a logged search with a query vector of ``model`` (among its latest ``labels``
    relevance labels) → the highest cosine between ``query_vector`` ``(d,) float32`` and those searches' query
    vectors (float32, as sqlite-vec's ``vec_distance_cosine``: on SQLite computed there, on PostgreSQL from the
    rows read). Candidates never used after such a search are absent."""
    return conn.ops.feedback_cosines([int(i) for i in ids], model, np.asarray(query_vector, dtype=np.float32), labels)
