"""Many candidate sets scored at once (core/search/batch.py): each set is scored as if it were alone."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from limbic.core.search.batch import CandidateBatch
from limbic.core.search.candidates import ARRAYS_PER_ROW
from limbic.core.search.presets import PRESETS
from limbic.core.search.scoring import BatchScores, score, score_candidates
from tests._scoring_helpers import NOW, random_candidate_set

PER_SET = ("cosine_weight", "best_cosine", "bm25_denominator")


def _sets(seed: int) -> list:
    rng = np.random.default_rng(seed)
    sets = []
    for i in range(6):
        cs = random_candidate_set(int(rng.integers(0, 25)), seed=seed * 10 + i,
                                  pairs_per_candidate=int(rng.integers(0, 4)), strategy=("cosine_heavy", "limbic_heavy", "hybrid_balanced")[i % 3])
        if i % 2:  # a stored vector for the full-text-only candidates too, and a BM25 ceiling
            cs = dataclasses.replace(cs, cosine_distance=np.where(np.isnan(cs.distance), 0.8, cs.distance),
                                     bm25_ceiling=float(rng.uniform(0, 40)))
        if i == 3:  # ties: every candidate with the same usage signals
            cs = dataclasses.replace(cs, access_count=np.zeros(len(cs)), last_access=np.full(len(cs), np.nan),
                                     created_at=np.full(len(cs), NOW), degree=np.zeros(len(cs)))
        sets.append(cs)
    return sets


@pytest.mark.parametrize("name", sorted(PRESETS))
@pytest.mark.parametrize("seed", range(4))
def test_each_set_of_a_batch_scores_as_it_does_alone(name, seed):
    params = PRESETS[name].replace(gamma=0.05, context_weight=0.5)  # every term at work
    sets = _sets(seed)
    batch = CandidateBatch.of(sets)
    together = score(batch, params)
    for s, cs in enumerate(sets):
        alone = score_candidates(cs, params)
        rows = slice(batch.starts[s], batch.starts[s + 1])
        for f in dataclasses.fields(BatchScores):
            if f.name in PER_SET:
                assert getattr(together, f.name)[s] == getattr(alone, f.name)[0], f.name
            elif f.name == "order":
                assert np.array_equal(together.order[rows] - batch.starts[s], alone.order)
            else:
                assert np.array_equal(getattr(together, f.name)[rows], getattr(alone, f.name)), f.name


def test_the_batch_holds_every_per_candidate_array_and_global_pair_rows():
    sets = _sets(9)
    batch = CandidateBatch.of(sets)
    for name in ARRAYS_PER_ROW["candidate"]:
        assert np.array_equal(getattr(batch, name), np.concatenate([getattr(c, name) for c in sets]), equal_nan=True)
    second = int(np.flatnonzero([len(c.cooc_a) for c in sets])[1])  # a later set with co-occurrences
    first_pair = sum(len(c.cooc_a) for c in sets[:second])
    assert batch.cooc_a[first_pair] == sets[second].cooc_a[0] + batch.starts[second]
    with pytest.raises(AttributeError):
        _ = batch.no_such_array


def test_empty_sets_in_a_batch_are_skipped():
    sets = [random_candidate_set(4, seed=1), random_candidate_set(0, seed=2), random_candidate_set(3, seed=3)]
    scores = score(CandidateBatch.of(sets), PRESETS["default"])
    assert sorted(scores.order[:4]) == [0, 1, 2, 3] and sorted(scores.order[4:]) == [4, 5, 6]
    assert len(score(CandidateBatch.of([]), PRESETS["seed"]).order) == 0
