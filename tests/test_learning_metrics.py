"""NDCG@K and Lift@K by hand and against scikit-learn's ``ndcg_score``, one ranking and many at once."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from limbic.core.eval import metrics as eval_metrics
from limbic.core.learning.metrics import lift_at_k, mean, ndcg_at_k


def one(hits: list[bool], relevant: int, k: int, metric=ndcg_at_k) -> float:
    """The metric of one ranking."""
    return float(metric(np.array(hits, dtype=bool), np.array([0, len(hits)]), np.array([relevant]), k)[0])


def test_ndcg_by_hand():
    # relevant at ranks 2 and 3 of 5; two relevant in all: DCG = 1/log2(3) + 1/log2(4), IDCG = 1 + 1/log2(3)
    hits = [False, True, True, False, False]
    assert one(hits, 2, 5) == pytest.approx((1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3)))
    assert one(hits, 2, 1) == 0.0
    assert one([True, False], 1, 10) == 1.0
    assert one([True, False], 3, 10) == pytest.approx(1 / (1 + 1 / math.log2(3) + 0.5))  # unranked ones count
    assert math.isnan(one([False, False], 0, 10)) and math.isnan(one([], 2, 10))


def test_lift_by_hand():
    # 10 candidates, 2 relevant (base rate 0.2); top-3 holds one: precision 1/3 → lift 5/3
    hits = [False, True, False, False, True, False, False, False, False, False]
    assert one(hits, 2, 3, lift_at_k) == pytest.approx(5 / 3)
    assert one(hits, 2, 10, lift_at_k) == pytest.approx(1.0)  # the whole list: as good as random
    assert one([True, False], 1, 5, lift_at_k) == pytest.approx(1.0)  # K beyond the list counts the list
    assert math.isnan(one(hits, 0, 3, lift_at_k))
    assert mean([1.0, math.nan, 0.5]) == 0.75 and math.isnan(mean([math.nan]))


@pytest.mark.parametrize("k", [1, 3, 10])
def test_ndcg_of_many_rankings_matches_scikit_learn(k):
    rng = np.random.default_rng(k)
    sizes = rng.integers(2, 40, 30)  # scikit-learn needs two documents or more
    starts = np.concatenate(([0], np.cumsum(sizes)))
    relevant = rng.random(int(starts[-1])) < 0.25
    relevant[starts[:-1]] |= rng.random(len(sizes)) < 0.5  # some rankings with a hit at the top
    scores = [rng.permutation(int(n)).astype(float) for n in sizes]  # untied scores: one order per ranking
    orders = [np.argsort(-s) for s in scores]
    hits = np.concatenate([relevant[a:b][o] for a, b, o in zip(starts[:-1], starts[1:], orders, strict=True)])
    counts = np.array([np.count_nonzero(relevant[a:b]) for a, b in zip(starts[:-1], starts[1:], strict=True)])
    ours = ndcg_at_k(hits, starts, counts, k)
    for s, (a, b) in enumerate(zip(starts[:-1], starts[1:], strict=True)):
        if counts[s] == 0:
            assert math.isnan(ours[s])
        else:
            expected = ndcg_score(relevant[None, a:b].astype(float), scores[s][None, :], k=k)
            assert ours[s] == pytest.approx(expected, abs=1e-12)


def test_limbic_eval_scores_its_rankings_with_the_same_ndcg():
    ranked = ["a", "b", "a", "c", "d"]  # a duplicate counts once
    relevant = {"a", "c", "z"}
    expected = one([True, False, False, True, False], 3, 10)
    assert eval_metrics.ndcg_at_k(ranked, relevant, 10) == expected
    assert eval_metrics.ndcg_at_k(ranked, set(), 10) == 0.0 and eval_metrics.ndcg_at_k([], relevant, 10) == 0.0
