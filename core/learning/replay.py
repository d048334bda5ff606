"""Replaying the search log: any ``ScoringParams`` re-rank every labelled logged search, no SQL, no model.

A :class:`ReplayHistory` holds the unpacked candidate sets of the logged searches with their relevance
labels; :meth:`ReplayHistory.evaluate` gives NDCG@K and Lift@K (:mod:`limbic.core.learning.metrics`)
overall and per A/B group, for the limbic re-rank with some parameters or for a one-branch baseline
(cosine-only KNN order, BM25-only order).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from limbic.core.learning import codec
from limbic.core.learning.metrics import lift_at_k, mean, ndcg_at_k
from limbic.core.search.batch import CandidateBatch
from limbic.core.search.candidates import CandidateSet
from limbic.core.search.params import ScoringParams
from limbic.core.search.scoring import score
from limbic.core.store.search_log import LoggedSearch

BRANCHES = ("knn", "bm25")


@dataclass(frozen=True, slots=True)
class ReplayItem:
    """One labelled logged search: its id, A/B group, candidate set, the parameters that ranked it
    (``None`` when not logged) and ``relevant``, ``(n,) bool`` over its candidates."""

    search_id: int
    treatment: str
    candidates: CandidateSet
    params: ScoringParams | None
    relevant: np.ndarray

    @property
    def relevant_count(self) -> int:
        return int(np.count_nonzero(self.relevant))


@dataclass(frozen=True, slots=True)
class Quality:
    """NDCG@K and Lift@K averaged over the searches, overall and per A/B group (``limbic``/``baseline``:
    ``(ndcg, lift, searches)``); ``nan`` when no search carries a label."""

    k: int
    ndcg: float
    lift: float
    searches: int
    groups: dict[str, tuple[float, float, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        def clean(value: float) -> float | None:
            return None if math.isnan(value) else round(value, 6)

        return {"k": self.k, "ndcg": clean(self.ndcg), "lift": clean(self.lift), "searches": self.searches,
                "groups": {name: {"ndcg": clean(n), "lift": clean(lift), "searches": count}
                           for name, (n, lift, count) in self.groups.items()}}


class ReplayHistory:
    """The labelled logged searches, ready to be re-ranked (see the module docstring).

    The candidate sets are concatenated once into a :class:`~limbic.core.search.batch.CandidateBatch`,
    so :meth:`evaluate` re-ranks the whole history in one vectorised pass.
    """

    def __init__(self, items: Iterable[ReplayItem]) -> None:
        self.items = tuple(item for item in items if item.relevant_count > 0)
        self.batch = CandidateBatch.of([item.candidates for item in self.items])
        self._relevant = np.concatenate([item.relevant for item in self.items]) if self.items \
            else np.zeros(0, dtype=bool)
        self._relevant_counts = np.array([item.relevant_count for item in self.items], dtype=np.int64)
        self._treatments = np.array([item.treatment for item in self.items], dtype=object)

    @classmethod
    def from_log(cls, rows: Iterable[LoggedSearch]) -> ReplayHistory:
        """Unpack logged searches (:func:`limbic.core.store.search_log.logged_searches`); searches whose
        labelled entities are not among their candidates are left out."""
        items = []
        for row in rows:
            candidates = codec.unpack(row.candidates)
            relevant = np.isin(candidates.entity_ids, np.asarray(row.relevant, dtype=np.int64))
            params = ScoringParams.from_json(row.params_json) if row.params_json else None
            items.append(ReplayItem(row.id, row.treatment, candidates, params, relevant))
        return cls(items)

    def __len__(self) -> int:
        return len(self.items)

    def orders(self, params: ScoringParams | None, branch: str | None = None) -> np.ndarray:
        """Row indices of :attr:`batch`, search by search, each search's candidates best first: the limbic
        re-rank with ``params`` (the defaults when ``None``), or ``branch`` alone (``knn``/``bm25``,
        candidates that branch did not find last, in candidate order)."""
        if branch is None:
            return score(self.batch, params or ScoringParams()).order
        rank = self.batch.knn_rank if branch == "knn" else self.batch.fts_rank
        missing = np.iinfo(np.int64).max
        return np.lexsort((np.arange(len(self.batch)), np.where(rank > 0, rank, missing),
                           self.batch.segment)).astype(np.int64)

    def evaluate(self, params: ScoringParams | None = None, k: int = 10, *, branch: str | None = None) -> Quality:
        """NDCG@K and Lift@K of ``params`` (or of one retrieval ``branch``: ``knn`` / ``bm25``) over the
        labelled searches, overall and per A/B group.

        Raises:
            ValueError: ``branch`` is not one of :data:`BRANCHES`.
        """
        if branch is not None and branch not in BRANCHES:
            raise ValueError(f"branch must be one of {BRANCHES}")
        hits = self._relevant[self.orders(params, branch)]
        ndcgs = ndcg_at_k(hits, self.batch.starts, self._relevant_counts, k)
        lifts = lift_at_k(hits, self.batch.starts, self._relevant_counts, k)
        groups = {}
        for name in sorted(set(self._treatments)):
            members = self._treatments == name
            groups[str(name)] = (mean(ndcgs[members]), mean(lifts[members]), int(np.count_nonzero(members)))
        return Quality(k, mean(ndcgs), mean(lifts), len(ndcgs), groups)
