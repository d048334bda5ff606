"""MCP panel and host: the activity log model, address/token/snippets of a real embedded server, an SDK
client's calls appearing in the log, and a clean stop (port freed, no server thread left)."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from _mcp_helpers import http_client
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QPushButton

from limbic.core.mcp.events import ToolCallRecord
from limbic.core.mcp.token import load_token
from limbic.gui.mcp_host import McpHost
from limbic.gui.mcp_panel import ERROR_COLOUR, MASK, ActivityModel, McpPanel

pytestmark = pytest.mark.gui


def record(tool: str, error: str | None = None, ms: float = 3.5) -> ToolCallRecord:
    return ToolCallRecord(at=time.time(), tool=tool, arguments='{"query":"x"}', duration_ms=ms, error=error)


def test_activity_model_rows_errors_and_limit(qtbot):
    model = ActivityModel(limit=3)
    for i in range(4):
        model.append(record(f"tool{i}", error="boom" if i == 2 else None))
    assert model.rowCount() == 3 and model.record(0).tool == "tool1"  # the oldest was dropped
    assert model.errors() == 1
    assert model.data(model.index(1, 3)) == "error: boom"  # a failed call says its error in the arguments' place
    assert "error: boom" in model.data(model.index(1, 3), Qt.ItemDataRole.ToolTipRole)
    assert model.data(model.index(1, 0), Qt.ItemDataRole.ForegroundRole) == ERROR_COLOUR
    assert model.data(model.index(0, 4)) == "3.5"
    assert model.data(model.index(0, 3)) == '{"query":"x"}'
    assert model.data(model.index(0, 1)) == "mcp"  # an in-process call: no token name


def test_panel_logs_controller_records(qtbot, controller):
    panel = McpPanel(controller)
    qtbot.addWidget(panel)
    controller.post_mcp_call(record("search_semantic"))  # as the server thread does
    controller.post_mcp_call(record("open_nodes", error="unknown entity"))
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=2000)
    assert panel.counts.text() == "2 calls, 1 error"
    assert not panel.copy_token_button.isEnabled()
    assert "Start the MCP server" in panel.snippet.toPlainText()
    panel.transport_box.setCurrentIndex(1)  # stdio needs no running server
    assert "mcp" in panel.snippet.toPlainText() and "--db" in panel.snippet.toPlainText()
    panel.clear_log()
    assert panel.model.rowCount() == 0


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_real_server_address_token_snippets_log_and_clean_stop(qtbot, controller, service):
    panel = McpPanel(controller)
    qtbot.addWidget(panel)
    host = McpHost(controller, port=0)
    host.started.connect(lambda _url: panel.set_server(host))
    with qtbot.waitSignal(host.started, timeout=20_000):
        host.start()
    url, port = host.url, host.port
    assert url == f"http://127.0.0.1:{port}/mcp" and panel.address.text() == url
    token = load_token()
    assert host.token == token
    qtbot.mouseClick(panel.copy_token_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == token
    panel.client_box.setCurrentIndex(0)  # Claude Code over HTTP
    snippet = panel.snippet.toPlainText()
    assert url in snippet and token not in snippet and MASK in snippet  # the token only after Show
    panel.show_token_button.setChecked(True)
    assert token in panel.snippet.toPlainText()
    panel.show_token_button.setChecked(False)
    assert token not in panel.snippet.toPlainText()
    copy = next(b for b in panel.findChildren(QPushButton) if b.text() == "Copy snippet")
    qtbot.mouseClick(copy, Qt.MouseButton.LeftButton)
    assert token in QGuiApplication.clipboard().text()  # copied whole, ready to paste

    async def agent() -> tuple[bool, bool]:
        async with http_client(url, token) as client:
            ok = await client.call_tool("create_entities", {"entities": [
                {"name": "Agent note", "entityType": "note", "observations": ["written over HTTP"]}]})
            bad = await client.call_tool("add_observations", {"observations": [
                {"entityName": "Nobody", "contents": ["x"]}]})
            return ok.is_error, bad.is_error

    assert asyncio.run(agent()) == (False, True)
    qtbot.waitUntil(lambda: panel.model.rowCount() >= 2, timeout=3000)
    tools = [panel.model.record(r).tool for r in range(panel.model.rowCount())]
    assert "create_entities" in tools and "add_observations" in tools
    failed = next(panel.model.record(r) for r in range(panel.model.rowCount())
                  if panel.model.record(r).tool == "add_observations")
    assert failed.error and "Nobody" in failed.error
    assert service.entities.get_entity("Agent note").entity.entity_type == "note"

    async def listed(address: str) -> list[str]:
        async with http_client(address, token) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert "get_entity" not in asyncio.run(listed(url))  # the agent profile by default
    with qtbot.waitSignal(host.started, timeout=20_000):
        panel.tools_box.setCurrentIndex(panel.tools_box.findData("curation"))  # the server restarts
    assert host.tools == "curation" and "get_entity" in asyncio.run(listed(host.url))
    panel.transport_box.setCurrentIndex(1)
    assert "--tools curation" in panel.snippet.toPlainText() or '"curation"' in panel.snippet.toPlainText()
    port = host.port

    with qtbot.waitSignal(host.stopped, timeout=15_000):
        host.stop()
    assert not host.running and _port_is_free(port)
    assert not [t for t in threading.enumerate() if t.name == "limbic-mcp-http"]


def test_taken_port_falls_back_to_a_free_one(qtbot, controller):
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        taken = blocker.getsockname()[1]
        host = McpHost(controller, port=taken)
        with qtbot.waitSignal(host.started, timeout=20_000):
            host.start()
        try:
            assert host.port not in (None, taken)
        finally:
            host.stop()
