"""The rows the graph view draws: entities with access counts, and active relations (no Qt, no numpy).

:func:`graph_rows` reads the whole graph in two set-based queries; :func:`graph_rows_since` reads
only the entities the ``changes`` log names after a given change id (the change record's entity
ids, docs/architecture.md "The change feed") and the active relations touching them, unless they are more than
:data:`FULL_RELOAD_SHARE` of the graph. Call both on one read connection inside one read
transaction (a consistent snapshot). :mod:`limbic.core.service.graph_arrays` turns the rows into arrays.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from limbic.core.store import reads
from limbic.core.store.connection import Connection
from limbic.core.store.schema import LANDED_OP

FULL_RELOAD_SHARE = 0.25  # read everything again when the changes touched more than this share of the nodes

EntityRow = tuple[Any, ...]  # (id, name, type, status, created_at, access_count, last_access or None)
RelationRow = tuple[int, int, str]  # (from_id, to_id, relation_type)

_ENTITY_SQL = """
SELECT e.id, e.name, e.entity_type, e.status, e.created_at,
       COALESCE(a.access_count, 0), a.last_access
FROM entities AS e LEFT JOIN entity_access AS a ON a.entity_id = e.id
"""
_RELATION_SQL = "SELECT from_id, to_id, relation_type FROM relations WHERE active = 1"
_RELATION_ORDER = " ORDER BY from_id, to_id, relation_type"
_IDS = "(SELECT value FROM json_each(?))"


@dataclass(frozen=True, slots=True)
class GraphRows:
    """Rows of the graph as of ``change_id`` (the newest ``changes`` row the snapshot saw).

    ``touched`` is ``None`` for the whole graph; otherwise the entity ids whose rows were read again
    (an id missing from ``entities`` was deleted) and ``relations`` holds the active relations with
    at least one endpoint among them. Relations are ordered by ``(from_id, to_id, relation_type)``.
    """

    entities: list[EntityRow]
    relations: list[RelationRow]
    change_id: int
    touched: frozenset[int] | None = None


def graph_rows(conn: Connection) -> GraphRows:
    """Every entity (by id) with its access count and last access (UTC seconds), and every active relation."""
    entities = list(conn.execute(_ENTITY_SQL + " ORDER BY e.id"))
    relations = list(conn.execute(_RELATION_SQL + _RELATION_ORDER))
    return GraphRows(entities, relations, reads.last_change_id(conn))


def graph_rows_since(conn: Connection, change_id: int, node_count: int) -> GraphRows:
    """The rows of the entities changed after ``change_id``, or the whole graph past the share threshold.

    Args:
        change_id: the change id the caller's copy of the graph was read at.
        node_count: how many entities the caller's copy holds.
    """
    touched: set[int] = set()
    newest = change_id
    for change in reads.changes_since(conn, change_id, limit=1_000_000):
        if change.op != LANDED_OP:  # vectors landed: nothing the graph shows changed
            touched |= change.entity_ids
        newest = change.change_id
    if len(touched) > FULL_RELOAD_SHARE * max(node_count, 1):
        return graph_rows(conn)
    ids = json.dumps(sorted(touched))
    entities = list(conn.execute(_ENTITY_SQL + f" WHERE e.id IN {_IDS} ORDER BY e.id", (ids,)))
    relations = list(conn.execute(
        _RELATION_SQL + f" AND (from_id IN {_IDS} OR to_id IN {_IDS})" + _RELATION_ORDER, (ids, ids)))
    return GraphRows(entities, relations, newest, frozenset(touched))
