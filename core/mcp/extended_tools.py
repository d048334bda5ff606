"""Limbic's extended tools: ``search_semantic``, ``mark_used``, ``rename_entity``, ``merge_entities``,
``set_status``, ``end_relation`` and ``get_entity``."""

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import (
    CallToolResult,
)
from pydantic import Field

from limbic.core.mcp.answers import DEFAULT_SEARCH_LIMIT, search_answer
from limbic.core.mcp.arguments import add_strict_tool
from limbic.core.mcp.detail_schemas import (
    EntityDetailOut,
    RelationDetailOut,
    detail_out,
    reflection_out,
    relation_detail,
)
from limbic.core.mcp.schemas import (
    EntitiesOut,
    EntityOut,
    MarkUsedOut,
    Name,
    PresetName,
    Query,
    RelationIn,
    SearchOut,
    Status,
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
from limbic.core.service import MemoryService


def add_extended_tools(server: MCPServer, service: MemoryService, project: str | None = None) -> None:
    """Register the extended tools on ``server``, each one service call with the caller's origin (``current_origin()``); ``project``: the
    default project of searches (docs/lifecycle.md "Project scope")."""
    default = project
    def search_semantic(
        query: Annotated[Query, Field(description="What to look for, in plain words")],
        limit: SearchLimit = DEFAULT_SEARCH_LIMIT,
        preset: PresetName | None = None,
        maxObservations: MaxObservations = None,
        project: ProjectArg = None,
    ) -> Annotated[CallToolResult, SearchOut]:
        with refusals():
            params = presets.preset(preset) if preset is not None else service.scoring_params()
            outcome = service.search(query, limit=limit, params=params, origin=current_origin(), project=project or default)
        model = service.embedder.name if service.embedder is not None else None
        return result(search_answer(outcome, query, model, max_observations=maxObservations))

    def rename_entity(oldName: Annotated[Name, Field(description="The current name")],
                      newName: Annotated[Name, Field(description="The new name (must be free)")]
                      ) -> Annotated[CallToolResult, EntityOut]:
        with refusals():
            return result(entity_out(service.rename_entity(oldName, newName, origin=current_origin())))

    def merge_entities(sourceNames: Annotated[Items, Field(description="Entities to merge into the target")],
                       targetName: Annotated[Name, Field(description="The entity that absorbs them")]
                       ) -> Annotated[CallToolResult, EntityOut]:
        with refusals():
            return result(entity_out(service.merge_entities(sourceNames, targetName, origin=current_origin())))

    def set_status(entityNames: Annotated[Items, Field(description="Entities to update")],
                   status: Annotated[Status, Field(description="The new status")]
                   ) -> Annotated[CallToolResult, EntitiesOut]:
        with refusals():
            updated = [entity_out(e) for e in service.set_status(entityNames, status, origin=current_origin())]
        return result({"entities": updated})

    def end_relation(relation: Annotated[RelationIn, Field(description="The active relation to end")]
                     ) -> Annotated[CallToolResult, RelationDetailOut]:
        with refusals():
            return result(relation_detail(service.end_relation(relation_inputs([relation])[0], origin=current_origin())))

    def get_entity(name: Annotated[Name, Field(description="The entity name")]
                   ) -> Annotated[CallToolResult, EntityDetailOut]:
        with refusals():
            out = detail_out(service.get_entity(name, record=True, origin=current_origin()))
            out["reflections"] = [reflection_out(r) for r in service.reflections_of(out["name"])]
        return result(out)

    def mark_used(names: Annotated[Items, Field(
            min_length=1, description="The entities that were used: the memories that helped")],
                  searchId: Annotated[int | None, Field(
                      strict=True, ge=1, description="Optional: the searchId of the search_semantic call that "
                      "found them; they become relevance feedback for that search")] = None,
                  ) -> Annotated[CallToolResult, MarkUsedOut]:
        with refusals():
            used = service.mark_used(names, search_id=searchId, origin=current_origin())
        return result({"used": used})

    write, read = tool_annotations(False), tool_annotations(True, idempotent=True)
    for fn, title, description, annotations in (
        (search_semantic, "Search by Meaning",
         "Search the memory by meaning and by keyword (embedding KNN + full text, both branches' evidence "
         "fused, for the entity and for its best single observation), lift the memories of the same type "
         "written just before or after a strong match (their context), favour memories written on a day or "
         "month the query names with its year (e.g. 'on 3 March 2025', 'in March 2025'), and re-rank "
         "by the limbic score: salience, recency, co-occurrence and status. Each result carries its score "
         "breakdown. "
         "Uses the scoring parameters saved in Limbic Studio. Without an installed model it runs on full "
         "text only and says so in 'mode'. Being returned by a search is an impression, not a use: it does "
         "not raise salience. Call mark_used (with the returned searchId) or open_nodes / get_entity for the "
         "memories that helped.", read),
        (mark_used, "Mark Used",
         "Say which memories helped: each named entity counts as used (accessed), and entities named together "
         "as co-occurring. Only uses (mark_used, open_nodes, get_entity) raise salience in search_semantic; "
         "search results alone do not. Pass the searchId of the search_semantic call that found them to teach "
         "the ranking: later queries like that one rank them higher, and the auto-tuner learns from this "
         "feedback. Unknown names or searchIds are refused and "
         "nothing is recorded.", write),
        (rename_entity, "Rename Entity", "Rename an entity; its observations and relations follow.", write),
        (merge_entities, "Merge Entities",
         "Merge entities into a target: observations and relations move to the target, the sources are "
         "deleted.", tool_annotations(False, True)),
        (set_status, "Set Status",
         "Set the status of entities: active, paused, completed or archived (archived ones rank lower).", write),
        (end_relation, "End Relation",
         "Mark an active relation as ended (kept as history, no longer returned by read_graph).", write),
        (get_entity, "Get Entity",
         "Everything about one entity: ids, timestamps, access and impression statistics, degree, all "
         "observations with kind and supersede chain, its relations (ended ones included), the incoming ones read "
         "from this entity (inverseRelations: part_of for contains) and the reflections about it and its "
         "relations. Reading an entity is a use: it counts as an access.", read),
    ):
        add_strict_tool(server, fn, title=title, description=description, annotations=annotations)
