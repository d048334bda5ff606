"""Rows of the ``decisions`` table (schema 15): the log of applied decisions and the edit each undo reverts
(docs/curation.md "Decisions and undo"). Plain SQL with ``?`` placeholders (the team backend runs the same);
nothing here commits or validates: :mod:`limbic.core.service.decision_log` does."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from limbic.core.store.connection import Connection

_COLUMNS = "id, made_at, origin, kind, description, subjects, undone_at, undone_by"


@dataclass(frozen=True, slots=True)
class DecisionRow:
    """One applied decision: ``id``, ``made_at`` (UTC seconds), ``origin`` (who: the change log's origin, e.g.
    ``gui``, ``cli``, ``stdio``, ``mcp:alice``), ``kind`` (``contradiction``, ``merge``, ``split``, ``forget``,
    ``status``, …), ``description`` (one line), ``subjects`` (entity names), ``undone_at`` and ``undone_by``
    (``None`` while it stands)."""

    id: int
    made_at: float
    origin: str
    kind: str
    description: str
    subjects: tuple[str, ...]
    undone_at: float | None = None
    undone_by: str | None = None

    @property
    def undone(self) -> bool:
        return self.undone_at is not None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "madeAt": self.made_at, "origin": self.origin, "kind": self.kind,
                "description": self.description, "subjects": list(self.subjects), "undone": self.undone,
                "undoneAt": self.undone_at, "undoneBy": self.undone_by}


def _row(r: Sequence[Any]) -> DecisionRow:
    return DecisionRow(int(r[0]), float(r[1]), str(r[2]), str(r[3]), str(r[4]), tuple(json.loads(r[5])),
                       None if r[6] is None else float(r[6]), None if r[7] is None else str(r[7]))


def insert(conn: Connection, at: float, origin: str, kind: str, description: str, subjects: Sequence[str],
           edit: str) -> int:
    """Add a decision (``edit``: its JSON); returns its id."""
    return int(conn.execute("INSERT INTO decisions(made_at, origin, kind, description, subjects, edit) "
                            "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                            (at, origin, kind, description, json.dumps(list(subjects), ensure_ascii=False),
                             edit)).fetchone()[0])


def recent(conn: Connection, limit: int, origin: str | None = None) -> list[DecisionRow]:
    """The last ``limit`` decisions, newest first (only ``origin``'s when given)."""
    if origin is None:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM decisions ORDER BY id DESC LIMIT ?", (limit,))
    else:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM decisions WHERE origin = ? ORDER BY id DESC LIMIT ?",
                            (origin, limit))
    return [_row(r) for r in rows]


def last_standing(conn: Connection, origin: str | None = None) -> DecisionRow | None:
    """The newest decision not undone (only ``origin``'s when given)."""
    where = "undone_at IS NULL" + ("" if origin is None else " AND origin = ?")
    rows = list(conn.execute(f"SELECT {_COLUMNS} FROM decisions WHERE {where} ORDER BY id DESC LIMIT 1",
                             () if origin is None else (origin,)))
    return _row(rows[0]) if rows else None


def first_made_since(conn: Connection, kind: str, at: float, edit_part: str) -> DecisionRow | None:
    """The first decision of ``kind`` made at or after ``at`` (UTC seconds) whose edit's JSON holds the text
    ``edit_part``; ``None`` when there is none."""
    rows = list(conn.execute(f"SELECT {_COLUMNS} FROM decisions WHERE kind = ? AND made_at >= ? "
                             f"AND {conn.ops.holds_text('edit', '?')} ORDER BY id LIMIT 1", (kind, at, edit_part)))
    return _row(rows[0]) if rows else None


def by_id(conn: Connection, decision_id: int) -> tuple[DecisionRow, str] | None:
    """The decision ``decision_id`` and its edit's JSON; ``None`` when there is none."""
    rows = list(conn.execute(f"SELECT {_COLUMNS}, edit FROM decisions WHERE id = ?", (decision_id,)))
    return (_row(rows[0]), str(rows[0][8])) if rows else None


def mark_undone(conn: Connection, decision_id: int, at: float, by: str) -> None:
    conn.execute("UPDATE decisions SET undone_at = ?, undone_by = ? WHERE id = ?", (at, by, decision_id))
