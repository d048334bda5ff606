"""The batched scorer (core/search/batch.py) ranks exactly as the single-set formula, for any sets and parameters."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from limbic.core.search import scoring
from limbic.core.search.batch import CandidateBatch, score_batch
from limbic.core.search.candidates import CandidateSet
from limbic.core.search.params import ScoringParams
from limbic.core.search.presets import PRESETS
from tests._scoring_helpers import NOW, random_candidate_set


def _single_set_reference(cs: CandidateSet, p: ScoringParams) -> tuple[np.ndarray, np.ndarray]:
    """``(final, order)`` from the single-set helper functions of scoring.py, independent of batch.py."""
    n = len(cs)
    rrf = cs.rrf(p.rrf_k)
    cosine_rel, bm25_rel = scoring.branch_relevance(cs.cosine_distance, cs.bm25, p.bm25_ceiling_share * cs.bm25_ceiling,
                                                    p.bm25_exponent)
    base = scoring.fused_relevance(cosine_rel, bm25_rel, p) if p.relevance_fusion \
        else scoring.base_relevance(cs.distance, rrf)
    if p.relevance_fusion and p.observation_weight > 0:
        mu = p.observation_weight
        base = (1 - mu) * base + mu * scoring.observation_relevance(cs, cosine_rel, p)
    if p.context_weight > 0:
        base = scoring.with_context(base, scoring.neighbour_relevance(base, cs.context_a, cs.context_b), p)
    base = scoring.with_dates(base, cs.date_distance, p)
    salience = 1.0 + p.beta_sal * scoring.importance(cs.access_count, cs.access_days, cs.degree, p)
    temporal = scoring.temporal_factor(cs.last_access, cs.created_at, cs.now, p)
    cooc = scoring.cooc_boost(n, cs.cooc_a, cs.cooc_b, cs.cooc_count, cs.cooc_last, cs.now, p)
    feedback = 1.0 + p.feedback_weight * np.clip(
        (np.nan_to_num(cs.feedback_similarity, nan=p.feedback_floor) - p.feedback_floor) / (1.0 - p.feedback_floor), 0, 1)
    raw = base * (salience * temporal * (1.0 + p.gamma * cooc) * feedback) ** p.prior_exponent
    after_status = raw * scoring.status_multiplier(cs.status_code, p) ** p.prior_exponent
    limbic = after_status * scoring.metadata_penalty(cs.metadata_share, p) ** p.prior_exponent
    norm = scoring.ratio_to_best(limbic) if p.limbic_ratio else scoring.min_max(limbic)
    w = p.strategy_cosine_weight(cs.strategy)
    final = w * base + (1.0 - w) * norm
    return final, np.lexsort((np.arange(n), -rrf, -raw, -after_status, -limbic, -final))


def _params(draw: st.DrawFn) -> ScoringParams:
    base = PRESETS[draw(st.sampled_from(sorted(PRESETS)))]
    changes = {}
    for f in dataclasses.fields(ScoringParams):
        if draw(st.booleans()):
            low, high = f.metadata["min"], f.metadata["max"]
            changes[f.name] = draw(st.integers(int(low), int(high))) if f.metadata["integer"] \
                else draw(st.floats(low, high, allow_nan=False))
    return base.replace(**changes)


@st.composite
def batches(draw: st.DrawFn) -> tuple[list[CandidateSet], ScoringParams]:
    sets = []
    for _ in range(draw(st.integers(1, 5))):
        cs = random_candidate_set(draw(st.integers(1, 25)), seed=draw(st.integers(0, 10_000)),
                                  pairs_per_candidate=draw(st.integers(0, 3)),
                                  strategy=draw(st.sampled_from(["cosine_heavy", "limbic_heavy", "hybrid_balanced"])))
        if draw(st.booleans()):  # ties: every candidate with the same signals
            cs = dataclasses.replace(cs, access_count=np.zeros(len(cs)), last_access=np.full(len(cs), np.nan),
                                     created_at=np.full(len(cs), NOW), degree=np.zeros(len(cs)))
        if draw(st.booleans()):  # a stored vector for FTS-only candidates too, and a BM25 ceiling
            cosine_distance = np.where(np.isnan(cs.distance), draw(st.floats(0.0, 2.0)), cs.distance)
            cs = dataclasses.replace(cs, cosine_distance=cosine_distance, bm25_ceiling=draw(st.floats(0.0, 40.0)))
        sets.append(cs)
    return sets, _params(draw)


@settings(max_examples=150, deadline=None)
@given(batches())
def test_batch_ranks_every_set_as_the_single_set_formula(case):
    sets, params = case
    batch = CandidateBatch.of(sets)
    scores = score_batch(batch, params)
    for s, cs in enumerate(sets):
        start, stop = batch.starts[s], batch.starts[s + 1]
        final, order = _single_set_reference(cs, params)
        assert np.array_equal(scores.order[start:stop] - start, order)
        np.testing.assert_allclose(scores.final_score[start:stop], final, rtol=0, atol=1e-12)
        single = scoring.score_candidates(cs, params)
        assert np.array_equal(single.order, order)
        np.testing.assert_allclose(single.final_score, final, rtol=0, atol=1e-12)


def test_empty_sets_in_a_batch_are_skipped():
    sets = [random_candidate_set(4, seed=1), random_candidate_set(0, seed=2), random_candidate_set(3, seed=3)]
    scores = score_batch(CandidateBatch.of(sets), PRESETS["default"])
    assert sorted(scores.order[:4]) == [0, 1, 2, 3] and sorted(scores.order[4:]) == [4, 5, 6]
    assert len(score_batch(CandidateBatch.of([]), PRESETS["seed"]).order) == 0
