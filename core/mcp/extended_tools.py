"""Limbic's extended tools: ``search_semantic``, ``mark_used``, ``rename_entity``, ``merge_entities``,
``set_status``, ``end_relation`` and ``get_entity``."""

from typing import Annotated

from mcp.server.mcpserver.tools import Tool
from mcp_types import (
    CallToolResult,
)
from pydantic import Field

from limbic.core.mcp.answers import DEFAULT_SEARCH_LIMIT, search_answer
from limbic.core.mcp.arguments import strict_tool
from limbic.core.mcp.detail_schemas import (
    EntityDetailOut,
    RelationDetailOut,
    detail_out,
    reflection_out,
    relation_detail,
)
from limbic.core.mcp.schemas import (
    EntityOut,
    MarkUsedOut,
    Name,
    PresetName,
    Query,
    RelationIn,
    SearchOut,
    Status,
    StatusOut,
    entity_out,
)
from limbic.core.mcp.tooling import (
    Items,
    MaxObservations,
    ProjectArg,
    SearchLimit,
    current_origin,
    refusals,
    relation_inputs,
    result,
    tool_annotations,
)
from limbic.core.search import presets
from limbic.core.service import MemoryService, decision_log
from limbic.core.service.entity_edits import MergeEntities, SetStatus


def extended_tools(service: MemoryService, project: str | None = None) -> list[Tool]:
    """The extended tools, each one service call with the caller's origin (``current_origin()``); ``project``: the
    server's project, the default of searches (every call is bound to it by the server: docs/lifecycle.md "Project scope")."""
    default = project
    def search_semantic(
        query: Annotated[Query, Field(description="What to look for, in plain words")],
        limit: SearchLimit = DEFAULT_SEARCH_LIMIT,
        preset: PresetName | None = None,
        maxObservations: MaxObservations = None,
        project: ProjectArg = None,
    ) -> Annotated[CallToolResult, SearchOut]:
        with refusals():
            params = presets.preset(preset) if preset is not None else service.search.scoring_params()
            outcome = service.search.query(query, limit=limit, params=params, origin=current_origin(), project=project or default)
        model = service.embedder.name if service.embedder is not None else None
        return result(search_answer(outcome, query, model, max_observations=maxObservations))

    def rename_entity(oldName: Annotated[Name, Field(description="The current name")],
                      newName: Annotated[Name, Field(description="The new name (must be free)")]
                      ) -> Annotated[CallToolResult, EntityOut]:
        with refusals():
            return result(entity_out(service.entities.rename_entity(oldName, newName, origin=current_origin())))

    def merge_entities(sourceNames: Annotated[Items, Field(description="Entities to merge into the target")],
                       targetName: Annotated[Name, Field(description="The entity that absorbs them")]
                       ) -> Annotated[CallToolResult, EntityOut]:
        with refusals():
            decision_log.apply(service, MergeEntities(sourceNames, targetName), "merge", [*sourceNames, targetName],
                               origin=current_origin())
            return result(entity_out(service.entities.get_entity(targetName).entity))

    def set_status(entityNames: Annotated[Items, Field(min_length=1, description="Entities to update")],
                   status: Annotated[Status, Field(description="The new status")]
                   ) -> Annotated[CallToolResult, StatusOut]:
        names = list(dict.fromkeys(entityNames))
        with refusals():
            decided = decision_log.apply(service, SetStatus(names, status), "status", names, origin=current_origin())
            updated = [entity_out(e) for e in service.entities.open_nodes(names, record=False).entities]
        return result({"entities": updated, "decision": decided.decision_id})

    def end_relation(relation: Annotated[RelationIn, Field(description="The active relation to end")]
                     ) -> Annotated[CallToolResult, RelationDetailOut]:
        with refusals():
            return result(relation_detail(service.relations.end_relation(relation_inputs([relation])[0], origin=current_origin())))

    def get_entity(name: Annotated[Name, Field(description="The entity name")]
                   ) -> Annotated[CallToolResult, EntityDetailOut]:
        with refusals():
            out = detail_out(service.entities.get_entity(name, record=True, origin=current_origin()))
            out["reflections"] = [reflection_out(r) for r in service.reflections.reflections_of(out["name"])]
        return result(out)

    def mark_used(names: Annotated[Items, Field(
            min_length=1, description="The entities that helped")],
                  searchId: Annotated[int | None, Field(
                      strict=True, ge=1, description="The searchId of the search that found them")] = None,
                  ) -> Annotated[CallToolResult, MarkUsedOut]:
        with refusals():
            used = service.usage.mark_used(names, search_id=searchId, origin=current_origin())
        return result({"used": used})

    write, read = tool_annotations(False), tool_annotations(True, idempotent=True)
    return [strict_tool(fn, title=title, description=description, annotations=annotations)
            for fn, title, description, annotations in (
        (search_semantic, "Search by Meaning",
         "Search the memory by meaning and keyword; ranked by relevance, salience, recency and status, each "
         "result with its score breakdown. Being listed is an impression, not a use: call mark_used (with the "
         "searchId) or open_nodes for the memories that helped.", read),
        (mark_used, "Mark Used",
         "Record that these memories helped: a use, which raises their rank in search_semantic. With the "
         "searchId of the search that found them it also teaches the ranking. Unknown names are refused.",
         write),
        (rename_entity, "Rename Entity", "Rename an entity; its observations and relations follow.", write),
        (merge_entities, "Merge Entities",
         "Merge entities into a target: observations and relations move to the target, the sources are "
         "deleted. Logged as a decision: undo_decision takes it back exactly.", tool_annotations(False, True)),
        (set_status, "Set Status",
         "Set the status of entities: active, paused, completed or archived (archived ones rank lower). Logged "
         "as a decision: undo_decision takes it back exactly.", write),
        (end_relation, "End Relation",
         "Mark an active relation as ended (kept as history, no longer returned by read_graph).", write),
        (get_entity, "Get Entity",
         "Everything about one entity: ids, timestamps, access and impression statistics, degree, all "
         "observations with kind and supersede chain, its relations (ended ones included), the incoming ones read "
         "from this entity (inverseRelations: part_of for contains) and the reflections about it and its "
         "relations. Reading an entity is a use: it counts as an access.", read),
    )]
