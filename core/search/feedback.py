"""Feedback from similar queries: how close the query is to earlier queries after which each candidate
was used (docs/scoring.md "Feedback from similar queries").

A use of a memory shown by a search (``open_nodes``, ``get_entity``, ``mark_used``, the app's *Mark as useful*)
is a relevance label for that search (``implicit_feedback``), and the search's query vector is logged
with it (``search_query_vectors``, schema 10). A later query like that one — the same question asked
again, or reworded — is likely answered by the same memory; :func:`feedback_similarity` gives each
candidate the highest cosine between the query and an earlier query it was used for.
"""

from __future__ import annotations

import numpy as np

from limbic.core.store import Connection
from limbic.core.store.search_reads import feedback_cosines

LABELS_PER_MEMORY = 64  # the most recent uses of a memory that count (bounds the work per candidate)


def feedback_similarity(conn: Connection, index: dict[int, int], model: str,
                        query_vector: np.ndarray) -> np.ndarray:
    """For each candidate, the highest cosine between ``query_vector`` and the logged query vectors
    (same ``model``) of the searches it is a relevance label of, among its latest
    :data:`LABELS_PER_MEMORY` labels: ``(n,) float64``, ``nan`` for a candidate never used after a search
    with a vector of that model. The work per candidate is bounded by :data:`LABELS_PER_MEMORY`, however
    often a memory was used (:func:`limbic.core.store.search_reads.feedback_cosines`).

    Args:
        conn: a read connection; index: entity id → candidate position (``n`` entries); model: the
            embedder's name; query_vector: ``(d,) float32``.
    """
    out = np.full(len(index), np.nan, dtype=np.float64)
    for entity, similarity in feedback_cosines(conn, list(index), model, query_vector, LABELS_PER_MEMORY).items():
        at = index.get(entity)
        if at is not None:
            out[at] = similarity
    return out
