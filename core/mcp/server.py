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

Each family module returns its tools as the SDK's ``Tool`` values (:func:`limbic.core.mcp.arguments.strict_tool`),
and the server is built with them (``MCPServer(tools=...)``, the SDK's public API). Every tool is declared in
:mod:`limbic.core.mcp.profiles` with the profiles that list it; a server lists and
serves the tools of its profile (``tools``), or of the profile a named HTTP token was given. A call to a declared
tool outside it is refused with the profile that has it.

Tools raise on error (the SDK turns the exception into an ``isError`` result); each mutating tool is
exactly one service call, i.e. one transaction, so a failed call writes nothing.
"""

import logging
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pydantic
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp_types import (
    SubscribeRequestParams,
    Tool,
    UnsubscribeRequestParams,
)

from limbic.core import version
from limbic.core.mcp.arguments import on_the_loop
from limbic.core.mcp.curation_tools import curation_tools
from limbic.core.mcp.events import KNOWLEDGE_GRAPH_URI, GraphNotifier, ToolCallRecord, activity_middleware
from limbic.core.mcp.extended_tools import extended_tools
from limbic.core.mcp.lifecycle_tools import lifecycle_tools
from limbic.core.mcp.profiles import TOOLS, Profile, not_enabled, profile
from limbic.core.mcp.reference_defs import REFERENCE_DEFINITIONS
from limbic.core.mcp.reference_tools import reference_tools
from limbic.core.mcp.schemas import graph_out
from limbic.core.mcp.tooling import caller_name, pretty, refusals
from limbic.core.service import MemoryService
from limbic.core.service.projects import LOCAL_TOKEN_NAME
from limbic.core.store.transactions import commits_recorded

__all__ = ["KNOWLEDGE_GRAPH_URI", "ToolCallRecord", "build_server", "instructions"]

logger = logging.getLogger(__name__)

TUNING_URI = "memory://tuning"
TOKEN_PROFILE_SECONDS = 2.0
"""How long a server keeps a named token's profile before reading it again."""


def instructions(project: str | None = None, tools: Profile | None = None) -> str:
    """What the ``initialize`` answer tells an agent about using this memory well (under 1 KB), naming only the
    tools of ``tools`` (default: every tool)."""
    def has(tool: str) -> bool:
        return tools is None or tool in tools

    search = "search_semantic (by meaning and keyword)" if has("search_semantic") else "search_nodes"
    parts = ["Limbic memory: a knowledge graph of entities (name, type, observations) and typed relations. "
             f"Search before you write: {search}, then open_nodes for the full entities you need."]
    if has("mark_used"):
        parts.append("When a result helped, call mark_used with its names and the searchId: that is what raises "
                     "its rank later (being listed does not).")
    parts.append("Add new facts to the existing entity with add_observations rather than creating a near-copy; "
                 "to replace a fact pass supersedes.")
    if has("resolve_conflict"):
        parts.append("If a write's answer has conflicts, a new observation contradicts a stored one: ask the user "
                     "which is right, then settle it with resolve_conflict (key and option from the conflict).")
    parts.append(f"Project in effect: {project!r}: new entities belong to it; reads and searches see it and the "
                 "global memories." if project else "No project: every memory is seen, new ones are global.")
    return " ".join(parts)


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
    """``MCPServer`` that lists and serves the tools of a profile (the server's, or a named token's), and whose
    refusals of malformed arguments name the fields and why, in plain words, and whose every tool call is bound to
    the server's project or its token's (docs/lifecycle.md "Project scope")."""

    service: MemoryService
    project: str | None = None

    def __init__(self, *args: Any, profile: Profile, token_tools: Callable[[str], str | None] | None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.profile = profile
        self._token_tools = token_tools
        self._token_profiles: dict[str, tuple[float, Profile]] = {}
        self._listed: dict[str, list[Tool]] = {}

    def current_profile(self) -> Profile:
        """The profile of the call being served: its named token's, if that token was given one, else the
        server's."""
        name = caller_name.get()
        if name is None or name == LOCAL_TOKEN_NAME or self._token_tools is None:
            return self.profile
        now = time.monotonic()
        cached = self._token_profiles.get(name)
        if cached is not None and cached[0] > now:
            return cached[1]
        chosen = self.profile
        try:
            spec = self._token_tools(name)
            chosen = self.profile if spec is None else profile(spec)
        except Exception:  # a tool list that no longer parses, or a busy database: the server's profile
            logger.warning("the tool profile of the MCP token %r could not be read; serving %s", name,
                           self.profile.name)
        self._token_profiles[name] = (now + TOKEN_PROFILE_SECONDS, chosen)
        return chosen

    async def list_tools(self) -> list[Tool]:
        chosen = self.current_profile()
        listed = self._listed.get(chosen.flag)
        if listed is None:
            registered = {tool.name: tool for tool in await super().list_tools()}
            listed = [_published(registered[name], chosen) for name in chosen.tools if name in registered]
            self._listed[chosen.flag] = listed
        return listed

    def _call_project(self) -> str | None:
        """The project this call is bound to: the server's, or the one its named token is bound to.

        Raises:
            ToolError: the token is bound to another project than the server's.
        """
        name = caller_name.get()
        token_project = self.service.projects.token_project(name) if name else None
        if token_project is not None and self.project is not None and token_project != self.project:
            raise ToolError(f"the token {name!r} is bound to project {token_project!r}; this server serves project "
                            f"{self.project!r}")
        return token_project or self.project

    def _binding(self) -> tuple[str | None, Profile]:
        """The project and the tool profile of the call being served (its named token's, else the server's)."""
        return self._call_project(), self.current_profile()

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Run the tool ``name``; a write tool's commits are recorded, so that its refusal says when nothing of it
        was stored (:func:`~limbic.core.mcp.tooling.refusals`)."""
        tool = self._tool_manager.get_tool(name)
        writes = tool is not None and not (tool.annotations is not None and tool.annotations.read_only_hint)
        with commits_recorded(writes):
            try:
                with refusals():  # a named token's settings are read off the event loop; an outage: one clear refusal
                    project, chosen = (await anyio.to_thread.run_sync(self._binding) if caller_name.get()
                                       else self._binding())
            except ToolError as exc:  # worded as the tool's own refusals are
                raise ToolError(f"Error executing tool {name}: {exc}") from exc.__cause__
            if name not in chosen and name in TOOLS:
                raise ToolError(not_enabled(name, chosen))
            try:
                with self.service.scoped(project):
                    return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, pydantic.ValidationError):
                    raise
                invalid = exc.__cause__
                raise ToolError(f"Error executing tool {name}: invalid arguments: "
                                f"{describe_invalid_arguments(invalid)}") from invalid


def _published(tool: Tool, chosen: Profile) -> Tool:
    """``tool`` as ``chosen`` lists it: in the ``reference`` profile the nine reference tools carry the reference
    server's own title, description and input schema."""
    if chosen.name != "reference" or not chosen.named or tool.name not in REFERENCE_DEFINITIONS:
        return tool
    title, description, schema = REFERENCE_DEFINITIONS[tool.name]
    return tool.model_copy(update={"title": title, "description": description, "input_schema": schema})


def build_server(service: MemoryService, on_call: Callable[[ToolCallRecord], None] | None = None, *,
                 project: str | None = None, tools: str | Profile = "all",
                 token_tools: Callable[[str], str | None] | None = None, tools_on_the_loop: bool = False) -> MCPServer:
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
        tools: the tools listed and served: a profile of :mod:`limbic.core.mcp.profiles` or a ``--tools`` value
            (``limbic mcp`` and the app pass ``agent`` by default; every tool here).
        token_tools: a named HTTP token's ``--tools`` value, or None for the server's
            (``MemoryService.projects.token_tools``); read again every :data:`TOKEN_PROFILE_SECONDS` seconds.
        tools_on_the_loop: run the tools on the event loop thread rather than on worker threads
            (:func:`~limbic.core.mcp.arguments.on_the_loop`; the stdio transport, :mod:`limbic.core.mcp.stdio`).

    Raises:
        ValidationError: ``tools`` names no profile or an unknown tool.
    """
    chosen = tools if isinstance(tools, Profile) else profile(tools)
    registered = [*reference_tools(service, project), *extended_tools(service, project), *lifecycle_tools(service),
                  *curation_tools(service)]
    undeclared = sorted(tool.name for tool in registered if tool.name not in TOOLS)
    if undeclared:
        raise RuntimeError(f"MCP tools missing from limbic.core.mcp.profiles.TOOLS: {', '.join(undeclared)}")
    if tools_on_the_loop:
        registered = [on_the_loop(tool) for tool in registered]
    bus = InMemorySubscriptionBus()
    notifier = GraphNotifier(service, bus)

    @asynccontextmanager
    async def lifespan(_server):
        async with notifier.attached():
            yield {}

    server = _LimbicServer(
        name="limbic-memory",
        title="Limbic memory",
        version=version(),
        instructions=instructions(project, chosen),
        log_level="WARNING",
        lifespan=lifespan,
        subscriptions=bus,
        middleware=[activity_middleware(on_call)] if on_call else None,
        tools=registered,
        profile=chosen,
        token_tools=token_tools,
    )
    server.service, server.project = service, project

    @server.resource(KNOWLEDGE_GRAPH_URI, name="knowledge-graph", title="Knowledge Graph",
                     description="The full knowledge graph with all entities and relations",
                     mime_type="application/json")
    def knowledge_graph() -> str:
        with service.scoped(server._call_project()):
            graph = service.entities.read_graph()
        return pretty(graph_out(graph.entities, graph.relations))

    @server.resource(TUNING_URI, name="tuning", title="Ranking tuning state",
                     description="Saved scoring parameters, shadow A/B settings, counts of logged searches and "
                     "feedback, and the last tuning application", mime_type="application/json")
    def tuning() -> str:
        return pretty(service.learning.state(service.search.scoring_params()))

    # resources/subscribe was removed from the 2026 protocol; the SDK's documented way to keep serving it
    # to older clients (as the reference server does) is the low-level add_request_handler.
    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, notifier.subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, notifier.unsubscribe)
    return server

