"""The application: starts and quits cleanly with the MCP server; live sync from other writers."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import socket
import threading

import pytest

from limbic.core.embedding.base import HashingEmbedder
from limbic.gui.app import LimbicApp

pytestmark = pytest.mark.gui


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("LIMBIC_HOME", str(tmp_path / "home"))
    return tmp_path


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _start(qtbot, home, **options) -> LimbicApp:
    app = LimbicApp(home / "memory.db", embedder=HashingEmbedder(), mcp_port=0, **options)
    with qtbot.waitSignal(app.ready, timeout=20_000):
        app.start()
    return app


def test_starts_and_quits_cleanly_with_mcp(qtbot, home):
    threads_before = {t.ident for t in threading.enumerate()}
    app = _start(qtbot, home, seed=False)
    qtbot.waitUntil(lambda: app.mcp_server is not None, timeout=20_000)
    port = app.mcp_server.port
    assert app.window.isVisible()
    assert app.mcp_server.running and not _port_free(port)
    assert app.window.mcp_label.text() == f"MCP: {app.mcp_server.url}"
    assert app.bridge.watching
    app.window.close()
    app.shutdown()
    assert _port_free(port)
    assert app.service.database.closed
    left = [t for t in threading.enumerate() if t.ident not in threads_before and t.is_alive()]
    assert left == []
