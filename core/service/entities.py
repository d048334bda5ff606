"""Entities and their observations, written and read: :class:`Entities`, ``memory.entities``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from limbic.core import validation as check
from limbic.core.embedding.languages import LanguageProfile, profile
from limbic.core.errors import ConflictError, NotFoundError, ValidationError
from limbic.core.models import (
    Entity,
    EntityDetail,
    EntityInput,
    Graph,
    GraphPage,
    GraphStats,
    Observation,
    ObservationInput,
)
from limbic.core.service import mutations
from limbic.core.service.graph_arrays import GraphArrays, build_graph_arrays, patch_graph_arrays
from limbic.core.service.inputs import prepare_entity, prepare_observation, view_args
from limbic.core.service.mutations import UpsertReport
from limbic.core.store import graph, reads, scope, views
from limbic.core.store.search_log import impression_stats

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService
    from limbic.core.store.connection import Connection


class Entities:
    """Entities and their observations: the writes (create, upsert, rename, merge, status, observations) and the reads
    (graph, pages, names, one entity, statistics, the graph's arrays). Opening an entity is a use (docs/evaluation.md).

    Reached as ``memory.entities`` (:class:`~limbic.core.service.memory.MemoryService`).
    """

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def create_entities(self, items: Sequence[EntityInput], *, origin: str | None = None) -> list[Entity]:
        """Create entities whose names do not exist yet; existing names are skipped (reference server semantics).

        Returns the created entities only. Raises :class:`ValidationError` for bad input (nothing written).
        """
        check.count(items, "entities")
        prepared = [prepare_entity(item) for item in items]
        return self.memory.write("create_entities", origin, lambda txn: mutations.create_entities(txn, prepared, self.memory.reindex),
                                 [(item.name, o.content) for item in prepared for o in item.observations])

    def upsert_entities(self, items: Sequence[EntityInput], *, origin: str | None = None) -> UpsertReport:
        """Create new entities and update existing ones: type/status when given (``None`` keeps them), observations added.

        Exact duplicate observations are skipped. One transaction; bad input raises and writes nothing.
        """
        check.count(items, "entities")
        prepared = [prepare_entity(item) for item in items]
        return self.memory.write("upsert_entities", origin, lambda txn: mutations.upsert_entities(txn, prepared, self.memory.reindex),
                                 [(item.name, o.content) for item in prepared for o in item.observations])

    def delete_entities(self, names: Sequence[str], *, origin: str | None = None) -> int:
        """Delete entities with their observations and relations; unknown names are ignored. Returns the count deleted."""
        check.count(names, "entity names")
        names = [check.name(n) for n in names]
        return self.memory.write("delete_entities", origin, lambda txn: mutations.delete_entities(txn, names))

    def rename_entity(self, old: str, new: str, *, origin: str | None = None) -> Entity:
        """Rename an entity; relations follow. Raises NotFoundError, or ConflictError when ``new`` exists."""
        old, new = check.name(old), check.name(new)
        return self.memory.write("rename_entity", origin, lambda txn: mutations.rename_entity(txn, old, new, self.memory.reindex))

    def merge_entities(self, sources: Sequence[str], target: str, *, origin: str | None = None) -> Entity:
        """Merge ``sources`` into ``target``: observations, relations and usage signals move, sources are deleted.

        Duplicate observations and relations are dropped, as are relations between merged entities.
        Raises NotFoundError for unknown names, ConflictError when ``target`` is among ``sources``.
        """
        check.count(sources, "entities to merge")
        sources = list(dict.fromkeys(check.name(s) for s in sources))
        target = check.name(target)
        if not sources:
            raise ValidationError("name at least one entity to merge")
        if target in sources:
            raise ConflictError(f"cannot merge {target!r} into itself")
        return self.memory.write(
            "merge_entities", origin, lambda txn: mutations.merge_entities(txn, sources, target, self.memory.reindex)
        )

    def set_status(self, names: Sequence[str], status: str, *, origin: str | None = None) -> list[Entity]:
        """Set the status (active/paused/completed/archived or a Spanish alias) of existing entities."""
        check.count(names, "entity names")
        names = [check.name(n) for n in names]
        status = check.status(status)
        return self.memory.write("set_status", origin, lambda txn: mutations.set_status(txn, names, status, self.memory.reindex))

    def add_observations(
        self, items: Sequence[tuple[str, Sequence[ObservationInput]]], *, origin: str | None = None
    ) -> list[tuple[str, list[str]]]:
        """Add observations to existing entities; returns ``(entity name, contents actually added)`` per item.

        Exact duplicates are skipped. Raises NotFoundError naming every unknown entity (nothing written).
        """
        check.count(items, "observation groups")
        prepared = [(check.name(n), [prepare_observation(o) for o in obs]) for n, obs in items]
        check.count([o for _, obs in prepared for o in obs], "observations")
        return self.memory.write("add_observations", origin, lambda txn: mutations.add_observations(txn, prepared, self.memory.reindex),
                                 [(name, o.content) for name, obs in prepared for o in obs])

    def delete_observations(self, items: Sequence[tuple[str, Sequence[str]]], *, origin: str | None = None) -> int:
        """Delete observations by exact text; unknown entities and texts are ignored. Returns the count deleted."""
        check.count(items, "observation groups")
        prepared = [(check.name(n), [check.observation(c) for c in contents]) for n, contents in items]
        return self.memory.write(
            "delete_observations", origin, lambda txn: mutations.delete_observations(txn, prepared, self.memory.reindex)
        )

    def update_observation(
        self, entity: str, old_content: str, new_content: str, kind: str | None = None, *, origin: str | None = None
    ) -> Observation:
        """Edit an observation's text (and kind, when given) in place. Raises NotFoundError / ConflictError."""
        entity, old_content, new_content = check.name(entity), check.observation(old_content), check.observation(new_content)
        kind = check.kind(kind)
        return self.memory.write(
            "update_observation", origin,
            lambda txn: mutations.update_observation(txn, entity, old_content, new_content, kind, self.memory.reindex),
        )

    def supersede_observation(
        self, entity: str, old_content: str, new: ObservationInput, *, origin: str | None = None
    ) -> Observation:
        """Add ``new`` as the successor of the live observation ``old_content`` (which stays, marked superseded)."""
        entity = check.name(entity)
        new = prepare_observation(ObservationInput(new.content, new.kind, check.observation(old_content),
                                                    new.created_at, new.expires_at, new.weight))
        return self.memory.write(
            "supersede_observation", origin, lambda txn: mutations.supersede_observation(txn, entity, new, self.memory.reindex),
            [(entity, new.content)],
        )

    def read_graph(self, *, include_ended: bool = False, project: str | None = None,
                   as_of: float | None = None) -> Graph:
        """The whole graph: every entity with its observations, and the active relations (ended ones on request).

        ``project``: only that project's entities and the global ones, and the relations among them;
        ``as_of`` (UTC seconds): the graph as it stood then (:mod:`limbic.core.store.views`,
        docs/lifecycle.md). Raises ValidationError for a bad project or time."""
        project, as_of = view_args(project, as_of)
        conn = self.memory.database.read()
        if project is None and as_of is None:
            return Graph(tuple(reads.all_entities(conn)), tuple(reads.all_relations(conn, include_ended=include_ended)))
        with conn:
            ids = views.all_ids(conn, project=project, as_of=as_of)
            graph = Graph(tuple(views.entities(conn, ids, as_of=as_of)), tuple(views.relations(
                conn, ids, project=project, as_of=as_of, include_ended=include_ended)))
        return graph

    def entity_names(self, *, project: str | None = None, as_of: float | None = None) -> list[str]:
        """All entity names, by id (of the view of ``project`` / ``as_of``, as :meth:`read_graph`)."""
        project, as_of = view_args(project, as_of)
        conn = self.memory.database.read()
        if project is None and as_of is None:
            return reads.all_names(conn)
        ids = views.all_ids(conn, project=project, as_of=as_of)
        return [e.name for e in reads.entities_by_ids(conn, ids)]

    def read_graph_page(self, offset: int = 0, limit: int = 100, *, project: str | None = None,
                        as_of: float | None = None) -> GraphPage:
        """Entities ``offset .. offset+limit`` by id, with the active relations touching them (of the view of
        ``project`` / ``as_of``, as :meth:`read_graph`)."""
        offset = check.limit(offset, low=0, high=10**9, what="offset")
        limit = check.limit(limit)
        project, as_of = view_args(project, as_of)
        conn = self.memory.database.read()
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
        return reads.stats(self.memory.database.read())

    def languages(self, sample: int = 2000) -> LanguageProfile:
        """The languages the memory is written in (:func:`limbic.core.embedding.languages.profile`), told from about
        ``sample`` entity names and as many live observations spread over it."""
        return profile(reads.text_sample(self.memory.database.read(), sample))

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
        project, as_of = view_args(project, as_of)
        conn = self.memory.database.read()
        with conn:
            found = scope.resolve(conn, [check.name(n) for n in names], project)  # names in the asked project's view
            ids = views.in_view(conn, list(dict.fromkeys(found[n] for n in names if n in found)),
                                project=project, as_of=as_of)
            graph = Graph(tuple(views.entities(conn, ids, as_of=as_of)),
                          tuple(views.relations(conn, ids, project=project, as_of=as_of)))
        if record and ids and as_of is None:  # reading the past is not a use of the memory now
            self.memory.usage.record_use(ids, origin, "open_nodes")
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
        conn = self.memory.database.read()
        found = reads.entities_by_names(conn, [name])
        if not found:
            raise NotFoundError(f"unknown entity {name!r}", [name])
        return self._detail(conn, found[0], record, origin)

    def get_entity_by_id(self, entity_id: int) -> EntityDetail:
        """:meth:`get_entity` of the entity ``entity_id`` (a row of :meth:`graph_arrays`), never recorded as a use:
        unlike a name, an id is never ambiguous (a name may be held by several projects). A call bound to a
        project sees its entities and the global ones. Raises NotFoundError for an id it does not see."""
        conn = self.memory.database.read()
        found = reads.entities_by_ids(conn, [int(entity_id)])
        binding = scope.current()
        if not found or (binding is not None and found[0].project not in (None, binding)):
            raise NotFoundError(f"no entity with id {entity_id}", [str(entity_id)])
        return self._detail(conn, found[0], False, None)

    def _detail(self, conn: Connection, entity: Entity, record: bool, origin: str | None) -> EntityDetail:
        relations = views.relations_seen(conn, [entity.id], include_ended=True)
        count, last, days = reads.access_stats(conn, entity.id)
        impressions, last_impression = impression_stats(conn, entity.id)
        degree = sum(1 for r in relations if r.active)
        if record:
            self.memory.usage.record_use([entity.id], origin, "get_entity")
        return EntityDetail(entity, count, last, days, degree, tuple(relations), impressions, last_impression)

    def graph_arrays(self, previous: GraphArrays | None = None) -> GraphArrays:
        """The graph as arrays for drawing (:class:`~limbic.core.service.graph_arrays.GraphArrays`), from one read snapshot.

        With ``previous``, only the entities the ``changes`` log names after ``previous.change_id`` are
        read again and patched in; the whole graph is read when they exceed
        :data:`~limbic.core.store.graph.FULL_RELOAD_SHARE` of it. Returns ``previous`` itself when nothing changed.
        """
        conn = self.memory.database.read()
        with conn:  # one consistent snapshot
            if previous is None:
                rows = graph.graph_rows(conn)
            else:
                rows = graph.graph_rows_since(conn, previous.change_id, len(previous))
        if previous is None:
            return build_graph_arrays(rows.entities, rows.relations, rows.change_id)
        return previous if rows.change_id == previous.change_id else patch_graph_arrays(previous, rows)
