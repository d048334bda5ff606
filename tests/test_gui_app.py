"""The application: starts and quits cleanly with the MCP server; live sync from other writers."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import socket
import sys
import threading
import time

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

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
    assert app.window.mcp_label.full_text() == f"MCP: {app.mcp_server.url}"  # shown elided when narrow
    assert app.mcp_panel.address.text() == app.mcp_server.url
    assert app.bridge.watching
    app.window.close()
    app.shutdown()
    assert _port_free(port)
    assert app.service.database.closed
    left = [t for t in threading.enumerate() if t.ident not in threads_before and t.is_alive()]
    assert left == []


def _run_async(coro_factory) -> threading.Thread:
    """Run an asyncio coroutine in a thread so that the Qt event loop keeps turning meanwhile."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(coro_factory())
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.errors = errors
    thread.start()
    return thread


def _arrive(batch: list, changes: list, arrived: dict) -> None:
    now = time.time()
    changes.extend(batch)
    arrived.update({c.change_id: now for c in batch})


def _entity(name: str) -> dict:
    return {"entities": [{"name": name, "entityType": "Agent note", "observations": ["written by an agent"]}]}


def test_http_client_write_appears_live(qtbot, home):
    app = _start(qtbot, home, seed=False)
    qtbot.waitUntil(lambda: app.mcp_server is not None, timeout=20_000)
    server = app.mcp_server
    changes, calls, arrived = [], [], {}
    app.controller.graph_changed.connect(lambda batch: _arrive(batch, changes, arrived))
    app.controller.mcp_call.connect(calls.append)
    with qtbot.waitSignal(app.controller.search_finished, timeout=10_000):
        app.controller.search("agent note", 10)
    assert app.window.search_panel.model.rowCount() == 0

    async def write() -> None:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(server.url, http_client=http) as (read, send):
                async with ClientSession(read, send) as session:
                    await session.initialize()
                    result = await session.call_tool("create_entities", _entity("Agent HTTP note"))
                    assert not result.is_error, result

    try:
        thread = _run_async(write)
        qtbot.waitUntil(lambda: not thread.is_alive(), timeout=20_000)
        assert thread.errors == []
        qtbot.waitUntil(lambda: any(c.origin == "mcp:local" and c.op == "create_entities" for c in changes), timeout=1000)
        qtbot.waitUntil(lambda: any(c.tool == "create_entities" for c in calls), timeout=1000)
        change = next(c for c in changes if c.op == "create_entities")
        assert arrived[change.change_id] - change.at < 1.0  # commit → UI thread
        call = next(c for c in calls if c.tool == "create_entities")
        assert "Agent HTTP note" in call.arguments and call.error is None
        log = app.mcp_panel.model  # the activity log
        assert any(log.record(row).tool == "create_entities" for row in range(log.rowCount()))
        graph = app.graph_view
        qtbot.waitUntil(lambda: graph.arrays is not None and "Agent HTTP note" in graph.arrays.names, timeout=1000)
        model = app.window.search_panel.model  # the shown search ran again by itself
        qtbot.waitUntil(lambda: model.row_of("Agent HTTP note") >= 0, timeout=1000)
    finally:
        app.window.close()
        app.shutdown()


def test_stdio_process_write_appears_live(qtbot, home):
    app = _start(qtbot, home, seed=False)
    changes, arrived = [], {}
    app.controller.graph_changed.connect(lambda batch: _arrive(batch, changes, arrived))
    env = {**os.environ, "LIMBIC_HOME": os.environ["LIMBIC_HOME"]}
    params = StdioServerParameters(command=sys.executable, args=["-m", "limbic.gui.launcher", "--db",
                                                                 str(home / "memory.db"), "mcp"], env=env)

    async def write() -> None:
        async with stdio_client(params) as (read, send):
            async with ClientSession(read, send) as session:
                await session.initialize()
                result = await session.call_tool("create_entities", _entity("Agent stdio note"))
                assert not result.is_error, result

    try:
        thread = _run_async(write)
        qtbot.waitUntil(lambda: not thread.is_alive(), timeout=30_000)
        assert thread.errors == []
        qtbot.waitUntil(lambda: any(c.op == "create_entities" for c in changes), timeout=1000)
        change = next(c for c in changes if c.op == "create_entities")
        assert change.origin == "stdio" and len(change.entity_ids) == 1
        assert arrived[change.change_id] - change.at < 1.0  # commit in the other process → UI thread
        graph = app.graph_view
        qtbot.waitUntil(lambda: graph.arrays is not None and "Agent stdio note" in graph.arrays.names, timeout=1000)
    finally:
        app.window.close()
        app.shutdown()


def test_first_run_imports_the_sample_graph_and_keeps_window_state(qtbot, home):
    app = _start(qtbot, home, mcp=False)
    try:  # the window comes first and asks; the sample graph reaches the view as it is imported
        qtbot.waitUntil(lambda: app.sample_question is not None and app.sample_question.isVisible(), timeout=10_000)
        assert app.service.entities.stats().entities == 0  # nothing written before the answer
        app.sample_question.sample_button.click()
        qtbot.waitUntil(lambda: "sample memory graph" in app.window.statusBar().currentMessage(), timeout=20_000)
        qtbot.waitUntil(lambda: app.graph_view.arrays is not None and len(app.graph_view.arrays) >= 150,
                        timeout=10_000)
        assert len(app.graph_view.arrays.names) <= 300
        assert app.window.mcp_label.text() == "MCP: off" and app.mcp_host is None
        for show in (app.show_import, app.show_export, app.show_model):  # File and Model menus
            dialog = show()
            assert dialog.isVisible() and dialog.parent() is app.window
            dialog.close()
        menus = {a.text().replace("&", ""): a for m in app.window.menuBar().actions() for a in m.menu().actions()}
        assert menus["Import memory files…"].shortcut().toString() == "Ctrl+I"
        assert menus["Undo"].shortcut().toString() == "Ctrl+Z"
        assert menus["Find…"].shortcut().toString() == "Ctrl+F"
        app.set_dark(True)
        app.graph_view.set_mode("global")
        app.graph_view.set_colouring("community")
        # the offscreen screen (800 × 600) is smaller than the window's minimum, which a restored window keeps
        width, height = app.window.minimumSizeHint().width(), app.window.minimumSizeHint().height()
        app.window.resize(width, height)
    finally:
        app.window.close()
        app.shutdown()
    again = _start(qtbot, home, mcp=False)  # same database: not seeded twice, state restored
    try:
        qtbot.waitUntil(lambda: again.graph_view.arrays is not None, timeout=10_000)
        assert len(again.graph_view.arrays.names) == len(app.graph_view.arrays.names)
        assert again.window.dark_action.isChecked()
        assert again.graph_view.mode == "global" and again.graph_view.toolbar.colour_box.currentData() == "community"
        size = again.window.size()  # the saved geometry, not the first-run default 1500 × 920
        assert abs(size.width() - width) < 60 and abs(size.height() - height) < 60
    finally:
        again.window.close()
        again.shutdown()


def test_qt_binding_keeps_reference_counts():
    """PySide6 6.12.0 drops a reference to ``True`` on every ``Signal.emit`` (the process aborts
    after a few thousand emits); the installed binding must not."""
    from PySide6.QtCore import QObject, Signal

    class Emitter(QObject):
        changed = Signal(int)

    emitter = Emitter()
    before = sys.getrefcount(True)
    for i in range(500):
        emitter.changed.emit(i)
    assert sys.getrefcount(True) >= before - 5


def test_bridge_delivers_each_change_once_on_the_ui_thread(qtbot, tmp_path):
    from limbic.core.models import EntityInput
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database
    from limbic.gui.bridge import ChangeBridge

    service = MemoryService(open_database(tmp_path / "memory.db"), None, origin="gui")
    service.changes.watch_interval = 0.05
    bridge = ChangeBridge(service)
    batches, threads = [], []
    bridge.changes_arrived.connect(lambda batch: (batches.append(batch), threads.append(threading.get_ident())))
    bridge.start()
    try:
        writer = threading.Thread(target=lambda: service.entities.create_entities(
            [EntityInput(f"Note {i}", "Note") for i in range(3)]))
        writer.start()
        writer.join()
        service.entities.create_entities([EntityInput("Another", "Note")])  # seen by the callback and the watcher
        qtbot.waitUntil(lambda: sum(len(b) for b in batches) >= 2, timeout=2000)
        qtbot.wait(300)  # the watcher polls every 50 ms: any duplicate would have arrived by now
        ids = [c.change_id for b in batches for c in b]
        assert len(ids) == len(set(ids)) == 2
        assert set(threads) == {threading.get_ident()}
    finally:
        bridge.stop()
        service.close()
    assert not bridge.watching


def test_task_runner_answers_on_the_ui_thread(qtbot):
    from limbic.core.errors import NotFoundError
    from limbic.gui.workers import TaskRunner

    runner = TaskRunner()
    answers, errors, workers, callbacks = [], [], [], []

    def work(x):
        workers.append(threading.get_ident())
        if x < 0:
            raise NotFoundError("nothing there", ["x"])
        return x * 2

    runner.run(work, 21, on_success=lambda v: (answers.append(v), callbacks.append(threading.get_ident())))
    runner.run(work, -1, on_failure=lambda e: (errors.append(e), callbacks.append(threading.get_ident())))
    runner.run(work, 1, on_success=answers.append, channel="c")
    runner.run(work, 2, on_success=answers.append, channel="c")  # the answer for 1 is now stale
    qtbot.waitUntil(lambda: runner.pending() == 0, timeout=5000)
    assert sorted(answers) == [4, 42]
    assert isinstance(errors[0], NotFoundError) and errors[0].missing == ["x"]
    assert threading.get_ident() not in workers and len(workers) == 4
    assert callbacks == [threading.get_ident()] * 2
    assert runner.shutdown()
    assert runner.run(work, 3) == -1  # closed: nothing starts
