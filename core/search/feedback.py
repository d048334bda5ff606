"""Feedback from similar queries: how close the query is to earlier queries after which each candidate
was used (docs/scoring.md "Feedback from similar queries").

A use of a memory shown by a search (``open_nodes``, ``get_entity``, ``mark_used``, the app's *Mark as useful*)
is a relevance label for that search (``implicit_feedback``), and the search's query vector is logged
with it (``search_query_vectors``, schema 10). A later query like that one — the same question asked
again, or reworded — is likely answered by the same memory; :func:`feedback_similarity` gives each
candidate the highest cosine between the query and an earlier query it was used for.
"""

from __future__ import annotations

import json
from typing import cast

import apsw
import numpy as np

from limbic.core.store.postgres.connection import on_postgres

LABELS_PER_MEMORY = 64  # the most recent uses of a memory that count (bounds the work per candidate)

# one row per candidate: the best cosine over the query vectors of the searches among its latest
# LABELS_PER_MEMORY labels (implicit_feedback_entity gives them newest first without a sort)
_LABELS = """
SELECT c.value, (
    SELECT MAX(1.0 - vec_distance_cosine(v.vector, ?3))
    FROM (SELECT f.event_id FROM implicit_feedback f WHERE f.entity_id = c.value AND f.event_id IS NOT NULL
          ORDER BY f.id DESC LIMIT ?4) AS latest
    JOIN search_query_vectors v ON v.event_id = latest.event_id
    WHERE v.model = ?2 AND length(v.vector) = length(?3))
FROM json_each(?1) AS c
"""


def feedback_similarity(conn: apsw.Connection, ids_json: str, index: dict[int, int], model: str,
                        query_vector: np.ndarray) -> np.ndarray:
    """For each candidate, the highest cosine between ``query_vector`` and the logged query vectors
    (same ``model``) of the searches it is a relevance label of, among its latest
    :data:`LABELS_PER_MEMORY` labels: ``(n,) float64``, ``nan`` for a candidate never used after a search
    with a vector of that model. The cosines are computed in SQLite (sqlite-vec's
    ``vec_distance_cosine``), one row per candidate comes back; the work per candidate is bounded by
    :data:`LABELS_PER_MEMORY`, however often a memory was used.

    Args:
        conn: a read connection with sqlite-vec loaded; ids_json: the candidates' entity ids as a JSON
            list; index: entity id → candidate position (``n`` entries); model: the embedder's name;
            query_vector: ``(d,) float32``.
    """
    out = np.full(len(index), np.nan, dtype=np.float64)
    if on_postgres(conn):
        return _pg_feedback_similarity(conn, ids_json, index, model, query_vector, out)
    vector = np.asarray(query_vector, dtype=np.float32).tobytes()
    for entity, similarity in conn.execute(_LABELS, (ids_json, model, vector, LABELS_PER_MEMORY)):
        if isinstance(entity, int) and entity in index and isinstance(similarity, float):
            out[index[entity]] = similarity
    return out


_PG_LABELS = """
SELECT c.id, v.vector FROM unnest(?1::bigint[]) AS c(id)
CROSS JOIN LATERAL (SELECT f.event_id FROM implicit_feedback f WHERE f.entity_id = c.id AND f.event_id IS NOT NULL
                    ORDER BY f.id DESC LIMIT ?3) AS latest
JOIN search_query_vectors v ON v.event_id = latest.event_id
WHERE v.model = ?2 AND length(v.vector) = ?4
"""


def _pg_feedback_similarity(conn: apsw.Connection, ids_json: str, index: dict[int, int], model: str,
                            query_vector: np.ndarray, out: np.ndarray) -> np.ndarray:
    """:func:`feedback_similarity` on PostgreSQL: the same rows, the cosines computed here (float32, as
    sqlite-vec's ``vec_distance_cosine``)."""
    query = np.asarray(query_vector, dtype=np.float32)
    rows = conn.execute(_PG_LABELS, (json.loads(ids_json), model, LABELS_PER_MEMORY, query.nbytes)).fetchall()
    if not rows:
        return out
    stored = np.frombuffer(b"".join(bytes(cast(bytes, v)) for _, v in rows), dtype=np.float32).reshape(len(rows), -1)
    norms = np.linalg.norm(stored, axis=1) * np.linalg.norm(query)
    cosine = (stored @ query) / np.where(norms == 0, np.float32(1.0), norms)
    for (entity, _), similarity in zip(rows, cosine.tolist(), strict=True):
        at = index.get(int(cast(int, entity)))
        if at is not None and (np.isnan(out[at]) or similarity > out[at]):
            out[at] = similarity
    return out
