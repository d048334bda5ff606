"""Reads of the curation: for the consolidation report, entities without relations and entities of one type
(the placeholders an import leaves), without those a person chose to keep (``curation_kept``, schema 12), in a
call bound to a project (:mod:`limbic.core.store.scope`) that project's entities and the global ones; and the
rows the duplicate and split finders read (live counts, cluster members, both sides of an entity merge)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from limbic.core.store import scope
from limbic.core.store.connection import Connection

_LIVE = "(SELECT count(*) FROM observations o WHERE o.entity_id = e.id AND o.superseded_at IS NULL)"
_RELATIONS = "(SELECT count(*) FROM relations r WHERE r.active = 1 AND (r.from_id = e.id OR r.to_id = e.id))"


def _in_view() -> tuple[str, tuple[str, ...]]:
    """The ``AND`` clause keeping the entities ``e`` of the bound project's view, and its parameters."""
    binding = scope.current()
    return ("", ()) if binding is None else (" AND (e.project IS NULL OR e.project = ?)", (binding,))


def orphans(conn: Connection, limit: int) -> tuple[int, list[tuple[Any, ...]]]:
    """Entities without an active relation that are not kept (key ``orphan:<id>``): how many, and the first
    ``limit`` as ``(id, name, type, live observations, created_at)``, fewest observations first, then oldest."""
    where = ("WHERE NOT EXISTS (SELECT 1 FROM relations r WHERE r.active = 1 AND r.from_id = e.id) "
             "AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.active = 1 AND r.to_id = e.id) "
             "AND NOT EXISTS (SELECT 1 FROM curation_kept k WHERE k.key = 'orphan:' || e.id)")
    clause, view = _in_view()
    where += clause
    total = conn.execute(f"SELECT count(*) FROM entities e {where}", view).get
    rows = conn.execute(f"SELECT e.id, e.name, e.entity_type, {_LIVE} AS n, e.created_at FROM entities e {where} "
                        "ORDER BY n, e.created_at, e.id LIMIT ?", (*view, limit)).fetchall()
    return int(total), rows


def of_type(conn: Connection, entity_type: str, limit: int) -> tuple[int, list[tuple[Any, ...]]]:
    """Entities of ``entity_type`` that are not kept (key ``placeholder:<id>``): how many, and the first ``limit``
    as ``(id, name, live observations, active relations, created_at)``, oldest first."""
    where = ("WHERE e.entity_type = ? AND NOT EXISTS (SELECT 1 FROM curation_kept k "
             "WHERE k.key = 'placeholder:' || e.id)")
    clause, view = _in_view()
    where += clause
    total = conn.execute(f"SELECT count(*) FROM entities e {where}", (entity_type, *view)).get
    rows = conn.execute(f"SELECT e.id, e.name, {_LIVE}, {_RELATIONS}, e.created_at FROM entities e {where} "
                        "ORDER BY e.created_at, e.id LIMIT ?", (entity_type, *view, limit)).fetchall()
    return int(total), rows


def live_counts(conn: Connection) -> list[tuple[Any, ...]]:
    """``(id, name, type, live observations)`` of every entity with a live observation (every project; the
    caller keeps its view), in the engine's order."""
    return conn.execute(
        "SELECT e.id, e.name, e.entity_type, count(*) FROM observations o JOIN entities e ON e.id = o.entity_id "
        "WHERE o.superseded_at IS NULL GROUP BY e.id").fetchall()


def names_and_types(conn: Connection) -> list[tuple[str, str]]:
    """``(name, type)`` of the entities of the bound project's view (every entity in an unbound call)."""
    return conn.execute("SELECT name, entity_type FROM entities "
                        "WHERE ?1 IS NULL OR project IS NULL OR project = ?1", (scope.current(),)).fetchall()


def members(conn: Connection, observation_ids: Sequence[int]) -> list[tuple[Any, ...]]:
    """``(id, entity name, text, kind, created_at)`` of the observations ``observation_ids`` that exist, in the
    engine's order."""
    return conn.execute(
        "SELECT o.id, e.name, o.content, o.kind, o.created_at FROM observations o JOIN entities e "
        "ON e.id = o.entity_id WHERE o.id IN (SELECT value FROM json_each(?))", (_json(observation_ids),)).fetchall()


def live_observations_of(conn: Connection, entity_ids: Sequence[int], model: str | None) -> list[tuple[Any, ...]]:
    """``(entity id, observation id, text, whether its vector was made by model)`` of the live observations of
    ``entity_ids``, by entity, then id."""
    return conn.execute(
        "SELECT o.entity_id, o.id, o.content, m.observation_id IS NOT NULL FROM observations o "
        "LEFT JOIN observation_embedding_meta m ON m.observation_id = o.id AND m.model = ? "
        "WHERE o.superseded_at IS NULL AND o.entity_id IN (SELECT value FROM json_each(?)) "
        "ORDER BY o.entity_id, o.id", (model, _json(entity_ids))).fetchall()


def live_texts_of(conn: Connection, entity_ids: Sequence[int], *, ordered: bool = False) -> list[tuple[int, str]]:
    """``(entity id, text)`` of the live (not superseded) observations of ``entity_ids``; ``ordered``: by entity,
    then oldest first, else in the engine's order."""
    order = " ORDER BY entity_id, created_at, id" if ordered else ""
    return conn.execute(
        "SELECT entity_id, content FROM observations WHERE superseded_at IS NULL AND entity_id IN "
        "(SELECT value FROM json_each(?))" + order, (_json(entity_ids),)).fetchall()


def active_links(conn: Connection, entity_ids: Sequence[int]) -> list[tuple[int, int]]:
    """``(from id, to id)`` of the active relations with an end among ``entity_ids``, in the engine's order."""
    return conn.execute(
        "SELECT from_id, to_id FROM relations WHERE active = 1 AND (from_id IN (SELECT value FROM json_each(?1)) "
        "OR to_id IN (SELECT value FROM json_each(?1)))", (_json(entity_ids),)).fetchall()


def sides(conn: Connection, entity_ids: Sequence[int]) -> list[tuple[Any, ...]]:
    """``(id, name, type, live observations, created_at)`` of the entities ``entity_ids`` that exist."""
    return conn.execute(
        "SELECT e.id, e.name, e.entity_type, (SELECT count(*) FROM observations o WHERE o.entity_id = e.id AND "
        "o.superseded_at IS NULL), e.created_at FROM entities e WHERE e.id IN (SELECT value FROM json_each(?))",
        (_json(entity_ids),)).fetchall()


def _json(ids: Sequence[int]) -> str:
    return json.dumps([int(i) for i in ids])
