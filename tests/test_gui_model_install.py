"""*Install model* while someone types in the search box: the real wheel is installed and the model loaded into the
running app — no question pops up, nothing restarts, the typing goes on into the query. Until the memory is
embedded, search ranks on full text alone (the same top-K as without a model) and the search panel says so; the
banner over the graph counts the entities embedded, from the database; once none waits, the search runs by
meaning too. A real app on the sample memory written without a model, offscreen."""

from __future__ import annotations

import pytest
from _embedder_helpers import real_wheel
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox

from limbic.core.io.sample import seed_if_empty
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.app import LimbicApp
from limbic.gui.dialogs.model import InstallInWindow

pytestmark = pytest.mark.gui
QUERY = "deployment scripts"


def _popups() -> set:
    """The message boxes and dialogs shown now (another test in the same process may have left its own)."""
    return {w for w in QApplication.topLevelWidgets() if w.isVisible() and isinstance(w, QMessageBox | QDialog)}


def test_install_loads_the_model_without_a_restart_and_search_says_it_ranks_on_full_text(qtbot, tmp_path,
                                                                                         monkeypatch):
    wheel = real_wheel()  # read before LIMBIC_HOME moves: the models are installed into the temporary home
    monkeypatch.setenv("LIMBIC_HOME", str(tmp_path / "home"))
    path = tmp_path / "memory.db"
    plain = MemoryService(open_database(path), None)
    seed_if_empty(plain)  # written without a model: every entity waits for its vectors
    bm25 = [r.name for r in plain.search.query(QUERY, 10, record=False).results]
    plain.close()
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)
    app = LimbicApp(path, embedder=None, mcp=False, seed=False, settings=settings)
    with qtbot.waitSignal(app.ready, timeout=20_000):
        app.start()
    try:
        before = _popups()
        window, panel, controller = app.window, app.window.search_panel, app.controller
        window.activateWindow()
        panel.query.setFocus(Qt.FocusReason.OtherFocusReason)
        app.installer = InstallInWindow(controller, window.show_progress, app)  # what *Install model* makes
        with qtbot.waitSignal(controller.model_attached, timeout=180_000) as attached:
            assert app.installer.start(wheel=str(wheel))
            qtbot.keyClicks(panel.query, "deployment ")  # typing (a space too) goes on while it installs
            qtbot.keyClicks(panel.query, "scripts")
        assert attached.args == ["all-MiniLM-L6-v2@int8"] and controller.service.embedder is not None
        assert _popups() == before and window.isVisible() and panel.query.text() == QUERY
        assert QApplication.focusWidget() is panel.query  # nothing took the focus away from the typing
        assert "model: all-MiniLM-L6-v2" in window.model_label.full_text() and not window.install_button.isVisible()

        with qtbot.waitSignal(controller.search_finished, timeout=20_000) as searched:
            panel.search_now()
        outcome = searched.args[0]
        embedded, total = outcome.embedded
        assert outcome.mode == "fts_only"  # the memory is being embedded (tens of seconds): full text alone, said so
        assert embedded < 0.99 * total and [r.name for r in outcome.results] == bm25
        assert panel.banner.isVisible() and not panel.install_button.isVisible()
        assert f"Embedding {embedded:,} of {total:,} entities: search is full text (BM25)" in panel.banner_text.full_text()
        qtbot.waitUntil(lambda: window.progress_banner.isVisible(), timeout=5000)
        assert "Embedding the memory" in window.progress_banner.label.full_text()
        qtbot.waitUntil(lambda: controller.last_outcome is not None and controller.last_outcome.mode == "hybrid",
                        timeout=600_000)  # every vector landed: the shown search ran again, by meaning too
        assert controller.service.search.embedding_progress() == (total, total)
        assert not panel.banner.isVisible()
        qtbot.waitUntil(lambda: not window.progress_banner.isVisible(), timeout=5000)
        assert _popups() == before
    finally:
        app.shutdown()
