"""Limbic scoring with the ``seed`` preset: the worked examples of the mcp-memory documentation ("The Limbic
System", "Hybrid search"), the readings docs/scoring.md decides, deboosts, re-rank."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _scoring_helpers import DAY, HOUR, NOW, candidate_set, random_candidate_set

from limbic.core.errors import ValidationError
from limbic.core.search import scoring, terms
from limbic.core.search.candidates import CandidateSet
from limbic.core.search.params import ScoringParams
from limbic.core.search.pipeline import rerank
from limbic.core.search.presets import preset

P = preset("seed")  # the documents' worked examples hold for the seed preset exactly


def importance(access_count: list[int], access_days: list[int], degree: list[int]) -> np.ndarray:
    """The scorer's importance of one candidate set (docs/scoring.md "Limbic factors")."""
    one = terms.Segments.single(len(access_count))
    parts = terms.importance_terms(one, np.array(access_count), np.array(access_days), np.array(degree), P)
    return terms.importance(*parts, P)


# --- "The Limbic System": worked examples ----------------------------------------------------------

def test_importance_combined_example():
    # 10 accesses (max 20), 8 relations (D_MAX 15), 5 distinct days (max 10) → ≈ 0.977 ("The Limbic System").
    imp = importance([10, 20], [5, 10], [8, 0])
    assert imp[0] == pytest.approx(0.977, abs=1e-3)  # 0.97774
    expected = (math.log2(11) / math.log2(21)) * (1 + 0.15 * 8 / 15) * (1 + 0.2 * math.log2(6) / math.log2(11))
    assert imp[0] == pytest.approx(expected, rel=1e-12)
    assert imp[1] == pytest.approx(1.0 * 1.0 * 1.2)  # the maximum: access_norm 1, degree 0, consolidation 1


def test_access_norm_example():
    imp = importance([10, 20], [0, 0], [0, 0])
    assert imp[0] == pytest.approx(0.787, abs=1e-3)


def test_fastmcp_composite_example():
    # FastMCP: 10 accesses (max 20 in the set), degree 8, last access 30 days ago, distance 0.35,
    # co-occurrence counts 5, 2, 1 with three other candidates; no access days (consolidation neutral).
    rows = [
        {"distance": 0.35, "access_count": 10, "degree": 8, "last_access": NOW - 30 * DAY},
        {"distance": 0.50, "access_count": 20, "last_access": NOW},
        {"distance": 0.60, "access_count": 1, "last_access": NOW},
        {"distance": 0.70, "access_count": 1, "last_access": NOW},
    ]
    cs = candidate_set(rows, pairs=[(0, 1, 5, NOW), (0, 2, 2, NOW), (0, 3, 1, NOW)])
    s = scoring.score_candidates(cs, P)
    assert s.base[0] == pytest.approx(0.65)
    assert s.importance[0] == pytest.approx(0.850, abs=1e-3)
    assert s.salience_boost[0] == pytest.approx(1.425, abs=5e-4)
    assert s.temporal_factor[0] == pytest.approx(0.931, abs=5e-4)
    assert s.cooc_boost[0] == pytest.approx(5.170, abs=5e-4)
    # The document rounds each factor and prints ≈ 0.908; the unrounded product is 0.9066.
    assert s.limbic_score[0] == pytest.approx(0.908, abs=2e-3)
    expected = 0.65 * (1 + 0.5 * (math.log2(11) / math.log2(21)) * (1 + 0.15 * 8 / 15)) \
        * math.exp(-1e-4 * 720) * (1 + 0.01 * (math.log2(6) + math.log2(3) + 1))
    assert s.limbic_score[0] == pytest.approx(expected, rel=1e-12)


def test_temporal_table_of_the_limbic_system():
    hours = np.array([1, 24, 168, 720, 2160, 4320, 8766, 17532, 26000])
    expected = [0.9999, 0.9976, 0.9833, 0.9305, 0.8053, 0.6485, 0.4172, 0.1740, 0.1]
    got = terms.temporal_factor(NOW - hours * HOUR, np.zeros(len(hours)), NOW, P)
    assert got == pytest.approx(expected, abs=1.5e-3)  # the document's table is rounded to about 1e-3
    assert got[:-1] == pytest.approx(np.exp(-1e-4 * hours[:-1]), rel=1e-12)
    assert got[-1] == 0.1


def test_temporal_uses_created_at_when_never_accessed_and_clamps_the_future():
    got = terms.temporal_factor(np.array([np.nan, NOW - 720 * HOUR, NOW + 50 * DAY]),
                                np.array([NOW - 720 * HOUR, 0, 0]), NOW, P)
    assert got == pytest.approx([math.exp(-0.072), math.exp(-0.072), 1.0])


# --- "Hybrid search": RRF and the FTS-only base ----------------------------------------------------

def test_rrf_example_of_hybrid_search():
    a, b, c, d, e, f = 1, 2, 3, 4, 5, 6
    ids, knn_rank, fts_rank, rrf = scoring.reciprocal_rank_fusion([a, b, e, f, d], [c, d, a], k=60)
    assert ids[:4].tolist() == [a, d, c, b]
    by_id = dict(zip(ids.tolist(), rrf.tolist(), strict=True))
    assert by_id[a] == pytest.approx(1 / 61 + 1 / 63)
    assert by_id[d] == pytest.approx(1 / 65 + 1 / 62)
    assert by_id[c] == pytest.approx(1 / 61)
    assert by_id[b] == pytest.approx(1 / 62)
    assert dict(zip(ids.tolist(), knn_rank.tolist(), strict=True))[d] == 5
    assert dict(zip(ids.tolist(), fts_rank.tolist(), strict=True))[a] == 3


def test_candidate_set_rrf_follows_k():
    cs = candidate_set([{"distance": 0.1, "knn_rank": 1, "fts_rank": 3}, {"distance": None, "fts_rank": 1}])
    assert cs.rrf(60).tolist() == pytest.approx([1 / 61 + 1 / 63, 1 / 61])
    assert cs.rrf(1).tolist() == pytest.approx([1 / 2 + 1 / 4, 1 / 2])


def seed_relevance(distance: list[float], rrf: list[float]) -> list[float]:
    return terms.seed_relevance(terms.Segments.single(len(distance)), np.array(distance), np.array(rrf)).tolist()


def test_fts_only_base_relevance():
    assert seed_relevance([np.nan, np.nan, 0.3, np.nan], [0.03, 0.01, 0.02, 0.02]) == pytest.approx([0.8, 0.2, 0.7, 0.5])
    assert seed_relevance([np.nan, np.nan], [0.01, 0.01]) == [0.8, 0.8]
    assert seed_relevance([1.7], [0.01]) == [0.0]  # max(0, 1 − distance)


# --- decided readings ------------------------------------------------------------------------------

def test_importance_is_zero_without_any_access():
    assert importance([0, 0, 0], [0, 0, 0], [3, 40, 0]).tolist() == [0.0, 0.0, 0.0]


def test_degree_is_capped_at_d_max():
    imp = importance([5, 5], [0, 0], [15, 400])
    assert imp[0] == imp[1] == pytest.approx(1.15)


def test_cooc_boost_sums_over_other_candidates_with_decay_floor():
    pairs_a, pairs_b = np.array([0, 0, 1]), np.array([1, 2, 2])
    counts = np.array([1, 3, 7])
    last = np.array([NOW, NOW - 24 * HOUR, NOW - 100_000 * HOUR])  # the last one is past the floor
    boost = terms.cooc_boost(4, pairs_a, pairs_b, counts, last, NOW, P)
    t01, t02, t12 = 1.0, 2.0 * math.exp(-1e-4 * 24), 3.0 * 0.1
    assert boost.tolist() == pytest.approx([t01 + t02, t01 + t12, t02 + t12, 0.0])


def test_limbic_norm_is_one_when_all_equal():
    s = scoring.score_candidates(candidate_set([{"distance": 0.4}, {"distance": 0.4}]), P)
    assert s.limbic_norm.tolist() == [1.0, 1.0]


# --- deboosts change the order ---------------------------------------------------------------------

def test_status_deboost_changes_the_order():
    rows = [{"distance": 0.20, "status_code": 3, "name": "archived but closer"},
            {"distance": 0.25, "status_code": 0, "name": "active"}]
    cs = candidate_set(rows)
    assert [r.name for r in rerank(cs, P.replace(status_archived=1.0))] == ["archived but closer", "active"]
    ranked = rerank(cs, P)
    assert [r.name for r in ranked] == ["active", "archived but closer"]
    assert ranked[1].status_multiplier == 0.5 and ranked[1].status == "archived"
    assert ranked[1].limbic_score == pytest.approx(0.8 * 0.5)


@pytest.mark.parametrize(("code", "multiplier"), [(0, 1.0), (1, 0.85), (2, 0.70), (3, 0.50)])
def test_status_multipliers(code, multiplier):
    assert terms.status_multiplier(np.array([code]), P).tolist() == [multiplier]


def test_metadata_penalty_changes_the_order():
    rows = [{"distance": 0.20, "metadata_share": 0.75, "name": "file listing"},
            {"distance": 0.25, "metadata_share": 0.50, "name": "half metadata"}]
    cs = candidate_set(rows)
    ranked = rerank(cs, P)
    assert [r.name for r in ranked] == ["half metadata", "file listing"]
    assert [r.metadata_penalty for r in ranked] == [1.0, 0.7]  # penalty only when the share exceeds 0.5
    assert [r.name for r in rerank(cs, P.replace(metadata_share=0.8))] == ["file listing", "half metadata"]


# --- routing blend, sorting and re-rank ------------------------------------------------------------

def test_blend_weights_follow_strategy():
    # limbic_norm is 0 for the first and 1 for the second candidate.
    rows = [{"distance": 0.0, "created_at": NOW - 900 * DAY},
            {"distance": 0.5, "access_count": 50, "access_days": 10, "degree": 15}]
    for strategy, w in [("cosine_heavy", 0.7), ("limbic_heavy", 0.3), ("hybrid_balanced", 0.5)]:
        s = scoring.score_candidates(candidate_set(rows, strategy=strategy), P)
        assert s.final_score.tolist() == pytest.approx((w * s.base + (1 - w) * s.limbic_norm).tolist())
    cosine = rerank(candidate_set(rows, strategy="cosine_heavy"), P)
    limbic = rerank(candidate_set(rows, strategy="limbic_heavy"), P)
    assert [r.entity_id for r in cosine] == [1, 2]
    assert [r.entity_id for r in limbic] == [2, 1]


def test_ties_keep_the_order_of_earlier_stages():
    # Same distance and signals: final ties; RRF (from the FTS5 rank) decides.
    rows = [{"distance": 0.3, "knn_rank": 1, "fts_rank": 0}, {"distance": 0.3, "knn_rank": 1, "fts_rank": 2}]
    assert [r.entity_id for r in rerank(candidate_set(rows), P)] == [2, 1]


def _reference_final(cs: CandidateSet, p: ScoringParams) -> list[float]:
    """A scalar, loop-based reading of the seed formulas as docs/scoring.md writes them, independent of the numpy code."""
    n = len(cs)
    rrf = [sum(1 / (p.rrf_k + r) for r in (cs.knn_rank[i], cs.fts_rank[i]) if r > 0) for i in range(n)]
    lo, hi = min(rrf), max(rrf)
    max_access, max_days = max(cs.access_count), max(cs.access_days)
    cooc = [0.0] * n
    for a, b, c, t in zip(cs.cooc_a, cs.cooc_b, cs.cooc_count, cs.cooc_last, strict=True):
        term = math.log2(1 + c) * max(p.cooc_temporal_floor, math.exp(-p.lambda_hourly * max(0.0, (cs.now - t) / 3600)))
        cooc[a] += term
        cooc[b] += term
    bases, limbic = [], []
    for i in range(n):
        if math.isnan(cs.distance[i]):
            base = 0.2 + 0.6 * ((rrf[i] - lo) / (hi - lo) if hi > lo else 1.0)
        else:
            base = max(0.0, 1 - cs.distance[i])
        if max_access == 0:
            imp = 0.0
        else:
            cons = math.log2(1 + cs.access_days[i]) / math.log2(1 + max_days) if max_days else 0.0
            imp = (math.log2(1 + cs.access_count[i]) / math.log2(1 + max_access)
                   * (1 + p.beta_deg * min(cs.degree[i], p.d_max) / p.d_max) * (1 + p.alpha_cons * cons))
        ref = cs.created_at[i] if math.isnan(cs.last_access[i]) else cs.last_access[i]
        temporal = max(p.temporal_floor, math.exp(-p.lambda_hourly * max(0.0, (cs.now - ref) / 3600)))
        score = base * (1 + p.beta_sal * imp) * temporal * (1 + p.gamma * cooc[i])
        score *= {"active": 1.0, "paused": p.status_paused, "completed": p.status_completed,
                  "archived": p.status_archived}[cs.statuses[i]]
        score *= p.metadata_penalty if cs.metadata_share[i] > p.metadata_share else 1.0
        bases.append(base)
        limbic.append(score)
    lo, hi = min(limbic), max(limbic)
    w = p.strategy_cosine_weight(cs.strategy)
    return [w * bases[i] + (1 - w) * ((limbic[i] - lo) / (hi - lo) if hi > lo else 1.0) for i in range(n)]


@pytest.mark.parametrize("changes", [
    {}, {"beta_sal": 2.0}, {"beta_sal": 0.0, "gamma": 0.5}, {"lambda_hourly": 5e-3, "temporal_floor": 0.3},
    {"status_archived": 1.0, "metadata_penalty": 0.1}, {"rrf_k": 1, "d_max": 3, "alpha_cons": 1.0},
    {"limbic_heavy_weight": 0.0, "balanced_weight": 1.0},
])
@pytest.mark.parametrize("strategy", ["cosine_heavy", "limbic_heavy", "hybrid_balanced"])
def test_rerank_matches_the_formula(changes, strategy):
    cs = random_candidate_set(120, seed=len(changes) * 7 + len(strategy), strategy=strategy, limit=120)
    params = P.replace(**changes)
    expected = _reference_final(cs, params)
    ranked = rerank(cs, params)
    assert [r.final_score for r in ranked] == pytest.approx(sorted(expected, reverse=True), abs=1e-12)
    for r in ranked:
        assert r.final_score == pytest.approx(expected[r.entity_id - 1], abs=1e-12)


def test_rerank_with_changed_params_reorders():
    # "similar": cosine 1.0, never used, created 900 days ago; "used": cosine 0.5, heavily used now.
    rows = [{"distance": 0.0, "name": "similar", "created_at": NOW - 900 * DAY},
            {"distance": 0.5, "access_count": 40, "access_days": 12, "degree": 9, "last_access": NOW,
             "name": "used", "created_at": NOW - 900 * DAY}]
    cs = candidate_set(rows, strategy="cosine_heavy")
    # limbic_norm is 0 for "similar" and 1 for "used": final = 0.7·1.0 vs 0.7·0.5 + 0.3 → similar first;
    # with a cosine weight of 0.2: 0.2 vs 0.1 + 0.8 → used first.
    assert [r.name for r in rerank(cs, P)] == ["similar", "used"]
    assert [r.name for r in rerank(cs, P.replace(cosine_heavy_weight=0.2))] == ["used", "similar"]


def test_rerank_limit_and_ranks():
    cs = random_candidate_set(30, seed=3, limit=10)
    ranked = rerank(cs, P)
    assert [r.rank for r in ranked] == list(range(1, 11))
    assert len(rerank(cs, P, limit=30)) == 30
    assert rerank(candidate_set([]), P) == []


# --- values ----------------------------------------------------------------------------------------

def test_search_result_dict_shape():
    rows = [{"distance": 0.2, "fts_rank": 1, "name": "A", "type": "Tool", "observations": ("x", "y")},
            {"distance": None, "fts_rank": 2, "name": "B"}]
    hybrid = [r.to_dict() for r in rerank(candidate_set(rows, mode="hybrid"), P)]
    assert list(hybrid[0]) == ["name", "entityType", "observations", "distance", "rrf_score", "limbic_score",
                               "final_score", "routing_strategy", "scoring"]
    assert list(hybrid[0]["scoring"]) == ["importance", "temporal_factor", "cooc_boost", "salience_boost",
                                          "status_multiplier", "metadata_penalty", "date_match", "feedback_boost"]
    by_name = {d["name"]: d for d in hybrid}
    assert by_name["A"]["observations"] == ["x", "y"] and by_name["A"]["entityType"] == "Tool"
    assert by_name["B"]["distance"] is None
    fts_only = [r.to_dict() for r in rerank(candidate_set([{"distance": None, "fts_rank": 1}], mode="fts_only"), P)]
    assert "rrf_score" not in fts_only[0] and fts_only[0]["distance"] is None
    semantic = rerank(candidate_set([{"distance": 0.2}], mode="semantic"), P)[0].to_dict()
    assert "rrf_score" not in semantic and semantic["distance"] == pytest.approx(0.2)


def test_candidate_set_is_immutable_and_checked():
    cs = candidate_set([{"distance": 0.2}])
    with pytest.raises(ValueError):
        cs.access_count[0] = 5
    with pytest.raises(AttributeError):
        cs.limit = 4
    with pytest.raises(ValidationError):
        candidate_set([{"distance": 0.2}], mode="turbo")
    with pytest.raises(ValidationError):
        candidate_set([{"distance": 0.2}, {"distance": 0.3}], pairs=[(1, 0, 1, NOW)])
    with pytest.raises(ValidationError):
        candidate_set([{"distance": 0.2, "status_code": 9}])
