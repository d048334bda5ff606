"""Values of the search pipeline: the cached :class:`CandidateSet` and one :class:`SearchResult`.

A ``CandidateSet`` holds everything the limbic re-ranker needs (docs/scoring.md): the merged KNN/FTS5
candidates with their signals as numpy arrays, plus the display data (names, types, observations),
so that :func:`limbic.core.search.pipeline.rerank` can re-score it with no SQL and no model call. The GUI
keeps the last one and re-ranks it on every slider move.

Array conventions (``n`` = number of candidates, index ``i`` is the same candidate in every array):
timestamps are UTC unix seconds (``float64``), ``nan`` where absent; ranks are 1-based (``0`` =
not found by that branch).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

import numpy as np

from limbic.core.errors import ValidationError
from limbic.core.models import STATUSES
from limbic.core.search import terms

MODES = ("hybrid", "semantic", "fts_only")
STRATEGIES = ("cosine_heavy", "limbic_heavy", "hybrid_balanced")

# Status code i of a candidate is the index of its status in models.STATUSES (0 = active).
STATUS_CODES = {status: code for code, status in enumerate(STATUSES)}

ROWS = {"candidate": "candidate", "cooc": "co-occurrence", "context": "context",
        "observation": "observation evidence"}
"""What an array field of :class:`CandidateSet` has one entry per → how errors name it."""


def _rows(dtype: type, rows: str) -> dict[str, Any]:
    """The metadata of a :class:`CandidateSet` array field: its ``dtype`` and what it has one entry per
    (``rows``, a key of :data:`ROWS`)."""
    return {"dtype": dtype, "rows": rows}


def _empty(dtype: type) -> Callable[[], np.ndarray]:
    """The default of an optional array field: empty (sets logged before the field existed)."""
    return lambda: np.zeros(0, dtype=dtype)


def _frozen(values: Any, dtype: type) -> np.ndarray:
    array: np.ndarray = np.array(values, dtype=dtype, copy=True).reshape(-1)
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class CandidateSet:
    """The merged candidates of one search and their signals; immutable (arrays are read-only).

    Attributes:
        query: the user's query text; ``limit``: the requested top-K (1..1000).
        mode: ``"hybrid"`` (KNN + FTS5), ``"semantic"`` (KNN only; FTS5 found nothing) or
            ``"fts_only"`` (no embedding model).
        strategy: routing strategy of the query (``cosine_heavy`` / ``limbic_heavy`` /
            ``hybrid_balanced``), see :mod:`limbic.core.search.routing`.
        now: the reference time of the temporal decay, UTC unix seconds.
        entity_ids: ``(n,) int64``.
        distance: ``(n,) float64`` cosine distance from KNN; ``nan`` for candidates found only by FTS5.
        knn_rank, fts_rank: ``(n,) int64`` 1-based rank in each branch, ``0`` when absent
            (the RRF score is recomputed from them with the ``rrf_k`` of the parameters in use).
        bm25: ``(n,) float64`` FTS5 BM25 score of the candidate, sign flipped so that larger is better
            (``-bm25(entity_fts)``, ≥ 0); ``nan`` for candidates found only by KNN.
        cosine_distance: ``(n,) float64`` cosine distance of every candidate with a stored vector: KNN's,
            or computed directly for a candidate only FTS5 returned; ``nan`` without a vector. ``None``
            (older logged sets) means ``distance``.
        bm25_ceiling: what a row matching every FTS5 term of the query once scores, ``Σ idf`` (≥ 0;
            :func:`limbic.core.search.full_text.bm25_ceiling`); 0 when unknown.
        access_count: ``(n,) int64``; access_days: ``(n,) int64`` distinct UTC days with an access.
        last_access: ``(n,) float64`` seconds, ``nan`` when never accessed; created_at: ``(n,) float64``.
        degree: ``(n,) int64`` number of active relations touching the entity.
        status_code: ``(n,) int64`` index into ``models.STATUSES`` (0 active … 3 archived).
        metadata_share: ``(n,) float64`` share of live observations whose kind is ``"metadata"`` (0..1).
        cooc_a, cooc_b: ``(m,) int64`` candidate *indices* (``cooc_a < cooc_b``) of each stored
            co-occurrence pair among the candidates; cooc_count ``(m,) int64``; cooc_last ``(m,) float64``.
        context_a, context_b: ``(p,) int64`` candidate indices (``context_a < context_b``) of each pair of
            candidates that are neighbours in creation order (docs/scoring.md "Context"); empty when not
            gathered (and in sets logged before they existed).
        observation_row, observation_cosine, observation_bm25: ``(q,)`` one entry per live observation of a
            candidate that the full-text index matched (docs/scoring.md "Observation evidence"): the
            candidate index (``int64``), the observation vector's cosine similarity (``float64``, ``nan``
            without a vector) and its BM25 in ``observation_fts`` (sign flipped, ≥ 0); empty when not
            gathered (and in sets logged before they existed). ``observation_bm25_ceiling``: the query's
            ``Σ idf`` in ``observation_fts`` (as ``bm25_ceiling``; 0 when unknown).
        date_distance: ``(n,) float64`` days between the dates the query names and the candidate's
            nearest write time (its creation or a live observation's; 0 inside a named day or month,
            docs/scoring.md "Dates named in the query"); ``nan`` when the query names no date. Left empty
            (and in sets logged before it existed) it is ``nan`` for every candidate.
        feedback_similarity: ``(n,) float64`` the highest cosine between the query and an earlier query
            after which the candidate was used (docs/scoring.md "Feedback from similar queries"); ``nan``
            for a candidate never used after a search; empty or absent as for ``date_distance``.
        confidence: ``(n,) float64`` the highest weight among the candidate's current observations (0.1..1;
            docs/lifecycle.md "Confidence"); scope: ``(n,) float64`` its scope weight in a search for a
            project (1 own, 0.8 global; "Project scope"); observation_confidence: ``(q,) float64`` the weight
            of each observation of the evidence. Left empty (and in sets logged before they existed) they
            are 1 everywhere, which changes no score.
        names, entity_types, statuses: ``n`` strings each; observations: ``n`` tuples of live
            observation contents (creation order).
    """

    query: str
    limit: int
    mode: str
    strategy: str
    now: float
    entity_ids: np.ndarray = field(metadata=_rows(np.int64, "candidate"))
    distance: np.ndarray = field(metadata=_rows(np.float64, "candidate"))
    knn_rank: np.ndarray = field(metadata=_rows(np.int64, "candidate"))
    fts_rank: np.ndarray = field(metadata=_rows(np.int64, "candidate"))
    bm25: np.ndarray = field(metadata=_rows(np.float64, "candidate"))
    access_count: np.ndarray = field(metadata=_rows(np.int64, "candidate"))
    access_days: np.ndarray = field(metadata=_rows(np.int64, "candidate"))
    last_access: np.ndarray = field(metadata=_rows(np.float64, "candidate"))
    created_at: np.ndarray = field(metadata=_rows(np.float64, "candidate"))
    degree: np.ndarray = field(metadata=_rows(np.int64, "candidate"))
    status_code: np.ndarray = field(metadata=_rows(np.int64, "candidate"))
    metadata_share: np.ndarray = field(metadata=_rows(np.float64, "candidate"))
    cooc_a: np.ndarray = field(metadata=_rows(np.int64, "cooc"))
    cooc_b: np.ndarray = field(metadata=_rows(np.int64, "cooc"))
    cooc_count: np.ndarray = field(metadata=_rows(np.int64, "cooc"))
    cooc_last: np.ndarray = field(metadata=_rows(np.float64, "cooc"))
    names: tuple[str, ...]
    entity_types: tuple[str, ...]
    observations: tuple[tuple[str, ...], ...]
    cosine_distance: np.ndarray | None = field(default=None, metadata=_rows(np.float64, "candidate"))
    bm25_ceiling: float = 0.0
    observation_bm25_ceiling: float = 0.0
    context_a: np.ndarray = field(default_factory=_empty(np.int64), metadata=_rows(np.int64, "context"))
    context_b: np.ndarray = field(default_factory=_empty(np.int64), metadata=_rows(np.int64, "context"))
    observation_row: np.ndarray = field(default_factory=_empty(np.int64), metadata=_rows(np.int64, "observation"))
    observation_cosine: np.ndarray = field(default_factory=_empty(np.float64), metadata=_rows(np.float64, "observation"))
    observation_bm25: np.ndarray = field(default_factory=_empty(np.float64), metadata=_rows(np.float64, "observation"))
    date_distance: np.ndarray = field(default_factory=_empty(np.float64), metadata=_rows(np.float64, "candidate"))
    feedback_similarity: np.ndarray = field(default_factory=_empty(np.float64), metadata=_rows(np.float64, "candidate"))
    confidence: np.ndarray = field(default_factory=_empty(np.float64), metadata=_rows(np.float64, "candidate"))
    scope: np.ndarray = field(default_factory=_empty(np.float64), metadata=_rows(np.float64, "candidate"))
    observation_confidence: np.ndarray = field(default_factory=_empty(np.float64),
                                               metadata=_rows(np.float64, "observation"))

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValidationError(f"unknown search mode {self.mode!r}; expected one of {', '.join(MODES)}")
        if self.strategy not in STRATEGIES:
            raise ValidationError(f"unknown routing strategy {self.strategy!r}")
        if self.cosine_distance is None:
            object.__setattr__(self, "cosine_distance", self.distance)
        for name in ("date_distance", "feedback_similarity"):  # not gathered: nan for every candidate
            if len(getattr(self, name)) == 0:
                object.__setattr__(self, name, np.full(len(self.entity_ids), np.nan))
        for name, along in (("confidence", self.entity_ids), ("scope", self.entity_ids),
                            ("observation_confidence", self.observation_row)):  # not gathered: 1, changing nothing
            if len(getattr(self, name)) == 0:
                object.__setattr__(self, name, np.ones(len(np.asarray(along).reshape(-1))))
        for name in ("bm25_ceiling", "observation_bm25_ceiling"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValidationError(f"{name} must be a finite number ≥ 0, got {value!r}")
            object.__setattr__(self, name, float(value))
        for name, dtype in ARRAY_DTYPES.items():
            object.__setattr__(self, name, _frozen(getattr(self, name), dtype))
        n = self.entity_ids.shape[0]
        for rows, label in ROWS.items():
            names = ARRAYS_PER_ROW[rows]
            expected = n if rows == "candidate" else getattr(self, names[0]).shape[0]
            for name in names:
                if getattr(self, name).shape[0] != expected:
                    raise ValidationError(f"{label} array {name} has {getattr(self, name).shape[0]} rows, "
                                          f"expected {expected}")
        for name in ("names", "entity_types", "observations"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
            if len(getattr(self, name)) != n:
                raise ValidationError(f"candidate field {name} has {len(getattr(self, name))} items, expected {n}")
        if len(self.cooc_a) and (self.cooc_a.min() < 0 or self.cooc_b.max() >= n or np.any(self.cooc_a >= self.cooc_b)):
            raise ValidationError("co-occurrence pairs must be candidate indices with a < b")
        if len(self.context_a) and (self.context_a.min() < 0 or self.context_b.max() >= n
                                    or np.any(self.context_a >= self.context_b)):
            raise ValidationError("context pairs must be candidate indices with a < b")
        q = len(self.observation_row)
        if q and (self.observation_row.min() < 0 or self.observation_row.max() >= n):
            raise ValidationError("observation evidence rows must be candidate indices")
        if q and np.any(self.observation_bm25[~np.isnan(self.observation_bm25)] < 0):
            raise ValidationError("observation BM25 scores must be ≥ 0")
        if np.any(self.date_distance[~np.isnan(self.date_distance)] < 0):
            raise ValidationError("date distances must be ≥ 0 days")
        if n and (self.status_code.min() < 0 or self.status_code.max() >= len(STATUSES)):
            raise ValidationError("status codes must index models.STATUSES")

    def __len__(self) -> int:
        return int(self.entity_ids.shape[0])

    @property
    def statuses(self) -> tuple[str, ...]:
        """Canonical status name of each candidate."""
        return tuple(STATUSES[code] for code in self.status_code)

    def rrf(self, k: float) -> np.ndarray:
        """Reciprocal Rank Fusion score over both branches, ``(n,) float64`` (:func:`terms.reciprocal_rank`)."""
        return terms.reciprocal_rank(self.knn_rank, self.fts_rank, k)


ARRAY_DTYPES: dict[str, type] = {f.name: f.metadata["dtype"] for f in fields(CandidateSet) if "dtype" in f.metadata}
"""Every array field of :class:`CandidateSet` → its dtype (``np.int64`` or ``np.float64``)."""
ARRAYS_PER_ROW: dict[str, tuple[str, ...]] = {
    rows: tuple(f.name for f in fields(CandidateSet) if f.metadata.get("rows") == rows) for rows in ROWS}
"""The array fields by what they have one entry per (a key of :data:`ROWS`); ``"candidate"`` lists the
per-candidate arrays, the one list of candidate fields (the batch of many sets concatenates them)."""


class SearchResult(NamedTuple):
    """One ranked result with its score breakdown (the ``search_semantic`` result the mcp-memory
    documentation page "The Limbic System" describes); immutable.

    ``distance`` is ``None`` for a candidate found only by FTS5; ``rrf_score`` is ``None`` unless the
    search ran in hybrid mode. ``base_relevance`` is the cosine similarity ``max(0, 1 − distance)``,
    or ``0.2 + 0.6·norm_rrf`` for FTS-only candidates (docs/scoring.md "Base relevance"). ``date_match``
    (0..1, 0 when the query names no date) and ``feedback_boost`` (≥ 1) are the factors of
    docs/scoring.md "Dates named in the query" and "Feedback from similar queries". ``rank`` is 1-based.
    A ``NamedTuple`` rather than a frozen dataclass so that a re-rank can build 1,000 of them in well
    under a millisecond.
    """

    rank: int
    entity_id: int
    name: str
    entity_type: str
    status: str
    observations: tuple[str, ...]
    distance: float | None
    rrf_score: float | None
    base_relevance: float
    limbic_score: float
    final_score: float
    routing_strategy: str
    importance: float
    temporal_factor: float
    cooc_boost: float
    salience_boost: float
    status_multiplier: float
    metadata_penalty: float
    date_match: float
    feedback_boost: float

    def to_dict(self) -> dict[str, Any]:
        """The ``search_semantic`` result shape; ``rrf_score`` only when set (hybrid mode)."""
        out: dict[str, Any] = {
            "name": self.name,
            "entityType": self.entity_type,
            "observations": list(self.observations),
            "distance": self.distance,
        }
        if self.rrf_score is not None:
            out["rrf_score"] = self.rrf_score
        out.update({
            "limbic_score": self.limbic_score,
            "final_score": self.final_score,
            "routing_strategy": self.routing_strategy,
            "scoring": {
                "importance": self.importance,
                "temporal_factor": self.temporal_factor,
                "cooc_boost": self.cooc_boost,
                "salience_boost": self.salience_boost,
                "status_multiplier": self.status_multiplier,
                "metadata_penalty": self.metadata_penalty,
                "date_match": self.date_match,
                "feedback_boost": self.feedback_boost,
            },
        })
        return out
