"""Tool registration: strict arguments (unknown keys refused, refusals that say which field and why) and
published output schemas without the SDK's redundant re-validation of every result.

Every tool registered through :func:`add_strict_tool` gets an argument model that forbids unknown keys
(its input schema says ``additionalProperties: false``, as the reference server's do); nested input
objects forbid them through :class:`limbic.core.mcp.schemas.StrictIn`. :func:`argument_check_middleware`
validates a ``tools/call``'s arguments before the tool runs and answers a mistake with an ``isError``
result such as ``Invalid arguments for create_entities: entities[0]: unknown key 'stauts' (allowed:
name, entityType, observations, status)`` — no pydantic text, no links.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["add_strict_tool", "argument_check_middleware", "describe_errors", "inline_refs"]


def add_strict_tool(server: MCPServer, fn: Callable[..., Any], *, title: str, description: str,
                    annotations: ToolAnnotations) -> None:
    """Register ``fn`` as a tool of ``server`` whose top-level arguments forbid unknown keys."""
    server.add_tool(fn, title=title, description=description, annotations=annotations)
    tool = server._tool_manager.get_tool(fn.__name__)
    assert tool is not None
    loose = tool.fn_metadata.arg_model
    strict = cast(type[ArgModelBase], type(loose.__name__, (loose,), {
        "model_config": ConfigDict(**{**loose.model_config, "extra": "forbid"}), "__module__": loose.__module__}))
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
    schema = tool.fn_metadata.output_schema
    if schema is not None:
        # Our results are built from typed core values, so the SDK's re-validation of every result against
        # the output model only costs time (~0.5 s for a 1.3 MB search_nodes); the schema is still
        # published, inlined as the reference's are (clients validate a $ref-free schema several times faster).
        tool.fn_metadata.output_schema = inline_refs(schema)
        tool.fn_metadata.output_model = None


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every local ``$ref`` replaced by its definition and ``$defs`` dropped (no recursion
    in our models, so the result is finite)."""
    definitions = schema.get("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(definitions[node["$ref"].rsplit("/", 1)[1]])
            return {key: resolve(value) for key, value in node.items() if key != "$defs"}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    return resolve(schema)


def _where(location: tuple[int | str, ...]) -> str:
    path = ""
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path


def _allowed(model: type[BaseModel], location: tuple[int | str, ...]) -> list[str]:
    """The keys accepted at ``location`` (the parent of an unknown key) in ``model``'s arguments."""
    current: Any = model
    for part in location:
        if isinstance(part, int) or current is None:
            continue
        field = current.model_fields.get(part) or next(
            (f for f in current.model_fields.values() if f.alias == part), None)
        current = _model_in(field.annotation) if field is not None else None
    if current is None:
        return []
    return [field.alias or name for name, field in current.model_fields.items()]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in getattr(annotation, "__args__", ()):
        found = _model_in(argument)
        if found is not None:
            return found
    return None


def describe_errors(model: type[BaseModel], exc: ValidationError) -> str:
    """One line per mistake: the field's path (``entities[0].name``) and what is wrong with it."""
    lines = []
    for error in exc.errors(include_url=False, include_input=False):
        location = tuple(error["loc"])
        if error["type"] == "extra_forbidden":
            parent, key = location[:-1], location[-1]
            allowed = ", ".join(_allowed(model, parent))
            where = _where(parent)
            lines.append(f"{where + ': ' if where else ''}unknown key {key!r}" + (f" (allowed: {allowed})" if allowed
                                                                                  else ""))
        elif error["type"] == "missing":
            lines.append(f"{_where(location)}: required")
        else:
            lines.append(f"{_where(location) or 'arguments'}: {error['msg'][0].lower()}{error['msg'][1:]}")
    return "; ".join(lines)


def argument_check_middleware(server: MCPServer) -> ServerMiddleware[Any]:
    """Server middleware: a ``tools/call`` whose arguments do not fit the tool's schema is answered with
    an ``isError`` result naming each wrong field (see :func:`describe_errors`); the tool does not run."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        params = ctx.params or {}
        tool = server._tool_manager.get_tool(str(params.get("name", "")))
        arguments = params.get("arguments") or {}
        if tool is None or not isinstance(arguments, dict):
            return await call_next(ctx)
        try:
            tool.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            message = f"Invalid arguments for {tool.name}: {describe_errors(tool.fn_metadata.arg_model, exc)}"
            return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
        return await call_next(ctx)

    return middleware
