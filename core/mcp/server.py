"""The MCP server: a thin translation between MCP tool calls and :class:`MemoryService` (DESIGN.md §7).

No SQL and no scoring here. :func:`build_server` registers

- the nine tools of the reference server ``@modelcontextprotocol/server-memory`` with its names,
  input schemas, result shapes, titles, descriptions and annotations (extras are optional keys, see
  :mod:`limbic.core.mcp_schemas`);
- the extended tools ``search_semantic``, ``mark_used``, ``rename_entity``, ``merge_entities``,
  ``set_status``, ``end_relation``, ``get_entity`` and the ``read_graph`` modes ``names``, ``page`` and ``summary``;
- the ``memory://tuning`` resource (saved parameters, shadow A/B settings, feedback counts, last tuning);
- the ``memory://knowledge-graph`` resource, with "resource updated" notifications after every
  committed change, by this process or another one on the same file (``subscriptions/listen`` for
  2026 clients, ``resources/subscribe`` for older ones).

Tools raise on error (the SDK turns the exception into an ``isError`` result); each mutating tool is
exactly one service call, i.e. one transaction, so a failed call writes nothing.
"""

from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from importlib import metadata
from typing import Annotated, Any, Literal

import pydantic
import pydantic_core
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp_types import (
    CallToolResult,
    SubscribeRequestParams,
    TextContent,
    ToolAnnotations,
    UnsubscribeRequestParams,
)
from pydantic import Field

from limbic.core.errors import LimbicError
from limbic.core.mcp.arguments import add_strict_tool
from limbic.core.mcp.events import KNOWLEDGE_GRAPH_URI, GraphNotifier, ToolCallRecord, activity_middleware
from limbic.core.mcp.schemas import (
    AddObservationsOut,
    DeletionIn,
    EntitiesOut,
    EntityDetailOut,
    EntityIn,
    EntityOut,
    GraphOut,
    MarkUsedOut,
    Name,
    NodesOut,
    ObservationBatchIn,
    PresetName,
    Query,
    RelationDetailOut,
    RelationIn,
    RelationsOut,
    SearchOut,
    Status,
    SuccessOut,
    detail_out,
    entity_out,
    graph_out,
    relation_detail,
    relation_out,
    stats_out,
    trim_observations,
)
from limbic.core.models import EntityInput, GraphPage, ObservationInput, RelationInput
from limbic.core.search import presets
from limbic.core.validation import MAX_ITEMS

__all__ = ["KNOWLEDGE_GRAPH_URI", "ToolCallRecord", "build_server"]

ORIGIN = "mcp"
TUNING_URI = "memory://tuning"
MAX_SEARCH_LIMIT = 100

INSTRUCTIONS = (
    "Limbic memory: a knowledge graph of entities (name, type, observations, status) and directed "
    "relations. The nine tools of the reference memory server work unchanged; search_semantic ranks "
    "by meaning, salience and recency; get_entity shows history and access statistics."
)


@contextmanager
def _refusals() -> Iterator[None]:
    """Turn the core's deliberate errors into ``ToolError`` so their message reaches the client."""
    try:
        yield
    except LimbicError as exc:
        raise ToolError(str(exc)) from exc


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
    """``MCPServer`` whose refusals of malformed arguments name the fields and why, in plain words."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, pydantic.ValidationError):
                raise
            invalid = exc.__cause__
            raise ToolError(f"Error executing tool {name}: invalid arguments: {describe_invalid_arguments(invalid)}") \
                from invalid


def _pretty(value: Any) -> str:
    """JSON indented by 2 spaces, non-ASCII kept: byte for byte ``JSON.stringify(value, null, 2)`` of the
    reference server (pydantic-core's encoder; the standard library's is 5× slower with an indent)."""
    return pydantic_core.to_json(value, indent=2).decode("utf-8")


def _result(structured: dict[str, Any], text: Any = None) -> CallToolResult:
    """A result like the reference server's: ``text`` pretty-printed (2 spaces) plus structured content."""
    shown = structured if text is None else text
    body = shown if isinstance(shown, str) else _pretty(shown)
    return CallToolResult(content=[TextContent(type="text", text=body)], structured_content=structured)


def _annotations(read_only: bool, destructive: bool = False, idempotent: bool = False) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive,
                           idempotent_hint=idempotent, open_world_hint=False)


Items = Annotated[list[Name], Field(max_length=MAX_ITEMS)]
Offset = Annotated[int, Field(strict=True, ge=0, description="Optional (Limbic): first entity of the page (by id)")]
PageLimit = Annotated[int, Field(strict=True, ge=1, le=MAX_ITEMS,
                                 description="Optional (Limbic): page size (mode page: 100 by default)")]
DEFAULT_PAGE = 100
MaxObservations = Annotated[int | None, Field(
    strict=True, ge=0, description="Optional (Limbic): at most this many observations per entity, those sharing "
    "the most words with the query (default: all); an entity trimmed says omittedObservations")]
SearchLimit = Annotated[int, Field(strict=True, ge=1, le=MAX_SEARCH_LIMIT, description="Number of results")]


def build_server(service, on_call: Callable[[ToolCallRecord], None] | None = None) -> MCPServer:
    """An ``MCPServer`` whose tools call ``service`` (a ``MemoryService``) with ``origin="mcp"``.

    Args:
        service: the memory service; one instance may back several servers and the GUI at once.
        on_call: called after every tool call with a :class:`ToolCallRecord`, on the server's event
            loop thread; it must be quick and must not block (the GUI re-emits it as a Qt signal).
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
    _add_reference_tools(server, service)
    _add_extended_tools(server, service)

    @server.resource(KNOWLEDGE_GRAPH_URI, name="knowledge-graph", title="Knowledge Graph",
                     description="The full knowledge graph with all entities and relations",
                     mime_type="application/json")
    def knowledge_graph() -> str:
        graph = service.read_graph()
        return _pretty(graph_out(graph.entities, graph.relations))

    @server.resource(TUNING_URI, name="tuning", title="Ranking tuning state",
                     description="Saved scoring parameters, shadow A/B settings, counts of logged searches and "
                     "feedback, and the last tuning application", mime_type="application/json")
    def tuning() -> str:
        return _pretty(service.learning.state(service.scoring_params()))

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


def _add_reference_tools(server: MCPServer, service) -> None:
    def create_entities(entities: Annotated[list[EntityIn], Field(max_length=MAX_ITEMS)]
                        ) -> Annotated[CallToolResult, EntitiesOut]:
        items = [
            EntityInput(name=e.name, entity_type=e.entityType, status=e.status,
                        observations=tuple(ObservationInput(content=c) for c in e.observations))
            for e in entities
        ]
        with _refusals():
            created = [entity_out(e) for e in service.create_entities(items, origin=ORIGIN)]
        return _result({"entities": created}, created)

    def create_relations(relations: Annotated[list[RelationIn], Field(max_length=MAX_ITEMS)]
                         ) -> Annotated[CallToolResult, RelationsOut]:
        with _refusals():
            created = [relation_out(r) for r in service.create_relations(_relations(relations), origin=ORIGIN)]
        return _result({"relations": created}, created)

    def add_observations(observations: Annotated[list[ObservationBatchIn], Field(max_length=MAX_ITEMS)]
                         ) -> Annotated[CallToolResult, AddObservationsOut]:
        for batch in observations:
            if batch.supersedes is not None and len(batch.contents) != 1:
                raise ToolError(f"{batch.entityName}: 'supersedes' needs exactly one content "
                                f"(got {len(batch.contents)}); send one batch per replaced observation")
        items = [
            (b.entityName, [ObservationInput(content=c, kind=b.kind, supersedes=b.supersedes) for c in b.contents])
            for b in observations
        ]
        with _refusals():
            added = service.add_observations(items, origin=ORIGIN)
        results = [{"entityName": name, "addedObservations": list(contents)} for name, contents in added]
        return _result({"results": results}, results)

    def delete_entities(entityNames: Annotated[Items, Field(description="An array of entity names to delete")]
                        ) -> Annotated[CallToolResult, SuccessOut]:
        with _refusals():
            service.delete_entities(entityNames, origin=ORIGIN)
        return _success("Entities deleted successfully")

    def delete_observations(deletions: Annotated[list[DeletionIn], Field(max_length=MAX_ITEMS)]
                            ) -> Annotated[CallToolResult, SuccessOut]:
        with _refusals():
            service.delete_observations([(d.entityName, d.observations) for d in deletions], origin=ORIGIN)
        return _success("Observations deleted successfully")

    def delete_relations(relations: Annotated[list[RelationIn],
                                              Field(max_length=MAX_ITEMS, description="An array of relations to delete")]
                         ) -> Annotated[CallToolResult, SuccessOut]:
        with _refusals():
            service.delete_relations(_relations(relations), origin=ORIGIN)
        return _success("Relations deleted successfully")

    def read_graph(
        mode: Annotated[Literal["full", "names", "page", "summary"], Field(
            description="Optional (Limbic): full (default, the whole graph), names (entity names only), "
                        "page (entities by id from offset, with their relations), summary (counts)")] = "full",
        offset: Offset = 0,
        limit: PageLimit | None = None,
    ) -> Annotated[CallToolResult, GraphOut]:
        with _refusals():
            if mode == "names":
                names = service.entity_names()
                return _result({"names": names, "total": len(names)})
            if mode == "summary":
                return _result({"summary": stats_out(service.stats())})
            if mode == "page" or limit is not None or offset:
                page = service.read_graph_page(offset, DEFAULT_PAGE if limit is None else limit)
                return _paged(page)
            graph = service.read_graph()
        out = graph_out(graph.entities, graph.relations)
        return _result(out)

    def search_nodes(query: Annotated[Query, Field(
            description="The search query to match against entity names, types, and observation content")],
                     offset: Annotated[Offset, Field(description="Optional (Limbic): skip this many matches")] = 0,
                     limit: Annotated[PageLimit | None, Field(
                         description="Optional (Limbic): at most this many matches (default: all); the result "
                                     "then says offset, limit and total")] = None,
                     maxObservations: MaxObservations = None,
                     ) -> Annotated[CallToolResult, NodesOut]:
        with _refusals():
            if limit is not None or offset:
                page = service.search_nodes_page(query, offset, DEFAULT_PAGE if limit is None else limit)
                return _paged(page, query, maxObservations)
            graph = service.search_nodes(query)
        out = graph_out(graph.entities, graph.relations)
        if maxObservations is not None:
            out["entities"] = [trim_observations(e, query, maxObservations) for e in out["entities"]]
        return _result(out)

    def open_nodes(names: Annotated[Items, Field(description="An array of entity names to retrieve")]
                   ) -> Annotated[CallToolResult, NodesOut]:
        with _refusals():
            graph = service.open_nodes(names, record=True, origin=ORIGIN)
        return _result(graph_out(graph.entities, graph.relations))

    write, destroy, read = _annotations(False), _annotations(False, True, True), _annotations(True, idempotent=True)
    for fn, title, description, annotations in (
        (create_entities, "Create Entities", "Create multiple new entities in the knowledge graph", write),
        (create_relations, "Create Relations",
         "Create multiple new relations between entities in the knowledge graph. Relations should be in active "
         "voice. (Limbic: both entities must already exist; a relation naming an unknown entity is refused with "
         "an error and nothing is stored, where the reference server stores it dangling.)", write),
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
         "Open specific nodes in the knowledge graph by their names. (Limbic: opening is a use: each opened "
         "entity counts as accessed, and entities opened together as co-occurring; this is what raises their "
         "salience in search_semantic.)", read),
    ):
        add_strict_tool(server, fn, title=title, description=description, annotations=annotations)


def _relations(relations: list[RelationIn]) -> list[RelationInput]:
    return [RelationInput(source=r.from_, target=r.to, relation_type=r.relationType, context=r.context)
            for r in relations]


def _paged(page: GraphPage, query: str = "", max_observations: int | None = None) -> CallToolResult:
    """A page of entities (``read_graph`` mode page, or ``limit``/``offset`` given) with its place in the whole."""
    out = graph_out(page.entities, page.relations)
    if max_observations is not None:
        out["entities"] = [trim_observations(e, query, max_observations) for e in out["entities"]]
    return _result({**out, "offset": page.offset, "limit": page.limit, "total": page.total_entities})


def _success(message: str) -> CallToolResult:
    return _result({"success": True, "message": message}, message)


def _add_extended_tools(server: MCPServer, service) -> None:
    def search_semantic(
        query: Annotated[Query, Field(description="What to look for, in plain words")],
        limit: SearchLimit = 10,
        preset: PresetName | None = None,
        maxObservations: MaxObservations = None,
    ) -> Annotated[CallToolResult, SearchOut]:
        with _refusals():
            params = presets.preset(preset) if preset is not None else service.scoring_params()
            outcome = service.search(query, limit=limit, params=params, origin=ORIGIN)
        model = service.embedder.name if outcome.mode != "fts_only" and service.embedder is not None else None
        results = [trim_observations(r.to_dict(), query, maxObservations) for r in outcome.results]
        found = {"results": results, "mode": outcome.mode,
                 "model": model, "timings": dict(outcome.timings), "searchId": outcome.search_id}
        if outcome.pending_vectors:
            found["pendingVectors"] = outcome.pending_vectors
        if outcome.dates:
            found["dates"] = list(outcome.dates)
        if outcome.knn:
            found["knn"] = outcome.knn
        return _result(found)

    def rename_entity(oldName: Annotated[Name, Field(description="The current name")],
                      newName: Annotated[Name, Field(description="The new name (must be free)")]
                      ) -> Annotated[CallToolResult, EntityOut]:
        with _refusals():
            return _result(entity_out(service.rename_entity(oldName, newName, origin=ORIGIN)))

    def merge_entities(sourceNames: Annotated[Items, Field(description="Entities to merge into the target")],
                       targetName: Annotated[Name, Field(description="The entity that absorbs them")]
                       ) -> Annotated[CallToolResult, EntityOut]:
        with _refusals():
            return _result(entity_out(service.merge_entities(sourceNames, targetName, origin=ORIGIN)))

    def set_status(entityNames: Annotated[Items, Field(description="Entities to update")],
                   status: Annotated[Status, Field(description="The new status")]
                   ) -> Annotated[CallToolResult, EntitiesOut]:
        with _refusals():
            updated = [entity_out(e) for e in service.set_status(entityNames, status, origin=ORIGIN)]
        return _result({"entities": updated})

    def end_relation(relation: Annotated[RelationIn, Field(description="The active relation to end")]
                     ) -> Annotated[CallToolResult, RelationDetailOut]:
        with _refusals():
            return _result(relation_detail(service.end_relation(_relations([relation])[0], origin=ORIGIN)))

    def get_entity(name: Annotated[Name, Field(description="The entity name")]
                   ) -> Annotated[CallToolResult, EntityDetailOut]:
        with _refusals():
            return _result(detail_out(service.get_entity(name, record=True, origin=ORIGIN)))

    def mark_used(names: Annotated[Items, Field(
            min_length=1, description="The entities that were used: the memories that helped")],
                  searchId: Annotated[int | None, Field(
                      strict=True, ge=1, description="Optional: the searchId of the search_semantic call that "
                      "found them; they become relevance feedback for that search")] = None,
                  ) -> Annotated[CallToolResult, MarkUsedOut]:
        with _refusals():
            used = service.mark_used(names, search_id=searchId, origin=ORIGIN)
        return _result({"used": used})

    write, read = _annotations(False), _annotations(True, idempotent=True)
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
         "deleted.", _annotations(False, True)),
        (set_status, "Set Status",
         "Set the status of entities: active, paused, completed or archived (archived ones rank lower).", write),
        (end_relation, "End Relation",
         "Mark an active relation as ended (kept as history, no longer returned by read_graph).", write),
        (get_entity, "Get Entity",
         "Everything about one entity: ids, timestamps, access and impression statistics, degree, all "
         "observations with kind and supersede chain, and its relations (ended ones included). Reading an "
         "entity is a use: it counts as an access.", read),
    ):
        add_strict_tool(server, fn, title=title, description=description, annotations=annotations)

