"""Who changed what: the ``changes`` log of :class:`~limbic.core.service.MemoryService` read for people (the
editor's *History* tab, ``limbic changes``), and the rows of the log of applied decisions (``limbic decisions``;
applying and undoing them is :mod:`limbic.core.service.decision_log`). Each change carries its origin: ``gui``
(the app), ``cli``, ``import``, ``system``, ``stdio`` (an MCP client over stdio) or ``mcp:NAME`` (over HTTP with
the token NAME, docs/mcp.md "Teams").

The manager :class:`History` (``memory.history``); reading records nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from limbic.core import validation as check
from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.models import Changes, TimelineEvent
from limbic.core.service.provenance import HOUSEKEEPING_OPS
from limbic.core.store import decision_log, history, reads, timeline
from limbic.core.store.database import WriteTransaction
from limbic.core.store.decision_log import DecisionRow
from limbic.core.store.schema import LANDED_OP

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService

Write = Callable[[str, str | None, Callable[[WriteTransaction], Any]], Any]

MAX_HISTORY = 10_000
USE_KINDS = {"open_nodes": "opened", "get_entity": "opened", "gui_open": "opened", "mark_used": "used"}
"""The timeline's kind of each use (the ``source`` of its relevance label)."""
STEP_VERBS = {"search": "searched", "opened": "opened", "used": "marked used", "wrote": "wrote"}
"""How a timeline step's kind is said to people (the app's *Agents* tab, ``limbic timeline``)."""


def _limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_HISTORY:
        raise ValidationError(f"limit must be an integer between 1 and {MAX_HISTORY}, got {limit!r}")
    return limit


def origin_label(origin: str) -> str:
    """How a change's origin is shown: ``alice (MCP)`` for ``mcp:alice``, ``agent (stdio)`` for ``stdio``,
    ``app`` for ``gui``, the origin itself otherwise."""
    if origin.startswith("mcp:"):
        return f"{origin[4:]} (MCP)"
    return {"gui": "app", "stdio": "agent (stdio)", "mcp": "agent (MCP)"}.get(origin, origin)


def _named(pairs: Sequence[tuple[int, str | None]]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """``(names, ids)`` of ``(entity id, name)`` pairs; a deleted entity is named ``#ID``."""
    return tuple(name if name is not None else f"#{entity_id}" for entity_id, name in pairs), \
        tuple(entity_id for entity_id, _ in pairs)


class History:
    """The change log and the decision log: what changed, when, by whom; the decisions people and agents took.

    Reached as ``memory.history`` (:class:`~limbic.core.service.memory.MemoryService`).
    """

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def recent_changes(self, limit: int = 100) -> list[Changes]:
        """The last ``limit`` (1–10,000) changes of the memory, newest first. Raises ValidationError."""
        return history.recent_changes(self.memory.database.read(), _limit(limit))

    def entity_history(self, name: str, limit: int = 100) -> list[Changes]:
        """The last ``limit`` (1–10,000) changes that touched the entity ``name``, newest first (renames keep
        an entity's history; a deleted entity has none to show).

        Raises:
            ValidationError: a malformed name or limit.
            NotFoundError: no entity has that name.
        """
        name, limit = check.name(name), _limit(limit)
        conn = self.memory.database.read()
        ids = reads.ids_by_names(conn, [name])
        if name not in ids:
            raise NotFoundError(f"entity {name!r} not found", [name])
        return history.entity_changes(conn, ids[name], limit)

    def timeline(self, agent: str | None = None, *, origin: str | None = None, since: float | None = None,
                 until: float | None = None, limit: int = 500) -> list[TimelineEvent]:
        """What an agent retrieved, opened or used, and wrote: its newest ``limit`` (1–10,000) steps between
        ``since`` and ``until`` (UTC seconds, both included; ``None``: no bound), newest first (the same time:
        the search first). ``agent`` is an MCP token's name (its origin ``mcp:NAME``), ``origin`` any origin as
        stored (``stdio``, ``gui``…); neither: every agent and person.

        Built from the search log (each logged search and its impressions), the use log (each entity opened —
        ``open_nodes``, ``get_entity`` — or marked used, under the origin of whoever used it, whether a search
        showed it first or not; with the ids of the logged searches it answered: the ``searchId`` it named, or
        the searches by the same origin within the feedback window (as set now) before it that the entity is a
        relevance label of, :mod:`limbic.core.service.usage`) and the change log (each write; the housekeeping steps that write no
        memory — vectors landed, settings, tokens — left out). Looking (search results, the app's inspector) is
        not a use and is not here; nor are searches and uses dropped from their logs by their retention (the
        newest ``retention`` of each: docs/architecture.md "Use log"). Reading records nothing.

        Raises:
            ValidationError: a malformed agent name or origin, both given, a bad limit, or ``since`` after
                ``until``.
        """
        limit = _limit(limit)
        if agent is not None and origin is not None:
            raise ValidationError("give an agent's name or an origin, not both")
        if agent is not None:
            origin = f"mcp:{check.label(agent, 'agent')}"
        elif origin is not None:
            origin = check.label(origin, "origin")
        since, until = check.timestamp(since, "since"), check.timestamp(until, "until")
        if since is not None and until is not None and since > until:
            raise ValidationError("since must not be after until")
        window = self.memory.learning.config().feedback_window_seconds
        conn = self.memory.database.read()
        with conn:  # one snapshot for the three logs
            searched = timeline.searches(conn, origin, since, until, limit)
            used = timeline.uses(conn, origin, since, until, limit, window)
            wrote = timeline.writes(conn, origin, since, until, limit, HOUSEKEEPING_OPS)
        events = [TimelineEvent(at, who, "search", query, *_named(shown), (search_id,), mode)
                  for search_id, at, who, query, mode, shown in searched]
        grouped: dict[tuple[float, str, str], tuple[dict[int, str | None], dict[int, None]]] = {}
        for at, who, source, search_id, entity_id, name in used:  # one call's uses share their time
            entities, searches = grouped.setdefault((at, who, USE_KINDS.get(source, "opened")), ({}, {}))
            entities[entity_id] = name
            if search_id is not None:
                searches[search_id] = None
        events += [TimelineEvent(at, who, kind, kind, *_named(sorted(entities.items())), tuple(sorted(searches)))
                   for (at, who, kind), (entities, searches) in grouped.items()]
        events += [TimelineEvent(at, who, "wrote", op, *_named(touched)) for _id, at, who, op, touched in wrote]
        order = {"search": 0, "opened": 1, "used": 2, "wrote": 3}
        events.sort(key=lambda e: (-e.at, order[e.kind]))
        return events[:limit]

    def timeline_origins(self) -> list[str]:
        """Every origin that searched, used an entity or wrote in this memory (``mcp:NAME`` for the MCP token NAME),
        sorted: the agents :meth:`timeline` can show."""
        return timeline.origins(self.memory.database.read(), HOUSEKEEPING_OPS)

    def log_decision(self, kind: str, description: str, subjects: Sequence[str], edit: str, *,
                     origin: str | None = None) -> int:
        """Record an applied decision (``edit``: the JSON of its edit) made by ``origin`` (default the service's);
        returns its id. Meant inside the transaction that applies it (a savepoint of it)."""
        by = origin or self.memory.origin
        return self.memory.write("log_decision", by, lambda txn: decision_log.insert(
            txn.conn, time.time(), by, kind, description, subjects, edit))

    def decisions(self, limit: int = 100, *, origin: str | None = None) -> list[DecisionRow]:
        """The last ``limit`` (1–10,000) applied decisions, newest first, only ``origin``'s when given.
        Raises ValidationError for a bad limit."""
        return decision_log.recent(self.memory.database.read(), _limit(limit), origin)

    def decision_record(self, decision_id: int | None = None, *, origin: str | None = None) -> tuple[DecisionRow, str]:
        """The decision ``decision_id`` and its edit's JSON, or (``None``) the newest one still standing, only
        among ``origin``'s when given. Raises NotFoundError when there is none."""
        conn = self.memory.database.read()
        if decision_id is None:
            row = decision_log.last_standing(conn, origin)
            if row is None:
                raise NotFoundError("no decision to undo" + ("" if origin is None else f" made by {origin_label(origin)}"))
            decision_id = row.id
        if isinstance(decision_id, bool) or not isinstance(decision_id, int):
            raise ValidationError(f"a decision id is a whole number, got {decision_id!r}")
        found = decision_log.by_id(conn, decision_id)
        if found is None:
            raise NotFoundError(f"no decision {decision_id}")
        return found

    def mark_decision_undone(self, decision_id: int, *, origin: str | None = None) -> None:
        """Record that the decision ``decision_id`` was undone now by ``origin`` (inside the undo's transaction)."""
        by = origin or self.memory.origin
        self.memory.write("log_decision", by, lambda txn: decision_log.mark_undone(txn.conn, decision_id, time.time(), by))

    def last_change_id(self) -> int:
        return reads.last_change_id(self.memory.database.read())

    def changes_since(self, change_id: int) -> list[Changes]:
        """Logged changes of the data with an id above ``change_id``, oldest first (from any process);
        the steps that only landed computed vectors are left out."""
        return [c for c in reads.changes_since(self.memory.database.read(), change_id) if c.op != LANDED_OP]
