"""The real corpus as the explorer tests use it: every memory file of ``../shared/corpus`` imported into one
database (327 entities, 266 relations, 1,681 observations) with the deterministic HashingEmbedder."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.io.importer import import_files
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def corpus_or_skip() -> Path:
    """The corpus folder; the calling test skips when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"real corpus not found at {CORPUS}")
    return CORPUS


def corpus_files(corpus: Path) -> list[Path]:
    """The memory files of the corpus folder (its manifest left out)."""
    return sorted(p for p in corpus.iterdir() if p.suffix in (".json", ".jsonl") and p.name != "MANIFEST.json")


def corpus_database(corpus: Path, path: Path) -> Path:
    """Import every corpus file into a new database at ``path``; returns ``path``."""
    service = MemoryService(open_database(path), HashingEmbedder(), origin="cli")
    try:
        report = import_files(service, corpus_files(corpus))
        assert report.ok, report.summary(limit=5)
        service.search.wait_for_vectors(timeout=60)
    finally:
        service.close()
    return path


def start_xvfb(width: int, height: int) -> tuple[dict[str, str], subprocess.Popen]:
    """A real X server (Xvfb, no window manager) of ``width`` × ``height`` on a free display; returns the
    environment for a Qt app on it (``QT_QPA_PLATFORM=xcb``, ``DISPLAY``) and the server process, once the
    server accepts connections. Raises RuntimeError when it does not start within 15 s."""
    number = next(n for n in range(90 + os.getpid() % 50, 400) if not Path(f"/tmp/.X{n}-lock").exists())
    server = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while not Path(f"/tmp/.X11-unix/X{number}").exists():
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise RuntimeError(f"Xvfb did not start on display :{number}")
        time.sleep(0.05)
    time.sleep(0.2)
    return {"QT_QPA_PLATFORM": "xcb", "DISPLAY": f":{number}"}, server


def graph_view_on_copy(qtbot, path: Path, corpus_db: Path):
    """A shown GraphView (1000×700) on a copy of ``corpus_db`` at ``path``, once it draws; yields it, then closes
    everything. For fixtures: ``yield from graph_view_on_copy(...)``."""
    from _widgets_helpers import open_controller

    from limbic.gui.graph.view import GraphView

    path.write_bytes(corpus_db.read_bytes())
    service = MemoryService(open_database(path), HashingEmbedder(), origin="gui")
    controllers = open_controller(service)
    view = GraphView(next(controllers))
    view.resize(1000, 700)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitUntil(lambda: len(view.shown_names()) > 0, timeout=10_000)
    yield view
    view.shutdown()
    next(controllers, None)
    service.close()
