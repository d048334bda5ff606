"""The MCP server: a thin translation between MCP tool calls and :class:`MemoryService`.

No SQL and no scoring here. :func:`build_server` registers

- the nine tools of the reference server ``@modelcontextprotocol/server-memory`` with its names,
  input schemas, result shapes, titles, descriptions and annotations (extras are optional keys, see
  :mod:`limbic.core.mcp.schemas`);
- the extended tools ``search_semantic``, ``mark_used``, ``rename_entity``, ``merge_entities``,
  ``set_status``, ``end_relation``, ``get_entity`` and the ``read_graph`` modes ``names``, ``page`` and ``summary``;
- the curation tools (:mod:`limbic.core.mcp.curation_tools`): duplicates, entity splitting, the consolidation
  report, reflections and ``migrate`` (docs/curation.md);
- the ``memory://tuning`` resource (saved parameters, shadow A/B settings, feedback counts, last tuning);
- the ``memory://knowledge-graph`` resource, with "resource updated" notifications after every
  committed change, by this process or another one on the same file (``subscriptions/listen`` for
  2026 clients, ``resources/subscribe`` for older ones).

Tools raise on error (the SDK turns the exception into an ``isError`` result); each mutating tool is
exactly one service call, i.e. one transaction, so a failed call writes nothing.
"""

from collections.abc import Callable
from contextlib import asynccontextmanager
from importlib import metadata
from typing import Any

import anyio
import pydantic
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp_types import (
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)

from limbic.core.mcp.curation_tools import add_curation_tools
from limbic.core.mcp.events import KNOWLEDGE_GRAPH_URI, GraphNotifier, ToolCallRecord, activity_middleware
from limbic.core.mcp.extended_tools import add_extended_tools
from limbic.core.mcp.lifecycle_tools import add_lifecycle_tools
from limbic.core.mcp.reference_tools import add_reference_tools
from limbic.core.mcp.schemas import graph_out
from limbic.core.mcp.tooling import caller_name, pretty, refusals
from limbic.core.service import MemoryService

__all__ = ["KNOWLEDGE_GRAPH_URI", "ToolCallRecord", "build_server"]

TUNING_URI = "memory://tuning"

INSTRUCTIONS = (
    "Limbic memory: a knowledge graph of entities (name, type, observations, status) and directed "
    "relations. The nine tools of the reference memory server work unchanged; search_semantic ranks "
    "by meaning, salience and recency; get_entity shows history and access statistics."
)


def describe_invalid_arguments(error: pydantic.ValidationError) -> str:
    """``field: why`` for each problem, ``; ``-separated (``entities.0.name: Input should be a valid string``,
    ``entities.0.stauts: unknown key``): pydantic's explanations without its model names, input echoes and
    documentation links."""
    problems = []
    for problem in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        why = "unknown key" if problem["type"] == "extra_forbidden" else problem["msg"]
        problems.append(f"{where}: {why}")
    return "; ".join(problems)


class _LimbicServer(MCPServer):
    """``MCPServer`` whose refusals of malformed arguments name the fields and why, in plain words, and whose
    every tool call is bound to the server's project or its token's (docs/lifecycle.md "Project scope")."""

    service: MemoryService
    project: str | None = None

    def _call_project(self) -> str | None:
        """The project this call is bound to: the server's, or the one its named token is bound to.

        Raises:
            ToolError: the token is bound to another project than the server's.
        """
        name = caller_name.get()
        token_project = self.service.token_project(name) if name else None
        if token_project is not None and self.project is not None and token_project != self.project:
            raise ToolError(f"the token {name!r} is bound to project {token_project!r}; this server serves project "
                            f"{self.project!r}")
        return token_project or self.project

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            with refusals():  # the token's project is read off the event loop; an outage is one clear refusal
                project = await anyio.to_thread.run_sync(self._call_project)
            with self.service.scoped(project):
                return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, pydantic.ValidationError):
                raise
            invalid = exc.__cause__
            raise ToolError(f"Error executing tool {name}: invalid arguments: {describe_invalid_arguments(invalid)}") \
                from invalid


def build_server(service: MemoryService, on_call: Callable[[ToolCallRecord], None] | None = None, *,
                 project: str | None = None) -> MCPServer:
    """An ``MCPServer`` whose tools call ``service`` (a ``MemoryService``) with the caller's origin
    (:func:`~limbic.core.mcp.tooling.current_origin`: ``mcp:NAME`` over HTTP, ``stdio``, else ``mcp``).

    Args:
        service: the memory service; one instance may back several servers and the GUI at once.
        on_call: called after every tool call with a :class:`ToolCallRecord`, on the server's event
            loop thread; it must be quick and must not block (the GUI re-emits it as a Qt signal).
        project: the server's project (``limbic mcp --project``): every call is bound to it
            (:meth:`MemoryService.scoped`): new entities belong to it, and reads, searches, writes, renames, merges,
            deletes and curation see and touch its entities and the global ones only; a call naming another
            project is refused (docs/lifecycle.md "Project scope"). A named token bound to a project binds the
            calls made with it the same way. ``None``: every memory, as the reference server.
    """
    bus = InMemorySubscriptionBus()
    notifier = GraphNotifier(service, bus)

    @asynccontextmanager
    async def lifespan(_server):
        async with notifier.attached():
            yield {}

    server = _LimbicServer(
        name="limbic-memory",
        title="Limbic memory",
        version=_version(),
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        lifespan=lifespan,
        subscriptions=bus,
        middleware=[activity_middleware(on_call)] if on_call else None,
    )
    server.service, server.project = service, project
    add_reference_tools(server, service, project)
    add_extended_tools(server, service, project)
    add_lifecycle_tools(server, service)
    add_curation_tools(server, service)

    @server.resource(KNOWLEDGE_GRAPH_URI, name="knowledge-graph", title="Knowledge Graph",
                     description="The full knowledge graph with all entities and relations",
                     mime_type="application/json")
    def knowledge_graph() -> str:
        with service.scoped(server._call_project()):
            graph = service.read_graph()
        return pretty(graph_out(graph.entities, graph.relations))

    @server.resource(TUNING_URI, name="tuning", title="Ranking tuning state",
                     description="Saved scoring parameters, shadow A/B settings, counts of logged searches and "
                     "feedback, and the last tuning application", mime_type="application/json")
    def tuning() -> str:
        return pretty(service.learning.state(service.scoring_params()))

    # resources/subscribe was removed from the 2026 protocol; the SDK's documented way to keep serving it
    # to older clients (as the reference server does) is the low-level add_request_handler.
    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, notifier.subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, notifier.unsubscribe)
    return server


def _version() -> str:
    try:
        return metadata.version("limbic-studio")
    except metadata.PackageNotFoundError:
        return "0"
