"""Rows of the ``reflections`` table (schema 12) and their vectors: reading, writing, putting back.

Nothing here commits or validates: the service does (:mod:`limbic.core.service.reflecting`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from limbic.core.models import Reflection
from limbic.core.store.connection import Connection

_COLUMNS = (
    "r.id, r.target_type, a.name, b.name, r.relation_type, r.author, r.content, r.mood, r.created_at, "
    "r.updated_at, r.entity_id, r.other_id"
)
_FROM = " FROM reflections r LEFT JOIN entities a ON a.id = r.entity_id LEFT JOIN entities b ON b.id = r.other_id"


def _reflection(row: Sequence[Any]) -> Reflection:
    return Reflection(int(row[0]), row[1], row[2], row[3], row[4], row[5], row[6], row[7], float(row[8]),
                      float(row[9]), None if row[10] is None else int(row[10]), None if row[11] is None else int(row[11]))


def by_ids(conn: Connection, ids: Sequence[int]) -> list[Reflection]:
    """The reflections ``ids``, in that order (unknown ids left out)."""
    rows = conn.execute(f"SELECT {_COLUMNS}{_FROM} WHERE r.id IN (SELECT value FROM json_each(?))",
                        (json.dumps([int(i) for i in ids]),)).fetchall()
    found = {reflection.id: reflection for reflection in map(_reflection, rows)}
    return [found[int(i)] for i in ids if int(i) in found]


def touching(conn: Connection, entity_ids: Sequence[int]) -> list[Reflection]:
    """The reflections about the entities ``entity_ids`` or about a relation of theirs, oldest first."""
    ids = json.dumps([int(i) for i in entity_ids])
    rows = conn.execute(f"SELECT {_COLUMNS}{_FROM} WHERE r.entity_id IN (SELECT value FROM json_each(?1)) "
                        f"OR r.other_id IN (SELECT value FROM json_each(?1)) ORDER BY r.created_at, r.id", (ids,))
    return [_reflection(r) for r in rows]


def every(conn: Connection) -> list[Reflection]:
    """Every reflection, oldest first."""
    return [_reflection(r) for r in conn.execute(f"SELECT {_COLUMNS}{_FROM} ORDER BY r.created_at, r.id")]


def filtered(conn: Connection, author: str | None, mood: str | None, target_type: str | None) -> set[int]:
    """Ids of the reflections by ``author`` (ignoring case), of ``mood`` and about a ``target_type``, each filter
    left out when None; at least one must be given."""
    clauses: list[str] = []
    args: list[str | None] = []
    if author is not None:
        clauses.append("unicode_lower(author) = unicode_lower(?)")
        args.append(author)
    if mood is not None:
        clauses.append("mood = ?")
        args.append(mood)
    if target_type is not None:
        clauses.append("target_type = ?")
        args.append(target_type)
    sql = "SELECT id FROM reflections WHERE " + " AND ".join(clauses)
    return {int(r[0]) for r in conn.execute(sql, tuple(args))}


def texts(conn: Connection) -> list[tuple[int, str]]:
    """``(id, text)`` of every reflection, in the engine's order."""
    return conn.execute("SELECT id, content FROM reflections").fetchall()


def insert(conn: Connection, target_type: str, entity_id: int | None, other_id: int | None,
           relation_type: str | None, author: str, content: str, mood: str | None, created: float,
           updated: float, reflection_id: int | None = None) -> int:
    """Insert one reflection (under ``reflection_id`` when given and free); returns its id."""
    if reflection_id is not None and conn.execute("SELECT 1 FROM reflections WHERE id = ?", (reflection_id,)).fetchone():
        reflection_id = None
    return int(conn.execute(
        "INSERT INTO reflections(id, target_type, entity_id, other_id, relation_type, author, content, "
        "mood, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (reflection_id, target_type, entity_id, other_id, relation_type, author, content, mood, created, updated)).get)


def update(conn: Connection, reflection_id: int, author: str, content: str, mood: str | None, at: float) -> bool:
    """Rewrite one reflection's author, text and mood (its vector is dropped when the text changes)."""
    old = conn.execute("SELECT content FROM reflections WHERE id = ?", (reflection_id,)).fetchone()
    if old is None:
        return False
    conn.execute("UPDATE reflections SET author = ?, content = ?, mood = ?, updated_at = ? WHERE id = ?",
                 (author, content, mood, at, reflection_id))
    if old[0] != content:
        conn.execute("DELETE FROM reflection_vectors WHERE reflection_id = ?", (reflection_id,))
    return True


def delete(conn: Connection, reflection_id: int) -> bool:
    conn.execute("DELETE FROM reflections WHERE id = ?", (reflection_id,))
    return conn.changes() > 0


def put(conn: Connection, reflections: Iterable[Reflection], placed: dict[int, int]) -> None:
    """Insert recorded reflections again (old ids when free), their entity ids mapped through ``placed``
    (recorded id → id now); a reflection whose entities are gone, or already stored, is left out."""
    for r in sorted({r.id: r for r in reflections}.values(), key=lambda r: r.id):
        if conn.execute("SELECT 1 FROM reflections WHERE id = ?", (r.id,)).fetchone():
            continue
        entity = placed.get(r.entity_id, r.entity_id) if r.entity_id is not None else None
        other = placed.get(r.target_id, r.target_id) if r.target_id is not None else None
        present = [i for i in (entity, other) if i is not None]
        if present and len(conn.execute("SELECT id FROM entities WHERE id IN (SELECT value FROM json_each(?))",
                                        (json.dumps(present),)).fetchall()) < len(set(present)):
            continue
        insert(conn, r.target_type, entity, other, r.relation_type, r.author, r.content, r.mood, r.created_at,
               r.updated_at, r.id)


def vectors(conn: Connection, model: str) -> dict[int, np.ndarray]:
    """``{reflection id: (d,) float32}`` of the vectors made by ``model``."""
    return {int(i): np.frombuffer(blob, dtype=np.float32) for i, blob in conn.execute(
        "SELECT reflection_id, vector FROM reflection_vectors WHERE model = ?", (model,))}


def put_vectors(conn: Connection, model: str, found: dict[int, np.ndarray]) -> None:
    """Store vectors of ``model`` for reflections that still exist."""
    conn.executemany("INSERT INTO reflection_vectors(reflection_id, model, vector) SELECT ?1, ?2, ?3 "
                     "WHERE EXISTS (SELECT 1 FROM reflections WHERE id = ?1) ON CONFLICT(reflection_id) "
                     "DO UPDATE SET model = excluded.model, vector = excluded.vector",
                     [(int(i), model, np.asarray(v, dtype=np.float32).tobytes()) for i, v in found.items()])
