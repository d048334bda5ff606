"""Quitting: no child process outlives the app, and SIGTERM ends it within a second, start-up included.

The real ``limbic`` program runs offscreen on its own home and a database of 1,600 entities (more than the global
map lays out in the app's own process, so its layout worker and multiprocessing's resource tracker start), with
its MCP server on:

- killed with SIGKILL once its children exist, every one of them has ended within a few seconds (the worker dies
  with the app, the tracker with the worker; ``limbic.core.processes``);
- sent SIGTERM at the moment the children appear (start-up under way: the review queue being read and, with the
  real model installed, the model loading and the 1,600 vectors being computed), the app has ended within 1 s,
  its children with it (``gui/app.py`` ``QuitDeadline``);
- a layout worker started from a thread that then ends keeps serving (the kernel's parent-death signal follows the
  thread that started a process, so only the main thread's worker asks for it).

Linux only: the processes are read from /proc.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from _embedder_helpers import REAL_MODEL_DIR
from _process_helpers import alive, command_line, descendants, gone_after, kill_left

from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.graph.layout import LayoutEngine

pytestmark = [pytest.mark.gui, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]
ENTITIES = 1600  # more than gui/graph/layout.IN_PROCESS_LIMIT
BATCH = 800  # entities or relations per call (the service's limit is 1,000)
CHILDREN_TIMEOUT = 60.0  # seconds for the children to appear (a loaded machine)
ORPHAN_SECONDS = 3.0  # the children must have ended this long after the app was killed
QUIT_LIMIT = 1.0  # seconds from SIGTERM to the process's end


@pytest.fixture(scope="module")
def large_database(tmp_path_factory) -> Path:
    """1,600 services in a tree of 1,599 ``depends_on`` relations (no vectors: the layout needs none)."""
    path = tmp_path_factory.mktemp("quit-db") / "memory.db"
    service = MemoryService(open_database(path), None, origin="cli")
    for start in range(0, ENTITIES, BATCH):
        service.entities.create_entities([EntityInput(f"service-{i}", "service", (ObservationInput(f"Service {i} runs on host {i % 40}"),))
                                 for i in range(start, start + BATCH)])
    for start in range(1, ENTITIES, BATCH):
        service.relations.create_relations([RelationInput(f"service-{i}", f"service-{i // 2}", "depends_on")
                                  for i in range(start, min(start + BATCH, ENTITIES))])
    service.close()
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _launch(tmp_path: Path, database: Path) -> subprocess.Popen:
    """The app on a copy of ``database`` and its own home; its standard error goes to ``tmp_path/stderr``."""
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    if (REAL_MODEL_DIR / "manifest.json").is_file():  # the warm-up loads it, the vectors are computed meanwhile
        (home / "cache" / "models").mkdir(parents=True)
        (home / "cache" / "models" / REAL_MODEL_DIR.name).symlink_to(REAL_MODEL_DIR)
        (home / "config" / "active_model.json").write_text(json.dumps({"name": REAL_MODEL_DIR.name, "variant": "fp32"}))
    copy = tmp_path / "memory.db"
    copy.write_bytes(database.read_bytes())
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LIMBIC_HOME": str(home)}
    with open(tmp_path / "stderr", "wb") as errors:
        return subprocess.Popen([sys.executable, "-m", "limbic.gui.launcher", "--db", str(copy),
                                 "--mcp-port", str(_free_port())], env=env, stdout=subprocess.DEVNULL, stderr=errors)


def _errors(tmp_path: Path) -> str:
    return (tmp_path / "stderr").read_text(errors="replace")[-3000:]


def _wait_for_children(process: subprocess.Popen, tmp_path: Path, count: int = 2) -> list[int]:
    """The app's descendants once there are ``count`` (the layout worker and the resource tracker)."""
    started = time.monotonic()
    while time.monotonic() - started < CHILDREN_TIMEOUT and process.poll() is None:
        children = descendants(process.pid)
        if len(children) >= count:
            return children
        time.sleep(0.02)
    pytest.fail(f"the app did not start its layout worker: {_errors(tmp_path)}")


def _end_all(process: subprocess.Popen, children: list[int]) -> None:
    """Leave nothing behind, whatever the test found."""
    if process.poll() is None:
        process.kill()
    process.wait(30)
    kill_left(children)


def test_no_child_outlives_the_app_killed_with_sigkill(tmp_path, large_database):
    process, children = _launch(tmp_path, large_database), []
    try:
        children = _wait_for_children(process, tmp_path)
        process.kill()
        process.wait(10)
        gone = gone_after(children, ORPHAN_SECONDS)
        left = [command_line(pid) for pid in children if alive(pid)]
        assert gone is not None, f"still running {ORPHAN_SECONDS} s after the app was killed: {left}"
        print(f"\n{len(children)} children ended {gone:.2f} s after SIGKILL")
    finally:
        _end_all(process, children)


def test_sigterm_during_startup_ends_the_app_within_a_second(tmp_path, large_database):
    process, children = _launch(tmp_path, large_database), []
    try:
        children = _wait_for_children(process, tmp_path)
        asked = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        took = time.monotonic() - asked
        gone = gone_after(children, ORPHAN_SECONDS)
        assert took < QUIT_LIMIT, f"the app took {took:.2f} s to end after SIGTERM"
        assert process.returncode == 0, _errors(tmp_path)
        assert gone is not None, "a child outlived the app"
        print(f"\nended {took:.2f} s after SIGTERM; its {len(children)} children {gone:.2f} s later")
    finally:
        _end_all(process, children)


def test_a_worker_started_from_an_ended_thread_keeps_serving():
    edges = np.array([[i, i + 1] for i in range(9)], dtype=np.int64)
    engine = LayoutEngine(in_process_limit=1)  # the worker process even for 10 nodes
    try:
        first: list[np.ndarray] = []
        thread = threading.Thread(target=lambda: first.append(engine.global_layout(10, edges)))
        thread.start()
        thread.join(60)
        time.sleep(0.5)  # a parent-death signal would have ended the worker by now
        assert first and first[0].shape == (10, 2)
        assert np.allclose(engine.global_layout(10, edges), first[0])  # the same worker, seeded: the same layout
    finally:
        engine.close()
