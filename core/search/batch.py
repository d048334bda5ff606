"""The limbic scorer over many candidate sets at once: one vectorised pass over their concatenated rows.

A :class:`CandidateBatch` concatenates the arrays of several :class:`CandidateSet` once (rows of set
``s`` are ``starts[s]:starts[s + 1]``); :func:`score_batch` then scores every set with the formula of
:mod:`limbic.core.search.scoring` (seed ``000``/``003`` and docs/scoring.md), the per-set maxima and
minima taken with ``np.maximum.reduceat``/``np.minimum.reduceat`` and the per-set ranking with one
``np.lexsort`` keyed on the set first. :func:`limbic.core.search.scoring.score_candidates` is a batch of
one, so the single-search and the replay scores are the same numbers (bit for bit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from limbic.core.search import decay
from limbic.core.search.candidates import CandidateSet
from limbic.core.search.params import ScoringParams

SECONDS_PER_HOUR = 3600.0
_ROW_FIELDS = ("distance", "cosine_distance", "knn_rank", "fts_rank", "bm25", "access_count", "access_days", "last_access",
               "created_at", "degree", "status_code", "metadata_share", "date_distance", "feedback_similarity",
               "confidence", "scope")
_FLOAT_ROWS = frozenset(("distance", "cosine_distance", "bm25", "last_access", "created_at", "metadata_share",
                         "date_distance", "feedback_similarity", "confidence", "scope"))


@dataclass(frozen=True, slots=True)
class CandidateBatch:
    """Candidate sets concatenated: every per-candidate array of :class:`CandidateSet` over all rows
    (``(N,)``, same dtypes), ``starts`` ``(S + 1,) int64`` the row offsets of the ``S`` sets, ``segment``
    ``(N,) int64`` the set of each row, ``now`` ``(N,) float64`` the set's scoring time (UTC seconds),
    ``strategies`` the routing strategy of each set, ``bm25_ceiling`` ``(S,) float64`` each set's BM25
    ceiling, the co-occurrence and context pairs and the observation evidence rows as global row indices."""

    starts: np.ndarray
    segment: np.ndarray
    now: np.ndarray
    strategies: tuple[str, ...]
    bm25_ceiling: np.ndarray
    observation_bm25_ceiling: np.ndarray
    distance: np.ndarray
    cosine_distance: np.ndarray
    knn_rank: np.ndarray
    fts_rank: np.ndarray
    bm25: np.ndarray
    access_count: np.ndarray
    access_days: np.ndarray
    last_access: np.ndarray
    created_at: np.ndarray
    degree: np.ndarray
    status_code: np.ndarray
    metadata_share: np.ndarray
    date_distance: np.ndarray
    feedback_similarity: np.ndarray
    confidence: np.ndarray
    scope: np.ndarray
    cooc_a: np.ndarray
    cooc_b: np.ndarray
    cooc_count: np.ndarray
    cooc_last: np.ndarray
    context_a: np.ndarray
    context_b: np.ndarray
    observation_row: np.ndarray
    observation_segment: np.ndarray
    observation_cosine: np.ndarray
    observation_bm25: np.ndarray
    observation_confidence: np.ndarray

    @classmethod
    def of(cls, sets: Sequence[CandidateSet]) -> CandidateBatch:
        """Concatenate ``sets`` (already validated by :class:`CandidateSet`); an empty sequence gives an empty batch."""
        lengths = np.array([len(c) for c in sets], dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        segment = np.repeat(np.arange(len(sets), dtype=np.int64), lengths)
        rows = {name: _concat([getattr(c, name) for c in sets], np.float64 if name in _FLOAT_ROWS else np.int64)
                for name in _ROW_FIELDS}
        pair_offsets = np.repeat(starts[:-1], [len(c.cooc_a) for c in sets])
        context_offsets = np.repeat(starts[:-1], [len(c.context_a) for c in sets])
        observation_counts = [len(c.observation_row) for c in sets]
        observation_offsets = np.repeat(starts[:-1], observation_counts)
        return cls(starts=starts, segment=segment, now=np.array([c.now for c in sets], dtype=np.float64)[segment],
                   strategies=tuple(c.strategy for c in sets),
                   bm25_ceiling=np.array([c.bm25_ceiling for c in sets], dtype=np.float64),
                   observation_bm25_ceiling=np.array([c.observation_bm25_ceiling for c in sets], dtype=np.float64),
                   cooc_a=_concat([c.cooc_a for c in sets], np.int64) + pair_offsets,
                   cooc_b=_concat([c.cooc_b for c in sets], np.int64) + pair_offsets,
                   cooc_count=_concat([c.cooc_count for c in sets], np.float64),
                   cooc_last=_concat([c.cooc_last for c in sets], np.float64),
                   context_a=_concat([c.context_a for c in sets], np.int64) + context_offsets,
                   context_b=_concat([c.context_b for c in sets], np.int64) + context_offsets,
                   observation_row=_concat([c.observation_row for c in sets], np.int64) + observation_offsets,
                   observation_segment=np.repeat(np.arange(len(sets), dtype=np.int64), observation_counts),
                   observation_cosine=_concat([c.observation_cosine for c in sets], np.float64),
                   observation_bm25=_concat([c.observation_bm25 for c in sets], np.float64),
                   observation_confidence=_concat([c.observation_confidence for c in sets], np.float64), **rows)

    def __len__(self) -> int:
        """Number of rows (candidates over all sets)."""
        return int(self.segment.shape[0])

    @property
    def sets(self) -> int:
        """Number of candidate sets."""
        return int(self.starts.shape[0] - 1)

    def segment_max(self, values: np.ndarray, empty: float) -> np.ndarray:
        """Maximum of ``values`` ``(N,)`` within each set, ``(S,) float64``; ``empty`` for a set without rows."""
        return self._reduce(np.maximum, values, empty)

    def segment_min(self, values: np.ndarray, empty: float) -> np.ndarray:
        """Minimum of ``values`` ``(N,)`` within each set, ``(S,) float64``; ``empty`` for a set without rows."""
        return self._reduce(np.minimum, values, empty)

    def _reduce(self, ufunc: np.ufunc, values: np.ndarray, empty: float) -> np.ndarray:
        out = np.full(self.sets, empty, dtype=np.float64)
        filled = self.starts[1:] > self.starts[:-1]
        if filled.any():
            out[filled] = ufunc.reduceat(np.asarray(values, dtype=np.float64), self.starts[:-1][filled])
        return out


def _concat(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.zeros(0, dtype=dtype)


@dataclass(frozen=True, slots=True)
class BatchScores:
    """Every intermediate of :func:`score_batch`, each ``(N,) float64`` in row order, ``cosine_weight``
    ``(S,) float64`` per set, and ``order`` ``(N,) int64``: row indices, set by set, each set's rows best
    first (docs/scoring.md names each quantity).

    ``cosine_rel``/``bm25_rel`` are the branches' scores divided by their best (used only when
    ``relevance_fusion`` = 1); ``entity`` their fused relevance (the seed's base without fusion);
    ``observation`` the fused relevance of the row's best observation (0 unless ``observation_weight`` > 0);
    ``own`` the entity's relevance with its observation evidence, before context; ``context`` the best
    ``own`` among its neighbours in creation order (0 without one); ``in_context`` ``own`` with its
    context; ``date_match`` how close it was written to a date the query names (``exp(−days /
    tolerance)``, 0 when it names none); ``base`` the base relevance, ``in_context × (1 +
    date_weight·date_match)``; ``feedback_boost`` the prior from earlier uses after similar queries (1 when
    none); ``prior`` the product of the limbic factors raised to ``prior_exponent`` (``limbic_score = base ×
    prior``)."""

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
    importance: np.ndarray
    salience_boost: np.ndarray
    temporal_factor: np.ndarray
    cooc_boost: np.ndarray
    feedback_boost: np.ndarray
    status_multiplier: np.ndarray
    metadata_penalty: np.ndarray
    prior: np.ndarray
    limbic_score: np.ndarray
    limbic_norm: np.ndarray
    cosine_weight: np.ndarray
    final_score: np.ndarray
    order: np.ndarray


def _min_max(batch: CandidateBatch, values: np.ndarray) -> np.ndarray:
    low = batch.segment_min(values, 0.0)[batch.segment]
    high = batch.segment_max(values, 0.0)[batch.segment]
    span = high - low
    return np.where(span == 0.0, 1.0, (values - low) / np.where(span == 0.0, 1.0, span))


def _ratio_to_best(batch: CandidateBatch, values: np.ndarray) -> np.ndarray:
    best = batch.segment_max(values, 0.0)[batch.segment]
    return np.where(best > 0.0, values / np.where(best > 0.0, best, 1.0), 0.0)


def _log_share(batch: CandidateBatch, values: np.ndarray) -> np.ndarray:
    """``log2(1 + v) / log2(1 + max v)`` per set, 0 where the set's maximum is 0 (seed 000 "importance(e)")."""
    top = batch.segment_max(values, 0.0)[batch.segment]
    return np.where(top > 0.0, np.log2(1.0 + values) / np.log2(1.0 + np.where(top > 0.0, top, 1.0)), 0.0)


def _decay(hours: np.ndarray, floor: float, params: ScoringParams) -> np.ndarray:
    return np.maximum(floor, decay.curve(hours, params))  # the chosen decay model (docs/lifecycle.md)


def date_closeness(date_distance: np.ndarray, tolerance_days: float) -> np.ndarray:
    """``exp(−days / tolerance)`` per candidate, ``(n,) float64``: 1 for a memory written on a date the
    query names, falling with the days off; 0 where the query names no date (``nan`` distance;
    docs/scoring.md "Dates named in the query")."""
    days = np.asarray(date_distance, dtype=np.float64)
    named = ~np.isnan(days)
    return np.where(named, np.exp(-np.where(named, days, 0.0) / tolerance_days), 0.0)


def feedback_prior(similarity: np.ndarray, weight: float, floor: float) -> np.ndarray:
    """``1 + β·clip((s − floor) / (1 − floor), 0, 1)`` per candidate, ``(n,) float64``, where ``s`` is the
    highest cosine between the query and an earlier query after which the candidate was used; 1 where it
    never was (``nan``; docs/scoring.md "Feedback from similar queries")."""
    s = np.asarray(similarity, dtype=np.float64)
    share = np.clip((np.where(np.isnan(s), floor, s) - floor) / (1.0 - floor), 0.0, 1.0)
    return 1.0 + weight * share


def _best_observation(batch: CandidateBatch, cosine_rel: np.ndarray, cosine_best: np.ndarray,
                      params: ScoringParams) -> np.ndarray:
    """The fused relevance of each row's best observation, ``(N,) float64`` (docs/scoring.md "Observation
    evidence"): ``(1 − w)·cos_o / best cosine + w·(BM25_o / D)^p`` over the observations the full-text
    index matched, and at least ``(1 − w)·cosine_rel`` (the best observation without a keyword hit, or the
    entity's passage vector); ``w`` is ``bm25_weight``, ``p`` ``observation_bm25_exponent`` and ``D`` the
    larger of the set's best observation BM25 and ``observation_ceiling_share`` × the query's Σ idf in
    ``observation_fts``."""
    w = params.bm25_weight
    best = (1.0 - w) * cosine_rel * batch.confidence
    if not len(batch.observation_row):
        return best
    keyword = np.where(np.isnan(batch.observation_bm25), 0.0, batch.observation_bm25)
    keyword_best = params.observation_ceiling_share * batch.observation_bm25_ceiling
    np.maximum.at(keyword_best, batch.observation_segment, keyword)
    keyword_best = keyword_best[batch.observation_segment]
    cos_best = cosine_best[batch.observation_segment]
    cosine = np.where(np.isnan(batch.observation_cosine), 0.0, np.maximum(0.0, batch.observation_cosine))
    cosine_share = np.where(cos_best > 0.0, cosine / np.where(cos_best > 0.0, cos_best, 1.0), 0.0)
    keyword_share = np.where(keyword_best > 0.0, keyword / np.where(keyword_best > 0.0, keyword_best, 1.0), 0.0)
    fused = ((1.0 - w) * cosine_share + w * keyword_share ** params.observation_bm25_exponent) \
        * batch.observation_confidence  # each observation's contribution × its weight (docs/lifecycle.md)
    np.maximum.at(best, batch.observation_row, fused)
    return best


def score_batch(batch: CandidateBatch, params: ScoringParams) -> BatchScores:
    """Score every candidate set of ``batch`` with ``params`` (pure numpy; the formula is that of
    :func:`limbic.core.search.scoring.score_candidates`, docs/scoring.md): per-set maxima and minima,
    one ``np.lexsort`` (set, final, limbic, after status, raw limbic, RRF, row) for every ranking."""
    n = len(batch)
    rrf = np.where(batch.knn_rank > 0, 1.0 / (params.rrf_k + batch.knn_rank), 0.0) + \
        np.where(batch.fts_rank > 0, 1.0 / (params.rrf_k + batch.fts_rank), 0.0)
    cosine = np.maximum(0.0, 1.0 - batch.cosine_distance)
    found = ~np.isnan(cosine)
    lowest_found = batch.segment_min(np.where(found, cosine, np.inf), np.inf)[batch.segment]
    cosine = np.where(found, cosine, np.where(np.isinf(lowest_found), 0.0, lowest_found))
    cosine_best = batch.segment_max(cosine, 0.0)
    cosine_rel = _ratio_to_best(batch, cosine)
    keyword = np.maximum(0.0, np.where(np.isnan(batch.bm25), 0.0, batch.bm25))
    keyword_best = np.maximum(batch.segment_max(keyword, 0.0), params.bm25_ceiling_share * batch.bm25_ceiling)
    keyword_best = keyword_best[batch.segment]
    bm25_rel = np.where(keyword_best > 0.0, keyword / np.where(keyword_best > 0.0, keyword_best, 1.0),
                        0.0) ** params.bm25_exponent
    observation = np.zeros(n, dtype=np.float64)
    if params.relevance_fusion:
        entity = ((1.0 - params.bm25_weight) * cosine_rel + params.bm25_weight * bm25_rel) * batch.confidence
        own = entity
        if params.observation_weight > 0.0:
            observation = _best_observation(batch, cosine_rel, cosine_best, params)
            own = (1.0 - params.observation_weight) * entity + params.observation_weight * observation
    else:
        fts_only = np.isnan(batch.distance)
        entity = own = np.where(fts_only, 0.2 + 0.6 * _min_max(batch, rrf),
                                np.maximum(0.0, 1.0 - np.where(fts_only, 1.0, batch.distance))) * batch.confidence
    # the best relevance among each row's neighbours in creation order (docs/scoring.md "Context")
    context = np.zeros(n, dtype=np.float64)
    if len(batch.context_a):
        np.maximum.at(context, batch.context_a, own[batch.context_b])
        np.maximum.at(context, batch.context_b, own[batch.context_a])
    base = own + params.context_weight * np.maximum(0.0, context - own) if params.context_weight > 0.0 else own
    in_context = base
    date_match = date_closeness(batch.date_distance, params.date_tolerance_days)
    if params.date_weight > 0.0:
        base = in_context * (1.0 + params.date_weight * date_match)
    base = base * batch.scope  # project scope (docs/lifecycle.md "Project scope"): 1 without a project
    access_norm = _log_share(batch, np.maximum(batch.access_count.astype(np.float64), 0.0))
    consolidation = _log_share(batch, np.maximum(batch.access_days.astype(np.float64), 0.0))
    degree_norm = np.minimum(np.maximum(batch.degree.astype(np.float64), 0.0), params.d_max) / params.d_max
    imp = access_norm * (1.0 + params.beta_deg * degree_norm) * (1.0 + params.alpha_cons * consolidation)
    salience = 1.0 + params.beta_sal * imp
    never = np.isnan(batch.last_access)
    age = (batch.now - np.where(never, batch.created_at, batch.last_access)) / SECONDS_PER_HOUR
    temporal = _decay(age, params.temporal_floor, params)
    if params.created_decay != 1.0:
        temporal = np.where(never, 1.0 - params.created_decay * (1.0 - temporal), temporal)
    cooc: np.ndarray = np.zeros(n, dtype=np.float64)
    if len(batch.cooc_a):
        hours = (batch.now[batch.cooc_a] - batch.cooc_last) / SECONDS_PER_HOUR
        term = np.log2(1.0 + batch.cooc_count) * _decay(hours, params.cooc_temporal_floor, params)
        cooc = np.bincount(batch.cooc_a, weights=term, minlength=n) + np.bincount(batch.cooc_b, weights=term,
                                                                                 minlength=n)
    feedback = feedback_prior(batch.feedback_similarity, params.feedback_weight, params.feedback_floor)
    kappa = params.prior_exponent
    raw = base * (salience * temporal * (1.0 + params.gamma * cooc) * feedback) ** kappa
    status = np.array([1.0, params.status_paused, params.status_completed, params.status_archived])[batch.status_code]
    after_status = raw * status ** kappa
    metadata = np.where(batch.metadata_share > params.metadata_share, params.metadata_penalty, 1.0)
    limbic = after_status * metadata ** kappa
    limbic_norm = _ratio_to_best(batch, limbic) if params.limbic_ratio else _min_max(batch, limbic)
    cosine_weight = np.array([params.strategy_cosine_weight(s) for s in batch.strategies], dtype=np.float64)
    row_weight = cosine_weight[batch.segment]
    final = row_weight * base + (1.0 - row_weight) * limbic_norm
    order = np.lexsort((np.arange(n), -rrf, -raw, -after_status, -limbic, -final, batch.segment))
    prior = (salience * temporal * (1.0 + params.gamma * cooc) * feedback * status * metadata) ** kappa
    return BatchScores(rrf=rrf, cosine_rel=cosine_rel, bm25_rel=bm25_rel, entity=entity, observation=observation, own=own,
                       context=context, in_context=in_context, date_match=date_match, base=base, importance=imp,
                       salience_boost=salience, temporal_factor=temporal, cooc_boost=cooc, feedback_boost=feedback,
                       status_multiplier=status, metadata_penalty=metadata, prior=prior, limbic_score=limbic, limbic_norm=limbic_norm,
                       cosine_weight=cosine_weight, final_score=final, order=order.astype(np.int64))
