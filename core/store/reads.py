"""Set-based reads that turn rows into :mod:`limbic.core.models` values.

Every function takes a connection (a thread's read connection, or the write connection inside a
transaction) and issues a fixed, small number of queries whatever the number of entities.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence

from limbic.core.models import Changes, Entity, GraphStats, Observation, Relation
from limbic.core.store import scope
from limbic.core.store.connection import Connection
from limbic.core.store.expiry import current
from limbic.core.store.schema import vector_dimension

_ENTITY_COLUMNS = "id, name, entity_type, status, created_at, updated_at, project, strength, pinned_at"
_OBS_COLUMNS = "id, entity_id, content, kind, supersedes, superseded_at, expires_at, weight, created_at"
_REL_SQL = (
    "SELECT r.id, f.name, t.name, r.relation_type, r.context, r.active, r.ended_at, r.created_at, "
    "r.from_id, r.to_id FROM relations r JOIN entities f ON f.id = r.from_id JOIN entities t ON t.id = r.to_id"
)


def _ids_json(ids: Iterable[int]) -> str:
    return json.dumps([int(i) for i in ids])


def _observation(row: tuple) -> Observation:
    return Observation(id=row[0], entity_id=row[1], content=row[2], kind=row[3], supersedes=row[4],
                       superseded_at=row[5], expires_at=row[6], weight=float(row[7]), created_at=row[8])


def observations_by_entity(conn: Connection, entity_ids: Sequence[int]) -> dict[int, list[Observation]]:
    """All observations (live and superseded) of the given entities, in insertion order."""
    grouped: dict[int, list[Observation]] = defaultdict(list)
    if not entity_ids:
        return grouped
    rows = conn.execute(
        f"SELECT {_OBS_COLUMNS} FROM observations "
        "WHERE entity_id IN (SELECT value FROM json_each(?)) ORDER BY entity_id, id",
        (_ids_json(entity_ids),),
    )
    for row in rows:
        grouped[row[1]].append(_observation(row))
    return grouped


def _hydrate(conn: Connection, rows: list[tuple]) -> list[Entity]:
    observations = observations_by_entity(conn, [r[0] for r in rows])
    return [Entity(id=row[0], name=row[1], entity_type=row[2], status=row[3], created_at=row[4],
                   updated_at=row[5], observations=tuple(observations.get(row[0], ())), project=row[6],
                   strength=float(row[7]), pinned_at=row[8]) for row in rows]


def entities_by_ids(conn: Connection, entity_ids: Sequence[int]) -> list[Entity]:
    """Entities with their observations, in the order of ``entity_ids`` (unknown ids are left out)."""
    rows = conn.execute(
        f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE id IN (SELECT value FROM json_each(?))",
        (_ids_json(entity_ids),),
    ).fetchall()
    by_id = {row[0]: row for row in rows}
    return _hydrate(conn, [by_id[i] for i in entity_ids if i in by_id])


def ids_by_names(conn: Connection, names: Sequence[str]) -> dict[str, int]:
    """Exact-name lookup in the view of the project the call is bound to (:mod:`limbic.core.store.scope`):
    ``{name: id}`` for the names that resolve, in name order (bytewise). Raises ConflictError for a name
    held by several projects when the call is bound to none."""
    return scope.resolve(conn, names, scope.current())


def entities_by_names(conn: Connection, names: Sequence[str]) -> list[Entity]:
    """Entities for the names that exist, in the order given (duplicates collapsed)."""
    found = ids_by_names(conn, names)
    ordered = list(dict.fromkeys(found[n] for n in names if n in found))
    return entities_by_ids(conn, ordered)


def project_of(conn: Connection, entity_id: int) -> str | None:
    """The project of the entity ``entity_id`` (None: a global entity, or no such entity)."""
    return conn.execute("SELECT project FROM entities WHERE id = ?", (entity_id,)).get


def observation_ids(conn: Connection, entity_id: int, contents: Sequence[str]) -> list[int]:
    """Ids of the observations (live or not) of ``entity_id`` whose text is one of ``contents``, in the order
    the engine gives."""
    return [int(r[0]) for r in conn.execute(
        "SELECT id FROM observations WHERE entity_id = ? AND content IN (SELECT value FROM json_each(?))",
        (entity_id, json.dumps(list(contents))))]


def observation_terms(conn: Connection,
                      observation_ids: Sequence[int]) -> dict[int, tuple[float | None, float | None]]:
    """``{id: (superseded_at, expires_at)}`` of the observations among ``observation_ids`` that exist (UTC
    seconds; ``None``: not superseded, never expires)."""
    return {int(r[0]): (r[1], r[2]) for r in conn.execute(
        "SELECT id, superseded_at, expires_at FROM observations WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps([int(i) for i in observation_ids]),))}


def all_names(conn: Connection) -> list[str]:
    """Every entity name, by id."""
    return [r[0] for r in conn.execute("SELECT name FROM entities ORDER BY id")]


def entity_count(conn: Connection) -> int:
    """How many entities the memory holds (every project)."""
    return conn.execute("SELECT count(*) FROM entities").get


def id_names(conn: Connection) -> list[tuple[int, str]]:
    """``(id, name)`` of every entity, by id."""
    return conn.execute("SELECT id, name FROM entities ORDER BY id").fetchall()


def names_by_ids(conn: Connection, entity_ids: Sequence[int]) -> list[str]:
    """The names of the entities ``entity_ids`` (unknown ids left out), by id."""
    return [r[0] for r in conn.execute(
        "SELECT name FROM entities WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id", (_ids_json(entity_ids),))]


def names_of(conn: Connection, entity_ids: Sequence[int]) -> dict[int, str]:
    """``{id: name}`` of the entities ``entity_ids`` that exist."""
    return dict(conn.execute("SELECT id, name FROM entities WHERE id IN (SELECT value FROM json_each(?))",
                             (_ids_json(entity_ids),)))


def texts_of(conn: Connection, observation_ids: Sequence[int]) -> dict[int, str]:
    """``{observation id: text}`` of the observations ``observation_ids`` that exist."""
    return dict(conn.execute("SELECT id, content FROM observations WHERE id IN (SELECT value FROM json_each(?))",
                             (_ids_json(observation_ids),)))


def live_texts(conn: Connection) -> dict[int, str]:
    """``{observation id: text}`` of every live (not superseded) observation, expired ones included."""
    return dict(conn.execute("SELECT id, content FROM observations WHERE superseded_at IS NULL"))


def usage_by_name(conn: Connection, names: Sequence[str]) -> dict[str, tuple[int, int]]:
    """``{entity name: (uses, times found by a search)}`` (``entity_access``, ``entity_impressions``; 0 when none)
    of the entities named ``names`` in any project."""
    rows = conn.execute(
        "SELECT e.name, COALESCE(a.access_count, 0), COALESCE(i.impression_count, 0) FROM entities e "
        "LEFT JOIN entity_access a ON a.entity_id = e.id LEFT JOIN entity_impressions i ON i.entity_id = e.id "
        "WHERE e.name IN (SELECT value FROM json_each(?))", (json.dumps(list(names)),))
    return {str(n): (int(u), int(f)) for n, u, f in rows}


def types_by_name(conn: Connection, names: Sequence[str]) -> dict[str, str]:
    """``{entity name: entity type}`` of the entities named ``names`` in any project."""
    rows = conn.execute(
        "SELECT name, entity_type FROM entities WHERE name IN (SELECT value FROM json_each(?))",
        (json.dumps(list(names)),))
    return {str(n): str(t) for n, t in rows}


def all_entities(conn: Connection, *, offset: int = 0, limit: int = -1) -> list[Entity]:
    """Entities by id from ``offset``, at most ``limit`` of them (all when negative)."""
    rows = conn.execute(  # PostgreSQL refuses a negative LIMIT: "all" is the largest 64-bit count on both
        f"SELECT {_ENTITY_COLUMNS} FROM entities ORDER BY id LIMIT ? OFFSET ?",
        (limit if limit >= 0 else 2**63 - 1, offset),
    ).fetchall()
    return _hydrate(conn, rows)


def _relation(row: tuple) -> Relation:
    rid, source, target, rtype, context, active, ended_at, created_at, from_id, to_id = row
    return Relation(rid, source, target, rtype, context, bool(active), ended_at, created_at, from_id, to_id)


def all_relations(conn: Connection, *, include_ended: bool = False) -> list[Relation]:
    where = "" if include_ended else " WHERE r.active = 1"
    return [_relation(r) for r in conn.execute(_REL_SQL + where + " ORDER BY r.id")]


def relations_by_ids(conn: Connection, relation_ids: Sequence[int]) -> list[Relation]:
    """Relations with the given ids, by id."""
    if not relation_ids:
        return []
    rows = conn.execute(_REL_SQL + " WHERE r.id IN (SELECT value FROM json_each(?)) ORDER BY r.id", (_ids_json(relation_ids),))
    return [_relation(r) for r in rows]


def relations_touching(
    conn: Connection, entity_ids: Sequence[int], *, include_ended: bool = False
) -> list[Relation]:
    """Relations with at least one endpoint among ``entity_ids``."""
    if not entity_ids:
        return []
    active = "" if include_ended else " AND r.active = 1"
    ids = _ids_json(entity_ids)
    # Two index lookups (relations_from, relations_to) joined by UNION: an OR of the two IN tests made
    # SQLite scan every relation (257 ms for 691 entities of the 10k Debian graph).
    rows = conn.execute(
        f"SELECT * FROM ({_REL_SQL} WHERE r.from_id IN (SELECT value FROM json_each(?1)){active} "
        f"UNION {_REL_SQL} WHERE r.to_id IN (SELECT value FROM json_each(?1)){active}) ORDER BY 1",
        (ids,),
    )
    return [_relation(r) for r in rows]


def find_relation(
    conn: Connection, from_id: int, to_id: int, relation_type: str, *, active_only: bool = True
) -> list[Relation]:
    active = " AND r.active = 1" if active_only else ""
    rows = conn.execute(
        _REL_SQL + " WHERE r.from_id = ? AND r.to_id = ? AND r.relation_type = ?" + active,
        (from_id, to_id, relation_type),
    )
    return [_relation(r) for r in rows]


def search_substring(conn: Connection, text: str, now: float | None = None) -> list[int]:
    """Ids of entities whose name, type or any current observation (live, not expired at ``now``, UTC seconds,
    default the present) contains ``text``, ignoring case.

    Like the reference server's ``search_nodes`` (JavaScript ``toLowerCase`` on both sides): an ASCII
    needle uses SQLite ``LIKE``; any other is compared after Python's ``str.lower`` of every text.
    """
    test, needle = substring_test(conn, text)
    rows = conn.execute(
        f"SELECT id FROM entities WHERE {test.format(column='name')} OR {test.format(column='entity_type')} "
        f"UNION SELECT entity_id FROM observations WHERE {current('?2')} AND {test.format(column='content')} "
        "ORDER BY 1",
        (needle, time.time() if now is None else now),
    )
    return [r[0] for r in rows]


def substring_test(conn: Connection, text: str) -> tuple[str, str]:
    """The SQL test of a column containing ``text`` ignoring case (``{column}`` to fill in, parameter ``?1``)
    and the value of ``?1``: an ASCII needle uses ``LIKE`` on the ASCII lower case of both sides (SQLite's
    ``LIKE`` folds ASCII only, PostgreSQL's none; ``lower()`` of a ``"C"`` text folds ASCII on both), any
    other Python's ``str.lower`` of both sides."""
    if text.isascii():
        escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return "lower({column}) LIKE ?1 ESCAPE '\\'", f"%{escaped}%"
    return conn.ops.holds_text("unicode_lower({column})", "?1"), text.lower()


def _by_count(rows: Iterable[tuple[str, int]]) -> dict[str, int]:
    """``{name: count}``, most first, equal counts by name in code point order (in Python: the same on both
    backends, whatever the server's collation)."""
    return dict(sorted(((str(name), int(count)) for name, count in rows), key=lambda item: (-item[1], item[0])))


def stats(conn: Connection) -> GraphStats:
    """Counts of the memory, or of the project view of a call bound to a project (:mod:`.scope`: its entities and
    the global ones, the relations between them, their observations)."""
    binding = scope.current()
    one = lambda sql: conn.execute(sql, view).get  # noqa: E731
    view: tuple[str, ...] = () if binding is None else (binding,)
    shown = "" if binding is None else "(project IS NULL OR project = ?1)"
    entities = "entities" if binding is None else f"(SELECT * FROM entities WHERE {shown}) AS e"
    of_shown = "" if binding is None else f" AND entity_id IN (SELECT id FROM entities WHERE {shown})"
    ends = "" if binding is None else (f" AND from_id IN (SELECT id FROM entities WHERE {shown}) "
                                       f"AND to_id IN (SELECT id FROM entities WHERE {shown})")
    has_vectors = vector_dimension(conn) is not None
    model = conn.execute("SELECT value FROM settings WHERE key = 'embedding_model'").fetchone()
    return GraphStats(
        entities=one(f"SELECT count(*) FROM {entities}"),
        relations=one(f"SELECT count(*) FROM relations WHERE active = 1{ends}"),
        observations=one(f"SELECT count(*) FROM observations WHERE superseded_at IS NULL{of_shown}"),
        superseded_observations=one(f"SELECT count(*) FROM observations WHERE superseded_at IS NOT NULL{of_shown}"),
        entity_types=_by_count(conn.execute(f"SELECT entity_type, count(*) FROM {entities} GROUP BY 1", view)),
        statuses=_by_count(conn.execute(f"SELECT status, count(*) FROM {entities} GROUP BY 1", view)),
        embedded_entities=one(  # an entity vector, or at least one observation vector
            f"SELECT count(*) FROM {'entities e' if binding is None else entities} "
            "WHERE e.id IN (SELECT entity_id FROM entity_embedding_meta) "
            "OR e.id IN (SELECT entity_id FROM observation_embedding_meta)") if has_vectors else 0,
        embedding_model=model[0] if model else None,
    )


def text_sample(conn: Connection, count: int) -> list[str]:
    """About ``count`` entity names and ``count`` live observations at most, spread evenly over the memory (every
    ``k``-th by id, ``k`` the rows over ``count``); for telling its languages."""
    entities, observations = conn.fetch_all([("SELECT count(*) FROM entities", ()),
                                             ("SELECT count(*) FROM observations WHERE superseded_at IS NULL", ())])
    names, texts = conn.fetch_all([
        ("SELECT name FROM entities WHERE id % ?1 = 0", (max(1, entities[0][0] // max(1, count)),)),
        ("SELECT content FROM observations WHERE superseded_at IS NULL AND id % ?1 = 0",
         (max(1, observations[0][0] // max(1, count)),))])
    return [r[0] for r in names] + [r[0] for r in texts]


def access_stats(conn: Connection, entity_id: int) -> tuple[int, float | None, int]:
    """``(access_count, last_access, distinct access days)`` of one entity."""
    row = conn.execute(
        "SELECT access_count, last_access FROM entity_access WHERE entity_id = ?", (entity_id,)
    ).fetchone()
    days = conn.execute("SELECT count(*) FROM entity_access_days WHERE entity_id = ?", (entity_id,)).get
    return (row[0], row[1], days) if row else (0, None, days)


def changes_since(conn: Connection, change_id: int, *, limit: int = 10_000) -> list[Changes]:
    rows = conn.execute(
        "SELECT id, origin, op, entity_ids, at FROM changes WHERE id > ? ORDER BY id LIMIT ?", (change_id, limit)
    )
    return [Changes(r[0], r[1], r[2], frozenset(json.loads(r[3])), r[4]) for r in rows]


def last_change_id(conn: Connection) -> int:
    """The newest ``changes`` id (0 when none)."""
    return conn.ops.last_change_id()


def pending_vector_count(conn: Connection) -> int:
    """How many entities wait for vectors."""
    return conn.ops.pending_vector_count()
