"""Reads and uses of :class:`~limbic.core.service.MemoryService`: the graph, pages, entities, change records,
and the usage signals a read records (opening an entity is a use; docs/evaluation.md).

A mixin of ``MemoryService``: it uses the service's ``database``, ``origin``, ``learning`` and signal
recorder, declared below for type checking.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from limbic.core import validation as check
from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.learning.loop import LearningLoop
from limbic.core.models import Changes, EntityDetail, Graph, GraphPage, GraphStats
from limbic.core.service.graph_arrays import GraphArrays, build_graph_arrays, patch_graph_arrays
from limbic.core.service.usage import SignalRecorder, record_use
from limbic.core.store import graph, reads, scope, views, writes
from limbic.core.store.database import Database
from limbic.core.store.schema import LANDED_OP
from limbic.core.store.search_log import impression_stats


def _view(project: str | None, as_of: float | None) -> tuple[str | None, float | None]:
    """Validated view arguments: a project name (or ``None``) narrowed by the project the call is bound to
    (:func:`limbic.core.store.scope.narrow`: the binding when none is asked, a refusal for another one), a time
    in UTC seconds (or ``None``)."""
    return (scope.narrow(None if project is None else check.label(project, "project")),
            check.timestamp(as_of, "asOf"))


class ReadsAndUses:
    """Reads of the memory graph and the uses they record (mixed into ``MemoryService``)."""

    database: Database
    origin: str
    learning: LearningLoop
    _signals: SignalRecorder

    def read_graph(self, *, include_ended: bool = False, project: str | None = None,
                   as_of: float | None = None) -> Graph:
        """The whole graph: every entity with its observations, and the active relations (ended ones on request).

        ``project``: only that project's entities and the global ones, and the relations among them;
        ``as_of`` (UTC seconds): the graph as it stood then (:mod:`limbic.core.store.views`,
        docs/lifecycle.md). Raises ValidationError for a bad project or time."""
        project, as_of = _view(project, as_of)
        conn = self.database.read()
        if project is None and as_of is None:
            return Graph(tuple(reads.all_entities(conn)), tuple(reads.all_relations(conn, include_ended=include_ended)))
        with conn:
            ids = views.all_ids(conn, project=project, as_of=as_of)
            graph = Graph(tuple(views.entities(conn, ids, as_of=as_of)), tuple(views.relations(
                conn, ids, project=project, as_of=as_of, include_ended=include_ended)))
        return graph

    def entity_names(self, *, project: str | None = None, as_of: float | None = None) -> list[str]:
        """All entity names, by id (of the view of ``project`` / ``as_of``, as :meth:`read_graph`)."""
        project, as_of = _view(project, as_of)
        conn = self.database.read()
        if project is None and as_of is None:
            return reads.all_names(conn)
        ids = views.all_ids(conn, project=project, as_of=as_of)
        return [e.name for e in reads.entities_by_ids(conn, ids)]

    def projects(self) -> dict[str, int]:
        """``{project: number of entities}`` of every project named in the memory (global entities aside); a call
        bound to a project sees that one only."""
        found = views.projects(self.database.read())
        binding = scope.current()
        return found if binding is None else {p: n for p, n in found.items() if p == binding}

    def outside_project(self, names: Sequence[str]) -> list[str]:
        """Of ``names`` (order kept, each once), those that another project holds and the project the call is bound
        to does not see (neither its own entity of the name nor a global one): what the call cannot touch
        although the memory has it (docs/lifecycle.md "Project scope"). Empty when the call is unbound (every
        entity is seen). Raises ValidationError for a malformed name."""
        binding = scope.current()
        if binding is None:
            return []
        names = list(dict.fromkeys(check.name(n) for n in names))
        held = scope.held_elsewhere(self.database.read(), names, binding)
        return [n for n in names if n in held]

    def read_graph_page(self, offset: int = 0, limit: int = 100, *, project: str | None = None,
                        as_of: float | None = None) -> GraphPage:
        """Entities ``offset .. offset+limit`` by id, with the active relations touching them (of the view of
        ``project`` / ``as_of``, as :meth:`read_graph`)."""
        offset = check.limit(offset, low=0, high=10**9, what="offset")
        limit = check.limit(limit)
        project, as_of = _view(project, as_of)
        conn = self.database.read()
        if project is None and as_of is None:
            entities = reads.all_entities(conn, offset=offset, limit=limit)
            relations = reads.relations_touching(conn, [e.id for e in entities])
            total = reads.entity_count(conn)
            return GraphPage(tuple(entities), tuple(relations), offset, limit, total)
        with conn:
            ids = views.all_ids(conn, project=project, as_of=as_of)
            page = ids[offset:offset + limit]
            result = GraphPage(tuple(views.entities(conn, page, as_of=as_of)),
                               tuple(views.relations(conn, page, project=project, as_of=as_of)), offset, limit, len(ids))
        return result

    def stats(self) -> GraphStats:
        """Counts of entities, active relations, live and superseded observations, types, statuses, vectors."""
        return reads.stats(self.database.read())

    def search_nodes(self, query: str, *, project: str | None = None, as_of: float | None = None) -> Graph:
        """Entities whose name, type or a current observation contains ``query`` (ASCII case-insensitive), and the
        active relations with at least one endpoint among them (reference server semantics); in the view of
        ``project`` / ``as_of`` when given (as :meth:`read_graph`)."""
        text = check.query(query)
        project, as_of = _view(project, as_of)
        conn = self.database.read()
        with conn:
            ids = views.substring_matches(conn, text, project=project, as_of=as_of)
            graph = Graph(tuple(views.entities(conn, ids, as_of=as_of)),
                          tuple(views.relations(conn, ids, project=project, as_of=as_of)))
        return graph

    def search_nodes_page(self, query: str, offset: int = 0, limit: int = 100, *, project: str | None = None,
                          as_of: float | None = None) -> GraphPage:
        """Matches ``offset .. offset+limit`` of :meth:`search_nodes` (same order: by entity id), with the active
        relations touching them; ``total_entities`` counts every match. Raises ``ValidationError`` on a bad
        query, offset, limit, project or time."""
        text = check.query(query)
        offset = check.limit(offset, low=0, high=10**9, what="offset")
        limit = check.limit(limit)
        project, as_of = _view(project, as_of)
        conn = self.database.read()
        with conn:
            ids = views.substring_matches(conn, text, project=project, as_of=as_of)
            page = ids[offset:offset + limit]
            result = GraphPage(tuple(views.entities(conn, page, as_of=as_of)),
                               tuple(views.relations(conn, page, project=project, as_of=as_of)), offset, limit, len(ids))
        return result

    def open_nodes(self, names: Sequence[str], *, record: bool = True, origin: str | None = None,
                   project: str | None = None, as_of: float | None = None) -> Graph:
        """The named entities (unknown names ignored) and the active relations touching them; in the view of
        ``project`` / ``as_of`` when given (as :meth:`read_graph`: other projects' entities count as unknown).

        Opening is a use: with ``record`` each opened entity gets an access (count, last access, access
        day) and each pair opened together a co-occurrence, written off the caller's path (mcp-memory "The Limbic System",
        "Tracking scope"), and each opened entity that a search by the same ``origin``
        showed shortly before is a relevance label for that search. Internal reads (import) pass
        ``record=False``.
        """
        check.count(names, "entity names")
        project, as_of = _view(project, as_of)
        conn = self.database.read()
        with conn:
            found = scope.resolve(conn, [check.name(n) for n in names], project)  # names in the asked project's view
            ids = views.in_view(conn, list(dict.fromkeys(found[n] for n in names if n in found)),
                                project=project, as_of=as_of)
            graph = Graph(tuple(views.entities(conn, ids, as_of=as_of)),
                          tuple(views.relations(conn, ids, project=project, as_of=as_of)))
        if record and ids and as_of is None:  # reading the past is not a use of the memory now
            self._record_use(ids, origin, "open_nodes")
        return graph

    def get_entity(self, name: str, *, record: bool = False, origin: str | None = None) -> EntityDetail:
        """One entity with access and impression statistics, degree and all its relations (ended ones included);
        in a call bound to a project only those whose both ends it sees (docs/lifecycle.md "Project scope"), so
        a global entity never shows another project's entity through a relation, in the list or the degree.

        With ``record`` the read is a use (MCP ``get_entity``): one access is recorded off the caller's
        path, after the statistics returned here were read. Internal reads (undo snapshots, import,
        refreshes after a change) and the app's (looking is not using) keep the default ``False``.
        Raises NotFoundError for an unknown name.
        """
        name = check.name(name)
        conn = self.database.read()
        found = reads.entities_by_names(conn, [name])
        if not found:
            raise NotFoundError(f"unknown entity {name!r}", [name])
        entity = found[0]
        relations = views.relations_seen(conn, [entity.id], include_ended=True)
        count, last, days = reads.access_stats(conn, entity.id)
        impressions, last_impression = impression_stats(conn, entity.id)
        degree = sum(1 for r in relations if r.active)
        if record:
            self._record_use([entity.id], origin, "get_entity")
        return EntityDetail(entity, count, last, days, degree, tuple(relations), impressions, last_impression)

    def graph_arrays(self, previous: GraphArrays | None = None) -> GraphArrays:
        """The graph as arrays for drawing (:class:`~limbic.core.service.graph_arrays.GraphArrays`), from one read snapshot.

        With ``previous``, only the entities the ``changes`` log names after ``previous.change_id`` are
        read again and patched in; the whole graph is read when they exceed
        :data:`~limbic.core.store.graph.FULL_RELOAD_SHARE` of it. Returns ``previous`` itself when nothing changed.
        """
        conn = self.database.read()
        with conn:  # one consistent snapshot
            if previous is None:
                rows = graph.graph_rows(conn)
            else:
                rows = graph.graph_rows_since(conn, previous.change_id, len(previous))
        if previous is None:
            return build_graph_arrays(rows.entities, rows.relations, rows.change_id)
        return previous if rows.change_id == previous.change_id else patch_graph_arrays(previous, rows)

    def last_change_id(self) -> int:
        return reads.last_change_id(self.database.read())

    def changes_since(self, change_id: int) -> list[Changes]:
        """Logged changes of the data with an id above ``change_id``, oldest first (from any process);
        the steps that only landed computed vectors are left out."""
        return [c for c in reads.changes_since(self.database.read(), change_id) if c.op != LANDED_OP]

    # --- usage signals -------------------------------------------------------------------------

    def record_access(self, names: Sequence[str], *, at: float | None = None, co_occurrence: bool = True) -> None:
        """Record one access of each named entity at ``at`` (UTC seconds, default now) and their co-occurrences.

        For replaying or seeding usage history (the sample graph); agents and the GUI use
        :meth:`mark_used`, :meth:`open_nodes` or :meth:`get_entity`. Raises NotFoundError for unknown
        names. Signals are not logged in ``changes``.
        """
        check.count(names, "entity names")
        at = check.timestamp(at, "access time") or time.time()
        names = [check.name(n) for n in names]
        with self.database.maintenance() as conn:
            ids = writes.require_ids(conn, names)
            writes.record_access(conn, list(ids.values()), at, co_occurrence=co_occurrence)

    def mark_used(self, names: Sequence[str], *, search_id: int | None = None,
                  origin: str | None = None) -> list[str]:
        """Say that these entities were used (they helped): one access each and a co-occurrence per pair.

        The explicit form of a use for agents (MCP ``mark_used``), written before returning. With
        ``search_id`` (a ``SearchOutcome.search_id``) each entity is a relevance label for that search
        only; without it, the searches by the same ``origin`` in the feedback window that showed them.
        Returns the names, without duplicates. Raises ValidationError for an empty or too long list and
        NotFoundError naming every unknown entity or an unknown ``search_id`` (nothing is recorded then).
        """
        check.count(names, "entity names")
        unique = list(dict.fromkeys(check.name(n) for n in names))
        if not unique:
            raise ValidationError("name at least one entity that was used")
        origin = origin or self.origin
        self._signals.wait()  # the searches it answers are logged first (a search's log waits for a quiet moment)
        with self.database.maintenance() as conn:
            ids = list(writes.require_ids(conn, unique).values())
            if search_id is not None:
                self.learning.require_search(conn, search_id)
            record_use(conn, ids, time.time(), origin=origin, source="mark_used", search_id=search_id,
                       feedback_window=self.learning.config().feedback_window_seconds)
        return unique

    def _record_use(self, entity_ids: list[int], origin: str | None, source: str) -> None:
        self._signals.record_access(entity_ids, time.time(), origin=origin or self.origin, source=source,
                                    feedback_window=self.learning.config().feedback_window_seconds)

    def wait_for_signals(self, timeout: float = 10.0) -> None:
        """Block until access/co-occurrence recordings queued so far are written (tests, shutdown)."""
        self._signals.wait(timeout)
