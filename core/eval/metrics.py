"""Retrieval metrics of one ranked list against a set of relevant entities, and their averages.

- Recall@K (LoCoMo's retrieval measure): 1 when at least one relevant entity is among the first K
  results, else 0; averaged over questions it is the share of questions answered in the top K.
- NDCG@K with binary relevance per relevant entity: ``DCG = Σ_{i ≤ K, result i relevant} 1/log2(i+1)``
  over 1-based ranks, ``IDCG = Σ_{i ≤ min(#relevant, K)} 1/log2(i+1)``: the learning loop's
  :func:`limbic.core.learning.metrics.ndcg_at_k`, checked against scikit-learn's ``ndcg_score`` in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from limbic.core.learning import metrics as learning_metrics

RECALL_KS = (1, 5, 10)
NDCG_K = 10


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1.0 when one of the first ``k`` of ``ranked`` is in ``relevant``, else 0.0."""
    return 1.0 if any(name in relevant for name in ranked[:k]) else 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Binary-relevance NDCG@k of ``ranked`` (duplicates count once; a relevant entity not ranked counts
    in the ideal); 0.0 when nothing is relevant or nothing is ranked."""
    seen: set[str] = set()
    hits = np.zeros(min(len(ranked), k), dtype=bool)
    for position, name in enumerate(ranked[:k]):
        hits[position] = name in relevant and name not in seen
        seen.add(name)
    value = float(learning_metrics.ndcg_at_k(hits, np.array([0, hits.size]), np.array([len(relevant)]), k)[0])
    return 0.0 if math.isnan(value) else value


@dataclass(frozen=True, slots=True)
class QuestionScore:
    """One question's figures for one ranking: ``recall`` maps K → 0/1, ``ndcg`` is NDCG@10."""

    category: str
    recall: dict[int, float]
    ndcg: float


def score_question(ranked: Sequence[str], relevant: Collection[str], category: str) -> QuestionScore:
    """Recall@1/5/10 and NDCG@10 of ``ranked`` (entity names, best first)."""
    return QuestionScore(category, {k: recall_at_k(ranked, relevant, k) for k in RECALL_KS},
                         ndcg_at_k(ranked, relevant, NDCG_K))


@dataclass(frozen=True, slots=True)
class Summary:
    """Means over ``questions`` questions: ``recall`` maps K → Recall@K, ``ndcg`` is NDCG@10 (0 when empty)."""

    questions: int
    recall: dict[int, float]
    ndcg: float

    def to_dict(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {"questions": self.questions}
        out.update({f"R@{k}": round(v, 4) for k, v in self.recall.items()})
        out[f"NDCG@{NDCG_K}"] = round(self.ndcg, 4)
        return out


def summarize(scores: Iterable[QuestionScore]) -> Summary:
    """Mean Recall@K and NDCG@10 over ``scores``."""
    scores = list(scores)
    n = len(scores)
    if not n:
        return Summary(0, {k: 0.0 for k in RECALL_KS}, 0.0)
    return Summary(n, {k: sum(s.recall[k] for s in scores) / n for k in RECALL_KS},
                   sum(s.ndcg for s in scores) / n)


def summarize_by_category(scores: Iterable[QuestionScore]) -> dict[str, Summary]:
    """:func:`summarize` per category name, in the order categories first appear."""
    groups: dict[str, list[QuestionScore]] = {}
    for score in scores:
        groups.setdefault(score.category, []).append(score)
    return {name: summarize(group) for name, group in groups.items()}
