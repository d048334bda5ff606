"""Start-up: the embedded MCP server starts on every launch, and the window comes first.

- 20 launches in a row of the real ``limbic`` program offscreen (5 more under a real X server when Xvfb is
  installed; ``LIMBIC_STARTUP_RUNS=N`` runs N of each), each in a fresh process on its own home, with
  the real model when it is installed (so the warm-up loads it while the MCP SDK starts): every one
  answers MCP ``initialize`` with the bearer token (and refuses it without), and none logs a failure.
  The next launch starts while the previous one quits. (Before pydantic was imported ahead of Qt, see
  ``gui/launcher.py``, one of the first two launches failed this way.)
- The first run on a fresh home shows the window before the sample graph is imported; the import and
  then the embedding show their progress over the graph, and the banner goes once every vector landed.
"""

from __future__ import annotations

import json
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from _embedder_helpers import REAL_MODEL_DIR
from _explorer_helpers import start_xvfb
from _widgets_helpers import build_small_graph

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.embedding.onnx_embedder import OnnxEmbedder
from limbic.core.io.sample import sample_texts
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui import startup
from limbic.gui.app import LimbicApp

pytestmark = pytest.mark.gui
RUNS = {"offscreen": 20, "xcb": 5}
SERVE_TIMEOUT = 60.0  # seconds for one launch to answer (a loaded machine; a failed start never answers)
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _initialize(port: int, token: str | None) -> tuple[int, dict | None]:
    """POST ``initialize``; returns the HTTP status and the JSON-RPC answer (from JSON or one SSE event)."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=json.dumps(INITIALIZE).encode(),
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
            status = response.status
    except urllib.error.HTTPError as error:
        return error.code, None
    data = next((line[5:].strip() for line in text.splitlines() if line.startswith("data:")), text)
    return status, json.loads(data)


def _home(root: Path, database: Path) -> Path:
    """A fresh LIMBIC_HOME with a copy of ``database`` and, when installed, the real model."""
    home = root / "home"
    (home / "config").mkdir(parents=True)
    (home / "cache" / "models").mkdir(parents=True)
    if (REAL_MODEL_DIR / "manifest.json").is_file():
        (home / "cache" / "models" / REAL_MODEL_DIR.name).symlink_to(REAL_MODEL_DIR)
        (home / "config" / "active_model.json").write_text(json.dumps({"name": REAL_MODEL_DIR.name, "variant": "fp32"}))
    shutil.copy(database, home / "memory.db")
    return home


@pytest.fixture(scope="module")
def small_database(tmp_path_factory) -> Path:
    """Seven entities, with real-model vectors when the model is installed (the warm-up then loads them)."""
    path = tmp_path_factory.mktemp("startup-db") / "memory.db"
    embedder = OnnxEmbedder(REAL_MODEL_DIR) if (REAL_MODEL_DIR / "manifest.json").is_file() else HashingEmbedder()
    service = MemoryService(open_database(path), embedder, origin="cli")
    build_small_graph(service)
    service.search.wait_for_vectors(timeout=120)
    service.close()
    return path


def _runs(platform: str) -> int:
    return int(os.environ.get("LIMBIC_STARTUP_RUNS", RUNS[platform]))


def _platforms() -> list:
    found = [pytest.param("offscreen", id="offscreen")]
    xvfb = shutil.which("Xvfb")
    found.append(pytest.param("xcb", id="xvfb", marks=pytest.mark.skipif(xvfb is None, reason="Xvfb is not installed")))
    return found


@pytest.fixture
def display(request):
    """``{}`` for offscreen; for xcb a real X server (Xvfb, 1600×1000) and its DISPLAY."""
    if request.param == "offscreen":
        yield {"QT_QPA_PLATFORM": "offscreen"}
        return
    env, server = start_xvfb(1600, 1000)
    try:
        yield env
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.parametrize("display", _platforms(), indirect=True)
def test_consecutive_startups_all_serve_mcp(tmp_path, small_database, display):
    quitting: list[tuple[int, subprocess.Popen]] = []
    served = []
    runs = _runs(display["QT_QPA_PLATFORM"])
    for run in range(runs):
        home = _home(tmp_path / f"run{run}", small_database)
        port = _free_port()
        env = {**os.environ, **display, "LIMBIC_HOME": str(home)}
        started = time.monotonic()
        process = subprocess.Popen([sys.executable, "-m", "limbic.gui.launcher", "--db", str(home / "memory.db"),
                                    "--mcp-port", str(port)], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        answer = None
        while answer is None and process.poll() is None and time.monotonic() - started < SERVE_TIMEOUT:
            token_file = home / "config" / "mcp_token"
            try:
                status, answer = _initialize(port, token_file.read_text().strip())
                assert status == 200
            except OSError:  # not listening yet (or no token file yet)
                time.sleep(0.1)
        if answer is None:
            process.terminate()
            pytest.fail(f"launch {run} did not serve MCP: {process.communicate(timeout=60)[1][-3000:]}")
        assert answer["result"]["serverInfo"]["name"]
        assert _initialize(port, None)[0] == 401  # the token is what lets a client in
        served.append(time.monotonic() - started)
        process.send_signal(signal.SIGTERM)  # quits cleanly while the next launch starts
        quitting.append((run, process))
    for run, process in quitting:
        _, errors = process.communicate(timeout=60)
        assert process.returncode == 0, f"launch {run} exited with {process.returncode}: {errors[-2000:]}"
        assert "could not start" not in errors, errors
    assert len(served) == runs
    print(f"\n{display['QT_QPA_PLATFORM']}: {runs} launches served MCP after {min(served):.1f}–{max(served):.1f} s")


def test_the_import_banner_goes_once_no_vector_waits_even_if_none_waited(qtbot, tmp_path, monkeypatch):
    """The sample's vectors may all land before its import is reported done (a fast model, a busy UI thread): the
    banner the import put up still goes."""
    monkeypatch.setenv("LIMBIC_HOME", str(tmp_path / "home"))
    app = LimbicApp(tmp_path / "home" / "memory.db", embedder=HashingEmbedder(), mcp=False)
    try:
        with qtbot.waitSignal(app.ready, timeout=20_000):
            app.start()
        banner = app.window.progress_banner
        app.window.show_progress(0, 1, startup.SEEDING_TEXT)  # what the import shows while it runs
        assert banner.isVisible() and app.service.search.pending_vectors() == 0
        app._seeded(True)
        qtbot.waitUntil(lambda: not banner.isVisible(), timeout=10_000)
    finally:
        app.window.close()
        app.shutdown()


def test_first_run_shows_the_window_before_the_sample_is_imported(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("LIMBIC_HOME", str(tmp_path / "fresh"))
    app = LimbicApp(tmp_path / "fresh" / "memory.db", embedder=HashingEmbedder(), mcp=False)
    texts: list[str] = []
    app.progress.advanced.connect(lambda _done, _total, text: texts.append(text))
    shown = {}
    app.ready.connect(lambda: shown.update(entities=app.service.entities.stats().entities, visible=app.window.isVisible()))
    try:
        with qtbot.waitSignal(app.ready, timeout=20_000):
            app.start()
        qtbot.waitUntil(lambda: app.sample_question is not None, timeout=10_000)  # asked, not filled silently
        app.sample_question.sample_button.click()
        records = sum(1 for line in sample_texts()[0].splitlines() if line.strip())
        assert shown["visible"] and shown["entities"] < records  # the window came before the import ended
        banner = app.window.progress_banner
        qtbot.waitUntil(lambda: startup.SEEDING_TEXT in texts, timeout=10_000)
        qtbot.waitUntil(lambda: app.service.entities.stats().entities >= 200, timeout=30_000)
        qtbot.waitUntil(lambda: not banner.isVisible() and app.service.search.pending_vectors() == 0, timeout=60_000)
        assert "sample memory graph" in app.window.statusBar().currentMessage() or app.window.isVisible()
        print(f"\nwindow shown {app.timings['window_seconds']:.2f} s after start (database opened in "
              f"{app.timings['open_seconds']:.2f} s)")
    finally:
        app.window.close()
        app.shutdown()
