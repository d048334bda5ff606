"""Rows of the contradiction check: the queue of observations to check, and the conflicts found.

An observation written while a model is in use is queued (``conflict_checks``) in its write's transaction;
once its vector has landed it is compared with the current observations of its entity and of the entities
that are the same subject (:func:`neighbours`, :func:`same_subject`), and what conflicts is stored in ``conflicts`` until a person resolves it
(docs/lifecycle.md "Contradictions"). None of these functions commits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from limbic.core.store import vec_rows
from limbic.core.store.connection import Connection
from limbic.core.store.expiry import current
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, vector_dimension

MAX_NEIGHBOURS = 256
"""Observations a new observation is compared with, at most."""


@dataclass(frozen=True, slots=True)
class ConflictRow:
    """A stored conflict: ``id``; the new observation (``observation_id``, its entity and text) and the older one
    it contradicts (``other_id``, entity, text); cosine ``similarity``, ``reason``, detector ``mode``,
    ``created_at`` and, once settled, ``resolved_at`` and ``resolution`` (UTC seconds)."""

    id: int
    observation_id: int
    entity: str
    content: str
    other_id: int
    other_entity: str
    other_content: str
    similarity: float
    reason: str
    mode: str
    created_at: float
    resolved_at: float | None = None
    resolution: str | None = None


def queue(conn: Connection, observation_ids: Sequence[int], at: float) -> None:
    """Queue ``observation_ids`` for the check (again, when already queued)."""
    conn.executemany("INSERT INTO conflict_checks(observation_id, queued_at) VALUES (?, ?) "
                     "ON CONFLICT(observation_id) DO UPDATE SET queued_at = excluded.queued_at",
                     [(int(i), at) for i in observation_ids])


def queued(conn: Connection, observation_ids: Sequence[int] | None = None) -> list[int]:
    """Queued observation ids (of ``observation_ids`` when given), oldest first."""
    if observation_ids is None:
        return [int(r[0]) for r in conn.execute("SELECT observation_id FROM conflict_checks ORDER BY queued_at")]
    return [int(r[0]) for r in conn.execute(
        "SELECT observation_id FROM conflict_checks WHERE observation_id IN (SELECT value FROM json_each(?)) "
        "ORDER BY queued_at", (json.dumps([int(i) for i in observation_ids]),))]


def ready(conn: Connection, model: str, now: float, limit: int = 64) -> tuple[list[tuple[int, int, str]], list[int]]:
    """``(ready, dropped)``: queued observations whose vector by ``model`` has landed, as ``(id, entity id,
    text)``; and queued ones no longer current at ``now`` (deleted, superseded, expired), to drop."""
    rows: list[Any] = conn.execute(
        "SELECT c.observation_id, o.entity_id, o.content, "
        f"  CASE WHEN o.id IS NULL OR NOT ({current('?2', 'o')}) THEN 0 ELSE 1 END, m.model "
        "FROM conflict_checks c LEFT JOIN observations o ON o.id = c.observation_id "
        "LEFT JOIN observation_embedding_meta m ON m.observation_id = c.observation_id "
        "ORDER BY c.queued_at LIMIT ?3", (model, now, limit)).fetchall()
    dropped = [int(r[0]) for r in rows if not r[3]]
    return [(int(r[0]), int(r[1]), r[2]) for r in rows if r[3] and r[4] == model], dropped


def queued_texts(conn: Connection, observation_ids: Sequence[int], now: float) -> list[tuple[int, int, str, str]]:
    """The queued, current ones of ``observation_ids`` as ``(id, entity id, text, entity name)``, whether or not
    their vectors have landed."""
    return [(int(r[0]), int(r[1]), r[2], r[3]) for r in conn.execute(
        "SELECT o.id, o.entity_id, o.content, e.name FROM conflict_checks c JOIN observations o ON o.id = c.observation_id "
        f"JOIN entities e ON e.id = o.entity_id WHERE c.observation_id IN (SELECT value FROM json_each(?1)) "
        f"AND {current('?2', 'o')} ORDER BY c.queued_at", (json.dumps([int(i) for i in observation_ids]), now))]


def done(conn: Connection, observation_ids: Sequence[int]) -> None:
    conn.execute("DELETE FROM conflict_checks WHERE observation_id IN (SELECT value FROM json_each(?))",
                 (json.dumps([int(i) for i in observation_ids]),))


SAME_SUBJECT = frozenset((
    "same_as", "is_a", "is", "alias", "alias_of", "aka", "also_known_as", "known_as", "equivalent_to",
    "duplicate_of", "renamed_to", "renamed_from", "formerly", "identical_to"))
"""Relation types that say two entities are one subject (an alias, an is-a, a renaming): their observations are
checked against each other. Any other relation joins two subjects, whose observations never contradict."""
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+", re.UNICODE)


def name_spellings(name: str) -> list[str]:
    """The lowercased spellings of ``name`` that name the same subject: its words (split at case changes,
    spaces, ``_``, ``-`` and ``.``) joined by nothing, a space, ``_``, ``-`` or ``.`` (``CPUPackage``,
    ``CPU_Package``, ``cpu-package`` and ``CPU Package`` are one name)."""
    words = [w.lower() for w in _WORDS.findall(name)]
    return sorted({sep.join(words) for sep in ("", " ", "_", "-", ".")} | {name.lower()}) if words else [name.lower()]


_VERSIONED = re.compile(r"[\s_.-]*v\d{1,2}$", re.IGNORECASE)
VERSIONS = 5
"""Versions of a name (``…-v2`` … ``…-v5``) that name the same subject as it."""


def subject_names(name: str) -> list[str]:
    """The lowercased names of the same subject as ``name``: its spellings (:func:`name_spellings`) and those of
    its versions — the name without a version at its end, or with one (``user-prefs``, ``user-prefs-v2``,
    ``User Prefs V3``: an agent's newer copy of an entity). A number alone is not a version (``Sprint 3``)."""
    base = _VERSIONED.sub("", name) or name
    spellings = name_spellings(base)
    return sorted(set(spellings) | {f"{spelling}{sep}v{n}" for spelling in spellings for sep in ("", " ", "_", "-", ".")
                                    for n in range(1, VERSIONS + 1)} | set(name_spellings(name)))


def same_subject(conn: Connection, entity_id: int) -> list[int]:
    """``entity_id`` and the entities of its project that are the same subject: the same name in another
    spelling or version (:func:`subject_names`) or joined to it by a :data:`SAME_SUBJECT` relation, either way."""
    row = conn.execute("SELECT name, coalesce(project, '') FROM entities WHERE id = ?1", (entity_id,)).fetchone()
    if row is None:
        return [entity_id]
    found = [int(r[0]) for r in conn.execute(  # the index of names without case
        f"SELECT id, coalesce(project, '') FROM entities WHERE {conn.ops.ascii_folded('name')} IN "
        "(SELECT value FROM json_each(?1))", (json.dumps(subject_names(row[0])),)) if r[1] == row[1] and r[0] != entity_id]
    found += [int(r[0]) for r in conn.execute(
        "SELECT to_id FROM relations WHERE from_id = ?1 AND active = 1 AND lower(relation_type) IN "
        "(SELECT value FROM json_each(?2)) UNION SELECT from_id FROM relations WHERE to_id = ?1 AND active = 1 "
        "AND lower(relation_type) IN (SELECT value FROM json_each(?2))", (entity_id, json.dumps(sorted(SAME_SUBJECT))))]
    return [entity_id] + sorted(set(found) - {entity_id})


def neighbours(conn: Connection, observation_id: int, entity_id: int, model: str,
               now: float, subjects: Sequence[int] | None = None) -> list[tuple[int, str]]:
    """The current observations of ``entity_id`` and of the entities that are the same subject
    (:func:`same_subject`; at most :data:`MAX_NEIGHBOURS` observations) with a vector by ``model``, other than
    ``observation_id``: ``[(id, text)]``, the entity's own first. ``subjects``: :func:`same_subject` of
    ``entity_id`` when the caller has it already."""
    subjects = same_subject(conn, entity_id) if subjects is None else subjects
    return [(int(r[0]), r[1]) for r in conn.execute(
        "SELECT o.id, o.content FROM observations o JOIN observation_embedding_meta m ON m.observation_id = o.id "
        f"WHERE o.entity_id IN (SELECT value FROM json_each(?1)) AND {current('?2', 'o')} AND +m.model = ?3 "
        "AND o.id != ?4 ORDER BY o.entity_id = ?5 DESC, o.id DESC LIMIT ?6",
        (json.dumps(list(subjects)), now, model, observation_id, entity_id, MAX_NEIGHBOURS))]


def subject_texts(conn: Connection, entity_id: int, now: float, leave_out: Sequence[int] = ()) -> list[str]:
    """The current observations' texts of ``entity_id`` and of the same subject's entities (:func:`same_subject`;
    at most :data:`MAX_NEIGHBOURS`, the entity's own and the newest first), but ``leave_out`` (observation ids)."""
    return [r[0] for r in conn.execute(
        "SELECT o.content FROM observations o WHERE o.entity_id IN (SELECT value FROM json_each(?1)) "
        f"AND {current('?2', 'o')} AND o.id NOT IN (SELECT value FROM json_each(?3)) "
        "ORDER BY o.entity_id = ?4 DESC, o.id DESC LIMIT ?5",
        (json.dumps(same_subject(conn, entity_id)), now, json.dumps([int(i) for i in leave_out]), entity_id,
         MAX_NEIGHBOURS))]


def written(conn: Connection, after: int, now: float) -> list[tuple[int, int, str, str]]:
    """The current observations with an id above ``after`` (those the open write added) as ``(id, entity id, text,
    entity name)``, in id order."""
    return [(int(r[0]), int(r[1]), r[2], r[3]) for r in conn.execute(
        "SELECT o.id, o.entity_id, o.content, e.name FROM observations o JOIN entities e ON e.id = o.entity_id "
        f"WHERE o.id > ?1 AND {current('?2', 'o')} ORDER BY o.id", (after, now))]


def candidates(conn: Connection, entity_id: int, model: str, now: float) -> tuple[list[tuple[int, str]], list[int]]:
    """What an observation of ``entity_id`` is compared with, as :func:`neighbours` chooses them (its entity's and
    the same subject's current observations, at most :data:`MAX_NEIGHBOURS`), in one query: ``([(id, text)]``
    with a vector by ``model``, ``[id]`` without one)."""
    landed: list[tuple[int, str]] = []
    waiting: list[int] = []
    for oid, content, has_vector in conn.execute(
            "SELECT o.id, o.content, m.observation_id IS NOT NULL FROM observations o "
            "LEFT JOIN observation_embedding_meta m ON m.observation_id = o.id AND m.model = ?3 "
            f"WHERE o.entity_id IN (SELECT value FROM json_each(?1)) AND {current('?2', 'o')} "
            "ORDER BY o.entity_id = ?4 DESC, o.id DESC LIMIT ?5",
            (json.dumps(same_subject(conn, entity_id)), now, model, entity_id, MAX_NEIGHBOURS)):
        if has_vector:
            landed.append((int(oid), content))
        else:
            waiting.append(int(oid))
    return landed, waiting


def unlanded(conn: Connection, observation_ids: Sequence[int], entity_id: int, model: str,
             now: float) -> list[tuple[int, str, str]]:
    """The current observations of ``entity_id`` and of the same subject's entities that have no vector by ``model`` yet,
    other than ``observation_ids``: ``[(id, text, entity name)]``, the entity's own first, newest first."""
    return [(int(r[0]), r[1], r[2]) for r in conn.execute(
        "SELECT o.id, o.content, e.name FROM observations o JOIN entities e ON e.id = o.entity_id "
        "LEFT JOIN observation_embedding_meta m ON m.observation_id = o.id AND m.model = ?3 "
        f"WHERE o.entity_id IN (SELECT value FROM json_each(?1)) AND {current('?2', 'o')} AND m.observation_id IS NULL "
        "AND o.id NOT IN (SELECT value FROM json_each(?4)) ORDER BY o.entity_id = ?5 DESC, o.id DESC",
        (json.dumps(same_subject(conn, entity_id)), now, model, json.dumps([int(i) for i in observation_ids]), entity_id))]


def vectors(conn: Connection, observation_ids: Sequence[int], held: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """The unit vectors ``(d,) float32`` of ``observation_ids``: those in ``held`` (the in-memory copy), the rest
    read from the store."""
    missing = [i for i in observation_ids if i not in held]
    found = dict(held)
    if not missing or vector_dimension(conn, OBSERVATION_VECTOR_TABLE) is None:  # none stored yet
        return found
    rows = vec_rows.read(conn, OBSERVATION_VECTOR_TABLE, missing)
    found.update(zip([r for r, _ in rows], unit_rows([blob for _, blob in rows]), strict=True))
    return found


def unit_rows(blobs: Sequence[bytes]) -> np.ndarray:
    """float32 vectors from their bytes, L2-normalised, ``(n, d) float32`` (``(0, 0)`` when there are none)."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    matrix = np.stack([np.frombuffer(b, dtype=np.float32) for b in blobs])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def insert(conn: Connection, found: Sequence[tuple[int, int, float, str]], mode: str, at: float) -> None:
    """Store conflicts ``(observation id, other id, similarity, reason)``, in order, in one batch
    (the connection's ``execute_all``); a pair already stored either way round, earlier in the
    batch included, is left as it is, settled or not (one pair, one conflict)."""
    conn.execute_all([(
        "INSERT INTO conflicts(observation_id, other_id, similarity, reason, mode, created_at) "
        "SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE NOT EXISTS (SELECT 1 FROM conflicts "
        "WHERE observation_id = ?2 AND other_id = ?1) ON CONFLICT(observation_id, other_id) DO NOTHING",
        (observation_id, other_id, similarity, reason, mode, at)) for observation_id, other_id, similarity, reason in found])


_ROWS = """
SELECT c.id, c.observation_id, e.name, o.content, c.other_id, f.name, p.content, c.similarity, c.reason, c.mode,
       c.created_at, c.resolved_at, c.resolution
FROM conflicts c JOIN observations o ON o.id = c.observation_id JOIN entities e ON e.id = o.entity_id
JOIN observations p ON p.id = c.other_id JOIN entities f ON f.id = p.entity_id
WHERE {where}
ORDER BY c.created_at DESC, c.id DESC
"""
def _row(row: Any) -> ConflictRow:
    return ConflictRow(*row)


_OPEN = f"c.resolved_at IS NULL AND {current('?1', 'o')} AND {current('?1', 'p')}"


def open_rows(conn: Connection, now: float, limit: int = -1) -> tuple[int, list[ConflictRow]]:
    """The number of open conflicts (not settled, both observations current at ``now``) and the newest ``limit``."""
    total = conn.execute(
        "SELECT count(*) FROM conflicts c JOIN observations o ON o.id = c.observation_id "
        f"JOIN observations p ON p.id = c.other_id WHERE {_OPEN}", (now,)).get
    rows = conn.execute(_ROWS.format(where=_OPEN) + " LIMIT ?2", (now, limit))
    return int(total), [_row(r) for r in rows]


def open_since(conn: Connection, after: int, now: float) -> int:
    """The open conflicts whose newer observation has an id above ``after`` (written since that id was the
    newest)."""
    return int(conn.execute(
        "SELECT count(*) FROM conflicts c JOIN observations o ON o.id = c.observation_id "
        f"JOIN observations p ON p.id = c.other_id WHERE {_OPEN} AND c.observation_id > ?2", (now, after)).get)


def queued_and_found(conn: Connection, observation_ids: Sequence[int]) -> tuple[list[int], list[ConflictRow]]:
    """:func:`queued` of ``observation_ids`` and the conflicts found for them (settled or not), read together (one
    round trip on PostgreSQL)."""
    listed = json.dumps([int(i) for i in observation_ids])
    waiting, rows = conn.fetch_all([
        ("SELECT observation_id FROM conflict_checks WHERE observation_id IN (SELECT value FROM json_each(?)) "
         "ORDER BY queued_at", (listed,)),
        (_ROWS.format(where="c.observation_id IN (SELECT value FROM json_each(?1))"), (listed,))])
    return [int(r[0]) for r in waiting], [_row(r) for r in rows]


def touching(conn: Connection, observation_ids: Sequence[int]) -> list[ConflictRow]:
    """The conflicts either of whose observations is one of ``observation_ids`` (settled or not)."""
    return [_row(r) for r in conn.execute(
        _ROWS.format(where="c.observation_id IN (SELECT value FROM json_each(?1)) "
                           "OR c.other_id IN (SELECT value FROM json_each(?1))"),
        (json.dumps([int(i) for i in observation_ids]),))]


def by_id(conn: Connection, conflict_id: int) -> ConflictRow | None:
    rows = conn.execute(_ROWS.format(where="c.id = ?1"), (conflict_id,)).fetchall()
    return _row(rows[0]) if rows else None


def settle(conn: Connection, conflict_id: int, resolution: str | None, at: float | None) -> None:
    """Mark a conflict settled with ``resolution`` at ``at`` (``None``, ``None``: open again)."""
    conn.execute("UPDATE conflicts SET resolved_at = ?, resolution = ? WHERE id = ?", (at, resolution, conflict_id))


def _insert(conn: Connection, row: ConflictRow, row_id: int | None, observation_id: int, other_id: int) -> None:
    """Store ``row`` as recorded between two observations, as ``row_id`` (None: a new id)."""
    conn.execute("INSERT INTO conflicts(id, observation_id, other_id, similarity, reason, mode, created_at, "
                 "resolved_at, resolution) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (row_id, observation_id, other_id, row.similarity, row.reason, row.mode, row.created_at,
                  row.resolved_at, row.resolution))


def _observation_now(conn: Connection, recorded: int, content: str, placed: Mapping[int, int]) -> int | None:
    if recorded in placed:
        return placed[recorded]
    found = conn.execute("SELECT 1 FROM observations WHERE id = ? AND content = ?", (recorded, content)).fetchone()
    return recorded if found else None


def restore(conn: Connection, rows: Iterable[ConflictRow], placed: Mapping[int, int]) -> None:
    """Write recorded conflicts back once their observations are rows again: ``placed`` maps recorded observation
    ids to their ids now (any other observation must still hold its id and text). Each row replaces what is
    stored for its pair and keeps its old id when free; a row whose observation is gone is dropped."""
    for row in {r.id: r for r in rows}.values():
        first = _observation_now(conn, row.observation_id, row.content, placed)
        second = _observation_now(conn, row.other_id, row.other_content, placed)
        if first is None or second is None:
            continue
        conn.execute("DELETE FROM conflicts WHERE observation_id = ? AND other_id = ?", (first, second))
        taken = conn.execute("SELECT 1 FROM conflicts WHERE id = ?", (row.id,)).fetchone()
        _insert(conn, row, None if taken else row.id, first, second)


def put(conn: Connection, row: ConflictRow) -> None:
    """Write ``row`` back as recorded (after an undo re-created its observations), under its old id."""
    conn.execute("DELETE FROM conflicts WHERE id = ? OR (observation_id = ? AND other_id = ?)",
                 (row.id, row.observation_id, row.other_id))
    _insert(conn, row, row.id, row.observation_id, row.other_id)


def newest_observation(conn: Connection) -> int:
    """The highest observation id now (0 for none; an observation written later gets a higher one)."""
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM observations").get)


def current_after(conn: Connection, after: int, now: float) -> list[int]:
    """The ids of the observations current at ``now`` (UTC seconds) with an id above ``after``, in id order."""
    return [int(r[0]) for r in conn.execute(f"SELECT id FROM observations WHERE id > ? AND {current('?2')} ORDER BY id",
                                            (after, now))]


def resolve(conn: Connection, row: ConflictRow, option: str, now: float, superseded_weight: float) -> list[int]:
    """Apply ``option`` (``keep_both``, ``update_old``, ``supersede``, ``delete_old``; docs/lifecycle.md
    "Contradictions") to the conflict ``row`` (its new observation ``row.observation_id``, the old one
    ``row.other_id``) inside the caller's write transaction; ``supersede`` gives the old one
    ``superseded_weight``. Returns the ids of the entities whose observations changed, ascending (none for
    ``keep_both``); the caller re-indexes them."""
    owners = dict(conn.execute("SELECT id, entity_id FROM observations WHERE id IN (?, ?)",
                               (row.observation_id, row.other_id)))
    new_owner, old_owner = owners[row.observation_id], owners[row.other_id]
    if option == "delete_old":
        conn.execute("DELETE FROM observations WHERE id = ?", (row.other_id,))
    elif option == "supersede":
        conn.execute("UPDATE observations SET superseded_at = ?, weight = ? WHERE id = ?",
                     (now, superseded_weight, row.other_id))
        if new_owner == old_owner:  # a supersede link stays within one entity
            conn.execute("UPDATE observations SET supersedes = ? WHERE id = ?", (row.other_id, row.observation_id))
    elif option == "update_old":
        if new_owner == old_owner:
            conn.execute("DELETE FROM observations WHERE id = ?", (row.observation_id,))
        else:
            conn.execute("DELETE FROM observations WHERE entity_id = ? AND content = ? AND id != ?",
                         (old_owner, row.content, row.other_id))
        conn.execute("UPDATE observations SET content = ? WHERE id = ?", (row.content, row.other_id))
    if option != "keep_both":
        conn.execute("UPDATE entities SET updated_at = ? WHERE id IN (?, ?)", (now, new_owner, old_owner))
    return sorted({new_owner, old_owner}) if option != "keep_both" else []
