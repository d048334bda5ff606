"""Views of the graph: one project's memories with the global ones, and the graph as it stood at a date.

A *project view* keeps the entities of that project and the global ones (``project IS NULL``); relations are
kept when both their ends are in view, so another project's names never show through a relation
(docs/lifecycle.md "Project scope"). An *as-of view* at ``T`` (UTC seconds) is a query over the times every
row carries (docs/lifecycle.md "The graph as of a date"): entities created by ``T``; their observations
created by ``T``, those superseded after ``T`` as they stood then (live), those superseded by ``T`` as
superseded; relations created by ``T``, active when they ended after ``T``. Entities deleted since are gone,
and an entity's status is its current one (no history of statuses is kept). Every function issues a fixed,
small number of set-based queries.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

from limbic.core.models import Entity, Relation
from limbic.core.store import reads, scope
from limbic.core.store.connection import Connection

INFINITY = float("inf")


def _ids(ids: Sequence[int]) -> str:
    return json.dumps([int(i) for i in ids])


def in_view(conn: Connection, ids: Sequence[int], *, project: str | None, as_of: float | None) -> list[int]:
    """``ids`` (order kept) of the entities in the view: of ``project`` or global (any project when ``None``),
    created by ``as_of`` (any time when ``None``)."""
    if project is None and as_of is None:
        return list(ids)
    rows = conn.execute(
        "SELECT id FROM entities WHERE id IN (SELECT value FROM json_each(?1)) "
        "AND (?2 IS NULL OR project IS NULL OR project = ?2) AND created_at <= ?3",
        (_ids(ids), project, INFINITY if as_of is None else as_of))
    kept = {int(r[0]) for r in rows}
    return [i for i in ids if i in kept]


def all_ids(conn: Connection, *, project: str | None, as_of: float | None) -> list[int]:
    """Every entity id in the view, ascending."""
    return [int(r[0]) for r in conn.execute(
        "SELECT id FROM entities WHERE (?1 IS NULL OR project IS NULL OR project = ?1) AND created_at <= ?2 "
        "ORDER BY id", (project, INFINITY if as_of is None else as_of))]


def entities(conn: Connection, ids: Sequence[int], *, as_of: float | None) -> list[Entity]:
    """The entities ``ids`` (order kept) with their observations as they stood at ``as_of`` (all of them as
    stored when ``None``)."""
    found = reads.entities_by_ids(conn, ids)
    if as_of is None:
        return found
    return [dataclasses.replace(e, observations=tuple(
        o if o.superseded_at is None or o.superseded_at <= as_of else dataclasses.replace(o, superseded_at=None)
        for o in e.observations if o.created_at <= as_of)) for e in found]


def relations(conn: Connection, ids: Sequence[int], *, project: str | None, as_of: float | None,
              include_ended: bool = False) -> list[Relation]:
    """Relations touching ``ids`` whose both ends are in the view, as they stood at ``as_of``: created by then,
    active when they had not ended by then (ended ones only with ``include_ended``)."""
    touching = reads.relations_touching(conn, ids, include_ended=as_of is not None or include_ended)
    if as_of is not None:
        touching = [r if r.active or (r.ended_at is not None and r.ended_at <= as_of)
                    else dataclasses.replace(r, active=True, ended_at=None)
                    for r in touching if r.created_at <= as_of]
        touching = [r for r in touching if r.active or include_ended]
    if project is None and as_of is None:
        return touching
    ends = {i for r in touching for i in (r.source_id, r.target_id)}
    visible = set(in_view(conn, sorted(ends), project=project, as_of=as_of))
    return [r for r in touching if r.source_id in visible and r.target_id in visible]


def relations_seen(conn: Connection, ids: Sequence[int], *, include_ended: bool = False) -> list[Relation]:
    """The relations touching ``ids`` (active ones, ended ones too with ``include_ended``) that the running call
    sees: in a call bound to a project (:func:`limbic.core.store.scope.current`) only those whose both ends
    are in its view; every one when unbound. The read that lists an entity's relations for a caller (never
    for an undo snapshot, which keeps them all)."""
    return relations(conn, ids, project=scope.current(), as_of=None, include_ended=include_ended)


def substring_matches(conn: Connection, text: str, *, project: str | None, as_of: float | None) -> list[int]:
    """:func:`~limbic.core.store.reads.search_substring` in the view: at ``as_of`` the observations current
    then are searched (created by then, not superseded or expired by then)."""
    if as_of is None:
        return in_view(conn, reads.search_substring(conn, text), project=project, as_of=None)
    test, needle = reads.substring_test(conn, text)
    rows = conn.execute(
        f"SELECT id FROM entities WHERE ({test.format(column='name')} OR {test.format(column='entity_type')}) "
        "AND created_at <= ?2 "
        f"UNION SELECT entity_id FROM observations WHERE {test.format(column='content')} AND created_at <= ?2 "
        "AND (superseded_at IS NULL OR superseded_at > ?2) AND (expires_at IS NULL OR expires_at > ?2) ORDER BY 1",
        (needle, as_of))
    return in_view(conn, [int(r[0]) for r in rows], project=project, as_of=as_of)


def projects(conn: Connection) -> dict[str, int]:
    """``{project: number of entities}``, by name (global entities are not counted)."""
    return dict(conn.execute(
        "SELECT project, count(*) FROM entities WHERE project IS NOT NULL GROUP BY project ORDER BY project"))


def relation_rows_as_of(conn: Connection, at: float) -> list[tuple[int, int, str]]:
    """``(from_id, to_id, relation_type)`` of the relations active at ``at`` (created by then, not ended by then),
    in the order :mod:`limbic.core.store.graph` gives the live ones."""
    return [(int(a), int(b), str(t)) for a, b, t in conn.execute(
        "SELECT from_id, to_id, relation_type FROM relations WHERE created_at <= ?1 AND (active = 1 OR ended_at > ?1) "
        "ORDER BY from_id, to_id, relation_type", (at,))]


def written_between(conn: Connection, start: float, end: float) -> list[str]:
    """Names of the entities created, or given an observation, between ``start`` and ``end`` (UTC seconds)."""
    return [r[0] for r in conn.execute(
        "SELECT name FROM entities WHERE id IN (SELECT id FROM entities WHERE created_at BETWEEN ?1 AND ?2 "
        "UNION SELECT entity_id FROM observations WHERE created_at BETWEEN ?1 AND ?2) ORDER BY id", (start, end))]


def history_span(conn: Connection) -> tuple[float, float] | None:
    """``(first, last)`` write time of the memory (entity, observation or relation; UTC seconds), ``None`` when empty."""
    row = conn.execute(
        "SELECT min(t), max(t) FROM (SELECT min(created_at) AS t FROM entities UNION ALL SELECT max(created_at) FROM "
        "entities UNION ALL SELECT max(created_at) FROM observations UNION ALL SELECT max(created_at) FROM relations "
        "UNION ALL SELECT max(ended_at) FROM relations)").fetchone()
    return None if row is None or row[0] is None else (float(row[0]), float(row[1]))


def entity_projects(conn: Connection) -> dict[int, str]:
    """``{entity id: project}`` of the entities that belong to a project (global ones are left out)."""
    return {int(i): p for i, p in conn.execute("SELECT id, project FROM entities WHERE project IS NOT NULL")}
