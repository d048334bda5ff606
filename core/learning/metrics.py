"""Ranking quality from implicit feedback: NDCG@K, Lift@K and gain (seed ``000`` "Metrics").

Relevance is binary: an entity is relevant for a logged search when it was used after it (implicit
feedback) or named with its ``searchId`` in ``mark_used``. Only relevant entities among the search's
candidates count, since no parameter setting can rank anything else.

- ``NDCG@K = DCG@K / IDCG@K`` with ``DCG@K = Σ_{i=1..K} rel_i / log2(i + 1)`` and the ideal ordering
  in ``IDCG`` (the standard definition, as in scikit-learn's ``ndcg_score`` for untied scores).
- ``Lift@K = precision@K / base rate`` = ``(relevant in top-K / min(K, n)) / (relevant / n)`` over the
  ``n`` candidates: 1 is what a random order gives, higher is better.
- ``gain`` = NDCG@K of some parameters minus NDCG@K of the current ones, over the same searches.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

_DISCOUNTS = 1.0 / np.log2(np.arange(2, 1002, dtype=np.float64))  # 1/log2(i + 1) for ranks 1..1000


def _discounts(k: int) -> np.ndarray:
    return _DISCOUNTS[:k] if k <= _DISCOUNTS.size else 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def ndcg_at_k(hits: Sequence[bool] | np.ndarray, relevant: int, k: int) -> float:
    """NDCG@K of one ranking.

    Args:
        hits: ``(m,) bool``, whether the entity at each rank (best first) is relevant; ``m ≥ k`` or the
            whole candidate list when shorter.
        relevant: number of relevant entities among the candidates (≥ the hits).
        k: cut-off, ≥ 1.
    Returns:
        A value in [0, 1]; ``nan`` when ``relevant`` is 0 (the search carries no label).
    """
    if relevant <= 0:
        return math.nan
    top = np.asarray(hits, dtype=np.float64)[:k]
    dcg = float(top @ _discounts(top.size))
    ideal = float(_discounts(min(k, relevant)).sum())
    return dcg / ideal


def lift_at_k(hits: Sequence[bool] | np.ndarray, relevant: int, candidates: int, k: int) -> float:
    """Lift@K of one ranking: precision in the top-K over the share of relevant candidates.

    ``nan`` when ``relevant`` or ``candidates`` is 0.
    """
    if relevant <= 0 or candidates <= 0:
        return math.nan
    shown = min(k, candidates)
    precision = float(np.count_nonzero(np.asarray(hits, dtype=bool)[:shown])) / shown
    return precision / (relevant / candidates)


def mean(values: Sequence[float] | np.ndarray) -> float:
    """Mean over the defined values (``nan`` ignored); ``nan`` when none is defined."""
    array = np.asarray(values, dtype=np.float64)
    defined = array[~np.isnan(array)]
    return float(defined.mean()) if defined.size else math.nan


def segment_ndcg_lift(hits: np.ndarray, starts: np.ndarray, relevant: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """NDCG@K and Lift@K of many rankings at once, the same values as :func:`ndcg_at_k` and :func:`lift_at_k`.

    Args:
        hits: ``(N,) bool``, the rankings concatenated (ranking ``s`` is ``hits[starts[s]:starts[s + 1]]``,
            best first).
        starts: ``(S + 1,) int64`` row offsets.
        relevant: ``(S,) int64`` relevant entities per ranking.
        k: cut-off, ≥ 1.
    Returns:
        ``(ndcg, lift)``, each ``(S,) float64``; ``nan`` where ``relevant`` is 0 (or the ranking is empty).
    """
    sizes = np.diff(starts)
    segment = np.repeat(np.arange(sizes.size), sizes)
    position = np.arange(hits.size) - starts[:-1][segment]
    top = position < k
    gained = hits & top
    dcg = np.bincount(segment[gained], weights=_discounts(k)[position[gained]], minlength=sizes.size)
    found = np.bincount(segment[gained], minlength=sizes.size).astype(np.float64)
    labelled = (relevant > 0) & (sizes > 0)
    ideal = np.concatenate(([0.0], np.cumsum(_discounts(k))))[np.minimum(k, relevant)]
    ndcg = np.where(labelled, dcg / np.where(labelled, ideal, 1.0), np.nan)
    shown = np.minimum(k, sizes)
    lift = np.where(labelled, (found / np.maximum(shown, 1)) / (np.where(labelled, relevant, 1) / np.maximum(sizes, 1)), np.nan)
    return ndcg, lift
