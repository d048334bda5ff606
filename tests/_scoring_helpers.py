"""Builders of CandidateSet values for the scoring tests and the re-rank benchmark (no database)."""

from __future__ import annotations

import numpy as np

from limbic.core.search.candidates import CandidateSet

HOUR = 3600.0
DAY = 24 * HOUR
NOW = 1_780_000_000.0  # a fixed "now" (UTC seconds) so tests do not depend on the clock


def candidate_set(rows: list[dict], *, pairs: list[tuple[int, int, int, float]] = (), mode: str = "hybrid",
                  strategy: str = "hybrid_balanced", limit: int | None = None, now: float = NOW,
                  query: str = "test", bm25_ceiling: float = 0.0) -> CandidateSet:
    """A CandidateSet from per-candidate dicts (missing keys get neutral defaults).

    Keys: id, distance (None = FTS-only), knn_rank, fts_rank, bm25 (None = KNN-only; default 10 / fts_rank),
    access_count, access_days, last_access (None = never), created_at, degree, status_code, metadata_share,
    name, type, observations.
    ``pairs``: (index_a, index_b, co_count, last_co) with index_a < index_b. ``bm25_ceiling``: the query's Σ idf.
    """
    n = len(rows)

    def get(key, default):
        return [r[key] if key in r else (default(i) if callable(default) else default) for i, r in enumerate(rows)]

    distance = [np.nan if d is None else d for d in get("distance", None)]
    fts_rank = get("fts_rank", 0)
    bm25 = get("bm25", lambda i: 10.0 / fts_rank[i] if fts_rank[i] else None)  # rank 1 → 10, 2 → 5, …
    return CandidateSet(
        query=query, limit=limit or n, mode=mode, strategy=strategy, now=now,
        entity_ids=get("id", lambda i: i + 1),
        distance=distance,
        knn_rank=get("knn_rank", lambda i: 0 if np.isnan(distance[i]) else i + 1),
        fts_rank=fts_rank,
        bm25=[np.nan if b is None else b for b in bm25],
        access_count=get("access_count", 0),
        access_days=get("access_days", 0),
        last_access=[np.nan if t is None else t for t in get("last_access", None)],
        created_at=get("created_at", now),
        degree=get("degree", 0),
        status_code=get("status_code", 0),
        metadata_share=get("metadata_share", 0.0),
        cooc_a=[p[0] for p in pairs], cooc_b=[p[1] for p in pairs],
        cooc_count=[p[2] for p in pairs], cooc_last=[p[3] for p in pairs],
        names=get("name", lambda i: f"entity {i}"),
        entity_types=get("type", "Thing"),
        observations=get("observations", ()),
        bm25_ceiling=bm25_ceiling,
    )


def random_candidate_set(n: int, seed: int = 0, *, pairs_per_candidate: int = 10, mode: str = "hybrid",
                         strategy: str = "hybrid_balanced", limit: int | None = None) -> CandidateSet:
    """A realistic random CandidateSet of ``n`` candidates (a third found only by FTS5)."""
    rng = np.random.default_rng(seed)
    fts_only = rng.random(n) < 1 / 3
    distance = np.where(fts_only, np.nan, rng.uniform(0.1, 1.2, n))
    knn_rank = np.zeros(n, dtype=np.int64)
    knn_rank[~fts_only] = np.argsort(np.argsort(distance[~fts_only])) + 1
    fts_rank = np.where(fts_only | (rng.random(n) < 0.3), rng.permutation(n) + 1, 0)
    accessed = rng.random(n) < 0.6
    m = n * pairs_per_candidate // 2
    a = rng.integers(0, n, m)
    b = rng.integers(0, n, m)
    keep = a != b
    a, b = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    unique = np.unique(np.stack([a, b], axis=1), axis=0)
    neighbours = np.flatnonzero(rng.random(max(n - 1, 0)) < 0.4)  # candidates i and i + 1 written one after the other
    matched = np.repeat(np.arange(n), rng.integers(0, 3, n))  # observations the full-text index matched
    return CandidateSet(
        query="random", limit=limit or max(1, n // 3), mode=mode, strategy=strategy, now=NOW,
        entity_ids=np.arange(1, n + 1), distance=distance, knn_rank=knn_rank, fts_rank=fts_rank,
        bm25=np.where(fts_rank > 0, 10.0 / np.maximum(fts_rank, 1), np.nan),
        access_count=np.where(accessed, rng.integers(1, 200, n), 0),
        access_days=np.where(accessed, rng.integers(1, 40, n), 0),
        last_access=np.where(accessed, NOW - rng.uniform(0, 800 * DAY, n), np.nan),
        created_at=NOW - rng.uniform(0, 1500 * DAY, n),
        degree=rng.integers(0, 40, n),
        status_code=rng.choice(4, n, p=[0.7, 0.1, 0.1, 0.1]),
        metadata_share=np.where(rng.random(n) < 0.2, rng.uniform(0, 1, n), 0.0),
        cooc_a=unique[:, 0], cooc_b=unique[:, 1],
        cooc_count=rng.integers(1, 50, len(unique)),
        cooc_last=NOW - rng.uniform(0, 1000 * DAY, len(unique)),
        names=[f"entity {i}" for i in range(n)], entity_types=["Thing"] * n,
        observations=[(f"observation of {i}",) for i in range(n)],
        context_a=neighbours, context_b=neighbours + 1,
        observation_row=matched,
        observation_cosine=np.where(rng.random(len(matched)) < 0.1, np.nan, rng.uniform(-0.2, 0.9, len(matched))),
        observation_bm25=rng.uniform(0.0, 12.0, len(matched)), observation_bm25_ceiling=float(rng.uniform(0.0, 20.0)),
        date_distance=rng.choice([np.nan, 0.0, 1.5, 40.0], n) if rng.random() < 0.5 else np.zeros(0),
        feedback_similarity=rng.choice([np.nan, 0.2, 0.75, 0.9, 1.0], n) if rng.random() < 0.5 else np.zeros(0),
    )
