"""The record of tuning applications (``tuning_applications``): each saved step of the tuner, and its undo."""

from __future__ import annotations

from typing import Any

from limbic.core.store.connection import Connection

_COLUMNS = "id, at, origin, kind, old_params, new_params, gain, events, undone_at"


def record(conn: Connection, *, at: float, origin: str, kind: str, old_params: str, new_params: str,
           gain: float | None, events: int) -> None:
    """Record one application (``kind``: ``apply``/``auto``/``undo``…; the parameters as JSON), in the caller's
    transaction."""
    conn.execute("INSERT INTO tuning_applications(at, origin, kind, old_params, new_params, gain, events) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?)", (at, origin, kind, old_params, new_params, gain, events))


def last_undoable(conn: Connection) -> int | None:
    """The id of the latest application that is not an undo and was not undone, or None."""
    row = conn.execute("SELECT id FROM tuning_applications WHERE kind != 'undo' AND undone_at IS NULL "
                       "ORDER BY id DESC LIMIT 1").fetchone()
    return None if row is None else int(row[0])


def mark_undone(conn: Connection, application_id: int, at: float) -> None:
    """Mark application ``application_id`` undone at ``at`` (UTC seconds)."""
    conn.execute("UPDATE tuning_applications SET undone_at = ? WHERE id = ?", (at, application_id))


def applications(conn: Connection, limit: int, application_id: int | None = None) -> list[tuple[Any, ...]]:
    """The latest ``limit`` applications (or the one ``application_id``), newest first: ``(id, at, origin, kind,
    old_params, new_params, gain, events, undone_at)``."""
    return [tuple(r) for r in conn.execute(
        f"SELECT {_COLUMNS} FROM tuning_applications WHERE ?1 IS NULL OR id = ?1 ORDER BY id DESC LIMIT ?2",
        (application_id, limit))]
