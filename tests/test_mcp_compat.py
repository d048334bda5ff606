"""Drop-in compatibility with the real reference server ``@modelcontextprotocol/server-memory`` (npm).

The same scripted sequence of the nine tools runs against the reference server (node, its JSONL file in
a temporary directory) and against ``limbic mcp`` (stdio); results must be equal once Limbic's
documented additions are removed (``status`` on entities, ``context`` on relations). The deliberate
differences (unknown relation endpoints and blank names refused, text trimmed, duplicates within one
call stored once) are checked to differ exactly as documented.
Tool names, titles, descriptions, annotations and input schemas are compared too, with the ``agent`` (default)
and the ``reference`` tool profiles (the latter publishes the reference's own definitions, byte for byte).
"""

from __future__ import annotations

import json

import anyio
import pytest
from _backends import BACKENDS, address_on
from _mcp_helpers import (
    DIFFERENCES,
    SCRIPT,
    ReferenceUnavailable,
    limbic_params,
    outcome,
    reference_params,
    reference_server_script,
    stdio_client,
    strip_extras,
)
from mcp.shared.exceptions import MCPError

from limbic.core.mcp.server import KNOWLEDGE_GRAPH_URI

pytestmark = pytest.mark.npm

NINE = ("create_entities", "create_relations", "add_observations", "delete_entities", "delete_observations",
        "delete_relations", "read_graph", "search_nodes", "open_nodes")


@pytest.fixture(scope="module")
def reference_script():
    try:
        return reference_server_script()
    except ReferenceUnavailable as exc:
        pytest.skip(f"reference server not installable, npm unreachable: {exc}")


async def _call(client, tool: str, arguments: dict) -> dict:
    try:
        return outcome(await client.call_tool(tool, arguments))
    except MCPError as exc:  # a protocol-level refusal (e.g. invalid params) counts as an error result
        return {"error": True, "structured": None, "text": str(exc)}


async def _session(params, errlog) -> dict:
    async with stdio_client(params, errlog) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        resources = (await client.list_resources()).resources
        steps = [await _call(client, tool, arguments) for tool, arguments in SCRIPT]
        graph_resource = json.loads((await client.read_resource(KNOWLEDGE_GRAPH_URI)).contents[0].text)
        differences = [await _call(client, tool, arguments) for tool, arguments, _, _ in DIFFERENCES]
        await client.call_tool("create_entities", {"entities": [
            {"name": "École", "entityType": "Schule", "observations": ["ÉTÉ"]}]})
        unicode = [strip_extras((await _call(client, "search_nodes", {"query": query}))["structured"])
                   for query in ("école", "été", "ÉCOLE")]
        return {"tools": tools, "resources": resources, "steps": steps, "resource": graph_resource,
                "differences": differences, "unicode": unicode}


@pytest.fixture(scope="module", params=[(b, p) for b in BACKENDS for p in ("agent", "reference")],
                ids=lambda param: "-".join(param))
def limbic_memory(request, tmp_path_factory):
    """The memory ``limbic mcp`` serves, on each backend, and the tool profile it serves."""
    backend, tools = request.param
    for address in address_on(backend, tmp_path_factory.mktemp("compat_memory") / "limbic.db"):
        yield address, tools


@pytest.fixture(scope="module")
def runs(reference_script, limbic_memory, tmp_path_factory):
    folder = tmp_path_factory.mktemp("compat")
    home = tmp_path_factory.mktemp("compat_home")
    found: dict[str, dict] = {}

    async def both():
        async def run(key, params):
            found[key] = await _session(params, folder / f"{key}.stderr")

        async with anyio.create_task_group() as group:
            group.start_soon(run, "reference", reference_params(folder / "memory.jsonl"))
            group.start_soon(run, "limbic", limbic_params(limbic_memory[0], home, tools=limbic_memory[1]))

    anyio.run(both)
    found["profile"] = limbic_memory[1]
    return found


def test_the_scripted_sequence_gives_the_same_results(runs):
    reference, ours = runs["reference"]["steps"], runs["limbic"]["steps"]
    assert len(reference) == len(ours) == len(SCRIPT)
    for (tool, arguments), theirs, mine in zip(SCRIPT, reference, ours, strict=True):
        where = f"{tool}({json.dumps(arguments)[:80]})"
        assert mine["error"] == theirs["error"], f"{where}: reference {theirs}, limbic {mine}"
        if not theirs["error"]:
            assert strip_extras(mine["structured"]) == theirs["structured"], where
            assert strip_extras(mine["text"]) == theirs["text"], where
    assert sum(step["error"] for step in ours) == 3  # unknown entity, a string for a list, missing names


def test_the_knowledge_graph_resource_is_the_same(runs):
    assert strip_extras(runs["limbic"]["resource"]) == runs["reference"]["resource"]
    theirs = {r.uri: r for r in runs["reference"]["resources"]}
    mine = {r.uri: r for r in runs["limbic"]["resources"]}
    uri = KNOWLEDGE_GRAPH_URI
    assert (mine[uri].name, mine[uri].mime_type, mine[uri].title) == (
        theirs[uri].name, theirs[uri].mime_type, theirs[uri].title)


def test_documented_differences_differ_as_documented(runs):
    for (tool, _arguments, ours, reference), mine, theirs in zip(
            DIFFERENCES, runs["limbic"]["differences"], runs["reference"]["differences"], strict=True):
        assert ("error" if mine["error"] else strip_extras(mine["structured"])) == ours, tool
        assert ("error" if theirs["error"] else theirs["structured"]) == reference, tool
    assert "Ghost" in runs["limbic"]["differences"][0]["text"]


def test_search_nodes_folds_non_ascii_case_like_the_reference(runs):
    assert runs["limbic"]["unicode"] == runs["reference"]["unicode"]


def _resolve(schema, root):
    """Inline local ``$ref``s and drop what only documents (titles, defaults, our length limits)."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _resolve(root["$defs"][schema["$ref"].rsplit("/", 1)[1]], root)
        ignored = {"title", "$defs", "default", "maxLength", "maxItems", "$schema"}
        return {k: _resolve(v, root) for k, v in schema.items() if k not in ignored}
    if isinstance(schema, list):
        return [_resolve(v, root) for v in schema]
    return schema


def _same_shape(reference: dict, ours: dict, where: str) -> None:
    """``ours`` accepts what ``reference`` accepts: same types, same required keys, extra keys optional."""
    assert ours.get("type") == reference.get("type"), where
    if "additionalProperties" in reference:
        assert ours.get("additionalProperties") == reference["additionalProperties"], f"{where}: unknown keys"
    if reference.get("type") == "object":
        assert sorted(ours.get("required", [])) == sorted(reference.get("required", [])), where
        for key, value in reference.get("properties", {}).items():
            assert key in ours["properties"], f"{where}.{key}"
            _same_shape(value, ours["properties"][key], f"{where}.{key}")
    if reference.get("type") == "array":
        _same_shape(reference["items"], ours["items"], f"{where}[]")
    if "description" in reference:
        assert ours.get("description") == reference["description"], where


# create_relations refuses missing endpoints (docs/mcp.md); open_nodes records a use (docs/evaluation.md).
EXTENDED_DESCRIPTIONS = {"create_relations", "open_nodes"}


def test_tools_have_the_reference_names_schemas_and_descriptions(runs):
    theirs, mine = runs["reference"]["tools"], runs["limbic"]["tools"]
    assert set(theirs) == set(NINE)
    assert list(mine)[:9] == list(theirs) and len(mine) == (9 if runs["profile"] == "reference" else 12)
    for name in NINE:
        reference, ours = theirs[name], mine[name]
        assert ours.title == reference.title, name
        assert ours.annotations == reference.annotations, name
        if runs["profile"] == "reference":  # the reference's own definition, byte for byte
            assert (ours.description, json.dumps(ours.input_schema)) == (
                reference.description, json.dumps(reference.input_schema)), name
        elif name in EXTENDED_DESCRIPTIONS:  # the reference's text, then what Limbic does differently
            assert ours.description.startswith(reference.description), name
        else:
            assert ours.description == reference.description, name
        _same_shape(_resolve(reference.input_schema, reference.input_schema),
                    _resolve(ours.input_schema, ours.input_schema), name)
        reference_out = _resolve(reference.output_schema, reference.output_schema)
        ours_out = _resolve(ours.output_schema, ours.output_schema)
        assert set(reference_out["properties"]) <= set(ours_out["properties"]), name
        if name in ("search_nodes", "open_nodes"):
            assert sorted(ours_out["required"]) == sorted(reference_out["required"]) == ["entities", "relations"]
            assert "search_nodes" in ours.output_schema["description"]
