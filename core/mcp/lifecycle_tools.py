"""The lifecycle's MCP tools and result parts (docs/lifecycle.md, docs/curation.md "Decisions and undo"): the
``conflicts`` of ``add_observations``, ``resolve_conflict`` and ``undo_decision``."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from limbic.core.lifecycle.contradictions import OPTIONS, SUGGESTIONS, options_for
from limbic.core.mcp.arguments import strict_tool
from limbic.core.mcp.tooling import current_origin, refusals, result, tool_annotations
from limbic.core.models import iso
from limbic.core.service import MemoryService, decision_log, review
from limbic.core.store.conflicts import ConflictRow


class ResolvedOut(BaseModel):
    key: str
    option: str
    settled: bool
    decision: int = Field(description="The decision's id in the log (undo_decision takes it back)")


class UndoneOut(BaseModel):
    decision: int
    kind: str
    description: str
    madeAt: str
    undone: bool


def conflict_out(row: ConflictRow) -> dict[str, Any]:
    """One conflict as ``add_observations`` reports it: the new observation, the one it contradicts, their
    similarity, the reason, the key and options for ``resolve_conflict`` (the suggested one first,
    :func:`~limbic.core.lifecycle.contradictions.options_for`) and the ``suggestion`` in words."""
    options = options_for(row.other_content, row.content, row.entity == row.other_entity)
    return {"key": f"contradiction:{row.id}", "entityName": row.entity, "observation": row.content,
            "conflictsWith": {"entityName": row.other_entity, "observation": row.other_content},
            "similarity": round(row.similarity, 4), "reason": row.reason, "options": list(options),
            "suggestion": SUGGESTIONS[options[0]]}


def lifecycle_tools(service: MemoryService) -> list[Tool]:
    """The tools ``resolve_conflict`` and ``undo_decision`` (one service call each, the caller's
    origin (``current_origin()``))."""

    def resolve_conflict(
        key: Annotated[str, Field(max_length=64, description="The conflict's key from add_observations' conflicts")],
        option: Annotated[str, Field(json_schema_extra={"enum": list(OPTIONS)}, description=(
            "keep_both (they are complementary), update_old (the old observation takes the new text), supersede "
            "(the old one is kept as history, superseded by the new one), delete_old"))],
    ) -> Annotated[CallToolResult, ResolvedOut]:
        with refusals():
            decided = review.decide(service, key, option, origin=current_origin())
        return result({"key": key, "option": option, "settled": True, "decision": decided.decision_id})

    def undo_decision(
        decision: Annotated[int | None, Field(strict=True, ge=1, description=(
            "The id of a decision you made (resolve_conflict, set_status and execute_entity_split return it); "
            "default: your newest one still standing"))] = None,
    ) -> Annotated[CallToolResult, UndoneOut]:
        with refusals():
            row = decision_log.undo(service, decision, origin=current_origin(), own=True)
        return result({"decision": row.id, "kind": row.kind, "description": row.description,
                       "madeAt": iso(row.made_at), "undone": row.undone})

    return [strict_tool(resolve_conflict, title="Resolve Conflict", annotations=tool_annotations(False), description=(
        "Settle a contradiction that add_observations reported (its key and one of its options). Ask the user "
        "which memory is right before choosing. The choice is logged as a decision: undo_decision takes it back "
        "exactly, as do `limbic undo` and the app.")),
            strict_tool(undo_decision, title="Undo Decision", annotations=tool_annotations(False, True), description=(
        "Undo a decision you made (resolve_conflict, merge_entities, set_status, execute_entity_split) exactly: "
        "every row it changed comes back. Default: your newest one not undone yet; another client's decisions "
        "are refused."))]
