"""The lifecycle's MCP tools and result parts (docs/lifecycle.md): the ``conflicts`` of ``add_observations`` and
``resolve_conflict``."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from limbic.core.lifecycle.contradictions import OPTIONS
from limbic.core.mcp.arguments import add_strict_tool
from limbic.core.mcp.tooling import current_origin, refusals, result, tool_annotations
from limbic.core.service import MemoryService, review
from limbic.core.store.conflicts import ConflictRow

"""How long ``add_observations`` waits for its new observations' vectors to land and be checked; past it the
result says how many checks are pending (their conflicts go to the review queue)."""


class ResolvedOut(BaseModel):
    key: str
    option: str
    settled: bool


def conflict_out(row: ConflictRow) -> dict[str, Any]:
    """One conflict as ``add_observations`` reports it: the new observation, the one it contradicts, their
    similarity, the reason, the key and options for ``resolve_conflict``."""
    return {"key": f"contradiction:{row.id}", "entityName": row.entity, "observation": row.content,
            "conflictsWith": {"entityName": row.other_entity, "observation": row.other_content},
            "similarity": round(row.similarity, 4), "reason": row.reason, "options": list(OPTIONS)}


def add_lifecycle_tools(server: MCPServer, service: MemoryService) -> None:
    """Register ``resolve_conflict`` on ``server`` (one service call, the caller's origin (``current_origin()``))."""

    def resolve_conflict(
        key: Annotated[str, Field(max_length=64, description="The conflict's key from add_observations' conflicts")],
        option: Annotated[str, Field(json_schema_extra={"enum": list(OPTIONS)}, description=(
            "keep_both (they are complementary), update_old (the old observation takes the new text), supersede "
            "(the old one is kept as history, superseded by the new one), delete_old"))],
    ) -> Annotated[CallToolResult, ResolvedOut]:
        with refusals():
            review.decide(service, key, option, origin=current_origin())
        return result({"key": key, "option": option, "settled": True})

    add_strict_tool(server, resolve_conflict, title="Resolve Conflict", annotations=tool_annotations(False), description=(
        "Settle a contradiction that add_observations reported (its key and one of its options). Ask the user "
        "which memory is right before choosing; the choice can be undone in Limbic Studio's Review view."))
