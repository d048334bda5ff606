"""Refusals of malformed MCP arguments name the field and why, without pydantic's internals or links,
and write nothing."""

from __future__ import annotations

import pytest
from anyio.from_thread import start_blocking_portal
from mcp import Client

from limbic.core.mcp.server import build_server


@pytest.fixture
def call(service):
    server = build_server(service)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(server)) as client:
        yield lambda tool, arguments: portal.call(client.call_tool, tool, arguments)


@pytest.mark.parametrize(("tool", "arguments", "expected"), [
    ("create_entities", {"entities": [{"name": 5, "entityType": "T", "observations": []}]},
     "Error executing tool create_entities: invalid arguments: entities.0.name: Input should be a valid string"),
    ("search_semantic", {"query": "tea", "limit": "many"},
     "Error executing tool search_semantic: invalid arguments: limit: Input should be a valid integer"),
    ("open_nodes", {}, "Error executing tool open_nodes: invalid arguments: names: Field required"),
])
def test_invalid_arguments_name_the_field_and_why(call, service, tool, arguments, expected):
    before = service.history.last_change_id()
    result = call(tool, arguments)
    text = result.content[0].text
    assert result.is_error and text == expected
    for internal in ("pydantic", "http", "validation error for", "input_value", "type="):
        assert internal not in text.lower()
    assert service.history.last_change_id() == before
