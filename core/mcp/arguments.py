"""Tool registration: strict arguments (unknown keys refused) and published output schemas without the
SDK's redundant re-validation of every result.

Every tool is made by :func:`strict_tool` as the SDK's own :class:`mcp.server.mcpserver.tools.Tool`
(``Tool.from_function``), and :func:`limbic.core.mcp.server.build_server` hands the list to the server
(``MCPServer(tools=...)``): nothing reaches into the server's tool manager. Each gets an argument model that forbids unknown keys
(its input schema says ``additionalProperties: false``, as the reference server's do); nested input
objects forbid them through :class:`limbic.core.mcp.schemas.StrictIn`. A refusal names the key
(``entities.0.stauts: unknown key``, see ``describe_invalid_arguments`` in :mod:`limbic.core.mcp.server`).

The published input schema is compacted (:func:`compact_schema`): every agent reads it on every turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp_types import ToolAnnotations
from pydantic import ConfigDict

__all__ = ["compact_schema", "inline_refs", "on_the_loop", "strict_tool"]

_UNPUBLISHED = frozenset({"maxLength", "maxItems"})


def strict_tool(fn: Callable[..., Any], *, title: str, description: str, annotations: ToolAnnotations,
                name: str | None = None) -> Tool:
    """``fn`` as a tool (named ``name``, default the function's name) whose top-level arguments forbid unknown
    keys, its input schema compacted and its output schema inlined. The argument model and the output schema
    are fields of the SDK's ``FuncMetadata``, which the SDK reads at every call."""
    tool = Tool.from_function(fn, name=name, title=title, description=description, annotations=annotations)
    loose = tool.fn_metadata.arg_model
    strict = cast(type[ArgModelBase], type(loose.__name__, (loose,), {
        "model_config": ConfigDict(**{**loose.model_config, "extra": "forbid"}), "__module__": loose.__module__}))
    tool.fn_metadata.arg_model = strict
    tool.parameters = compact_schema(strict.model_json_schema(by_alias=True))
    schema = tool.fn_metadata.output_schema
    if schema is not None:
        # Our results are built from typed core values, so the SDK's re-validation of every result against
        # the output model only costs time (~0.5 s for a 1.3 MB search_nodes); the schema is still
        # published, inlined as the reference's are (clients validate a $ref-free schema several times faster).
        tool.fn_metadata.output_schema = inline_refs(schema)
        tool.fn_metadata.output_model = None
    return tool


def on_the_loop(tool: Tool) -> Tool:
    """``tool`` with a synchronous function run on the event loop thread instead of a worker thread (the SDK runs
    an ``async`` function in place; :mod:`limbic.core.mcp.stdio`); an ``async`` one unchanged."""
    if tool.is_async:
        return tool
    fn = tool.fn

    async def run(**kwargs: Any) -> Any:
        return fn(**kwargs)

    return tool.model_copy(update={"fn": run, "is_async": True})


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


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (pydantic's JSON Schema of an argument model) without what costs an agent's context and tells
    it nothing it needs: the titles pydantic derives from field and model names; the ``null`` branch and ``null``
    default of an optional argument (``{"anyOf": [X, {"type": "null"}], "default": null}`` becomes ``X``: leaving
    the key out means the same); and the length limits (``maxLength``, ``maxItems``: 512-character names,
    10,000-character observations, 1,000 items), which the reference server does not publish either. Validation
    is unchanged: the server's argument model still applies every limit and a refusal names it."""

    def compact(node: Any) -> Any:
        if isinstance(node, list):
            return [compact(item) for item in node]
        if not isinstance(node, dict):
            return node
        branches = node.get("anyOf")
        if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
            kept = next(branch for branch in branches if branch != {"type": "null"})
            node = {**{k: v for k, v in node.items() if k != "anyOf"}, **kept}
            if "default" in node and node["default"] is None:
                del node["default"]
        out = {}
        for key, value in node.items():
            if (key == "title" and isinstance(value, str)) or key in _UNPUBLISHED:
                continue
            out[key] = {name: compact(sub) for name, sub in value.items()} if key in ("properties", "$defs") \
                else compact(value)
        return out

    return cast(dict[str, Any], compact(schema))
