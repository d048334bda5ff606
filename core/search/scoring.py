"""The limbic scorer: :func:`score` composes the terms of :mod:`limbic.core.search.terms` over a
:class:`~limbic.core.search.batch.CandidateBatch` of candidate sets, and :func:`explain` shows one
candidate's every quantity from that same result.

``limbic = base × (salience × temporal × (1 + γ·cooc) × feedback)^κ × status^κ × metadata^κ`` and
``final = w_c·base + (1 − w_c)·limbic_norm`` (docs/scoring.md "Score and blend"); ``base`` is the
``seed`` preset's relevance (the cosine, or ``0.2 + 0.6·norm_rrf`` for a full-text-only candidate) or,
with ``relevance_fusion``, the fused relevance of both branches with observation evidence, context and
the dates the query names (docs/scoring.md "Base relevance" and the sections after it).

Every function takes a :class:`~limbic.core.search.params.ScoringParams` explicitly; nothing is global.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from limbic.core.search import terms
from limbic.core.search.batch import CandidateBatch
from limbic.core.search.candidates import CandidateSet
from limbic.core.search.params import ScoringParams


@dataclass(frozen=True, slots=True)
class BatchScores:
    """Every intermediate of :func:`score`, each ``(N,) float64`` in row order, ``cosine_weight``,
    ``best_cosine`` and ``bm25_denominator`` ``(S,) float64`` per set, and ``order`` ``(N,) int64``: row
    indices, set by set, each set's rows best first (docs/scoring.md names each quantity).

    ``cosine_rel``/``bm25_rel`` are the branches' evidence on [0, 1] (used only when ``relevance_fusion``
    = 1; ``best_cosine`` and ``bm25_denominator`` their divisors); ``entity`` their fused relevance (the
    seed's base without fusion); ``observation`` the fused relevance of the row's best observation (0
    unless ``observation_weight`` > 0); ``own`` the entity's relevance with its observation evidence,
    before context; ``context`` the best ``own`` among its neighbours in creation order (0 without one);
    ``in_context`` ``own`` with its context; ``date_match`` how close it was written to a date the query
    names (0 when it names none); ``base`` the base relevance; ``access_norm``, ``degree_norm``,
    ``consolidation`` the terms of ``importance``; ``age_hours`` the hours since the last access (or
    creation) that ``temporal_factor`` decays over; ``cooc_factor`` is ``1 + γ·cooc_boost``;
    ``feedback_boost`` the prior from earlier uses after
    similar queries (1 when none); ``prior`` the product of the limbic factors raised to
    ``prior_exponent`` (``limbic_score = base × prior``)."""

    rrf: np.ndarray
    cosine_rel: np.ndarray
    bm25_rel: np.ndarray
    entity: np.ndarray
    observation: np.ndarray
    own: np.ndarray
    context: np.ndarray
    in_context: np.ndarray
    date_match: np.ndarray
    base: np.ndarray
    access_norm: np.ndarray
    degree_norm: np.ndarray
    consolidation: np.ndarray
    importance: np.ndarray
    salience_boost: np.ndarray
    age_hours: np.ndarray
    temporal_factor: np.ndarray
    cooc_boost: np.ndarray
    cooc_factor: np.ndarray
    feedback_boost: np.ndarray
    status_multiplier: np.ndarray
    metadata_penalty: np.ndarray
    prior: np.ndarray
    limbic_score: np.ndarray
    limbic_norm: np.ndarray
    cosine_weight: np.ndarray
    best_cosine: np.ndarray
    bm25_denominator: np.ndarray
    final_score: np.ndarray
    order: np.ndarray


def score(batch: CandidateBatch, params: ScoringParams) -> BatchScores:
    """Score every candidate set of ``batch`` with ``params`` (pure numpy: no SQL, no model;
    docs/scoring.md).

    Ranking sorts after every adjustment — raw limbic score, status deboost, metadata penalty, blend —
    each sort stable over the previous order, starting from RRF order, as the mcp-memory documentation
    page "The Limbic System" does; this is one ``np.lexsort`` keyed on the set first, then the final
    score, the earlier stages as tie-breakers, and the row.
    """
    seg = batch.segments
    n = len(batch)
    rrf = terms.reciprocal_rank(batch.knn_rank, batch.fts_rank, params.rrf_k)
    cosine = terms.cosine_similarity(seg, batch.cosine_distance)
    best_cosine = seg.max(cosine, 0.0)
    cosine_rel = terms.ratio_to_best(seg, cosine)
    bm25_rel, bm25_denominator = terms.keyword_relevance(seg, batch.bm25, batch.bm25_ceiling, params)
    observation = np.zeros(n, dtype=np.float64)
    if params.relevance_fusion:
        entity = own = terms.fused_relevance(cosine_rel, bm25_rel, params) * batch.confidence
        if params.observation_weight > 0.0:
            observation = terms.observation_relevance(
                batch.observation_row, batch.observation_segment, batch.observation_cosine, batch.observation_bm25,
                batch.observation_bm25_ceiling, cosine_rel, best_cosine, batch.confidence,
                batch.observation_confidence, params)
            own = terms.with_observation(entity, observation, params)
    else:
        entity = own = terms.seed_relevance(seg, batch.distance, rrf) * batch.confidence
    context = terms.neighbour_relevance(own, batch.context_a, batch.context_b)
    in_context = terms.with_context(own, context, params)
    date_match = terms.date_closeness(batch.date_distance, params.date_tolerance_days)
    base = terms.with_dates(in_context, date_match, params) * batch.scope  # docs/lifecycle.md "Project scope"
    access_norm, degree_norm, consolidation = terms.importance_terms(
        seg, batch.access_count, batch.access_days, batch.degree, params)
    importance = terms.importance(access_norm, degree_norm, consolidation, params)
    salience = 1.0 + params.beta_sal * importance
    age = terms.age_hours(batch.last_access, batch.created_at, batch.now)
    temporal = terms.temporal_factor(batch.last_access, batch.created_at, batch.now, params)
    cooc = terms.cooc_boost(n, batch.cooc_a, batch.cooc_b, batch.cooc_count, batch.cooc_last,
                            batch.now[batch.cooc_a], params)
    cooc_factor = 1.0 + params.gamma * cooc
    feedback = terms.feedback_prior(batch.feedback_similarity, params)
    status = terms.status_multiplier(batch.status_code, params)
    metadata = terms.metadata_penalty(batch.metadata_share, params)
    kappa = params.prior_exponent
    raw = base * (salience * temporal * cooc_factor * feedback) ** kappa
    after_status = raw * status ** kappa
    limbic = after_status * metadata ** kappa
    norm = terms.limbic_norm(seg, limbic, params)
    cosine_weight = terms.cosine_weights(batch.strategies, params)
    final = terms.blend(base, norm, cosine_weight[seg.segment])
    order = np.lexsort((np.arange(n), -rrf, -raw, -after_status, -limbic, -final, seg.segment))
    prior = (salience * temporal * cooc_factor * feedback * status * metadata) ** kappa
    return BatchScores(rrf=rrf, cosine_rel=cosine_rel, bm25_rel=bm25_rel, entity=entity, observation=observation,
                       own=own, context=context, in_context=in_context, date_match=date_match, base=base,
                       access_norm=access_norm, degree_norm=degree_norm, consolidation=consolidation,
                       importance=importance, salience_boost=salience, age_hours=age, temporal_factor=temporal,
                       cooc_boost=cooc, cooc_factor=cooc_factor, feedback_boost=feedback, status_multiplier=status,
                       metadata_penalty=metadata, prior=prior, limbic_score=limbic, limbic_norm=norm,
                       cosine_weight=cosine_weight, best_cosine=best_cosine, bm25_denominator=bm25_denominator,
                       final_score=final, order=order.astype(np.int64))


def score_candidates(candidates: CandidateSet, params: ScoringParams) -> BatchScores:
    """:func:`score` of one candidate set (a batch of one): every intermediate in candidate order,
    ``order`` the candidate indices best first."""
    return score(CandidateBatch.of([candidates]), params)


def reciprocal_rank_fusion(knn_ids: Sequence[int], fts_ids: Sequence[int],
                           k: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Merge two ranked id lists with RRF (:func:`terms.reciprocal_rank`; mcp-memory "Hybrid search").

    Args:
        knn_ids, fts_ids: entity ids best first (each id at most once per list).
        k: the smoothing constant (``ScoringParams.rrf_k``).
    Returns:
        ``(ids, knn_rank, fts_rank, rrf)``: ``int64`` ids sorted by RRF descending (ties keep the order
        of first appearance, KNN list first), their 1-based ranks per branch (0 = absent), and the
        ``float64`` scores.
    """
    order: dict[int, int] = {}
    for eid in [*knn_ids, *fts_ids]:
        order.setdefault(int(eid), len(order))
    ids = np.fromiter(order.keys(), dtype=np.int64, count=len(order))
    knn_rank = np.zeros(len(order), dtype=np.int64)
    fts_rank = np.zeros(len(order), dtype=np.int64)
    for rank, eid in enumerate(knn_ids, start=1):
        knn_rank[order[int(eid)]] = rank
    for rank, eid in enumerate(fts_ids, start=1):
        fts_rank[order[int(eid)]] = rank
    rrf = terms.reciprocal_rank(knn_rank, fts_rank, k)
    sort = np.argsort(-rrf, kind="stable")
    return ids[sort], knn_rank[sort], fts_rank[sort], rrf[sort]


def explain(candidates: CandidateSet, params: ScoringParams, index: int) -> dict[str, Any]:
    """Every quantity of candidate ``index`` (0-based position in ``candidates``) as the inspector shows
    it, read from :func:`score_candidates` (so it agrees with :func:`limbic.core.search.pipeline.rerank`).

    Keys: ``name``, ``entity_type``, ``status``, ``mode``, ``strategy``, ``rank`` (1-based position after
    scoring); the signals ``distance`` and ``bm25`` (``None`` when that branch did not return it),
    ``cosine_distance`` (the distance fused relevance uses, also for a candidate only full text returned;
    ``None`` without a vector), ``best_cosine`` (the denominator of ``cosine_rel``, ``None`` when no
    candidate has a vector), ``best_bm25`` (``None`` when full text returned none), ``bm25_ceiling``
    (``Σ idf`` of the query) and ``bm25_denominator``, ``date_distance`` (days, ``None`` when the query
    names no date), ``feedback_similarity`` (``None`` when never used after a search), ``confidence`` and
    ``scope`` (the multipliers of docs/lifecycle.md "Confidence" and "Project scope"), ``knn_rank``,
    ``fts_rank`` (0 = absent), ``access_count``, ``max_access``, ``access_days``, ``max_days``,
    ``degree``, ``never_accessed``, ``age_hours`` (≥ 0); and the quantities of
    :class:`BatchScores`: ``rrf``, ``cosine_rel``, ``bm25_rel``, ``entity``, ``observation``, ``own``,
    ``context``, ``in_context``, ``date_match``, ``base``, ``access_norm``, ``degree_norm``,
    ``consolidation``, ``importance``, ``salience_boost``, ``temporal_factor``, ``cooc_boost``,
    ``cooc_factor``, ``feedback_boost``, ``status_multiplier``, ``metadata_penalty``, ``prior``,
    ``limbic_score``, ``limbic_norm``, ``final_score``, ``cosine_weight``.

    Raises:
        IndexError: ``index`` is not a candidate position.
    """
    if not 0 <= index < len(candidates):
        raise IndexError(f"candidate {index} is out of range (0..{len(candidates) - 1})")
    scores = score_candidates(candidates, params)

    def optional(value: float) -> float | None:
        return None if np.isnan(value) else float(value)

    found_bm25 = candidates.bm25[~np.isnan(candidates.bm25)]
    cosine_distance = candidates.distance if candidates.cosine_distance is None else candidates.cosine_distance
    out: dict[str, Any] = {
        "name": candidates.names[index],
        "entity_type": candidates.entity_types[index],
        "status": candidates.statuses[index],
        "mode": candidates.mode,
        "strategy": candidates.strategy,
        "rank": int(np.flatnonzero(scores.order == index)[0]) + 1,
        "distance": optional(candidates.distance[index]),
        "cosine_distance": optional(cosine_distance[index]),
        "bm25": optional(candidates.bm25[index]),
        "best_cosine": None if np.isnan(cosine_distance).all() else float(scores.best_cosine[0]),
        "best_bm25": float(found_bm25.max()) if found_bm25.size else None,
        "bm25_ceiling": candidates.bm25_ceiling,
        "bm25_denominator": float(scores.bm25_denominator[0]),
        "date_distance": optional(candidates.date_distance[index]),
        "feedback_similarity": optional(candidates.feedback_similarity[index]),
        "knn_rank": int(candidates.knn_rank[index]),
        "fts_rank": int(candidates.fts_rank[index]),
        "access_count": int(candidates.access_count[index]),
        "max_access": int(candidates.access_count.max()),
        "access_days": int(candidates.access_days[index]),
        "max_days": int(candidates.access_days.max()),
        "degree": int(candidates.degree[index]),
        "never_accessed": bool(np.isnan(candidates.last_access[index])),
        "age_hours": max(0.0, float(scores.age_hours[index])),
        "confidence": float(candidates.confidence[index]),
        "scope": float(candidates.scope[index]),
        "cosine_weight": float(scores.cosine_weight[0]),
    }
    out.update({f.name: float(getattr(scores, f.name)[index]) for f in fields(BatchScores)
                if f.name not in out and f.name != "order"})
    return out
