"""The terms of the limbic score, each written once, over candidate sets concatenated row by row.

Every function works on ``(N,)`` arrays holding the candidates of ``S`` sets one after the other; a
:class:`Segments` value says where each set starts, so the maxima and minima a term needs (the best
cosine, the most accessed candidate, …) are taken within each set. One set is ``Segments.single(n)``.
:func:`limbic.core.search.scoring.score` composes the terms; the graph view and the decay plot call the
same functions. docs/scoring.md states every formula with its source: the mcp-memory documentation
pages "The Limbic System" (importance, temporal factor, co-occurrence, status, metadata, routing blend)
and "Hybrid search" (Reciprocal Rank Fusion, the full-text-only base relevance), and this project's own
terms (fused relevance, observation evidence, context, dates, feedback).

Times are UTC unix seconds, ages hours; every function takes its :class:`ScoringParams` explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from limbic.core.search.params import ScoringParams

SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True, slots=True)
class Segments:
    """Where each of ``S`` candidate sets lies in the concatenated rows: ``starts`` ``(S + 1,) int64``
    row offsets (set ``s`` is ``starts[s]:starts[s + 1]``) and ``segment`` ``(N,) int64`` the set of
    each row."""

    starts: np.ndarray
    segment: np.ndarray

    @classmethod
    def of_lengths(cls, lengths: np.ndarray) -> Segments:
        """The segments of sets of ``lengths`` ``(S,)`` rows each."""
        lengths = np.asarray(lengths, dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        return cls(starts, np.repeat(np.arange(len(lengths), dtype=np.int64), lengths))

    @classmethod
    def single(cls, n: int) -> Segments:
        """One set of ``n`` rows."""
        return cls.of_lengths(np.array([n], dtype=np.int64))

    @property
    def sets(self) -> int:
        """Number of sets ``S``."""
        return int(self.starts.shape[0] - 1)

    def max(self, values: np.ndarray, empty: float) -> np.ndarray:
        """Maximum of ``values`` ``(N,)`` within each set, ``(S,) float64``; ``empty`` for a set without rows."""
        return self._reduce(np.maximum, values, empty)

    def min(self, values: np.ndarray, empty: float) -> np.ndarray:
        """Minimum of ``values`` ``(N,)`` within each set, ``(S,) float64``; ``empty`` for a set without rows."""
        return self._reduce(np.minimum, values, empty)

    def _reduce(self, ufunc: np.ufunc, values: np.ndarray, empty: float) -> np.ndarray:
        out = np.full(self.sets, empty, dtype=np.float64)
        filled = self.starts[1:] > self.starts[:-1]
        if filled.any():
            out[filled] = ufunc.reduceat(np.asarray(values, dtype=np.float64), self.starts[:-1][filled])
        return out


# --- normalisations within a set ------------------------------------------------------------------

def min_max(segments: Segments, values: np.ndarray) -> np.ndarray:
    """Min–max over each set, ``(N,) float64`` in [0, 1]; 1 for every row of a set whose values are all equal."""
    low = segments.min(values, 0.0)[segments.segment]
    high = segments.max(values, 0.0)[segments.segment]
    span = high - low
    return np.where(span == 0.0, 1.0, (values - low) / np.where(span == 0.0, 1.0, span))


def ratio_to_best(segments: Segments, values: np.ndarray) -> np.ndarray:
    """``values / max values`` of each set, ``(N,) float64``; 0 in a set whose maximum is ≤ 0."""
    best = segments.max(values, 0.0)[segments.segment]
    return np.where(best > 0.0, values / np.where(best > 0.0, best, 1.0), 0.0)


def log_share(segments: Segments, values: np.ndarray) -> np.ndarray:
    """``log2(1 + v) / log2(1 + max v)`` of each set, ``(N,) float64`` (negative ``v`` count as 0); 0 in a
    set whose maximum is 0 (docs/scoring.md "Limbic factors": ``access_norm``, ``consolidation``)."""
    values = np.maximum(np.asarray(values, dtype=np.float64), 0.0)
    top = segments.max(values, 0.0)[segments.segment]
    return np.where(top > 0.0, np.log2(1.0 + values) / np.log2(1.0 + np.where(top > 0.0, top, 1.0)), 0.0)


# --- relevance ------------------------------------------------------------------------------------

def reciprocal_rank(knn_rank: np.ndarray, fts_rank: np.ndarray, k: float) -> np.ndarray:
    """Reciprocal Rank Fusion ``Σ_branches 1 / (k + rank)``, ``(N,) float64``; ranks ``int64``, 1-based,
    0 = not returned by that branch (docs/scoring.md "Candidates"; mcp-memory "Hybrid search")."""
    return np.where(knn_rank > 0, 1.0 / (k + knn_rank), 0.0) + np.where(fts_rank > 0, 1.0 / (k + fts_rank), 0.0)


def seed_relevance(segments: Segments, distance: np.ndarray, rrf: np.ndarray) -> np.ndarray:
    """The ``seed`` base relevance, ``(N,) float64``: ``max(0, 1 − distance)``, or ``0.2 + 0.6 × min–max
    of rrf`` where KNN gave no distance (``nan``; docs/scoring.md "Base relevance")."""
    fts_only = np.isnan(distance)
    cosine = np.maximum(0.0, 1.0 - np.where(fts_only, 1.0, distance))
    return np.where(fts_only, 0.2 + 0.6 * min_max(segments, rrf), cosine)


def cosine_similarity(segments: Segments, cosine_distance: np.ndarray) -> np.ndarray:
    """``max(0, 1 − distance)``, ``(N,) float64``; a row without a vector (``nan``) gets the lowest
    cosine of its set (0 when none has one; docs/scoring.md "Base relevance")."""
    cosine = np.maximum(0.0, 1.0 - cosine_distance)
    found = ~np.isnan(cosine)
    lowest = segments.min(np.where(found, cosine, np.inf), np.inf)[segments.segment]
    return np.where(found, cosine, np.where(np.isinf(lowest), 0.0, lowest))


def bm25_denominator(segments: Segments, keyword: np.ndarray, ceiling: np.ndarray, share: float) -> np.ndarray:
    """What a BM25 score is divided by: ``max(best BM25 of the set, share × ceiling)``, ``(S,) float64``;
    ``keyword`` ``(N,)`` BM25 ≥ 0 (0 where not matched), ``ceiling`` ``(S,)`` the query's ``Σ idf``."""
    return np.maximum(segments.max(keyword, 0.0), share * ceiling)


def keyword_relevance(segments: Segments, bm25: np.ndarray, ceiling: np.ndarray,
                      params: ScoringParams) -> tuple[np.ndarray, np.ndarray]:
    """``(bm25_rel, denominator)``: ``(BM25 / D)^p`` per row, ``(N,) float64`` in [0, 1], and ``D``
    ``(S,) float64`` (:func:`bm25_denominator` with ``bm25_ceiling_share``); ``p`` is ``bm25_exponent``;
    a row full text did not return (``nan``) has BM25 0 (docs/scoring.md "Base relevance")."""
    keyword = np.maximum(0.0, np.where(np.isnan(bm25), 0.0, bm25))
    denominator = bm25_denominator(segments, keyword, ceiling, params.bm25_ceiling_share)
    best = denominator[segments.segment]
    return np.where(best > 0.0, keyword / np.where(best > 0.0, best, 1.0), 0.0) ** params.bm25_exponent, denominator


def fused_relevance(cosine_rel: np.ndarray, bm25_rel: np.ndarray, params: ScoringParams) -> np.ndarray:
    """``(1 − w)·cosine_rel + w·bm25_rel``, ``w = bm25_weight``, ``(N,) float64`` (docs/scoring.md "Base
    relevance")."""
    return (1.0 - params.bm25_weight) * cosine_rel + params.bm25_weight * bm25_rel


def observation_relevance(row: np.ndarray, row_set: np.ndarray, cosine: np.ndarray, bm25: np.ndarray,
                          ceiling: np.ndarray, cosine_rel: np.ndarray, best_cosine: np.ndarray,
                          confidence: np.ndarray, observation_confidence: np.ndarray,
                          params: ScoringParams) -> np.ndarray:
    """The fused relevance of each row's best observation, ``(N,) float64`` (docs/scoring.md "Observation
    evidence"): over the observations full text matched, ``((1 − w)·cos_o / best cosine + w·(BM25_o /
    D)^p) × weight_o``, and at least ``(1 − w)·cosine_rel × confidence``; ``w`` is ``bm25_weight``, ``p``
    ``observation_bm25_exponent``, ``D`` the larger of the set's best observation BM25 and
    ``observation_ceiling_share`` × ``ceiling``; each observation's contribution is multiplied by its
    weight (docs/lifecycle.md "Confidence").

    Args:
        row, row_set: ``(Q,) int64`` each observation's candidate row and set; cosine: ``(Q,) float64`` its
            vector's cosine (``nan`` without one); bm25: ``(Q,) float64`` its BM25 (≥ 0, ``nan`` = 0).
        ceiling: ``(S,) float64`` the query's ``Σ idf`` in the observation index; cosine_rel: ``(N,)``;
            best_cosine: ``(S,) float64`` the denominator of ``cosine_rel``; confidence: ``(N,) float64`` each
            row's highest observation weight; observation_confidence: ``(Q,) float64`` each observation's weight.
    """
    w = params.bm25_weight
    best = (1.0 - w) * cosine_rel * confidence
    if not len(row):
        return best
    keyword = np.where(np.isnan(bm25), 0.0, bm25)
    keyword_best = params.observation_ceiling_share * ceiling
    np.maximum.at(keyword_best, row_set, keyword)
    keyword_best = keyword_best[row_set]
    cos_best = best_cosine[row_set]
    cosine = np.where(np.isnan(cosine), 0.0, np.maximum(0.0, cosine))
    cosine_share = np.where(cos_best > 0.0, cosine / np.where(cos_best > 0.0, cos_best, 1.0), 0.0)
    keyword_share = np.where(keyword_best > 0.0, keyword / np.where(keyword_best > 0.0, keyword_best, 1.0), 0.0)
    fused = ((1.0 - w) * cosine_share + w * keyword_share ** params.observation_bm25_exponent) * observation_confidence
    np.maximum.at(best, row, fused)
    return best


def with_observation(entity: np.ndarray, observation: np.ndarray, params: ScoringParams) -> np.ndarray:
    """``(1 − μ)·entity + μ·observation``, ``μ = observation_weight``, ``(N,) float64`` (docs/scoring.md
    "Observation evidence")."""
    return (1.0 - params.observation_weight) * entity + params.observation_weight * observation


def neighbour_relevance(own: np.ndarray, context_a: np.ndarray, context_b: np.ndarray) -> np.ndarray:
    """The best ``own`` among each row's neighbours in creation order, ``(N,) float64`` (0 without one);
    ``context_a``/``context_b`` ``(P,) int64`` row pairs (docs/scoring.md "Context")."""
    best = np.zeros(len(own), dtype=np.float64)
    if len(context_a):
        np.maximum.at(best, context_a, own[context_b])
        np.maximum.at(best, context_b, own[context_a])
    return best


def with_context(own: np.ndarray, context: np.ndarray, params: ScoringParams) -> np.ndarray:
    """``own + α·max(0, context − own)``, ``α = context_weight``, ``(N,) float64``: the share α of what the
    best neighbour has more, never less than ``own`` (docs/scoring.md "Context")."""
    return own + params.context_weight * np.maximum(0.0, context - own)


def date_closeness(date_distance: np.ndarray, tolerance_days: float) -> np.ndarray:
    """``exp(−days / tolerance)``, ``(N,) float64``: 1 for a memory written on a date the query names,
    falling with the days off; 0 where the query names no date (``nan``; docs/scoring.md "Dates named
    in the query")."""
    days = np.asarray(date_distance, dtype=np.float64)
    named = ~np.isnan(days)
    return np.where(named, np.exp(-np.where(named, days, 0.0) / tolerance_days), 0.0)


def with_dates(in_context: np.ndarray, date_match: np.ndarray, params: ScoringParams) -> np.ndarray:
    """``in_context × (1 + δ·date_match)``, ``δ = date_weight``, ``(N,) float64`` (docs/scoring.md "Dates
    named in the query")."""
    return in_context * (1.0 + params.date_weight * date_match)


# --- the limbic factors ---------------------------------------------------------------------------

def importance_terms(segments: Segments, access_count: np.ndarray, access_days: np.ndarray, degree: np.ndarray,
                     params: ScoringParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(access_norm, degree_norm, consolidation)``, each ``(N,) float64`` (docs/scoring.md "Limbic
    factors"): :func:`log_share` of the access counts and of the distinct access days within each set,
    and ``min(degree, D_MAX) / D_MAX``."""
    degree_norm = np.minimum(np.maximum(np.asarray(degree, dtype=np.float64), 0.0), params.d_max) / params.d_max
    return log_share(segments, access_count), degree_norm, log_share(segments, access_days)


def importance(access_norm: np.ndarray, degree_norm: np.ndarray, consolidation: np.ndarray,
               params: ScoringParams) -> np.ndarray:
    """``access_norm × (1 + β_deg·degree_norm) × (1 + α_cons·consolidation)``, ``(N,) float64``
    (docs/scoring.md "Limbic factors")."""
    return access_norm * (1.0 + params.beta_deg * degree_norm) * (1.0 + params.alpha_cons * consolidation)


def decay(hours: np.ndarray, floor: float, params: ScoringParams) -> np.ndarray:
    """``max(floor, f(Δh))``, ``(N,) float64``, Δh in hours (a negative Δh, a future time, counts as 0), ``f`` the
    decay model of ``params`` at the rate λ (``lambda_hourly``): ``exp(−λ·Δh)`` by default
    (:meth:`limbic.core.search.decay.Decay.curve`, docs/lifecycle.md "Decay models")."""
    return np.maximum(floor, params.decay.curve(hours, params.lambda_hourly))


def age_hours(last_access: np.ndarray, created_at: np.ndarray, now: float | np.ndarray) -> np.ndarray:
    """Hours, ``(N,) float64``, from the last access (UTC seconds) to ``now``, or from ``created_at`` where
    never accessed (``nan``); ``now`` is one time or one per row."""
    last_access = np.asarray(last_access, dtype=np.float64)
    return (now - np.where(np.isnan(last_access), np.asarray(created_at, dtype=np.float64), last_access)) \
        / SECONDS_PER_HOUR


def temporal_factor(last_access: np.ndarray, created_at: np.ndarray, now: float | np.ndarray,
                    params: ScoringParams) -> np.ndarray:
    """``max(TEMPORAL_FLOOR, exp(−λ·Δh))`` since the last access, ``(N,) float64``; a memory never
    accessed decays from ``created_at`` by the share ``created_decay``: ``1 − c·(1 − decay)``
    (docs/scoring.md "Limbic factors")."""
    temporal = decay(age_hours(last_access, created_at, now), params.temporal_floor, params)
    if params.created_decay == 1.0:
        return temporal
    return np.where(np.isnan(last_access), 1.0 - params.created_decay * (1.0 - temporal), temporal)


def temporal_key(params: ScoringParams) -> tuple[object, ...]:
    """What :func:`temporal_factor` reads of ``params``: λ, the floor, the never-used share and the decay model
    with every parameter (equal keys, equal factors; a cache of factors is keyed on it)."""
    return params.lambda_hourly, params.temporal_floor, params.created_decay, params.decay


def cooc_boost(n: int, pair_a: np.ndarray, pair_b: np.ndarray, count: np.ndarray, last_co: np.ndarray,
               now: float | np.ndarray, params: ScoringParams) -> np.ndarray:
    """Co-occurrence boost, ``(n,) float64``: each pair ``(a, b)`` of rows (``(M,) int64``) adds
    ``log2(1 + co_count) × max(COOC_TEMPORAL_FLOOR, exp(−λ·Δh))`` to both, Δh the hours from ``last_co``
    (UTC seconds) to ``now`` (one time or one per pair; docs/scoring.md "Limbic factors")."""
    if not len(pair_a):
        return np.zeros(n, dtype=np.float64)
    hours = (now - last_co) / SECONDS_PER_HOUR
    term = np.log2(1.0 + count) * decay(hours, params.cooc_temporal_floor, params)
    return np.bincount(pair_a, weights=term, minlength=n) + np.bincount(pair_b, weights=term, minlength=n)


def feedback_prior(similarity: np.ndarray, params: ScoringParams) -> np.ndarray:
    """``1 + β_fb·clip((s − floor) / (1 − floor), 0, 1)``, ``(N,) float64``, ``s`` the highest cosine
    between the query and an earlier query after which the row was used; 1 where it never was (``nan``;
    docs/scoring.md "Feedback from similar queries")."""
    floor = params.feedback_floor
    share = np.clip((np.where(np.isnan(similarity), floor, similarity) - floor) / (1.0 - floor), 0.0, 1.0)
    return 1.0 + params.feedback_weight * share


def status_multiplier(status_code: np.ndarray, params: ScoringParams) -> np.ndarray:
    """The status deboost, ``(N,) float64``: the one table of multipliers, indexed by status code (the
    order of ``models.STATUSES``): active 1, paused, completed, archived from ``params`` (docs/scoring.md
    "Limbic factors")."""
    table = np.array([1.0, params.status_paused, params.status_completed, params.status_archived])
    return table[np.asarray(status_code, dtype=np.int64)]


def metadata_penalty(metadata_share: np.ndarray, params: ScoringParams) -> np.ndarray:
    """``metadata_penalty`` where the share of metadata observations exceeds ``metadata_share``, else 1,
    ``(N,) float64`` (docs/scoring.md "Limbic factors")."""
    return np.where(metadata_share > params.metadata_share, params.metadata_penalty, 1.0)


# --- the blend ------------------------------------------------------------------------------------

def limbic_norm(segments: Segments, limbic: np.ndarray, params: ScoringParams) -> np.ndarray:
    """The limbic score on [0, 1] within each set, ``(N,) float64``: ``limbic / max limbic`` when
    ``limbic_ratio`` is 1, else min–max (docs/scoring.md "Score and blend")."""
    return ratio_to_best(segments, limbic) if params.limbic_ratio else min_max(segments, limbic)


def cosine_weights(strategies: tuple[str, ...], params: ScoringParams) -> np.ndarray:
    """The routing strategy's cosine weight ``w_c`` of each set, ``(S,) float64`` (docs/scoring.md
    "Score and blend"; mcp-memory "The Limbic System", "Query Routing")."""
    return np.array([params.strategy_cosine_weight(s) for s in strategies], dtype=np.float64)


def blend(base: np.ndarray, norm: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``final = w_c·base + (1 − w_c)·limbic_norm``, ``(N,) float64``; ``weight`` ``(N,)`` each row's
    ``w_c`` (docs/scoring.md "Score and blend")."""
    return weight * base + (1.0 - weight) * norm
