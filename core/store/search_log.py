"""The search log: logged searches, their impressions, candidate arrays and relevance labels (docs/architecture.md "Data model").

An impression is an entity shown by a search, stored with its 1-based rank in ``search_results`` and
counted in ``entity_impressions``. Impressions never touch ``entity_access``, ``entity_access_days``
or ``co_occurrences``: only a use does (:func:`limbic.core.store.writes.record_access`). A use of a
shown entity soon after the search, by the same origin, is a relevance label (``implicit_feedback``).
Write functions take an open write connection inside the caller's transaction; none commits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from limbic.core.store.connection import Connection


@dataclass(frozen=True, slots=True)
class Impression:
    """One shown result: entity id, 1-based rank, its scores, and its rank in the cosine-only (KNN)
    and BM25-only branches (``None`` when that branch did not find it)."""

    entity_id: int
    rank: int
    baseline_rank: int | None
    bm25_rank: int | None
    limbic_score: float
    final_score: float
    cosine_similarity: float | None


@dataclass(frozen=True, slots=True)
class SearchEvent:
    """A logged search: its id (the ``searchId`` given to callers), when (UTC seconds), the query, the
    requested top-K, mode, routing strategy, origin (gui, mcp, cli…), duration in milliseconds, the
    A/B group (``limbic`` / ``baseline``), the preset name when the parameters equal one, the
    parameters as JSON, the packed candidate set (:mod:`limbic.core.learning.codec`) and, when a model
    encoded the query, its vector (``float32`` bytes) and the model's name."""

    id: int
    at: float
    query: str
    limit: int
    mode: str
    strategy: str
    origin: str
    duration_ms: float
    treatment: str
    preset: str | None
    params_json: str
    candidates: bytes
    query_vector: bytes | None = None
    model: str | None = None


def insert_search(conn: Connection, event: SearchEvent, shown: Sequence[Impression], *, retention: int) -> None:
    """Log ``event`` with its impressions, candidate arrays and query vector, add the impressions to
    ``entity_impressions``, then drop the oldest searches beyond ``retention``. The rows go in one batch
    (the connection's ``execute_all``: one round trip on PostgreSQL)."""
    params_id = _params_id(conn, event.params_json)
    rows: list[tuple[str, Sequence[object]]] = [(
        "INSERT INTO search_events(id, at, query, k_limit, mode, strategy, origin, duration_ms, treatment, preset, "
        "params_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (event.id, event.at, event.query, event.limit, event.mode, event.strategy, event.origin, event.duration_ms,
         event.treatment, event.preset, params_id)),
        ("INSERT INTO search_candidates(event_id, data) VALUES (?, ?)", (event.id, event.candidates))]
    if event.query_vector is not None and event.model:
        rows.append(("INSERT INTO search_query_vectors(event_id, model, vector) VALUES (?, ?, ?)",
                     (event.id, event.model, event.query_vector)))
    rows += [("INSERT INTO search_results(event_id, entity_id, rank, baseline_rank, bm25_rank, limbic_score, "
              "final_score, cosine_sim) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
              (event.id, s.entity_id, s.rank, s.baseline_rank, s.bm25_rank, s.limbic_score, s.final_score,
               s.cosine_similarity)) for s in shown]
    impression = _impression(conn)
    rows += [(impression, row) for row in _impressions([s.entity_id for s in shown], event.at)]
    conn.execute_all(rows)
    trim(conn, retention)


def _params_id(conn: Connection, params_json: str) -> int:
    """The id of ``params_json`` in ``logged_params``, added when new (parameters change rarely: one read)."""
    found = conn.execute("SELECT id FROM logged_params WHERE params = ?", (params_json,)).fetchone()
    if found is not None:
        return int(found[0])
    conn.execute("INSERT INTO logged_params(params) VALUES (?) ON CONFLICT(params) DO NOTHING", (params_json,))
    return int(_row(conn, "SELECT id FROM logged_params WHERE params = ?", (params_json,))[0])


def trim(conn: Connection, retention: int) -> int:
    """Drop the oldest logged searches beyond the newest ``retention`` (with their results, candidate
    arrays and labels); returns how many were dropped."""
    (count,) = _row(conn, "SELECT count(*) FROM search_events")
    if count <= retention:
        return 0
    conn.execute(
        "DELETE FROM search_events WHERE id IN (SELECT id FROM search_events ORDER BY at, id LIMIT ?)",
        (count - retention,),
    )
    conn.execute("DELETE FROM implicit_feedback WHERE event_id IS NULL")
    return count - retention


def clear(conn: Connection) -> int:
    """Delete every logged search, impression row and label (entity impression totals and accesses stay).
    Returns the number of searches deleted."""
    (count,) = _row(conn, "SELECT count(*) FROM search_events")
    conn.execute("DELETE FROM implicit_feedback")
    conn.execute("DELETE FROM search_events")
    conn.execute("DELETE FROM logged_params")
    return count


def _impression(conn: Connection) -> str:
    """The statement counting one impression (``?1`` entity id, ``?2`` UTC seconds) of an entity still stored."""
    latest = conn.ops.greatest("entity_impressions.last_impression", "excluded.last_impression")
    return ("INSERT INTO entity_impressions(entity_id, impression_count, last_impression) "
            "SELECT id, 1, ?2 FROM entities WHERE id = ?1 "
            "ON CONFLICT(entity_id) DO UPDATE SET impression_count = entity_impressions.impression_count + 1, "
            f"last_impression = {latest}")


def _impressions(entity_ids: Sequence[int], at: float) -> list[tuple[int, float]]:
    return [(int(i), at) for i in dict.fromkeys(entity_ids)]


def record_impressions(conn: Connection, entity_ids: Sequence[int], at: float) -> None:
    """Count one impression at ``at`` (UTC seconds) for each entity still stored."""
    conn.executemany(_impression(conn), _impressions(entity_ids, at))


def impression_stats(conn: Connection, entity_id: int) -> tuple[int, float | None]:
    """``(impression_count, last_impression)`` of one entity; ``(0, None)`` when never shown."""
    row = conn.execute(
        "SELECT impression_count, last_impression FROM entity_impressions WHERE entity_id = ?", (entity_id,)
    ).fetchone()
    return (int(row[0]), float(row[1])) if row else (0, None)


def label_recent(conn: Connection, entity_ids: Sequence[int], at: float, origin: str, window: float,
                 source: str) -> int:
    """Implicit feedback: for each entity, every search by ``origin`` in the ``window`` seconds before
    ``at`` that showed it gets a relevance label. Returns the number of new labels."""
    conn.execute(
        "INSERT INTO implicit_feedback(entity_id, event_id, at, source) "
        "SELECT r.entity_id, r.event_id, ?1, ?2 FROM search_results r JOIN search_events e ON e.id = r.event_id "
        "WHERE r.entity_id IN (SELECT value FROM json_each(?3)) AND e.origin = ?4 AND e.at BETWEEN ?5 AND ?1 "
        "ON CONFLICT(event_id, entity_id) DO NOTHING",
        (at, source, json.dumps([int(i) for i in entity_ids]), origin, at - window),
    )
    return conn.changes()


def label_search(conn: Connection, event_id: int, entity_ids: Sequence[int], at: float, source: str) -> int:
    """Explicit feedback for one logged search (``mark_used`` with a ``searchId``): each entity is a
    relevance label for it, shown or not. Returns the number of new labels."""
    labelled = 0
    for entity_id in dict.fromkeys(entity_ids):  # one statement each: changes() counts the rows of the last
        conn.execute("INSERT INTO implicit_feedback(entity_id, event_id, at, source) VALUES (?, ?, ?, ?) "
                     "ON CONFLICT(event_id, entity_id) DO NOTHING", (int(entity_id), event_id, at, source))
        labelled += conn.changes()
    return labelled


def search_exists(conn: Connection, event_id: int) -> bool:
    return conn.execute("SELECT 1 FROM search_events WHERE id = ?", (event_id,)).fetchone() is not None


@dataclass(frozen=True, slots=True)
class LoggedSearch:
    """A logged search read back for replay: id, time, A/B group, the parameters' JSON, the packed
    candidate set and the ids of the entities labelled relevant (empty when none was used)."""

    id: int
    at: float
    treatment: str
    params_json: str | None
    candidates: bytes
    relevant: tuple[int, ...]


def logged_searches(conn: Connection, *, labelled_only: bool = True, limit: int | None = None) -> list[LoggedSearch]:
    """Logged searches that kept their candidate arrays, newest first (at most ``limit``)."""
    labels: dict[int, list[int]] = {}
    for event_id, entity_id in conn.execute(
            "SELECT event_id, entity_id FROM implicit_feedback WHERE event_id IS NOT NULL ORDER BY id"):
        labels.setdefault(event_id, []).append(entity_id)
    rows = conn.execute(
        "SELECT e.id, e.at, e.treatment, p.params, c.data FROM search_events e "
        "JOIN search_candidates c ON c.event_id = e.id LEFT JOIN logged_params p ON p.id = e.params_id "
        "ORDER BY e.at DESC, e.id DESC"
    )
    found = []
    for event_id, at, treatment, params, data in rows:
        relevant = tuple(labels.get(event_id, ()))
        if labelled_only and not relevant:
            continue
        found.append(LoggedSearch(event_id, at, treatment, params, data, relevant))
        if limit is not None and len(found) >= limit:
            break
    return found


def log_counts(conn: Connection) -> dict[str, int]:
    """Counts for the tuning state: logged searches, per group, labelled searches, labels."""
    searches, baseline = _row(conn, "SELECT count(*), count(CASE WHEN treatment = 'baseline' THEN 1 END) FROM search_events")
    labelled, labels = _row(
        conn, "SELECT count(DISTINCT event_id), count(*) FROM implicit_feedback WHERE event_id IS NOT NULL")
    return {"searches": searches, "baseline_searches": baseline, "treatment_searches": searches - baseline,
            "labelled_searches": labelled, "labels": labels}


def _row(conn: Connection, sql: str, bindings: tuple = ()) -> tuple:
    """The one row of a query that always returns one (an aggregate, or a row just written)."""
    row = conn.execute(sql, bindings).fetchone()
    assert row is not None, sql
    return tuple(row)
