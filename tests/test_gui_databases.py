"""Which memory the window is on: its title names the file; an empty memory is asked about (the sample, or left
empty — and then not asked again), never filled silently, also by the real ``limbic`` program; *New database…*
never replaces a file."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import signal
import subprocess
import sys
import time

import pytest

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.models import EntityInput
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.app import LimbicApp
from limbic.gui.databases import window_title

pytestmark = pytest.mark.gui


def started(qtbot, path, **options) -> LimbicApp:
    app = LimbicApp(path, embedder=HashingEmbedder(), mcp=False, **options)
    with qtbot.waitSignal(app.ready, timeout=20_000):
        app.start()
    return app


def closed(app: LimbicApp) -> None:
    app.window.close()
    app.shutdown()


def entities(path) -> int:
    service = MemoryService(open_database(path), HashingEmbedder(), origin="cli")
    try:
        return service.entities.stats().entities
    finally:
        service.close()


def test_the_title_names_the_file_and_its_folder(qtbot, tmp_path):
    path = tmp_path / "notes" / "work.db"
    path.parent.mkdir()
    app = started(qtbot, path, seed=False)
    try:
        assert app.window.windowTitle() == window_title(str(path)) == f"work.db ({path.parent}) — Limbic Studio"
    finally:
        closed(app)
    assert window_title("postgresql://team:***@db.example/limbic") == "postgresql://team:***@db.example/limbic — Limbic Studio"


def test_an_empty_memory_is_asked_about_and_a_choice_to_leave_it_empty_is_kept(qtbot, tmp_path):
    path = tmp_path / "empty.db"
    app = started(qtbot, path)  # the default: ask
    try:
        qtbot.waitUntil(lambda: app.sample_question is not None and app.sample_question.isVisible(), timeout=10_000)
        qtbot.wait(500)
        assert app.service.entities.stats().entities == 0  # nothing written while the question waits
        app.sample_question.empty_button.click()
        qtbot.waitUntil(lambda: "stays empty" in app.window.statusBar().currentMessage(), timeout=5000)
    finally:
        closed(app)
    assert entities(path) == 0
    again = started(qtbot, path)
    try:
        qtbot.wait(500)
        assert again.sample_question is None and again.service.entities.stats().entities == 0  # not asked again
    finally:
        closed(again)


def test_an_empty_memory_gets_the_sample_when_asked_for(qtbot, tmp_path):
    app = started(qtbot, tmp_path / "try.db")
    try:
        qtbot.waitUntil(lambda: app.sample_question is not None, timeout=10_000)
        app.sample_question.sample_button.click()
        qtbot.waitUntil(lambda: app.service.entities.stats().entities >= 200, timeout=30_000)
        qtbot.waitUntil(lambda: "sample memory graph was imported" in app.window.statusBar().currentMessage(),
                        timeout=10_000)
    finally:
        closed(app)


def test_the_real_program_never_fills_a_new_file_silently(tmp_path):
    path = tmp_path / "fresh.db"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LIMBIC_HOME=str(tmp_path / "home"))
    process = subprocess.Popen([sys.executable, "-m", "limbic.gui.launcher", "--db", str(path), "--no-mcp"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        assert path.exists(), process.communicate(timeout=10)[1][-2000:]
        time.sleep(5)  # long past the moment the sample used to be imported (about a second)
        assert process.poll() is None and entities(path) == 0
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)


def test_new_database_never_replaces_a_file(qtbot, tmp_path):
    app = started(qtbot, tmp_path / "current.db", seed=False)
    existing = tmp_path / "kept.db"
    keeper = MemoryService(open_database(existing), HashingEmbedder(), origin="cli")
    keeper.entities.create_entities([EntityInput("kept", "note")])
    keeper.close()
    before = existing.read_bytes()
    try:
        menus = {a.text().replace("&", ""): a for m in app.window.menuBar().actions() for a in m.menu().actions()}
        assert menus["New database…"].shortcut().toString() == "Ctrl+N"
        assert app.new_database(existing) is False  # said so; nothing started
        assert existing.read_bytes() == before
        assert app.new_database(tmp_path / "no such folder" / "x.db") is False
        assert not (tmp_path / "no such folder").exists()
    finally:
        closed(app)


def _processes_on(path) -> list[int]:
    """Process ids whose command line names ``path`` (the app started on that memory)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                    if str(path).encode() in cmdline.read().split(b"\0"):
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the started app through /proc")
def test_opening_another_database_keeps_the_window_until_the_new_one_shows(qtbot, tmp_path, monkeypatch):
    import tempfile

    from limbic.gui.app import OPEN_WAIT_SECONDS

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the app's hand-over file goes
    other = tmp_path / "other.db"
    keeper = MemoryService(open_database(other), HashingEmbedder(), origin="cli")
    keeper.entities.create_entities([EntityInput("kept", "note")])
    keeper.close()
    app = started(qtbot, tmp_path / "current.db", seed=False)
    started_at = time.monotonic()
    try:
        app.open_database(str(other))
        assert app.window.isVisible() and app.window.progress_banner.isVisible()
        assert app.window.progress_banner.label.text() == f"Opening {other}…"
        while list(tmp_path.glob("limbic-open-*")):  # the new app has not shown its window yet
            assert app.window.isVisible()
            qtbot.wait(50)
            assert time.monotonic() - started_at < OPEN_WAIT_SECONDS + 5
        assert time.monotonic() - started_at < OPEN_WAIT_SECONDS  # told by the new app, not the time limit
        assert _processes_on(other)
    finally:
        for pid in _processes_on(other):
            os.kill(pid, signal.SIGTERM)
        closed(app)
