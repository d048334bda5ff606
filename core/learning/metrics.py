"""Ranking quality: NDCG@K and Lift@K of many rankings at once, and the gain (mcp-memory "The Limbic
System", "Metrics"). ``limbic eval`` scores its rankings with the same :func:`ndcg_at_k`.

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


def _top_hits(hits: np.ndarray, starts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(sizes, segment, position, gained)``: each ranking's length ``(S,)``, each row's ranking and
    0-based position ``(N,)``, and ``(N,) bool`` the relevant rows among each ranking's first ``k``."""
    sizes = np.diff(starts)
    segment = np.repeat(np.arange(sizes.size), sizes)
    position = np.arange(hits.size) - starts[:-1][segment]
    return sizes, segment, position, np.asarray(hits, dtype=bool) & (position < k)


def ndcg_at_k(hits: np.ndarray, starts: np.ndarray, relevant: np.ndarray, k: int) -> np.ndarray:
    """NDCG@K of many rankings at once, the one NDCG of the project (the learning loop and ``limbic eval``).

    Args:
        hits: ``(N,) bool``, the rankings concatenated (ranking ``s`` is ``hits[starts[s]:starts[s + 1]]``,
            best first): whether the entity at each rank is relevant.
        starts: ``(S + 1,) int64`` row offsets.
        relevant: ``(S,) int64`` relevant entities per ranking (≥ its hits; those not ranked count in the ideal).
        k: cut-off, ≥ 1.
    Returns:
        ``(S,) float64`` in [0, 1]; ``nan`` where ``relevant`` is 0 or the ranking is empty.
    """
    sizes, segment, position, gained = _top_hits(hits, starts, k)
    dcg = np.bincount(segment[gained], weights=_discounts(k)[position[gained]], minlength=sizes.size)
    labelled = (relevant > 0) & (sizes > 0)
    ideal = np.concatenate(([0.0], np.cumsum(_discounts(k))))[np.minimum(k, relevant)]
    return np.where(labelled, dcg / np.where(labelled, ideal, 1.0), np.nan)


def lift_at_k(hits: np.ndarray, starts: np.ndarray, relevant: np.ndarray, k: int) -> np.ndarray:
    """Lift@K of many rankings at once (arguments as :func:`ndcg_at_k`, each ranking being all its
    search's candidates): precision in the top ``min(K, n)`` over the share of relevant candidates,
    ``(S,) float64``; ``nan`` where ``relevant`` is 0 or the ranking is empty."""
    sizes, segment, _, gained = _top_hits(hits, starts, k)
    found = np.bincount(segment[gained], minlength=sizes.size).astype(np.float64)
    labelled = (relevant > 0) & (sizes > 0)
    shown = np.minimum(k, sizes)
    return np.where(labelled, (found / np.maximum(shown, 1)) / (np.where(labelled, relevant, 1) / np.maximum(sizes, 1)),
                    np.nan)


def mean(values: Sequence[float] | np.ndarray) -> float:
    """Mean over the defined values (``nan`` ignored); ``nan`` when none is defined."""
    array = np.asarray(values, dtype=np.float64)
    defined = array[~np.isnan(array)]
    return float(defined.mean()) if defined.size else math.nan
