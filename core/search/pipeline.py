"""The search pipeline (docs/architecture.md "Search pipeline"; mcp-memory "The Limbic System" and mcp-memory "Hybrid search"): read-only, set-based.

1. Encode the query through the :class:`~limbic.core.embedding.base.Embedder` (query prefix included).
2. KNN over the in-memory copy of the entity and observation vectors (:class:`VectorIndex`: cosine,
   one candidate per entity with its observations' similarities aggregated) and FTS5 BM25 over
   ``entity_fts``, each ``limit × expansion_factor`` entities; the user text reaches FTS5
   only as quoted pieces (:mod:`limbic.core.fts`), joined with OR, leaving out pieces found in half
   of the rows or more when a rarer one remains (their BM25 IDF is clamped to 1e-6: they would not
   change the order, only make FTS5 score every row). Document frequencies come from an
   ``fts5vocab`` table in the connection's ``temp`` schema; the database file is never written (the
   same for ``observation_fts``, whose Σ idf bounds the observation evidence).
3. RRF merge (``k = params.rrf_k``); entities found by both keep their KNN distance. With context on and
   a model, the neighbours in creation order of each branch's first ``limit`` results join the candidates
   (:mod:`limbic.core.search.context`, docs/scoring.md "Context").
4. Signals and display data for all candidates in five queries with ``json_each`` id lists
   (entities + access + access days + degree; live observations; co-occurrences among candidates; the
   relevance labels of earlier searches; the candidates' live observations the expression matches in
   ``observation_fts``, with their BM25: the observation evidence, docs/scoring.md "Observation
   evidence"). The live observations' write times give each candidate's distance to the dates the query
   names (:mod:`limbic.core.search.dates`); the labels give its similarity to the queries it was used
   after (:mod:`limbic.core.search.feedback`).
5. :func:`rerank`: limbic scoring (:mod:`limbic.core.scoring`), deboosts, routing blend, top-K.

This module never writes: the caller (``MemoryService.search``) logs the search and its returned top-K
as impressions.

Modes: no embedder → ``"fts_only"``; an embedder and FTS5 found nothing → ``"semantic"``;
otherwise ``"hybrid"`` (only then do results carry ``rrf_score``).
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import repeat

import apsw
import numpy as np

from limbic.core import validation
from limbic.core.embedding.base import Embedder
from limbic.core.errors import ValidationError
from limbic.core.models import STATUSES
from limbic.core.search import context, dates, feedback
from limbic.core.search.candidates import STATUS_CODES, CandidateSet, SearchResult
from limbic.core.search.full_text import full_text_query, matching, ranked_matches
from limbic.core.search.params import ScoringParams
from limbic.core.search.presets import preset
from limbic.core.search.routing import detect_query_type
from limbic.core.search.scoring import reciprocal_rank_fusion, score_candidates
from limbic.core.store.schema import vector_dimension
from limbic.core.vectors.similarities import ApproximateSimilarities, Similarities
from limbic.core.vectors.vector_index import VectorIndex

METADATA_KIND = "metadata"
CONTEXT_DEPTH = 10  # full-text rows read per branch row, for the BM25 of the neighbours context adds


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """What :func:`run_search` returns.

    ``results``: the top-K, best first; ``candidate_set``: every merged candidate with its signals
    (re-rank it with :func:`rerank`); ``mode``: ``hybrid`` / ``semantic`` / ``fts_only``;
    ``timings``: milliseconds per stage (``encode``, ``knn``, ``fts``, ``signals``, ``score``, ``total``);
    ``search_id``: the id of the logged search (``MemoryService.search`` sets it when it logs the
    search; a later ``mark_used`` may name it), ``None`` when not logged; ``pending_vectors``: entities
    whose newest texts have no vector yet (``MemoryService.search`` sets it; they are found by FTS5 only);
    ``query_vector``: the query's ``(d,) float32`` embedding and ``model`` the embedder's name (``None``
    when no model ran), logged with the search for "Feedback from similar queries" (docs/scoring.md);
    ``dates``: the days (``YYYY-MM-DD``) and months (``YYYY-MM``) the query was read as naming;
    ``knn``: how KNN ran, ``"exact"`` (a scan of every vector), ``"graph"`` (candidates proposed by the
    HNSW graph of a large copy, every score exact: :mod:`limbic.core.vectors.approximate`) or ``""`` (no model).
    """

    results: list[SearchResult]
    candidate_set: CandidateSet
    mode: str
    timings: dict[str, float] = field(default_factory=dict)
    search_id: int | None = None
    pending_vectors: int = 0
    query_vector: np.ndarray | None = None
    model: str | None = None
    dates: tuple[str, ...] = ()
    knn: str = ""

    @property
    def strategy(self) -> str:
        return self.candidate_set.strategy


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


_ENTITY_SIGNALS = """
SELECT e.id, e.name, e.entity_type, e.status, e.created_at,
       COALESCE(a.access_count, 0), a.last_access,
       (SELECT COUNT(*) FROM entity_access_days d WHERE d.entity_id = e.id),
       (SELECT COUNT(*) FROM relations r WHERE r.from_id = e.id AND r.active = 1)
     + (SELECT COUNT(*) FROM relations r WHERE r.to_id = e.id AND r.active = 1)
FROM entities e LEFT JOIN entity_access a ON a.entity_id = e.id
WHERE e.id IN (SELECT value FROM json_each(?1))
"""
_LIVE_OBSERVATIONS = """
SELECT id, entity_id, content, kind, created_at FROM observations
WHERE entity_id IN (SELECT value FROM json_each(?1))
  AND superseded_at IS NULL AND (expires_at IS NULL OR expires_at > ?2)
ORDER BY entity_id, id
"""
# ``+rowid`` keeps the id list a filter on FTS5's own scan of the match (FTS5 would otherwise run the
# whole match once per listed id); BM25 is computed only for the rows that pass it
_OBSERVATION_MATCHES = """
SELECT rowid, -bm25(observation_fts) FROM observation_fts
WHERE observation_fts MATCH ?1 AND +rowid IN (SELECT value FROM json_each(?2))
"""
_CO_OCCURRENCES = """
SELECT a_id, b_id, co_count, last_co FROM co_occurrences
WHERE a_id IN (SELECT value FROM json_each(?1)) AND b_id IN (SELECT value FROM json_each(?1))
"""


def _observation_matches(conn: apsw.Connection, expression: str | None,
                         live: dict[int, int]) -> list[tuple[int, int, float]]:
    """Every observation of ``live`` (live observation id → its entity id) that ``expression`` matches in
    ``observation_fts``: ``(observation id, entity id, BM25 sign flipped)`` (docs/scoring.md "Observation
    evidence"). BM25 is computed only for those rows, not for every match of the index."""
    if expression is None or not live:
        return []
    rows = matching(conn, _OBSERVATION_MATCHES, (expression, json.dumps(list(live))))
    return [(int(o), live[int(o)], float(b)) for o, b in rows]


def _gather(conn: apsw.Connection, query: str, limit: int, mode: str, now: float, ids: np.ndarray,
            knn_rank: np.ndarray, fts_rank: np.ndarray, distances: dict[int, float],
            bm25: dict[int, float], cosine_distances: dict[int, float], ceilings: tuple[float, float],
            around: dict[int, tuple[int, ...]], expression: str | None,
            similarities: Similarities | None, encoded: tuple[str, np.ndarray] | None,
            spans: tuple[tuple[float, float], ...]) -> CandidateSet:
    """Signals and display data of the merged candidates (entities that vanished are dropped);
    ``around``: each candidate's neighbours in creation order (:mod:`limbic.core.search.context`);
    the observation evidence: the candidates' observations ``expression`` matches, with their cosines from
    ``similarities``; ``encoded``: the model's name and the query vector, for the feedback from similar
    queries (:mod:`limbic.core.search.feedback`), ``None`` without a model; ``spans``: the dates the query
    names (:func:`limbic.core.search.dates.query_dates`)."""
    ids_json = json.dumps([int(i) for i in ids])
    rows = {int(r[0]): r for r in conn.execute(_ENTITY_SIGNALS, (ids_json,))}
    keep = np.array([int(i) in rows for i in ids], dtype=bool)
    ids, knn_rank, fts_rank = ids[keep], knn_rank[keep], fts_rank[keep]
    context_a, context_b = context.pairs(ids.tolist(), around)
    index = {int(eid): i for i, eid in enumerate(ids)}
    observations: dict[int, list[str]] = defaultdict(list)
    metadata = np.zeros(len(ids), dtype=np.float64)
    written = [[float(rows[int(e)][4])] for e in ids]  # creation, then each live observation's
    live: dict[int, int] = {}  # observation id → entity id
    for observation_id, entity_id, content, kind, created_at in conn.execute(_LIVE_OBSERVATIONS, (ids_json, now)):
        live[observation_id] = entity_id
        observations[entity_id].append(content)
        written[index[entity_id]].append(created_at)
        if kind == METADATA_KIND:
            metadata[index[entity_id]] += 1.0
    counts = np.array([len(observations.get(int(e), ())) for e in ids], dtype=np.float64)
    pairs = [(min(index[a], index[b]), max(index[a], index[b]), c, t)
             for a, b, c, t in conn.execute(_CO_OCCURRENCES, (ids_json,)) if a in index and b in index]
    ordered = [rows[int(e)] for e in ids]
    matched = [(observation, index[entity], score)
               for observation, entity, score in _observation_matches(conn, expression, live)]
    cosines = similarities.of_observations([m[0] for m in matched]) if similarities is not None else {}
    return CandidateSet(
        query=query, limit=limit, mode=mode, strategy=detect_query_type(query, limit), now=now,
        entity_ids=ids,
        distance=np.array([distances.get(int(e), np.nan) for e in ids], dtype=np.float64),
        knn_rank=knn_rank, fts_rank=fts_rank,
        bm25=np.array([bm25.get(int(e), np.nan) for e in ids], dtype=np.float64),
        cosine_distance=np.array([cosine_distances.get(int(e), np.nan) for e in ids], dtype=np.float64),
        bm25_ceiling=ceilings[0], observation_bm25_ceiling=ceilings[1],
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
        date_distance=dates.distance_days(spans, written),
        feedback_similarity=feedback.feedback_similarity(conn, ids_json, index, *encoded) if encoded else np.zeros(0),
    )


def _with_context(conn: apsw.Connection, ids: np.ndarray, knn_rank: np.ndarray, fts_rank: np.ndarray,
                  seeds: list[int], params: ScoringParams, deeper_bm25: dict[int, float],
                  bm25: dict[int, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, tuple[int, ...]]]:
    """The merged candidates plus the neighbours in creation order of ``seeds`` (each branch's first
    ``limit`` results when context is on and a model ran, else none, so that a full-text-only search returns
    only text matches; docs/scoring.md "Context") with no branch rank; their BM25 scores are added to
    ``bm25`` from ``deeper_bm25`` (full text's first ``CONTEXT_DEPTH`` × branch size rows; 0 below them, as
    for a row that does not match). Returns the arrays and every candidate's neighbours."""
    if not seeds:
        return ids, knn_rank, fts_rank, context.neighbours(conn, ids.tolist(), params.context_window_hours)
    added, around = context.extend(conn, ids.tolist(), seeds, params.context_window_hours)
    if not added:
        return ids, knn_rank, fts_rank, around
    bm25.update({entity_id: deeper_bm25[entity_id] for entity_id in added if entity_id in deeper_bm25})
    zeros = np.zeros(len(added), dtype=np.int64)
    return (np.concatenate([ids, np.array(added, dtype=np.int64)]), np.concatenate([knn_rank, zeros]),
            np.concatenate([fts_rank, zeros]), around)


def run_search(conn: apsw.Connection, embedder: Embedder | None, query: str, limit: int = 10,
               params: ScoringParams | None = None, now: float | None = None,
               vector_index: VectorIndex | None = None) -> SearchOutcome:
    """Search the memory graph (read-only; see the module docstring for the stages).

    Args:
        conn: a read connection (``Database.read()``) with sqlite-vec loaded.
        embedder: the query encoder, or ``None`` for FTS-only search.
        query: user text, 1..2,000 characters (any characters; never interpreted as FTS syntax).
        limit: top-K, 1..1000. params: scoring parameters (the ``default`` preset when ``None``).
        now: reference time of the temporal decay, UTC unix seconds (``time.time()`` when ``None``).
        vector_index: the in-memory copy of the vectors that KNN runs on, kept between searches;
            ``None`` loads a fresh copy for this search.
    Raises:
        ValidationError: empty or too long query, limit out of range, or stored vectors whose
            dimension differs from the embedder's.
    """
    started = time.perf_counter()
    query = validation.query(query)
    if not query:
        raise ValidationError("query must not be empty")
    limit = validation.limit(limit, high=validation.MAX_ITEMS)
    params = params or preset("default")
    now = time.time() if now is None else float(now)
    per_branch = limit * int(params.expansion_factor)
    spans = dates.query_dates(query)
    timings: dict[str, float] = {"encode": 0.0, "knn": 0.0}

    vector = None
    if embedder is not None:
        stage = time.perf_counter()
        vector = embedder.embed_query(query)
        timings["encode"] = _ms(stage)

    with conn:  # one read snapshot for every query below
        knn_ids: list[int] = []
        distances: dict[int, float] = {}
        similarities: Similarities | None = None
        if vector is not None and embedder is not None:
            stored = vector_dimension(conn)
            if stored is not None and stored != embedder.dimension:
                raise ValidationError(
                    f"stored vectors have {stored} dimensions but the model {embedder.name!r} gives "
                    f"{embedder.dimension}; re-embed the graph with `limbic model reembed`"
                )
            if stored is not None:
                stage = time.perf_counter()
                index = vector_index if vector_index is not None else VectorIndex()
                similarities = index.similarities(conn, embedder.name, vector, now)
                knn_ids, distances = similarities.nearest(per_branch)
                timings["knn"] = _ms(stage)
        stage = time.perf_counter()
        full_text = full_text_query(conn, query)
        expression, ceiling, observation_ceiling = full_text.expression, full_text.ceiling, full_text.observation_ceiling
        with_context = params.context_weight > 0.0 and similarities is not None
        fts_ids, deeper_bm25 = ranked_matches(conn, full_text, per_branch * (CONTEXT_DEPTH if with_context else 1))
        fts_ids = fts_ids[:per_branch]
        bm25 = {entity_id: deeper_bm25[entity_id] for entity_id in fts_ids}
        timings["fts"] = _ms(stage)
        mode = "fts_only" if embedder is None else ("hybrid" if fts_ids else "semantic")
        ids, knn_rank, fts_rank, _ = reciprocal_rank_fusion(knn_ids, fts_ids, params.rrf_k)
        stage = time.perf_counter()
        seeds = knn_ids[:limit] + fts_ids[:limit] if with_context else []
        ids, knn_rank, fts_rank, around = _with_context(conn, ids, knn_rank, fts_rank, seeds, params, deeper_bm25, bm25)
        cosine_distances = dict(distances)
        unscored = [eid for eid in ids.tolist() if eid not in distances]
        if similarities is not None and unscored:  # the other candidates' cosines, from the same pass
            cosine_distances.update(similarities.distances(unscored))
        timings["context"] = _ms(stage)
        stage = time.perf_counter()
        candidates = _gather(conn, query, limit, mode, now, ids, knn_rank, fts_rank, distances, bm25,
                             cosine_distances, (ceiling, observation_ceiling), around, expression, similarities,
                             None if vector is None or embedder is None else (embedder.name, vector), spans)
        timings["signals"] = _ms(stage)

    stage = time.perf_counter()
    results = rerank(candidates, params)
    timings["score"] = _ms(stage)
    timings["total"] = _ms(started)
    return SearchOutcome(results=results, candidate_set=candidates, mode=mode, timings=timings, query_vector=vector,
                         model=None if vector is None or embedder is None else embedder.name,
                         dates=dates.describe(spans),
                         knn="" if similarities is None else "graph" if isinstance(similarities, ApproximateSimilarities)
                         else "exact")


def rerank(candidate_set: CandidateSet, params: ScoringParams, limit: int | None = None) -> list[SearchResult]:
    """Re-score a cached :class:`CandidateSet` with ``params``: pure numpy, no SQL, no model call.

    Returns the top ``limit`` (default ``candidate_set.limit``) results, best first, with 1-based ranks.
    Every parameter applies except ``expansion_factor``, which only sizes the branches of a new search;
    the routing strategy is the one detected for the query, and ``now`` is the time of the search.
    """
    scores = score_candidates(candidate_set, params)
    top = scores.order[: candidate_set.limit if limit is None else max(0, int(limit))]
    k = len(top)
    index = top.tolist()
    distance = candidate_set.distance[top]
    rows = zip(
        range(1, k + 1),
        candidate_set.entity_ids[top].tolist(),
        [candidate_set.names[i] for i in index],
        [candidate_set.entity_types[i] for i in index],
        [STATUSES[code] for code in candidate_set.status_code[top].tolist()],
        [candidate_set.observations[i] for i in index],
        [None if math.isnan(d) else d for d in distance.tolist()],
        scores.rrf[top].tolist() if candidate_set.mode == "hybrid" else repeat(None, k),
        scores.base[top].tolist(),
        scores.limbic_score[top].tolist(),
        scores.final_score[top].tolist(),
        repeat(candidate_set.strategy, k),
        scores.importance[top].tolist(),
        scores.temporal_factor[top].tolist(),
        scores.cooc_boost[top].tolist(),
        scores.salience_boost[top].tolist(),
        scores.status_multiplier[top].tolist(),
        scores.metadata_penalty[top].tolist(),
        scores.date_match[top].tolist(),
        scores.feedback_boost[top].tolist(),
        strict=True,
    )
    make = SearchResult._make
    return [make(row) for row in rows]
