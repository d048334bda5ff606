"""The entity-splitting tools of the MCP server (mcp-memory docs "Architecture", "Entity Splitting"):
``find_split_candidates``, ``analyze_entity_split``, ``propose_entity_split`` and ``execute_entity_split``, each
also answering to mcp-memory's ``_tool``-suffixed name. The proposal is plain JSON a client may change (rename a
part, move observations) before executing it; executing is one transaction."""

from typing import Annotated, Any, Literal

from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult
from pydantic import Field

from limbic.core.curation.splitting import METHODS
from limbic.core.mcp.arguments import strict_tool
from limbic.core.mcp.curation_schemas import (
    SplitAnalysisOut,
    SplitCandidatesOut,
    SplitDoneOut,
    SplitProposalOut,
)
from limbic.core.mcp.schemas import Content, Name, RelationIn, StrictIn
from limbic.core.mcp.tooling import current_origin, refusals, relation_inputs, result, tool_annotations
from limbic.core.service import MemoryService, decision_log
from limbic.core.service.curation_edits import SplitEntity
from limbic.core.service.splitting import SPLIT_RELATIONS, SplitPart
from limbic.core.validation import MAX_ITEMS

Method = Annotated[Literal["vectors", "tfidf"] | None, Field(
    description=f"How topics are found: {' or '.join(METHODS)} (default vectors: the stored observation "
                "vectors, measured better; TF-IDF when vectors are missing)")]


class PartIn(StrictIn):
    name: Annotated[Name, Field(description="The new entity's name (must be free)")]
    entityType: Annotated[Name | None, Field(description="Its type (default: the original's)")] = None
    observations: Annotated[list[Content], Field(max_length=MAX_ITEMS, description="Live observations of the "
                                                 "original that move to it")]
    relations: Annotated[list[RelationIn], Field(max_length=MAX_ITEMS, description="Relations of the original "
                                                 "(as stored) that move to it")] = []


def split_tools(service: MemoryService) -> list[Tool]:
    """The split tools, each also under its ``_tool`` alias."""

    def find_split_candidates(
        limit: Annotated[int, Field(strict=True, ge=1, le=100, description="At most this many")] = 20,
        thresholds: Annotated[dict[Name, Annotated[int, Field(strict=True, ge=1, le=100_000)]] | None, Field(
            max_length=100, description="Observations allowed per entity type for this call ('*': any other "
            "type); default: the saved ones (Sesion/Session 15, Proyecto/Project 25, others 20)")] = None,
    ) -> Annotated[CallToolResult, SplitCandidatesOut]:
        with refusals():
            total, found = service.splits.find_split_candidates(limit, thresholds)
            used = {**service.splits.split_thresholds(), **(thresholds or {})}
        return result({"total": total, "candidates": [c.to_dict() for c in found], "thresholds": used})

    def analyze_entity_split(entityName: Annotated[Name, Field(description="The entity to analyse")],
                             method: Method = None) -> Annotated[CallToolResult, SplitAnalysisOut]:
        with refusals():
            proposal = service.splits.propose_entity_split(entityName, method)
        out = proposal.to_dict()
        topics = [{"terms": p["terms"], "size": len(p["observations"]), "observations": p["observations"]}
                  for p in out.pop("parts")]
        out.pop("stayingRelations")
        staying = out.pop("stayingObservations")
        if not topics:
            topics, staying = [{"terms": [], "size": proposal.observation_count, "observations": staying}], []
        return result({**out, "topics": topics, "stayingObservations": staying})

    def propose_entity_split(entityName: Annotated[Name, Field(description="The entity to split")],
                             method: Method = None) -> Annotated[CallToolResult, SplitProposalOut]:
        with refusals():
            proposal = service.splits.propose_entity_split(entityName, method)
        return result({**proposal.to_dict(), "relationsToCreate": _created(proposal.entity, [
            p.name for p in proposal.parts], "contains")})

    def execute_entity_split(
        entityName: Annotated[Name, Field(description="The entity to split")],
        parts: Annotated[list[PartIn], Field(min_length=1, max_length=100, description="The parts, as "
                                             "propose_entity_split gave them or changed")],
        relationNames: Annotated[Literal["contains", "contiene"], Field(
            description="contains: contains/part_of (default); contiene: contiene/parte_de")] = "contains",
    ) -> Annotated[CallToolResult, SplitDoneOut]:
        chosen = [SplitPart(p.name, p.entityType or "", tuple(p.observations), tuple(relation_inputs(p.relations)))
                  for p in parts]
        with refusals():
            original = service.entities.get_entity(entityName).entity.entity_type
            chosen = [SplitPart(p.name, p.entity_type or original, p.observations, p.relations) for p in chosen]
            decided = decision_log.apply(service, SplitEntity(entityName, chosen, relationNames), "split",
                                         [entityName, *(p.name for p in chosen)], origin=current_origin())
            created = [service.entities.get_entity(p.name).entity for p in chosen]
        return result({"entityName": entityName, "created": [e.name for e in created], "decision": decided.decision_id,
                       "movedObservations": sum(len(p.observations) for p in chosen),
                       "movedRelations": sum(len(p.relations) for p in chosen),
                       "relationsCreated": _created(entityName, [e.name for e in created], relationNames)})

    read, write = tool_annotations(True, idempotent=True), tool_annotations(False)
    tools: list[tuple[Any, str, str, Any]] = [
        (find_split_candidates, "Find Split Candidates",
         "Entities holding more observations than their type should (Sesion/Session 15, Proyecto/Project 25, "
         "others 20; settable), most over first: candidates for splitting into focused sub-entities.", read),
        (analyze_entity_split, "Analyze Entity Split",
         "The topics of one entity's observations (clusters of their embeddings, or TF-IDF), each with its top "
         "terms, and whether the entity is over its threshold. Changes nothing.", read),
        (propose_entity_split, "Propose Entity Split",
         "A proposed split of one entity: each topic a sub-entity named from its top terms, with its observations "
         "and the relations that belong to it, and the contains/part_of relations to create. Change names or move "
         "observations, then pass the parts to execute_entity_split. Changes nothing.", read),
        (execute_entity_split, "Execute Entity Split",
         "Split an entity into the given parts in one transaction: each part is created with its observations "
         "(moved from the original), related to the original (contains / part_of, or contiene / parte_de) and "
         "given the relations listed for it. Anything refused (a taken name, an observation the entity does not "
         "have) leaves everything as it was. The split is logged as a decision: undo_decision takes it back.", write),
    ]
    return [strict_tool(fn, title=title, description=description, annotations=annotations, name=name)
            for fn, title, description, annotations in tools for name in (fn.__name__, f"{fn.__name__}_tool")]


def _created(entity: str, parts: list[str], relation_names: str) -> list[dict[str, str]]:
    contains, part_of = SPLIT_RELATIONS[relation_names]
    return [r for p in parts for r in ({"from": entity, "to": p, "relationType": contains},
                                       {"from": p, "to": entity, "relationType": part_of})]
