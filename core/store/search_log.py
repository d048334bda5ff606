"""The search log: one ``search_events`` row per logged search and its impressions (DESIGN.md §3, §10).

An impression is an entity shown by a search, stored with its 1-based rank in ``search_results`` and
counted in ``entity_impressions``. Impressions never touch ``entity_access``, ``entity_access_days``
or ``co_occurrences``: only a use does (:func:`limbic.core.store.writes.record_access`).
Each function takes an open write connection inside the caller's transaction; none commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import apsw


@dataclass(frozen=True, slots=True)
class Impression:
    """One shown result: entity id, 1-based rank, its scores and the rank of the cosine-only baseline."""

    entity_id: int
    rank: int
    baseline_rank: int | None
    limbic_score: float
    final_score: float
    cosine_similarity: float | None


@dataclass(frozen=True, slots=True)
class SearchEvent:
    """A logged search: when (UTC seconds), the query, requested top-K, mode, routing strategy, origin
    (gui, mcp, cli…) and duration in milliseconds."""

    at: float
    query: str
    limit: int
    mode: str
    strategy: str
    origin: str
    duration_ms: float


def insert_search(conn: apsw.Connection, event: SearchEvent, shown: Sequence[Impression]) -> int:
    """Log ``event`` with its impressions and add them to ``entity_impressions``; returns the event id."""
    conn.execute(
        "INSERT INTO search_events(at, query, k_limit, mode, strategy, origin, duration_ms) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (event.at, event.query, event.limit, event.mode, event.strategy, event.origin, event.duration_ms),
    )
    event_id = conn.last_insert_rowid()
    conn.executemany(
        "INSERT INTO search_results(event_id, entity_id, rank, baseline_rank, limbic_score, final_score, "
        "cosine_sim) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(event_id, s.entity_id, s.rank, s.baseline_rank, s.limbic_score, s.final_score, s.cosine_similarity)
         for s in shown],
    )
    record_impressions(conn, [s.entity_id for s in shown], event.at)
    return event_id


def record_impressions(conn: apsw.Connection, entity_ids: Sequence[int], at: float) -> None:
    """Count one impression at ``at`` (UTC seconds) for each entity still stored."""
    conn.executemany(
        "INSERT INTO entity_impressions(entity_id, impression_count, last_impression) "
        "SELECT id, 1, ?2 FROM entities WHERE id = ?1 "
        "ON CONFLICT(entity_id) DO UPDATE SET impression_count = impression_count + 1, "
        "last_impression = max(last_impression, excluded.last_impression)",
        [(int(i), at) for i in dict.fromkeys(entity_ids)],
    )


def impression_stats(conn: apsw.Connection, entity_id: int) -> tuple[int, float | None]:
    """``(impression_count, last_impression)`` of one entity; ``(0, None)`` when never shown."""
    row = conn.execute(
        "SELECT impression_count, last_impression FROM entity_impressions WHERE entity_id = ?", (entity_id,)
    ).fetchone()
    return (int(row[0]), float(row[1])) if row else (0, None)
