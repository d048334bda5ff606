"""The signals stage of search: the merged candidates of both branches become a :class:`CandidateSet`.

:class:`SearchRequest` is what was asked, :class:`Branches` what the KNN and full-text branches found (merged
by RRF and widened by context); :func:`gather` reads every candidate's signals and display data in five
set-based queries (entities with access, access days and degree; live observations; co-occurrences among
candidates; the relevance labels of earlier searches; the observation evidence, docs/scoring.md
"Observation evidence"). :class:`QuerySimilarity` is all that search needs of the vector copy.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from limbic.core.search import context, dates, feedback
from limbic.core.search.candidates import STATUS_CODES, CandidateSet
from limbic.core.search.confidence import ranking_weight, scope_weight
from limbic.core.search.routing import detect_query_type
from limbic.core.store import Connection, search_reads, text_search

METADATA_KIND = "metadata"


class QuerySimilarity(Protocol):
    """One query's cosine similarity to the entities and observations with vectors (the vector copy,
    :meth:`limbic.core.vectors.vector_index.VectorIndex.similarities`, answers it). ``approximate``: the
    nearest entities are proposed by an HNSW graph (every similarity is still exact)."""

    approximate: bool

    def nearest(self, k: int) -> tuple[list[int], dict[int, float]]:
        """The ``k`` nearest entities, nearest first, with their cosine distances ``1 − sim``."""
        ...

    def distances(self, entity_ids: list[int]) -> dict[int, float]:
        """The cosine distance of each of ``entity_ids`` that has a vector."""
        ...

    def of_observations(self, observation_ids: list[int]) -> dict[int, float]:
        """The cosine similarity of each of ``observation_ids`` that has a live vector."""
        ...


class VectorSource(Protocol):
    """Where search gets a :class:`QuerySimilarity` for a query vector ``(d,) float32`` made by ``model``
    (``now``: UTC seconds, observations expired by then do not count)."""

    def similarities(self, conn: Connection, model: str, vector: np.ndarray, now: float) -> QuerySimilarity:
        ...


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """What was asked: the validated ``query`` and ``limit``, ``now`` (UTC seconds), ``encoded`` (the model's
    name and the query's ``(d,) float32`` vector, ``None`` without a model), ``spans`` (the dates the query
    names, :func:`limbic.core.search.dates.query_dates`) and ``project`` (only its memories and the global
    ones are candidates, weighed 1.0 and 0.8: :mod:`limbic.core.search.confidence`; ``None``: every memory, 1.0)."""

    query: str
    limit: int
    now: float
    encoded: tuple[str, np.ndarray] | None
    spans: tuple[tuple[float, float], ...]
    project: str | None = None


@dataclass(frozen=True, slots=True)
class Branches:
    """What the two branches found, merged: ``ids`` ``(n,) int64`` in RRF order (context neighbours last),
    ``knn_rank`` and ``fts_rank`` ``(n,) int64`` (1-based, 0 = absent); ``distances`` the KNN cosine distances
    of the KNN hits, ``cosine_distances`` those of every candidate with a vector, ``bm25`` the full-text scores
    (sign flipped); the BM25 ceilings of the query in ``entity_fts`` and ``observation_fts``; ``around`` each
    candidate's neighbours in creation order (:mod:`limbic.core.search.context`); ``expression`` the FTS5
    expression (``None`` when the text has nothing searchable); ``similarities`` the query's
    :class:`QuerySimilarity` (``None`` without KNN); ``mode`` ``hybrid`` / ``semantic`` / ``fts_only``."""

    ids: np.ndarray
    knn_rank: np.ndarray
    fts_rank: np.ndarray
    distances: dict[int, float]
    cosine_distances: dict[int, float]
    bm25: dict[int, float]
    bm25_ceiling: float
    observation_bm25_ceiling: float
    around: dict[int, tuple[int, ...]]
    expression: str | None
    similarities: QuerySimilarity | None
    mode: str


def _observation_matches(conn: Connection, expression: str | None,
                         live: dict[int, int]) -> list[tuple[int, int, float]]:
    """Every observation of ``live`` (live observation id → its entity id) that ``expression`` matches in
    ``observation_fts``: ``(observation id, entity id, BM25 sign flipped)`` (docs/scoring.md "Observation
    evidence"). BM25 is computed only for those rows, not for every match of the index."""
    if expression is None or not live:
        return []
    return [(o, live[o], b) for o, b in text_search.matches(conn, "observation_fts", expression, only_ids=list(live))]


def gather(conn: Connection, request: SearchRequest, branches: Branches) -> CandidateSet:
    """The :class:`CandidateSet` of ``branches``: signals and display data of every merged candidate
    (entities that vanished, and those of another project than ``request.project``, are dropped), in five set-based queries with ``json_each`` id lists. The
    observation evidence is the candidates' live observations ``branches.expression`` matches in
    ``observation_fts`` with their cosines from ``branches.similarities``; the feedback from similar queries
    needs ``request.encoded`` (:mod:`limbic.core.search.feedback`); the date distances ``request.spans``
    (:mod:`limbic.core.search.dates`)."""
    ids, knn_rank, fts_rank = branches.ids, branches.knn_rank, branches.fts_rank
    query, limit, mode, now, similarities = request.query, request.limit, branches.mode, request.now, branches.similarities
    rows = search_reads.entity_signals(conn, ids.tolist(), request.project)
    keep = np.array([int(i) in rows for i in ids], dtype=bool)
    ids, knn_rank, fts_rank = ids[keep], knn_rank[keep], fts_rank[keep]
    kept = ids.tolist()  # another project's entities are left out (docs/lifecycle.md)
    context_a, context_b = context.pairs(ids.tolist(), branches.around)
    index = {int(eid): i for i, eid in enumerate(ids)}
    observations: dict[int, list[str]] = defaultdict(list)
    metadata = np.zeros(len(ids), dtype=np.float64)
    written = [[float(rows[int(e)][4])] for e in ids]  # creation, then each live observation's
    live: dict[int, int] = {}  # observation id → entity id
    weights: dict[int, float] = {}  # observation id → weight
    for observation_id, entity_id, content, kind, created_at, weight in search_reads.live_observations(conn, kept, now):
        live[observation_id] = entity_id
        weights[observation_id] = weight
        observations[entity_id].append(content)
        written[index[entity_id]].append(created_at)
        if kind == METADATA_KIND:
            metadata[index[entity_id]] += 1.0
    counts = np.array([len(observations.get(int(e), ())) for e in ids], dtype=np.float64)
    pairs = [(min(index[a], index[b]), max(index[a], index[b]), c, t)
             for a, b, c, t in search_reads.co_occurrences(conn, kept) if a in index and b in index]
    ordered = [rows[int(e)] for e in ids]
    matched = [(observation, index[entity], score)
               for observation, entity, score in _observation_matches(conn, branches.expression, live)]
    cosines = similarities.of_observations([m[0] for m in matched]) if similarities is not None else {}
    confidence = np.ones(len(ids), dtype=np.float64)  # the highest current weight of each (docs/lifecycle.md)
    if weights:
        strongest: dict[int, float] = {}
        for observation_id, weight in weights.items():
            entity_id = live[observation_id]
            strongest[entity_id] = max(weight, strongest.get(entity_id, weight))
        confidence = ranking_weight(np.array([strongest.get(int(e), 1.0) for e in ids]))
    return CandidateSet(
        query=query, limit=limit, mode=mode, strategy=detect_query_type(query, limit), now=now,
        entity_ids=ids,
        distance=np.array([branches.distances.get(int(e), np.nan) for e in ids], dtype=np.float64),
        knn_rank=knn_rank, fts_rank=fts_rank,
        bm25=np.array([branches.bm25.get(int(e), np.nan) for e in ids], dtype=np.float64),
        cosine_distance=np.array([branches.cosine_distances.get(int(e), np.nan) for e in ids], dtype=np.float64),
        bm25_ceiling=branches.bm25_ceiling, observation_bm25_ceiling=branches.observation_bm25_ceiling,
        access_count=np.array([r[5] for r in ordered], dtype=np.int64),
        access_days=np.array([r[7] for r in ordered], dtype=np.int64),
        last_access=np.array([np.nan if r[6] is None else r[6] for r in ordered], dtype=np.float64),
        created_at=np.array([r[4] for r in ordered], dtype=np.float64),
        degree=np.array([r[8] for r in ordered], dtype=np.int64),
        status_code=np.array([STATUS_CODES.get(r[3], 0) for r in ordered], dtype=np.int64),
        metadata_share=np.divide(metadata, counts, out=np.zeros_like(metadata), where=counts > 0),
        cooc_a=np.array([p[0] for p in pairs], dtype=np.int64), cooc_b=np.array([p[1] for p in pairs], dtype=np.int64),
        cooc_count=np.array([p[2] for p in pairs], dtype=np.int64),
        cooc_last=np.array([p[3] for p in pairs], dtype=np.float64),
        names=tuple(r[1] for r in ordered), entity_types=tuple(r[2] for r in ordered),
        observations=tuple(tuple(observations.get(int(e), ())) for e in ids),
        context_a=np.array(context_a, dtype=np.int64), context_b=np.array(context_b, dtype=np.int64),
        observation_row=np.array([m[1] for m in matched], dtype=np.int64),
        observation_cosine=np.array([cosines.get(m[0], np.nan) for m in matched], dtype=np.float64),
        observation_bm25=np.array([m[2] for m in matched], dtype=np.float64),
        confidence=confidence, scope=scope_weight([r[9] for r in ordered], request.project),
        observation_confidence=ranking_weight(np.array([weights[m[0]] for m in matched], dtype=np.float64)),
        date_distance=dates.distance_days(request.spans, written),
        feedback_similarity=(feedback.feedback_similarity(conn, index, *request.encoded) if request.encoded
                             else np.zeros(0)),
    )
