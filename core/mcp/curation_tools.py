"""The curation tools of the MCP server: duplicates, entity splitting, the consolidation report, reflections
and ``migrate`` (mcp-memory docs "Architecture": its extended tools, with the reference's camelCase
arguments). Each is one service call with the caller's origin (``current_origin()``); a refused call writes nothing. The split tools
also answer to the ``_tool``-suffixed names of mcp-memory.
"""

import time
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult
from pydantic import Field

from limbic.core.curation import reflections as rules
from limbic.core.curation.duplicates import DEFAULT_THRESHOLD
from limbic.core.io import migrate as migrating
from limbic.core.io.migrate import MAX_PATH
from limbic.core.lifecycle.expiry import parse_moment
from limbic.core.mcp.arguments import strict_tool
from limbic.core.mcp.curation_schemas import (
    DuplicatesOut,
    MigrateOut,
    ReflectionOut,
    ReflectionsOut,
    ReportOut,
    migrate_out,
)
from limbic.core.mcp.detail_schemas import reflection_out
from limbic.core.mcp.schemas import Content, Name, Query, RelationIn
from limbic.core.mcp.split_tools import split_tools
from limbic.core.mcp.tooling import current_origin, refusals, relation_inputs, result, tool_annotations
from limbic.core.models import iso
from limbic.core.service import MemoryService, review

Threshold = Annotated[float | None, Field(
    ge=0.5, le=1.0, description=f"Lowest cosine similarity compared (default {DEFAULT_THRESHOLD}): each pair at or above "
    "it is listed when its words say one fact")]
Limit = Annotated[int, Field(strict=True, ge=1, le=100, description="At most this many clusters")]


def curation_tools(service: MemoryService) -> list[Tool]:
    """The curation tools, the split tools last (:func:`~limbic.core.mcp.split_tools.split_tools`)."""

    def find_duplicate_observations(
        entityName: Annotated[Name | None, Field(
            description="Only this entity's duplicates; default: every entity")] = None,
        threshold: Threshold = None,
        limit: Limit = 20,
    ) -> Annotated[CallToolResult, DuplicatesOut]:
        with refusals():
            report = service.curation.find_duplicate_observations(entityName, threshold, limit)
        return result(report.to_dict())

    def migrate(path: Annotated[str, Field(
            max_length=MAX_PATH, description="Absolute path (or starting with ~) of a memory file in the reference "
            "JSONL format (or any shape limbic import reads), under your home folder or Limbic's data folder")]
                ) -> Annotated[CallToolResult, MigrateOut]:
        with refusals():
            return result(migrate_out(migrating.migrate(service, path)))

    def add_reflection(
        targetType: Annotated[Literal["entity", "relation", "global"], Field(
            description="What the reflection is about: one entity, one relation, or the memory as a whole")],
        author: Annotated[str, Field(max_length=rules.MAX_AUTHOR, description="Who writes it (any name)")],
        content: Annotated[Content, Field(description="The reflection, in prose")],
        target: Annotated[Name | RelationIn | None, Field(
            description="The entity's name (targetType entity) or the relation {from, to, relationType} "
                        "(targetType relation); none for global")] = None,
        mood: Annotated[str | None, Field(
            max_length=rules.MAX_MOOD, description="Optional mood, any word; suggestions: "
            + ", ".join(rules.SUGGESTED_MOODS))] = None,
    ) -> Annotated[CallToolResult, ReflectionOut]:
        relation = relation_inputs([target])[0] if isinstance(target, RelationIn) else target
        with refusals():
            return result(reflection_out(service.reflections.add_reflection(targetType, relation, author, content, mood,
                                                                origin=current_origin())))

    def search_reflections(
        query: Annotated[Query, Field(description="What to look for, in plain words")],
        author: Annotated[str | None, Field(max_length=rules.MAX_AUTHOR, description="Only this author's")] = None,
        mood: Annotated[str | None, Field(max_length=rules.MAX_MOOD, description="Only this mood (empty: any)")] = None,
        targetType: Annotated[Literal["entity", "relation", "global"] | None, Field(
            description="Only reflections about this kind of target")] = None,
        limit: Annotated[int, Field(strict=True, ge=1, le=100, description="Number of results")] = 10,
    ) -> Annotated[CallToolResult, ReflectionsOut]:
        with refusals():
            found = service.reflections.search_reflections(query, author=author, mood=mood, target_type=targetType, limit=limit)
        results = [{**reflection_out(r), "score": round(k.score, 6), "textRank": k.text_rank,
                    "vectorRank": k.vector_rank, "similarity": None if k.similarity is None else round(k.similarity, 4)}
                   for r, k in found]
        return result({"results": results, "mode": "fts_only" if service.embedder is None else "hybrid"})

    def consolidation_report(
        kinds: Annotated[list[Annotated[str, Field(max_length=64)]] | None, Field(
            max_length=50, description="Only these kinds of decision (default: all), e.g. duplicate, "
            "duplicate_entity, split, orphan, placeholder")] = None,
        limit: Annotated[int, Field(strict=True, ge=1, le=100, description="Items listed per kind")] = 10,
        at: Annotated[str | None, Field(max_length=40, description=(
            "List the forget and promote candidates and the expired observations as they would stand then, if "
            "nothing is used or written meanwhile: +N days (+30d; +12h, +2w) or an ISO 8601 date (2027-01-15, the "
            "end of that day). Each forget candidate says from when (proposedFrom). Default: now"))] = None,
    ) -> Annotated[CallToolResult, ReportOut]:
        started = time.perf_counter()
        with refusals():
            moment = None if at is None else parse_moment(at, time.time())
            sections = review.review(service, kinds, limit, None if moment is None else review.sources_at(moment))
        out = [section.to_dict() for section in sections]
        for section in out:
            for item in section["items"]:
                item["createdAt"] = iso(item["createdAt"])
        pending = service.vectors.pending()
        answer: dict[str, Any] = {"sections": out, "totals": {s.kind: s.total for s in sections},
                                  "complete": pending == 0, "seconds": round(time.perf_counter() - started, 3)}
        if moment is not None:
            answer["at"] = iso(moment)
        if pending:
            answer["note"] = (f"incomplete: {pending} entities have observations whose vectors are still being "
                              "computed; they were not compared yet — ask again in a moment")
        return result(answer)

    read = tool_annotations(True, idempotent=True)
    tools: list[tuple[Any, str, str, Any]] = [
        (consolidation_report, "Consolidation Report",
         "What in the memory needs a decision, by kind, with counts and the top items: duplicate observations "
         "(clusters), duplicate entities, entities to split, orphans (no relations), placeholder entities left by "
         "imports, and the lifecycle's kinds when present (contradictions, stale and promote candidates, expired "
         "observations). Each item has a key, evidence and options; settle them in Limbic Studio's Review view. "
         "With at (+30d or a date), the forget and promote candidates and expired observations are those of that "
         "day if nothing is used or written meanwhile. Changes nothing.", read),
        (find_duplicate_observations, "Find Duplicate Observations",
         "Find observations of one entity that say the same fact twice, as clusters with the text a merge keeps "
         "(one holding every detail of the others), or else one merged text keeping them all. Differing fields, "
         "values, names, negations or states are never duplicates; the same text on different entities is listed "
         "as a shared fact. Compares what was just written. Changes no text.", read),
        (migrate, "Migrate Memory File",
         "Import a memory file (the reference server's JSONL, or the other shapes its forks write) into this "
         "memory, in one transaction: entities, observations and relations are added, what is already stored is "
         "kept, and importing the same file again adds nothing. Only files under your home folder or Limbic's "
         "data folder are read; any other path is refused.", tool_annotations(False, idempotent=True)),
        (add_reflection, "Add Reflection",
         "Write a reflection: what you (or the person) think about an entity, a relation or the memory as a whole, "
         "in prose, with an author and an optional mood. Reflections are found by search_reflections and shown "
         "by get_entity (and open_nodes with includeReflections).", tool_annotations(False)),
        (search_reflections, "Search Reflections",
         "Search reflections by keyword and by meaning (full text and embeddings fused by Reciprocal Rank "
         "Fusion), optionally only one author's, one mood or one kind of target.", read),
    ]
    return [*(strict_tool(fn, title=title, description=description, annotations=annotations)
              for fn, title, description, annotations in tools), *split_tools(service)]
