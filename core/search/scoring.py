"""The limbic scorer: vectorised numpy over the candidate arrays of a :class:`CandidateSet`.

Formulas are those of seed ``000_68485b330ca59a20.txt`` ("Scoring Formula", "importance(e)",
"temporal_factor(e)", "cooc_boost(e, R)", "Status Deboosts", "Metadata Penalty", "Blending Formula")
and seed ``003_c3836d96b511ac29.txt`` (RRF, FTS-only base relevance), with the readings DESIGN.md §4
decides:

* ``max_access`` and ``max_access_days`` are taken over the candidate set; importance is 0 when no
  candidate has any access, consolidation is 0 (neutral) when no candidate has an access day.
* ``cooc_boost(e)`` sums over the other *candidates*:
  ``log2(1 + co_count) × max(COOC_TEMPORAL_FLOOR, exp(−λ·Δh))``.
* FTS-only candidates: ``base = 0.2 + 0.6 × norm_rrf`` (min–max over the set; 1 when all equal);
  the same base stands in for the cosine in the routing blend.
* ``limbic = base × (1 + β_sal·importance) × temporal × (1 + γ·cooc_boost)``, then × status
  multiplier, then × metadata penalty; ``limbic_norm`` is min–max over the set (1 when all equal);
  ``final = w_c·base + (1 − w_c)·limbic_norm``.

That is the ``seed`` preset. These parameters turn it into the ``default`` preset (docs/scoring.md
states both with their measurements): ``relevance_fusion`` (base = weighted cosine and BM25, the cosine
divided by the best, BM25 by the larger of the best and ``bm25_ceiling_share`` × the query's Σ idf, then
raised to ``bm25_exponent``), ``bm25_weight``, ``prior_exponent`` κ (the limbic factors enter as ``(…)^κ``),
``limbic_ratio`` (``limbic_norm = limbic / max limbic``) and ``created_decay`` (how much a never-accessed
memory decays from its creation); observation evidence, context, the dates the query names and the
feedback from similar queries have their own parameters (docs/scoring.md).

Every function takes a :class:`~limbic.core.params.ScoringParams` explicitly; nothing is global.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from limbic.core.search import decay as decay_models
from limbic.core.search.batch import BatchScores, CandidateBatch, score_batch
from limbic.core.search.candidates import CandidateSet
from limbic.core.search.params import ScoringParams

SECONDS_PER_HOUR = 3600.0


def min_max(values: np.ndarray) -> np.ndarray:
    """Min–max normalisation to [0, 1], ``(n,) float64``; every value is 1 when all are equal."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values.copy()
    low, high = float(values.min()), float(values.max())
    if high == low:
        return np.ones_like(values)
    return (values - low) / (high - low)


def reciprocal_rank_fusion(knn_ids, fts_ids, k: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Merge two ranked id lists with RRF ``score = Σ 1/(k + rank)`` (seed 003 "Reciprocal Rank Fusion").

    Args:
        knn_ids, fts_ids: entity ids best first (each id at most once per list).
        k: the smoothing constant (``ScoringParams.rrf_k``).
    Returns:
        ``(ids, knn_rank, fts_rank, rrf)``: ``int64`` ids sorted by RRF descending (ties keep the order
        of first appearance, KNN list first), their 1-based ranks per branch (0 = absent), and the
        ``float64`` scores.
    """
    knn_ids = [int(i) for i in knn_ids]
    fts_ids = [int(i) for i in fts_ids]
    order: dict[int, int] = {}
    for eid in knn_ids + fts_ids:
        order.setdefault(eid, len(order))
    ids = np.fromiter(order.keys(), dtype=np.int64, count=len(order))
    knn_rank = np.zeros(len(order), dtype=np.int64)
    fts_rank = np.zeros(len(order), dtype=np.int64)
    for rank, eid in enumerate(knn_ids, start=1):
        knn_rank[order[eid]] = rank
    for rank, eid in enumerate(fts_ids, start=1):
        fts_rank[order[eid]] = rank
    rrf = np.where(knn_rank > 0, 1.0 / (k + knn_rank), 0.0) + np.where(fts_rank > 0, 1.0 / (k + fts_rank), 0.0)
    sort = np.argsort(-rrf, kind="stable")
    return ids[sort], knn_rank[sort], fts_rank[sort], rrf[sort]


def base_relevance(distance: np.ndarray, rrf: np.ndarray) -> np.ndarray:
    """Seed base relevance ``(n,) float64``: ``max(0, 1 − distance)``, or ``0.2 + 0.6 × norm_rrf`` where
    distance is nan (seed 003; docs/scoring.md "Base relevance")."""
    distance = np.asarray(distance, dtype=np.float64)
    fts_only = np.isnan(distance)
    cosine = np.maximum(0.0, 1.0 - np.where(fts_only, 1.0, distance))
    return np.where(fts_only, 0.2 + 0.6 * min_max(rrf), cosine)


def ratio_to_best(values: np.ndarray) -> np.ndarray:
    """``values / max(values)``, ``(n,) float64`` in [0, 1] for non-negative input; zeros when the maximum is ≤ 0."""
    values = np.asarray(values, dtype=np.float64)
    best = float(values.max()) if values.size else 0.0
    return values / best if best > 0.0 else np.zeros_like(values)


def branch_relevance(distance: np.ndarray, bm25: np.ndarray, bm25_floor: float = 0.0,
                     bm25_exponent: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Each branch's evidence on one scale (docs/scoring.md "Base relevance"): ``(cosine_rel, bm25_rel)``,
    each ``(n,) float64`` in [0, 1].

    ``cosine_rel`` is the cosine ``max(0, 1 − distance)`` divided by the best of the set; a candidate
    without a distance (nan) gets the lowest cosine of the set. ``bm25_rel`` is
    ``(BM25 / max(best BM25 of the set, bm25_floor)) ** bm25_exponent``; a candidate FTS5 did not
    return (nan) gets BM25 0.
    """
    cosine = np.maximum(0.0, 1.0 - np.asarray(distance, dtype=np.float64))
    found = ~np.isnan(cosine)
    cosine = np.where(found, cosine, float(cosine[found].min()) if found.any() else 0.0)
    keyword = np.asarray(bm25, dtype=np.float64)
    keyword = np.maximum(0.0, np.where(np.isnan(keyword), 0.0, keyword))
    best = max(float(keyword.max()) if keyword.size else 0.0, bm25_floor)
    keyword_rel = keyword / best if best > 0.0 else np.zeros_like(keyword)
    return ratio_to_best(cosine), keyword_rel ** bm25_exponent


def bm25_denominator(candidates: CandidateSet, params: ScoringParams) -> float:
    """What fused relevance divides BM25 by: ``max(best BM25 of the set, share × the query's ceiling Σ idf)``
    (``share = params.bm25_ceiling_share``; docs/scoring.md "Base relevance"); 0 when nothing matched."""
    found = candidates.bm25[~np.isnan(candidates.bm25)]
    best = float(found.max()) if found.size else 0.0
    return max(best, params.bm25_ceiling_share * candidates.bm25_ceiling)


def fused_relevance(cosine_rel: np.ndarray, bm25_rel: np.ndarray, params: ScoringParams) -> np.ndarray:
    """``(1 − w)·cosine_rel + w·bm25_rel`` with ``w = params.bm25_weight``, ``(n,) float64`` (docs/scoring.md)."""
    return (1.0 - params.bm25_weight) * cosine_rel + params.bm25_weight * bm25_rel


def observation_relevance(candidates: CandidateSet, cosine_rel: np.ndarray, params: ScoringParams) -> np.ndarray:
    """The fused relevance of each candidate's best observation, ``(n,) float64`` (docs/scoring.md
    "Observation evidence"): over the observations the full-text index matched,
    ``(1 − w)·cos_o / best cosine + w·(BM25_o / D)^p``, and at least ``(1 − w)·cosine_rel``; ``w`` is
    ``bm25_weight``, ``p`` ``observation_bm25_exponent``, ``D`` the larger of the best observation BM25
    and ``observation_ceiling_share`` × ``candidates.observation_bm25_ceiling``; the best cosine is the
    denominator of ``cosine_rel``."""
    w = params.bm25_weight
    best = (1.0 - w) * np.asarray(cosine_rel, dtype=np.float64)
    used = candidates.distance if candidates.cosine_distance is None else candidates.cosine_distance
    cosine = np.maximum(0.0, 1.0 - used)
    found = cosine[~np.isnan(cosine)]
    best_cosine = float(found.max()) if found.size else 0.0
    keyword = np.where(np.isnan(candidates.observation_bm25), 0.0, candidates.observation_bm25)
    divisor = max([params.observation_ceiling_share * candidates.observation_bm25_ceiling, *keyword.tolist()])
    for row, cos_o, bm25_o in zip(candidates.observation_row.tolist(), candidates.observation_cosine.tolist(),
                                  keyword.tolist(), strict=True):
        cos_share = max(0.0, cos_o) / best_cosine if best_cosine > 0.0 and not np.isnan(cos_o) else 0.0
        keyword_share = (bm25_o / divisor if divisor > 0.0 else 0.0) ** params.observation_bm25_exponent
        best[row] = max(best[row], (1.0 - w) * cos_share + w * keyword_share)
    return best


def neighbour_relevance(own: np.ndarray, context_a: np.ndarray, context_b: np.ndarray) -> np.ndarray:
    """The best ``own`` relevance among each candidate's neighbours in creation order, ``(n,) float64``
    (0 without one); ``context_a``/``context_b`` are the index pairs of :class:`CandidateSet`
    (docs/scoring.md "Context")."""
    own = np.asarray(own, dtype=np.float64)
    best = np.zeros_like(own)
    a, b = np.asarray(context_a, dtype=np.int64), np.asarray(context_b, dtype=np.int64)
    np.maximum.at(best, a, own[b])
    np.maximum.at(best, b, own[a])
    return best


def with_context(own: np.ndarray, context: np.ndarray, params: ScoringParams) -> np.ndarray:
    """``own + α·max(0, context − own)`` with ``α = params.context_weight``, ``(n,) float64``: a memory gets
    the share α of what its best neighbour has more (never less than its own; docs/scoring.md "Context")."""
    own = np.asarray(own, dtype=np.float64)
    return own + params.context_weight * np.maximum(0.0, np.asarray(context, dtype=np.float64) - own)


def with_dates(base: np.ndarray, date_distance: np.ndarray, params: ScoringParams) -> np.ndarray:
    """``base × (1 + δ·exp(−days / tolerance))`` with ``δ = params.date_weight``, ``(n,) float64``; a
    candidate whose distance is ``nan`` (the query names no date) keeps ``base`` (docs/scoring.md
    "Dates named in the query")."""
    days = np.asarray(date_distance, dtype=np.float64)
    closeness = np.where(np.isnan(days), 0.0, np.exp(-np.nan_to_num(days) / params.date_tolerance_days))
    return np.asarray(base, dtype=np.float64) * (1.0 + params.date_weight * closeness)


def importance_terms(access_count: np.ndarray, access_days: np.ndarray, degree: np.ndarray,
                     params: ScoringParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(access_norm, degree_norm, consolidation)``, each ``(n,) float64`` (seed 000 "importance(e)").

    ``access_norm = log2(1 + count) / log2(1 + max count)`` (0 when no candidate was accessed),
    ``degree_norm = min(degree, D_MAX)/D_MAX``, ``consolidation = log2(1 + days) / log2(1 + max days)``
    (0 when no candidate has an access day); maxima over the candidate set (DESIGN §4).
    """
    access_count = np.maximum(np.asarray(access_count, dtype=np.float64), 0.0)
    access_days = np.maximum(np.asarray(access_days, dtype=np.float64), 0.0)
    degree = np.maximum(np.asarray(degree, dtype=np.float64), 0.0)
    max_access = float(access_count.max()) if access_count.size else 0.0
    max_days = float(access_days.max()) if access_days.size else 0.0
    access_norm = np.log2(1.0 + access_count) / np.log2(1.0 + max_access) if max_access > 0.0 \
        else np.zeros_like(access_count)
    consolidation = np.log2(1.0 + access_days) / np.log2(1.0 + max_days) if max_days > 0.0 \
        else np.zeros_like(access_days)
    return access_norm, np.minimum(degree, params.d_max) / params.d_max, consolidation


def importance(access_count: np.ndarray, access_days: np.ndarray, degree: np.ndarray,
               params: ScoringParams) -> np.ndarray:
    """``importance = access_norm × (1 + β_deg·degree_norm) × (1 + α_cons·consolidation)``, ``(n,) float64``
    (seed 000 "importance(e)"; the terms are those of :func:`importance_terms`, docs/scoring.md)."""
    access_norm, degree_norm, consolidation = importance_terms(access_count, access_days, degree, params)
    return access_norm * (1.0 + params.beta_deg * degree_norm) * (1.0 + params.alpha_cons * consolidation)


def decay(hours: np.ndarray, floor: float, params: ScoringParams) -> np.ndarray:
    """``max(floor, f(Δh))`` with Δh in hours (negative Δh, i.e. a future time, counts as 0) and ``f`` the decay
    model of ``params``: ``exp(−λ·Δh)`` in the seed, or the power law or two components
    (:func:`limbic.core.search.decay.curve`)."""
    return np.maximum(floor, decay_models.curve(hours, params))


def age_hours(last_access: np.ndarray, created_at: np.ndarray, now: float) -> np.ndarray:
    """Hours ``(n,) float64`` from the last access (UTC seconds), or from ``created_at`` when never accessed, to ``now``."""
    last_access = np.asarray(last_access, dtype=np.float64)
    reference = np.where(np.isnan(last_access), np.asarray(created_at, dtype=np.float64), last_access)
    return (now - reference) / SECONDS_PER_HOUR


def temporal_factor(last_access: np.ndarray, created_at: np.ndarray, now: float,
                    params: ScoringParams) -> np.ndarray:
    """Temporal decay ``(n,) float64`` from the last access (UTC seconds; seed 000 "temporal_factor(e)").

    A never-accessed memory (``last_access`` nan) decays from ``created_at`` by the share
    ``params.created_decay``: ``1 − c·(1 − decay)``; ``c = 1`` is the seed, ``c = 0`` leaves it neutral
    (docs/scoring.md "Limbic factors").
    """
    never = np.isnan(np.asarray(last_access, dtype=np.float64))
    factor = decay(age_hours(last_access, created_at, now), params.temporal_floor, params)
    if params.created_decay == 1.0:
        return factor
    return np.where(never, 1.0 - params.created_decay * (1.0 - factor), factor)


def cooc_boost(n: int, pair_a: np.ndarray, pair_b: np.ndarray, count: np.ndarray, last_co: np.ndarray,
               now: float, params: ScoringParams) -> np.ndarray:
    """Co-occurrence boost ``(n,) float64``: for each pair (a, b) of candidate indices, the term
    ``log2(1 + co_count) × max(COOC_TEMPORAL_FLOOR, exp(−λ·Δh))`` is added to both a and b."""
    if len(pair_a) == 0:
        return np.zeros(n, dtype=np.float64)
    hours = (now - np.asarray(last_co, dtype=np.float64)) / SECONDS_PER_HOUR
    term = np.log2(1.0 + np.asarray(count, dtype=np.float64)) * decay(hours, params.cooc_temporal_floor, params)
    return np.bincount(pair_a, weights=term, minlength=n) + np.bincount(pair_b, weights=term, minlength=n)


def status_multiplier(status_code: np.ndarray, params: ScoringParams) -> np.ndarray:
    """Status deboost per candidate (active 1.0, paused, completed, archived from ``params``), ``(n,) float64``."""
    table = np.array([1.0, params.status_paused, params.status_completed, params.status_archived])
    return table[np.asarray(status_code, dtype=np.int64)]


def metadata_penalty(metadata_share: np.ndarray, params: ScoringParams) -> np.ndarray:
    """``params.metadata_penalty`` where the share of metadata observations exceeds ``params.metadata_share``, else 1."""
    share = np.asarray(metadata_share, dtype=np.float64)
    return np.where(share > params.metadata_share, params.metadata_penalty, 1.0)


def score_candidates(candidates: CandidateSet, params: ScoringParams) -> BatchScores:
    """Score every candidate of ``candidates`` with ``params`` (pure: no SQL, no model; docs/scoring.md):
    every intermediate, each ``(n,) float64`` in candidate order, ``order`` the candidate indices best
    first, and ``cosine_weight`` ``(1,)`` (a batch of one; :class:`~limbic.core.search.batch.BatchScores`
    names each quantity).

    ``limbic = base × (salience × temporal × (1 + γ·cooc) × feedback)^κ × status^κ × metadata^κ`` (κ =
    ``prior_exponent``, 1 in the seed); ``final = w_c·base + (1 − w_c)·limbic_norm`` where
    ``limbic_norm`` is min–max (seed) or ``limbic / max limbic`` (``limbic_ratio`` = 1).
    Ranking sorts after every adjustment — raw limbic score, status deboost, metadata penalty,
    blend — each sort stable over the previous order, starting from RRF order. This is computed as
    one lexicographic sort: final score, then the earlier stages as tie-breakers. The computation is
    :func:`limbic.core.search.batch.score_batch` on a batch of one.
    """
    return score_batch(CandidateBatch.of([candidates]), params)


def explain(candidates: CandidateSet, params: ScoringParams, index: int) -> dict[str, Any]:
    """Every intermediate of candidate ``index`` (0-based position in ``candidates``) as the inspector shows it.

    Keys: ``name``, ``entity_type``, ``status``, ``mode``, ``rank`` (1-based position after scoring),
    ``distance`` and ``bm25`` (``None`` when that branch did not return it), ``cosine_distance`` (the
    distance fused relevance uses, also for a candidate only FTS5 returned; ``None`` without a vector),
    ``best_cosine`` (the denominator of ``cosine_rel``), ``best_bm25``, ``bm25_ceiling`` (``Σ idf`` of
    the query) and ``bm25_denominator`` (``max(best_bm25, bm25_ceiling_share × bm25_ceiling)``),
    ``date_distance`` (days from the dates the query names, ``None`` when it names none), ``confidence`` and
    ``scope`` (the multipliers of docs/lifecycle.md "Confidence" and "Project scope"),
    ``feedback_similarity`` (the query's cosine to the nearest earlier query the candidate was used
    after, ``None`` when never), ``knn_rank``, ``fts_rank``
    (0 = absent), the raw signals ``access_count``, ``max_access``, ``access_days``, ``max_days``,
    ``degree``, ``age_hours`` (since the last access, or creation when ``never_accessed``), the terms
    ``access_norm``, ``degree_norm``, ``consolidation``, and ``rrf``, ``cosine_rel``, ``bm25_rel``,
    ``entity``, ``observation``, ``own``, ``context``, ``in_context``, ``date_match``, ``base``, ``importance``,
    ``salience_boost``, ``temporal_factor``, ``cooc_boost``, ``feedback_boost``,
    ``status_multiplier``, ``metadata_penalty``, ``prior``, ``limbic_score``, ``limbic_norm``,
    ``cosine_weight``, ``final_score``, ``strategy``. The values are those :func:`score_candidates`
    computes, so they agree with :func:`limbic.core.search.pipeline.rerank`.

    Raises:
        IndexError: ``index`` is not a candidate position.
    """
    if not 0 <= index < len(candidates):
        raise IndexError(f"candidate {index} is out of range (0..{len(candidates) - 1})")
    scores = score_candidates(candidates, params)
    distance = float(candidates.distance[index])
    bm25 = float(candidates.bm25[index])
    access_norm, degree_norm, consolidation = importance_terms(
        candidates.access_count, candidates.access_days, candidates.degree, params)
    used = candidates.distance if candidates.cosine_distance is None else candidates.cosine_distance
    cosine_distance = float(used[index])
    cosines = 1.0 - used[~np.isnan(used)]
    found_bm25 = candidates.bm25[~np.isnan(candidates.bm25)]
    out: dict[str, Any] = {
        "name": candidates.names[index],
        "entity_type": candidates.entity_types[index],
        "status": candidates.statuses[index],
        "mode": candidates.mode,
        "rank": int(np.flatnonzero(scores.order == index)[0]) + 1,
        "distance": None if np.isnan(distance) else distance,
        "cosine_distance": None if np.isnan(cosine_distance) else cosine_distance,
        "bm25": None if np.isnan(bm25) else bm25,
        "best_cosine": float(max(0.0, cosines.max())) if cosines.size else None,
        "best_bm25": float(found_bm25.max()) if found_bm25.size else None,
        "bm25_ceiling": candidates.bm25_ceiling,
        "bm25_denominator": bm25_denominator(candidates, params),
        "date_distance": None if np.isnan(candidates.date_distance[index]) else float(candidates.date_distance[index]),
        "feedback_similarity": None if np.isnan(candidates.feedback_similarity[index])
        else float(candidates.feedback_similarity[index]),
        "knn_rank": int(candidates.knn_rank[index]),
        "fts_rank": int(candidates.fts_rank[index]),
        "access_count": int(candidates.access_count[index]),
        "max_access": int(candidates.access_count.max()),
        "access_days": int(candidates.access_days[index]),
        "max_days": int(candidates.access_days.max()),
        "degree": int(candidates.degree[index]),
        "never_accessed": bool(np.isnan(candidates.last_access[index])),
        "age_hours": max(0.0, float(age_hours(candidates.last_access[index:index + 1],
                                              candidates.created_at[index:index + 1], candidates.now)[0])),
        "confidence": float(candidates.confidence[index]),
        "scope": float(candidates.scope[index]),
        "access_norm": float(access_norm[index]),
        "degree_norm": float(degree_norm[index]),
        "consolidation": float(consolidation[index]),
    }
    for name in ("rrf", "cosine_rel", "bm25_rel", "entity", "observation", "own", "context", "in_context", "date_match",
                 "base", "importance", "salience_boost", "temporal_factor", "cooc_boost", "feedback_boost",
                 "status_multiplier",
                 "metadata_penalty", "prior", "limbic_score", "limbic_norm", "final_score"):
        out[name] = float(getattr(scores, name)[index])
    out["cosine_weight"] = float(scores.cosine_weight[0])
    out["strategy"] = candidates.strategy
    return out
