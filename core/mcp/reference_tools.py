"""The nine tools of the reference memory server ``@modelcontextprotocol/server-memory``: its names, input
schemas, result shapes, titles, descriptions and annotations; Limbic's extras are optional keys
(:mod:`limbic.core.mcp.schemas`), so with them unused every result is byte-identical to the reference's.
"""

import logging
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import (
    CallToolResult,
)
from pydantic import Field

from limbic.core.lifecycle.expiry import parse_instant
from limbic.core.mcp.arguments import strict_tool
from limbic.core.mcp.detail_schemas import reflection_out
from limbic.core.mcp.lifecycle_args import entity_project, observation_inputs, past_expiry_notes
from limbic.core.mcp.lifecycle_tools import conflict_out
from limbic.core.mcp.schemas import (
    AddObservationsOut,
    DeletionIn,
    EntitiesOut,
    EntityIn,
    GraphOut,
    Kind,
    NodesOut,
    ObservationBatchIn,
    Query,
    RelationIn,
    RelationsOut,
    SuccessOut,
    entity_out,
    filtered_entity_out,
    graph_out,
    relation_out,
    stats_out,
    trim_observations,
)
from limbic.core.mcp.tooling import (
    DEFAULT_PAGE,
    AsOf,
    Items,
    MaxObservations,
    Offset,
    PageLimit,
    ProjectArg,
    current_origin,
    deletion_message,
    paged,
    refusals,
    relation_inputs,
    result,
    success,
    tool_annotations,
)
from limbic.core.models import EntityInput
from limbic.core.service import MemoryService
from limbic.core.service.inputs import prepare_relation
from limbic.core.validation import MAX_ITEMS

log = logging.getLogger(__name__)


def reference_tools(service: MemoryService, project: str | None = None) -> list[Tool]:
    """The reference tools, each one service call (one transaction) with the caller's origin (``current_origin()``);
    ``project``: the server's project, the default of new entities and of reads; every call is bound to it by the
    server (docs/lifecycle.md "Project scope"), so naming another is refused."""
    def create_entities(entities: Annotated[list[EntityIn], Field(max_length=MAX_ITEMS)]
                        ) -> Annotated[CallToolResult, EntitiesOut]:
        with refusals():
            items = [
                EntityInput(name=e.name, entity_type=e.entityType, status=e.status,
                            observations=observation_inputs(e.observations, e), project=entity_project(e.project, project))
                for e in entities
            ]
            created = [entity_out(e) for e in service.entities.create_entities(items, origin=current_origin())]
        notes = past_expiry_notes([(i.name, i.observations) for i in items])
        return result({"entities": created, "notes": notes}) if notes else result({"entities": created}, created)

    def create_relations(relations: Annotated[list[RelationIn], Field(max_length=MAX_ITEMS)]
                         ) -> Annotated[CallToolResult, RelationsOut]:
        with refusals():
            created = [relation_out(r) for r in service.relations.create_relations(relation_inputs(relations), origin=current_origin())]
        return result({"relations": created}, created)

    def add_observations(observations: Annotated[list[ObservationBatchIn], Field(max_length=MAX_ITEMS)]
                         ) -> Annotated[CallToolResult, AddObservationsOut]:
        for batch in observations:
            if batch.supersedes is not None and len(batch.contents) != 1:
                raise ToolError(f"{batch.entityName}: 'supersedes' needs exactly one content "
                                f"(got {len(batch.contents)}); send one batch per replaced observation")
        with refusals():
            items = [(b.entityName, list(observation_inputs(b.contents, b))) for b in observations]
            added = service.entities.add_observations(items, origin=current_origin())
        results = [{"entityName": name, "addedObservations": list(contents)} for name, contents in added]
        notes = past_expiry_notes(items)
        try:
            found, pending = service.lifecycle.conflicts_of(added)
        except Exception as exc:  # noqa: BLE001 - stored is stored: the answer says so, without its conflicts
            log.warning("observations stored; reading their conflicts failed: %s", exc)
            unavailable: dict[str, Any] = {"results": results, "conflicts": "unavailable"}
            if notes:
                unavailable["notes"] = notes
            return result(unavailable)
        if not found and not pending and not notes:
            return result({"results": results}, results)
        out: dict[str, Any] = {"results": results}
        if notes:
            out["notes"] = notes
        if found:
            out["conflicts"] = [conflict_out(c) for c in found]
        if pending:
            out["pendingConflictChecks"] = pending
        return result(out)

    def delete_entities(entityNames: Annotated[Items, Field(description="An array of entity names to delete")]
                        ) -> Annotated[CallToolResult, SuccessOut]:
        with refusals(), service.transaction("delete_entities", origin=current_origin()):
            outside = service.projects.outside_project(entityNames)
            deleted = service.entities.delete_entities(entityNames, origin=current_origin())
        return success(deletion_message("Entities", deleted, outside))

    def delete_observations(deletions: Annotated[list[DeletionIn], Field(max_length=MAX_ITEMS)]
                            ) -> Annotated[CallToolResult, SuccessOut]:
        with refusals(), service.transaction("delete_observations", origin=current_origin()):
            outside = service.projects.outside_project([d.entityName for d in deletions])
            deleted = service.entities.delete_observations([(d.entityName, d.observations) for d in deletions],
                                                  origin=current_origin())
        return success(deletion_message("Observations", deleted, outside))

    def delete_relations(relations: Annotated[list[RelationIn],
                                              Field(max_length=MAX_ITEMS, description="An array of relations to delete")]
                         ) -> Annotated[CallToolResult, SuccessOut]:
        with refusals(), service.transaction("delete_relations", origin=current_origin()):
            items = [prepare_relation(r) for r in relation_inputs(relations)]
            outside = service.projects.outside_project([n for r in items for n in (r.source, r.target)])
            deleted = service.relations.delete_relations(items, origin=current_origin())
        skipped = dict.fromkeys(f"{r.source!r} -[{r.relation_type}]-> {r.target!r}" for r in items
                                if {r.source, r.target} & set(outside))
        return success(deletion_message("Relations", deleted, outside, list(skipped)))

    def read_graph(
        mode: Annotated[Literal["full", "names", "page", "summary"], Field(
            description="names: names only; page: from offset; summary: counts")] = "full",
        offset: Offset = 0,
        limit: PageLimit | None = None,
        project: ProjectArg = None,
        asOf: AsOf = None,
    ) -> Annotated[CallToolResult, GraphOut]:
        with refusals():
            view = read_view(project, asOf)
            if mode == "names":
                names = service.entities.entity_names(**view)
                return result({"names": names, "total": len(names)})
            if mode == "summary":
                return result({"summary": stats_out(service.entities.stats())})
            if mode == "page" or limit is not None or offset:
                page = service.entities.read_graph_page(offset, DEFAULT_PAGE if limit is None else limit, **view)
                return paged(page, now=view["as_of"])
            graph = service.entities.read_graph(**view)
        out = graph_out(graph.entities, graph.relations, view["as_of"])
        return result(out)

    def search_nodes(query: Annotated[Query, Field(
            description="The search query to match against entity names, types, and observation content")],
                     offset: Annotated[Offset, Field(description="Skip this many matches")] = 0,
                     limit: Annotated[PageLimit | None, Field(
                         description="At most this many matches (default all)")] = None,
                     maxObservations: MaxObservations = None,
                     project: ProjectArg = None,
                     asOf: AsOf = None,
                     ) -> Annotated[CallToolResult, NodesOut]:
        with refusals():
            view = read_view(project, asOf)
            if limit is not None or offset:
                page = service.search.search_nodes_page(query, offset, DEFAULT_PAGE if limit is None else limit, **view)
                return paged(page, query, maxObservations, view["as_of"])
            graph = service.search.search_nodes(query, **view)
        out = graph_out(graph.entities, graph.relations, view["as_of"])
        if maxObservations is not None:
            out["entities"] = [trim_observations(e, query, maxObservations) for e in out["entities"]]
        return result(out)

    def open_nodes(names: Annotated[Items, Field(description="An array of entity names to retrieve")],
                   project: ProjectArg = None,
                   asOf: AsOf = None,
                   kinds: Annotated[list[Kind] | None, Field(
                       max_length=MAX_ITEMS, description="Only observations of these kinds")] = None,
                   includeSuperseded: Annotated[bool, Field(
                       strict=True, description="Also list replaced observations (history)")] = False,
                   includeReflections: Annotated[bool, Field(
                       strict=True, description="Also list reflections about them")] = False,
                   ) -> Annotated[CallToolResult, NodesOut]:
        with refusals():
            view = read_view(project, asOf)
            graph = service.entities.open_nodes(names, record=True, origin=current_origin(), **view)
            thoughts = service.reflections.reflections_by_entity([e.name for e in graph.entities]) if includeReflections else {}
        out = graph_out(graph.entities, graph.relations, view["as_of"])
        if kinds is not None or includeSuperseded or includeReflections:
            out["entities"] = [filtered_entity_out(e, kinds, includeSuperseded, view["as_of"]) for e in graph.entities]
        for entity in out["entities"] if includeReflections else ():
            entity["reflections"] = [reflection_out(r) for r in thoughts.get(entity["name"], [])]
        return result(out)

    def read_view(requested: str | None, as_of: str | None) -> dict:
        """The ``project`` / ``as_of`` keywords of a read: the requested project (refused by the service when the call
        is bound to another), else the server's."""
        return {"project": requested or project,
                "as_of": None if as_of is None else parse_instant(as_of, "asOf", end_of_day=True)}

    write, destroy, read = tool_annotations(False), tool_annotations(False, True, True), tool_annotations(True, idempotent=True)
    return [strict_tool(fn, title=title, description=description, annotations=annotations)
            for fn, title, description, annotations in (
        (create_entities, "Create Entities", "Create multiple new entities in the knowledge graph", write),
        (create_relations, "Create Relations",
         "Create multiple new relations between entities in the knowledge graph. Relations should be in active "
         "voice. Refused if an entity does not exist (nothing stored).", write),
        (add_observations, "Add Observations", "Add new observations to existing entities in the knowledge graph",
         write),
        (delete_entities, "Delete Entities",
         "Delete multiple entities and their associated relations from the knowledge graph", destroy),
        (delete_observations, "Delete Observations",
         "Delete specific observations from entities in the knowledge graph", destroy),
        (delete_relations, "Delete Relations", "Delete multiple relations from the knowledge graph", destroy),
        (read_graph, "Read Graph", "Read the entire knowledge graph", read),
        (search_nodes, "Search Nodes", "Search for nodes in the knowledge graph based on a query", read),
        (open_nodes, "Open Nodes",
         "Open specific nodes in the knowledge graph by their names. Opening is a use: it raises their rank in "
         "search_semantic.", read),
    )]
