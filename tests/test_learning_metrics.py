"""NDCG@K and Lift@K by hand and against scikit-learn's ``ndcg_score``; replay of logged candidate sets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from limbic.core.learning.metrics import lift_at_k, mean, ndcg_at_k, segment_ndcg_lift


def test_ndcg_by_hand():
    # relevant at ranks 2 and 3 of 5; two relevant in all: DCG = 1/log2(3) + 1/log2(4), IDCG = 1 + 1/log2(3)
    hits = [False, True, True, False, False]
    expected = (1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(hits, 2, 5) == pytest.approx(expected)
    assert ndcg_at_k(hits, 2, 1) == 0.0
    assert ndcg_at_k([True, False], 1, 10) == 1.0
    assert math.isnan(ndcg_at_k([False, False], 0, 10))


def test_lift_by_hand():
    # 10 candidates, 2 relevant (base rate 0.2); top-3 holds one: precision 1/3 → lift 5/3
    hits = [False, True, False, False, True, False, False, False, False, False]
    assert lift_at_k(hits, 2, 10, 3) == pytest.approx(5 / 3)
    assert lift_at_k(hits, 2, 10, 10) == pytest.approx(1.0)  # the whole list: as good as random
    assert lift_at_k([True, False], 1, 2, 5) == pytest.approx(1.0)  # K beyond the list counts the list
    assert math.isnan(lift_at_k(hits, 0, 10, 3))
    assert mean([1.0, math.nan, 0.5]) == 0.75 and math.isnan(mean([math.nan]))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 3, 10])
def test_ndcg_matches_scikit_learn(seed, k):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    relevant = rng.random(n) < 0.25
    relevant[int(rng.integers(n))] = True
    scores = rng.permutation(n).astype(float)  # untied scores: one order
    order = np.argsort(-scores)
    ours = ndcg_at_k(relevant[order], int(relevant.sum()), k)
    assert ours == pytest.approx(ndcg_score(relevant[None, :].astype(float), scores[None, :], k=k))


@pytest.mark.parametrize("k", [1, 3, 10])
def test_segment_metrics_equal_the_per_ranking_metrics(k):
    rng = np.random.default_rng(k)
    sizes = rng.integers(0, 15, 40)
    starts = np.concatenate(([0], np.cumsum(sizes)))
    hits = rng.random(int(starts[-1])) < 0.3
    relevant = np.array([np.count_nonzero(hits[a:b]) + rng.integers(0, 2) for a, b in zip(starts[:-1], starts[1:],
                                                                                           strict=True)])
    ndcg, lift = segment_ndcg_lift(hits, starts, relevant, k)
    for s, (a, b) in enumerate(zip(starts[:-1], starts[1:], strict=True)):
        expected_ndcg = ndcg_at_k(hits[a:b], int(relevant[s]), k) if b > a else math.nan
        expected_lift = lift_at_k(hits[a:b], int(relevant[s]), int(b - a), k)
        assert ndcg[s] == pytest.approx(expected_ndcg, abs=1e-12, nan_ok=True)
        assert lift[s] == pytest.approx(expected_lift, abs=1e-12, nan_ok=True)
