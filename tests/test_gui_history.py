"""The entity editor's History: who changed the shown entity (the app, the CLI, an MCP token's name), newest
first, following changes made meanwhile — including a write over HTTP with a named token."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import anyio
import pytest
from _mcp_helpers import http_client, outcome
from _widgets_helpers import build_small_graph

from limbic.core.mcp.http import HttpMcpServer
from limbic.core.models import ObservationInput
from limbic.gui.edit.editor import EntityEditor

pytestmark = pytest.mark.gui


def test_history_shows_who_changed_the_entity(qtbot, controller, service):
    build_small_graph(service)
    editor = EntityEditor(controller)
    qtbot.addWidget(editor)
    editor.show()
    controller.select(["Alice"])
    qtbot.waitUntil(lambda: editor.history.rows() != [], timeout=3000)
    assert {who for _when, who, _what in editor.history.rows()} == {"cli"}

    alice = service.projects.add_token("alice")
    with HttpMcpServer(service) as server:
        async def scenario():
            async with http_client(server.url, alice) as client:
                return outcome(await client.call_tool("add_observations", {"observations": [
                    {"entityName": "Alice", "contents": ["answers on call"]}]}))

        assert not anyio.run(scenario)["error"]
    qtbot.waitUntil(lambda: editor.history.rows()[0][1] == "alice (MCP)", timeout=5000)
    assert editor.history.rows()[0][2] == "add observations"
    assert editor.history.table.item(0, 1).toolTip() == "mcp:alice"

    service.origin = "gui"  # what the app opens its service with (limbic.gui.startup)
    editor.add_observation("likes maps")
    qtbot.waitUntil(lambda: editor.history.rows()[0][1] == "app", timeout=5000)
    service.entities.add_observations([("Alice", [ObservationInput("from the shell")])], origin="cli")
    qtbot.waitUntil(lambda: editor.history.rows()[0][1] == "cli", timeout=5000)
    whos = [who for _when, who, _what in editor.history.rows()]
    assert whos[:3] == ["cli", "app", "alice (MCP)"]
