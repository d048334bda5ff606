"""What the MCP tools share: results shaped like the reference server's, refusals, argument types, and the
origin their writes are logged with (:func:`current_origin`)."""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    CallToolResult,
    TextContent,
    ToolAnnotations,
)
from pydantic import Field

from limbic.core.errors import LimbicError, unstored
from limbic.core.mcp.answers import pretty
from limbic.core.mcp.schemas import Name, RelationIn, graph_out, trim_observations
from limbic.core.models import GraphPage, RelationInput
from limbic.core.store import scope
from limbic.core.store.transactions import recorded_commits
from limbic.core.validation import MAX_ITEMS

MAX_SEARCH_LIMIT = 100

caller_name: ContextVar[str | None] = ContextVar("limbic_mcp_caller", default=None)
"""The name of the bearer token of the HTTP request being served (``local`` for the token file); set by
:class:`~limbic.core.mcp.http.BearerTokenMiddleware` for the request, None outside one."""
transport_origin: ContextVar[str] = ContextVar("limbic_mcp_transport", default="mcp")
"""The origin of calls without a token name: ``stdio`` under :func:`~limbic.core.mcp.stdio.serve_stdio`,
``mcp`` otherwise (an in-process client)."""


def current_origin() -> str:
    """The origin the tool call being served logs its writes, searches and uses with: ``mcp:NAME`` for an HTTP
    request made with the token NAME (``mcp:local``: the token file), else the transport's (``stdio``, ``mcp``)."""
    name = caller_name.get()
    return f"mcp:{name}" if name else transport_origin.get()


@contextmanager
def refusals() -> Iterator[None]:
    """Turn the core's deliberate errors into ``ToolError`` so their message reaches the client. In a write tool's
    call (the server records its commits, :func:`~limbic.core.store.transactions.commits_recorded`) that stored
    nothing, an outage's error says so: ``nothing was stored: <why>`` (:func:`~limbic.core.errors.unstored`)."""
    try:
        yield
    except LimbicError as exc:
        record = recorded_commits()
        raise ToolError(str(unstored(exc) if record == [] else exc)) from exc


def result(structured: dict[str, Any], text: Any = None) -> CallToolResult:
    """A result like the reference server's: ``text`` pretty-printed (2 spaces) plus structured content."""
    shown = structured if text is None else text
    body = shown if isinstance(shown, str) else pretty(shown)
    return CallToolResult(content=[TextContent(type="text", text=body)], structured_content=structured)


def tool_annotations(read_only: bool, destructive: bool = False, idempotent: bool = False) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive,
                           idempotent_hint=idempotent, open_world_hint=False)


Items = Annotated[list[Name], Field(max_length=MAX_ITEMS)]
# Descriptions of the optional extras are short: every agent reads them on every turn (docs/mcp.md "Tool profiles").
Offset = Annotated[int, Field(strict=True, ge=0, description="First entity of the page")]
PageLimit = Annotated[int, Field(strict=True, ge=1, le=MAX_ITEMS, description="Page size (default 100)")]
DEFAULT_PAGE = 100
MaxObservations = Annotated[int | None, Field(
    strict=True, ge=0, description="At most this many observations per entity, those closest to the query")]
SearchLimit = Annotated[int, Field(strict=True, ge=1, le=MAX_SEARCH_LIMIT, description="Number of results")]
ProjectArg = Annotated[str | None, Field(
    min_length=1, max_length=512,
    description="Only this project's and global memories (default: the server's; a bound server refuses another)")]
AsOf = Annotated[str | None, Field(max_length=64, description="The memory as it was at this ISO 8601 date "
                                                              "(a date alone: its end, UTC)")]


def relation_inputs(relations: list[RelationIn]) -> list[RelationInput]:
    return [RelationInput(source=r.from_, target=r.to, relation_type=r.relationType, context=r.context)
            for r in relations]


def paged(page: GraphPage, query: str = "", max_observations: int | None = None,
          now: float | None = None) -> CallToolResult:
    """A page of entities (``read_graph`` mode page, or ``limit``/``offset`` given) with its place in the whole;
    ``now``: the ``asOf`` date of the read (observations current then)."""
    out = graph_out(page.entities, page.relations, now)
    if max_observations is not None:
        out["entities"] = [trim_observations(e, query, max_observations) for e in out["entities"]]
    return result({**out, "offset": page.offset, "limit": page.limit, "total": page.total_entities})


def success(message: str) -> CallToolResult:
    return result({"success": True, "message": message}, message)


def deletion_message(noun: str, deleted: int, outside: list[str], skipped: list[str] | None = None) -> str:
    """The message of a delete tool (``noun``: ``Entities``, ``Observations``, ``Relations``): the reference
    server's ``"<noun> deleted successfully"``, unless the call named something that another project holds
    (``outside``, from :meth:`~limbic.core.service.MemoryService.projects.outside_project`; ``skipped``: the named items
    it concerns as shown, default those names). Then the message says that nothing was deleted for them and
    why; ``deleted``: how many were deleted in all (docs/mcp.md "The reference tools")."""
    if not outside:
        return f"{noun} deleted successfully"
    why = (f"{', '.join(repr(n) for n in outside)} {'belongs' if len(outside) == 1 else 'belong'} to another "
           f"project (this memory is served for project {scope.current()!r})")
    if not deleted:
        return f"No {noun.lower()} deleted: {why}"
    shown = ", ".join(skipped or [repr(n) for n in outside])
    return f"{noun} deleted successfully, but nothing was deleted for {shown}: {why}"
