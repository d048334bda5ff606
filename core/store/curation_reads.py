"""Reads of the consolidation report: entities without relations and entities of one type (the placeholders an
import leaves), without those a person chose to keep (``curation_kept``, schema 12); in a call bound to a
project (:mod:`limbic.core.store.scope`), that project's entities and the global ones."""

from __future__ import annotations

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
