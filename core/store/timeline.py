"""Reads of what an agent did, for its timeline (:meth:`limbic.core.service.history.History.timeline`): its logged
searches with the entities each showed (``search_events``, ``search_results``), its uses (``use_events``: every
entity it opened or marked used, with the logged searches each answered where there are: the one it named, or
those by the same origin shortly before that the entity is a relevance label of, ``implicit_feedback``), and its
writes (``changes``, but the operations the caller skips). Every read takes an origin (``None``: every origin) and
a time window ``[since, until]`` in UTC seconds, and returns at most ``limit`` rows, newest first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from limbic.core.store.connection import Connection

NOT_SKIPPED = "op NOT IN (SELECT value FROM json_each(?))"


def _window(column: str, origin: str | None, since: float | None, until: float | None,
            origin_column: str) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if origin is not None:
        clauses.append(f"{origin_column} = ?")
        args.append(origin)
    if since is not None:
        clauses.append(f"{column} >= ?")
        args.append(since)
    if until is not None:
        clauses.append(f"{column} <= ?")
        args.append(until)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


def searches(conn: Connection, origin: str | None, since: float | None, until: float | None,
             limit: int) -> list[tuple[int, float, str, str, str, list[tuple[int, str | None]]]]:
    """``(search id, at, origin, query, mode, shown)`` of the logged searches, newest first; ``shown`` is the
    ``(entity id, name)`` of each entity the search returned, by rank (name ``None``: deleted since)."""
    where, args = _window("at", origin, since, until, "origin")
    events = conn.execute(f"SELECT id, at, origin, query, mode FROM search_events{where} ORDER BY at DESC, id DESC "
                          "LIMIT ?", (*args, limit)).fetchall()
    if not events:
        return []
    shown: dict[int, list[tuple[int, str | None]]] = {}
    for event_id, entity_id, name in conn.execute(
            "SELECT r.event_id, r.entity_id, e.name FROM search_results r LEFT JOIN entities e ON e.id = r.entity_id "
            "WHERE r.event_id IN (SELECT value FROM json_each(?)) ORDER BY r.event_id, r.rank",
            (json.dumps([int(row[0]) for row in events]),)):
        shown.setdefault(int(event_id), []).append((int(entity_id), name))
    return [(int(i), float(at), str(o), str(q), str(m), shown.get(int(i), [])) for i, at, o, q, m in events]


def uses(conn: Connection, origin: str | None, since: float | None, until: float | None, limit: int,
         window: float) -> list[tuple[float, str, str, int | None, int, str | None]]:
    """``(at, origin, source, search id, entity id, name)`` of the newest ``limit`` logged uses (``source`` is
    ``open_nodes``, ``get_entity``, ``mark_used`` or ``gui_open``; the origin is the user's), newest first, once
    per logged search each answered — the search it named, or one by the same origin in the ``window`` seconds
    before that the entity is a relevance label of (by then) — or once with the search id ``None``."""
    where, args = _window("at", origin, since, until, "origin")
    rows = conn.execute(  # only the labels of searches in the page's span (or named by it) are joined
        f"WITH u AS (SELECT id, at, origin, source, entity_id, search_id FROM use_events{where} "
        "ORDER BY at DESC, id DESC LIMIT ?), "
        "l AS (SELECT f.entity_id, f.event_id, f.at AS labelled, s.origin, s.at FROM implicit_feedback f "
        "JOIN search_events s ON s.id = f.event_id "
        "WHERE s.at >= (SELECT min(at) FROM u) - ? OR s.id IN (SELECT search_id FROM u)) "
        "SELECT u.at, u.origin, u.source, l.event_id, u.entity_id, e.name FROM u "
        "LEFT JOIN l ON l.entity_id = u.entity_id AND l.labelled <= u.at "
        "AND (l.event_id = u.search_id OR (l.origin = u.origin AND l.at BETWEEN u.at - ? AND u.at)) "
        "LEFT JOIN entities e ON e.id = u.entity_id ORDER BY u.at DESC, u.id DESC, l.event_id",
        (*args, limit, window, window)).fetchall()
    return [(float(at), str(o), str(src), None if ev is None else int(ev), int(ent), name)
            for at, o, src, ev, ent, name in rows]


def writes(conn: Connection, origin: str | None, since: float | None, until: float | None, limit: int,
           skip_ops: Sequence[str]) -> list[tuple[int, float, str, str, list[tuple[int, str | None]]]]:
    """``(change id, at, origin, op, touched)`` of the logged changes whose op is not in ``skip_ops``, newest first;
    ``touched`` is the ``(entity id, name)`` of each entity the change touched (name ``None``: deleted since), by
    id."""
    where, args = _window("at", origin, since, until, "origin")
    where = f"{where} AND {NOT_SKIPPED}" if where else f" WHERE {NOT_SKIPPED}"
    rows = conn.execute(f"SELECT id, at, origin, op, entity_ids FROM changes{where} ORDER BY id DESC LIMIT ?",
                        (*args, json.dumps(list(skip_ops)), limit)).fetchall()
    ids = sorted({int(i) for row in rows for i in json.loads(row[4])})
    names = {int(i): n for i, n in conn.execute(
        "SELECT id, name FROM entities WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(ids),))} if ids else {}
    return [(int(i), float(at), str(o), str(op), [(e, names.get(e)) for e in sorted(int(x) for x in json.loads(ents))])
            for i, at, o, op, ents in rows]


def origins(conn: Connection, skip_ops: Sequence[str]) -> list[str]:
    """Every origin that searched, used an entity, or wrote a change whose op is not in ``skip_ops`` (the agents a
    timeline can show), sorted."""
    return sorted({str(o) for o, in conn.execute(
        "SELECT DISTINCT origin FROM search_events UNION SELECT DISTINCT origin FROM use_events "
        f"UNION SELECT DISTINCT origin FROM changes WHERE {NOT_SKIPPED}",
        (json.dumps(list(skip_ops)),))})
