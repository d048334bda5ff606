"""The ``default`` preset, term by term, against values computed by hand from docs/scoring.md."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from _scoring_helpers import DAY, HOUR, NOW, candidate_set

from limbic.core.search import terms
from limbic.core.search.pipeline import rerank
from limbic.core.search.presets import preset
from limbic.core.search.scoring import explain, score_candidates

D = preset("default")  # w 0.5, s 1, p 2; μ 0.4, s_o 1, p_o 1; α 0.5; δ 0.3, τ 3; β_fb 1, floor 0.7; ratio blend


def three_memories():
    """A (cosine 0.8, BM25 6), B (cosine 0.6, no keyword hit), C (found by full text only, cosine 0.3, BM25 12);
    Σ idf of the query 8; A and B are neighbours; A was written on the named day, B three days off, C the query
    names no date for; B was used after the same query before (s = 1), C after a reworded one (s = 0.85)."""
    cs = candidate_set([{"name": "A", "distance": 0.2, "bm25": 6.0, "fts_rank": 2},
                        {"name": "B", "distance": 0.4, "bm25": None},
                        {"name": "C", "distance": None, "bm25": 12.0, "fts_rank": 1}], bm25_ceiling=8.0)
    return dataclasses.replace(
        cs, cosine_distance=np.array([0.2, 0.4, 0.7]),
        # A's observation: cosine 0.4, BM25 3; C's: no vector, BM25 9; Σ idf in the observation index 6
        observation_row=np.array([0, 2]), observation_cosine=np.array([0.4, np.nan]),
        observation_bm25=np.array([3.0, 9.0]), observation_bm25_ceiling=6.0,
        context_a=np.array([0]), context_b=np.array([1]),
        date_distance=np.array([0.0, 3.0, np.nan]), feedback_similarity=np.array([np.nan, 1.0, 0.85]))


def test_every_term_of_the_default_preset_by_hand():
    s = score_candidates(three_memories(), D)
    # "Base relevance": cosine ÷ best cosine 0.8; BM25 ÷ max(best 12, 1 × Σ idf 8), squared
    assert s.cosine_rel == pytest.approx([1.0, 0.75, 0.375])
    assert s.bm25_rel == pytest.approx([0.25, 0.0, 1.0])
    assert s.entity == pytest.approx([0.625, 0.375, 0.6875])
    # "Observation evidence": A's observation 0.5·0.4/0.8 + 0.5·3/9 = 0.4167 < its floor 0.5·1; C's 0.5·0 + 0.5·9/9
    assert s.observation == pytest.approx([0.5, 0.375, 0.5])
    own = [0.6 * 0.625 + 0.4 * 0.5, 0.6 * 0.375 + 0.4 * 0.375, 0.6 * 0.6875 + 0.4 * 0.5]  # 0.575, 0.375, 0.6125
    assert s.own == pytest.approx(own)
    # "Context": B gets half of what A has more; A keeps its own (its neighbour has less); C has none
    assert s.context == pytest.approx([own[1], own[0], 0.0])
    in_context = [own[0], own[1] + 0.5 * (own[0] - own[1]), own[2]]  # 0.575, 0.475, 0.6125
    assert s.in_context == pytest.approx(in_context)
    # "Dates named in the query": 1.3 on the day, 1 + 0.3/e three days off, 1 without a date
    assert s.date_match == pytest.approx([1.0, math.exp(-1), 0.0])
    base = [in_context[0] * 1.3, in_context[1] * (1 + 0.3 * math.exp(-1)), in_context[2]]
    assert s.base == pytest.approx(base)
    # "Feedback from similar queries": the same query doubles, a reworded one (0.85) gives 1.5
    assert s.feedback_boost == pytest.approx([1.0, 2.0, 1.5])
    # no usage: every other factor is 1 (a never-accessed memory does not decay in default)
    for name in ("salience_boost", "temporal_factor", "status_multiplier", "metadata_penalty"):
        assert getattr(s, name).tolist() == [1.0, 1.0, 1.0], name
    limbic = [base[0], base[1] * 2.0, base[2] * 1.5]
    assert s.limbic_score == pytest.approx(limbic)
    # "Score and blend": limbic ÷ its maximum, hybrid_balanced w_c 0.5
    final = [0.5 * b + 0.5 * x / max(limbic) for b, x in zip(base, limbic, strict=True)]
    assert s.final_score == pytest.approx(final)  # 0.7281, 0.7637, 0.7417
    assert [r.name for r in rerank(three_memories(), D)] == ["B", "C", "A"]
    shown = explain(three_memories(), D, 2)
    assert shown["bm25_denominator"] == 12.0 and shown["best_cosine"] == pytest.approx(0.8)
    assert shown["rank"] == 2 and shown["final_score"] == pytest.approx(final[2])


def test_without_feedback_the_order_is_the_relevance_order():
    cs = dataclasses.replace(three_memories(), feedback_similarity=np.full(3, np.nan))
    s = score_candidates(cs, D)
    assert s.prior.tolist() == [1.0, 1.0, 1.0]
    assert [r.name for r in rerank(cs, D)] == ["A", "C", "B"]  # base 0.7475, 0.6125, 0.5274


def test_usage_priors_of_the_default_preset_by_hand():
    # two memories used 4 and 1 times (days 2 and 1), degree 3 and 0, last used 10 days and an hour ago
    rows = [{"distance": 0.3, "access_count": 4, "access_days": 2, "degree": 3, "last_access": NOW - 10 * DAY},
            {"distance": 0.3, "access_count": 1, "access_days": 1, "last_access": NOW - HOUR},
            {"distance": 0.3}]
    s = score_candidates(candidate_set(rows), D)
    access_norm = [1.0, math.log2(2) / math.log2(5), 0.0]
    consolidation = [1.0, 1 / math.log2(3), 0.0]
    assert s.access_norm == pytest.approx(access_norm) and s.consolidation == pytest.approx(consolidation)
    assert s.degree_norm == pytest.approx([3 / 15, 0.0, 0.0])
    importance = [1.0 * (1 + 0.15 * 0.2) * 1.2, access_norm[1] * (1 + 0.2 * consolidation[1]), 0.0]
    assert s.importance == pytest.approx(importance)
    assert s.salience_boost == pytest.approx([1 + 0.25 * i for i in importance])  # β_sal 0.25
    assert s.temporal_factor == pytest.approx([math.exp(-1e-4 * 240), math.exp(-1e-4), 1.0])  # never used: 1
    assert s.age_hours == pytest.approx([240.0, 1.0, 0.0])


def test_the_status_table_and_the_metadata_penalty_by_hand():
    codes = np.arange(4)
    assert terms.status_multiplier(codes, D).tolist() == [1.0, 0.85, 0.70, 0.50]
    assert terms.metadata_penalty(np.array([0.5, 0.51]), D).tolist() == [1.0, 0.7]


def test_temporal_factor_of_a_never_used_memory_follows_created_decay():
    # docs/scoring.md "Never-accessed memories": 1 − c·(1 − max(floor, exp(−λ·Δh))), 720 h after creation
    created = np.array([NOW - 720 * HOUR])
    never = np.array([np.nan])
    for c in (0.0, 0.5, 1.0):
        got = terms.temporal_factor(never, created, NOW, D.replace(created_decay=c))
        assert got[0] == pytest.approx(1 - c * (1 - math.exp(-0.072)))


def test_prior_exponent_weakens_the_factors():
    # an archived memory (× 0.5) with κ 0.5: prior √0.5; base 0.5 (cosine share 0.5 × 1, no keyword hit)
    rows = [{"distance": 0.3, "status_code": 3}, {"distance": 0.3}]
    s = score_candidates(candidate_set(rows), D.replace(prior_exponent=0.5))
    assert s.base.tolist() == [0.5, 0.5]
    assert s.prior[0] == pytest.approx(math.sqrt(0.5)) and s.limbic_score[0] == pytest.approx(0.5 * math.sqrt(0.5))
