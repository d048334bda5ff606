"""Project scope: the project a call is bound to, and how names resolve to entity ids in it.

A memory holds global entities (``project`` NULL) and entities of named projects; a name is unique within one
project and among the global ones (schema 14), so "Backend" may exist globally and in projects ``alpha`` and
``beta`` at once. A call bound to a project (``limbic mcp --project``, a token bound to one, ``--project`` on
the command line: :func:`bound`) sees that project's entities and the global ones; another project's entity
does not exist for it. Names resolve (:func:`resolve`):

- bound to ``P``: ``P``'s own entity of that name, else the global one, else none;
- unbound: the global entity of that name, else the only project entity of that name; a name held by several
  projects and no global entity is ambiguous (:class:`~limbic.core.errors.ConflictError` naming the projects).

The binding is a context variable: it follows the call into worker threads started with the context copied
(``anyio.to_thread``), never into other calls. Every name lookup of the service goes through :func:`resolve`
(``reads.ids_by_names``), so every entry point is scoped by the one binding.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from limbic.core.errors import ConflictError, ValidationError
from limbic.core.store.connection import Connection

_BOUND: ContextVar[str | None] = ContextVar("limbic_project_scope", default=None)


def current() -> str | None:
    """The project the running call is bound to, ``None`` when unbound (every entity is seen)."""
    return _BOUND.get()


@contextmanager
def bound(project: str | None) -> Iterator[None]:
    """Bind the calls made inside the block to ``project`` (``None``: keep the current binding).

    A binding is a boundary: inside a call bound to ``P`` the block may bind ``P`` again, never another
    project. Raises :class:`ValidationError` when ``project`` differs from the current binding.
    """
    token = _BOUND.set(narrow(project))
    try:
        yield
    finally:
        _BOUND.reset(token)


def narrow(requested: str | None) -> str | None:
    """The project a call asking for ``requested`` (``None``: no preference) may see: the binding, else the
    requested one. A call may narrow an unbound memory to a project, never widen a bound one.

    Raises:
        ValidationError: ``requested`` is another project than the binding.
    """
    binding = _BOUND.get()
    if requested is None or requested == binding:
        return binding
    if binding is None:
        return requested
    raise ValidationError(f"this memory is served for project {binding!r}; project {requested!r} is out of its "
                          "scope (a call may only narrow its server's project)")


def check_writable(project: str | None) -> None:
    """Refuse to place an entity in ``project`` from a call bound to another one (global is always allowed:
    global entities are part of every project's view).

    Raises:
        ValidationError: naming both projects.
    """
    binding = _BOUND.get()
    if project is not None and binding is not None and project != binding:
        raise ValidationError(f"this memory is served for project {binding!r}; an entity cannot be placed in "
                              f"project {project!r} from it")


def resolve(conn: Connection, names: Sequence[str], project: str | None) -> dict[str, int]:
    """``{name: id}`` of the names that resolve in the view of ``project`` (``None``: unbound), in name order
    (bytewise). Names that resolve to nothing are left out.

    Raises:
        ConflictError: unbound, a name held by several projects and by no global entity.
    """
    if not names:
        return {}
    rows = conn.execute(  # the order SQLite's plan gives (its name index), written out for PostgreSQL
        "SELECT name, id, project FROM entities WHERE name IN (SELECT value FROM json_each(?1)) "
        "AND (?2 IS NULL OR project IS NULL OR project = ?2) ORDER BY name, id",
        (json.dumps(list(names)), project))
    held: dict[str, list[tuple[int, str | None]]] = {}
    for name, entity_id, owner in rows:
        held.setdefault(name, []).append((int(entity_id), owner))
    found: dict[str, int] = {}
    ambiguous: list[str] = []
    for name, holders in held.items():
        own = [i for i, owner in holders if owner is not None]
        shared = [i for i, owner in holders if owner is None]
        if project is not None:
            found[name] = (own or shared)[0]
        elif shared or len(own) == 1:
            found[name] = (shared or own)[0]
        else:
            owners = ", ".join(repr(owner) for _, owner in holders)
            ambiguous.append(f"{name!r} is held by projects {owners}")
    if ambiguous:
        raise ConflictError(f"{'; '.join(ambiguous)}; choose the project: --project on the command or the server, "
                            "or the project argument of a read")
    return found


def held_elsewhere(conn: Connection, names: Sequence[str], project: str) -> set[str]:
    """The names among ``names`` that ``project``'s view does not resolve (no entity of ``project``, no global
    one) although another project holds them: what a call bound to ``project`` cannot touch."""
    if not names:
        return set()
    return {str(r[0]) for r in conn.execute(
        "SELECT DISTINCT e.name FROM entities e WHERE e.name IN (SELECT value FROM json_each(?1)) "
        "AND e.project <> ?2 AND NOT EXISTS (SELECT 1 FROM entities v WHERE v.name = e.name "
        "AND (v.project IS NULL OR v.project = ?2))", (json.dumps(list(names)), project))}


def in_slot(conn: Connection, names: Sequence[str], project: str | None) -> dict[str, int]:
    """``{name: id}`` of the names held in exactly ``project`` (``None``: among the global entities): the slot a
    new entity of that project would take."""
    if not names:
        return {}
    rows = conn.execute(
        "SELECT name, id FROM entities WHERE name IN (SELECT value FROM json_each(?1)) "
        "AND coalesce(project, '') = coalesce(?2, '') ORDER BY name", (json.dumps(list(names)), project))
    return {name: int(entity_id) for name, entity_id in rows}


def visible(conn: Connection, entity_ids: Sequence[int]) -> list[int]:
    """``entity_ids`` (order kept) that the current binding sees (all of them when unbound)."""
    binding = _BOUND.get()
    if binding is None or not entity_ids:
        return list(entity_ids)
    kept = {int(r[0]) for r in conn.execute(
        "SELECT id FROM entities WHERE id IN (SELECT value FROM json_each(?1)) AND (project IS NULL OR project = ?2)",
        (json.dumps([int(i) for i in entity_ids]), binding))}
    return [i for i in entity_ids if i in kept]


def visible_observations(conn: Connection, observation_ids: Sequence[int]) -> set[int]:
    """The observations among ``observation_ids`` whose entity the current binding sees (all when unbound)."""
    binding = _BOUND.get()
    if binding is None:
        return set(observation_ids)
    return {int(r[0]) for r in conn.execute(
        "SELECT o.id FROM observations o JOIN entities e ON e.id = o.entity_id "
        "WHERE o.id IN (SELECT value FROM json_each(?1)) AND (e.project IS NULL OR e.project = ?2)",
        (json.dumps([int(i) for i in observation_ids]), binding))}
