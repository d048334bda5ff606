"""The search pipeline (docs/architecture.md "The search pipeline"; mcp-memory "The Limbic System" and mcp-memory "Hybrid search"): read-only, set-based.

1. Encode the query through the :class:`~limbic.core.embedding.base.Embedder` (query prefix included).
2. KNN over the in-memory copy of the entity and observation vectors (a :class:`~limbic.core.search.signals.VectorSource`,
   :class:`limbic.core.vectors.vector_index.VectorIndex` in the service: cosine,
   one candidate per entity with its observations' similarities aggregated) and FTS5 BM25 over
   ``entity_fts``, each ``limit × expansion_factor`` entities; the user text reaches FTS5
   only as quoted pieces (:mod:`limbic.core.search.full_text`), joined with OR, leaving out pieces found in half
   of the rows or more when a rarer one remains (their BM25 IDF is clamped to 1e-6: they would not
   change the order, only make FTS5 score every row). Document frequencies come from an
   ``fts5vocab`` table in the connection's ``temp`` schema; the database file is never written (the
   same for ``observation_fts``, whose Σ idf bounds the observation evidence).
3. RRF merge (``k = params.rrf_k``); entities found by both keep their KNN distance. With context on and
   a model, the neighbours in creation order of each branch's first ``limit`` results join the candidates
   (:mod:`limbic.core.search.context`, docs/scoring.md "Context").
4. Signals and display data for all candidates (:func:`limbic.core.search.signals.gather`) in five queries with ``json_each`` id lists
   (entities + access + access days + degree; live observations; co-occurrences among candidates; the
   relevance labels of earlier searches; the candidates' live observations the expression matches in
   ``observation_fts``, with their BM25: the observation evidence, docs/scoring.md "Observation
   evidence"). The live observations' write times give each candidate's distance to the dates the query
   names (:mod:`limbic.core.search.dates`); the labels give its similarity to the queries it was used
   after (:mod:`limbic.core.search.feedback`).
5. :func:`rerank`: limbic scoring (:mod:`limbic.core.search.scoring`), deboosts, routing blend, top-K.

This module never writes: the caller (``MemoryService.search.query``) logs the search and its returned top-K
as impressions.

Modes: no embedder → ``"fts_only"``; an embedder and FTS5 found nothing → ``"semantic"``;
otherwise ``"hybrid"`` (only then do results carry ``rrf_score``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np

from limbic.core import validation
from limbic.core.embedding.base import Embedder
from limbic.core.errors import ValidationError
from limbic.core.models import STATUSES
from limbic.core.search import context, dates
from limbic.core.search.candidates import CandidateSet, SearchResult
from limbic.core.search.expired_text import without_expired
from limbic.core.search.full_text import full_text_query, ranked_matches
from limbic.core.search.params import ScoringParams
from limbic.core.search.presets import preset
from limbic.core.search.scoring import reciprocal_rank_fusion, score_candidates
from limbic.core.search.signals import Branches, QuerySimilarity, SearchRequest, VectorSource, gather
from limbic.core.store import Connection
from limbic.core.store.schema import vector_dimension

CONTEXT_DEPTH = 10  # full-text rows read per branch row, for the BM25 of the neighbours context adds


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """What :func:`run_search` returns.

    ``results``: the top-K, best first; ``candidate_set``: every merged candidate with its signals
    (re-rank it with :func:`rerank`); ``mode``: ``hybrid`` / ``semantic`` / ``fts_only``;
    ``timings``: milliseconds per stage (``encode``, ``knn``, ``fts``, ``signals``, ``score``, ``total``);
    ``search_id``: the id of the logged search (``MemoryService.search.query`` sets it when it logs the
    search; a later ``mark_used`` may name it), ``None`` when not logged; ``pending_vectors``: entities
    whose newest texts have no vector yet (``MemoryService.search.query`` sets it; they are found by FTS5 only);
    ``query_vector``: the query's ``(d,) float32`` embedding and ``model`` the embedder's name (``None``
    when no model ran), logged with the search for "Feedback from similar queries" (docs/scoring.md);
    ``dates``: the days (``YYYY-MM-DD``) and months (``YYYY-MM``) the query was read as naming;
    ``knn``: how KNN ran, ``"exact"`` (a scan of every vector), ``"graph"`` (candidates proposed by the
    HNSW graph of a large copy, every score exact: :mod:`limbic.core.vectors.approximate`) or ``""`` (no model);
    ``embedded``: ``(entities embedded, entities)`` for the attached model (``MemoryService.search.query`` sets it;
    ``None`` without a model).
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
    embedded: tuple[int, int] | None = None

    @property
    def strategy(self) -> str:
        return self.candidate_set.strategy


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def _with_context(conn: Connection, ids: np.ndarray, knn_rank: np.ndarray, fts_rank: np.ndarray,
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


def run_search(conn: Connection, embedder: Embedder | None, query: str, limit: int = 10,
               params: ScoringParams | None = None, now: float | None = None,
               vectors: VectorSource | None = None, *, search_id: int | None = None,
               pending_vectors: int = 0, embedded: tuple[int, int] | None = None,
               project: str | None = None) -> SearchOutcome:
    """Search the memory graph (read-only; see the module docstring for the stages).

    Args:
        conn: a read connection (``Database.read()``) with sqlite-vec loaded.
        embedder: the query encoder, or ``None`` for FTS-only search.
        query: user text, 1..2,000 characters (any characters; never interpreted as FTS syntax).
        limit: top-K, 1..1000. params: scoring parameters (the ``default`` preset when ``None``).
        now: reference time of the temporal decay, UTC unix seconds (``time.time()`` when ``None``).
        vectors: the vector copy KNN runs on (``MemoryService`` keeps one between searches,
            :class:`limbic.core.vectors.vector_index.VectorIndex`); ``None``: no KNN, full text only.
        search_id: the id the caller logs this search under; the outcome keeps it when there are results.
        pending_vectors: entities whose newest texts wait for vectors (the caller knows; shown as is).
        embedded: ``(entities embedded, entities)`` (the caller knows; shown as is).
        project: search that project's memories and the global ones (weighed 1.0 and 0.8), leaving out every
            other project's (docs/lifecycle.md "Project scope"); ``None``: every memory, as before.
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
    spans = dates.query_dates(query)
    timings: dict[str, float] = {"encode": 0.0, "knn": 0.0}

    vector = None
    if embedder is not None:
        stage = time.perf_counter()
        vector = embedder.embed_query(query)
        timings["encode"] = _ms(stage)
    request = SearchRequest(query, limit, now, None if vector is None or embedder is None else (embedder.name, vector),
                            spans, project)
    with conn:  # one read snapshot for every query below
        branches = _branches(conn, request, embedder, vectors, params, timings)
        stage = time.perf_counter()
        candidates = gather(conn, request, branches)
        timings["signals"] = _ms(stage)

    stage = time.perf_counter()
    results = rerank(candidates, params)
    timings["score"] = _ms(stage)
    timings["total"] = _ms(started)
    similarities = branches.similarities
    return SearchOutcome(results=results, candidate_set=candidates, mode=branches.mode, timings=timings,
                         search_id=search_id if results else None, pending_vectors=pending_vectors,
                         query_vector=vector, model=None if request.encoded is None else request.encoded[0],
                         dates=dates.describe(spans),
                         knn="" if similarities is None else "graph" if similarities.approximate else "exact",
                         embedded=embedded)


def _branches(conn: Connection, request: SearchRequest, embedder: Embedder | None, vectors: VectorSource | None,
              params: ScoringParams, timings: dict[str, float]) -> Branches:
    """Stages 2 and 3: KNN and full text, each ``limit × expansion_factor`` entities, merged by RRF and
    widened by context; ``timings`` gets ``knn``, ``fts`` and ``context`` (milliseconds)."""
    # with a project, other projects' entities are left out after the branches: each branch reads twice as many
    per_branch = request.limit * int(params.expansion_factor) * (1 if request.project is None else 2)
    knn_ids: list[int] = []
    distances: dict[int, float] = {}
    similarities: QuerySimilarity | None = None
    if request.encoded is not None and embedder is not None:
        stored = vector_dimension(conn)
        if stored is not None and stored != embedder.dimension:
            raise ValidationError(
                f"stored vectors have {stored} dimensions but the model {embedder.name!r} gives "
                f"{embedder.dimension}; re-embed the graph with `limbic model reembed`"
            )
        if stored is not None and vectors is not None:
            stage = time.perf_counter()
            similarities = vectors.similarities(conn, *request.encoded, request.now)
            knn_ids, distances = similarities.nearest(per_branch)
            timings["knn"] = _ms(stage)
    stage = time.perf_counter()
    full_text = full_text_query(conn, request.query)
    with_context = params.context_weight > 0.0 and similarities is not None
    fts_ids, deeper_bm25 = without_expired(conn, full_text.expression, *ranked_matches(
        conn, full_text, per_branch * (CONTEXT_DEPTH if with_context else 1)), request.now, full_text.cjk_pieces)
    fts_ids = fts_ids[:per_branch]
    bm25 = {entity_id: deeper_bm25[entity_id] for entity_id in fts_ids}
    timings["fts"] = _ms(stage)
    mode = "fts_only" if embedder is None else ("hybrid" if fts_ids else "semantic")
    ids, knn_rank, fts_rank, _ = reciprocal_rank_fusion(knn_ids, fts_ids, params.rrf_k)
    stage = time.perf_counter()
    seeds = knn_ids[:request.limit] + fts_ids[:request.limit] if with_context else []
    ids, knn_rank, fts_rank, around = _with_context(conn, ids, knn_rank, fts_rank, seeds, params, deeper_bm25, bm25)
    cosine_distances = dict(distances)
    unscored = [eid for eid in ids.tolist() if eid not in distances]
    if similarities is not None and unscored:  # the other candidates' cosines, from the same pass
        cosine_distances.update(similarities.distances(unscored))
    timings["context"] = _ms(stage)
    return Branches(ids, knn_rank, fts_rank, distances, cosine_distances, bm25, full_text.ceiling,
                    full_text.observation_ceiling, around, full_text.expression, similarities, mode)


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
