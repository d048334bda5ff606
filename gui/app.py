"""The desktop application: start-up, the embedded MCP server, dark mode, window state, clean quit.

``run(args)`` is what ``limbic`` (no sub-command) calls with the parsed options ``--db PATH``,
``--no-mcp`` and ``--mcp-port P``. Start-up never blocks the UI thread on SQL or ONNX: the database
is opened, seeded with ``resources/sample/`` when empty (``core/io/sample.py``) and counted in a
worker; the window appears once that answer is back. The Streamable HTTP MCP server
(``core/mcp_http.py``) is started in a worker too and stopped on quit, so no thread is left and the
port is free afterwards.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
import time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyqtgraph as pg
from PySide6.QtCore import QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QIcon, QKeySequence, QPalette
from PySide6.QtWidgets import QApplication

from limbic.core.mcp.config import DEFAULT_PORT
from limbic.core.paths import config_dir
from limbic.gui.bridge import ChangeBridge
from limbic.gui.controller import AppController
from limbic.gui.edit.editor import EntityEditor
from limbic.gui.graph.view import GraphView
from limbic.gui.main_window import MainWindow
from limbic.gui.mcp_panel import McpPanel
from limbic.gui.workers import TaskRunner

if TYPE_CHECKING:
    from limbic.core.service import MemoryService

log = logging.getLogger(__name__)

_AUTO = object()


def load_style(dark: bool) -> str:
    """The Qt style sheet ``resources/dark.qss`` or ``light.qss`` ("" when the file is absent)."""
    name = "dark.qss" if dark else "light.qss"
    resource = resources.files("limbic.resources") / name
    return resource.read_text(encoding="utf-8") if resource.is_file() else ""


def dark_palette() -> QPalette:
    """A dark Fusion palette (the style sheet, when present, refines it)."""
    palette = QPalette()
    colours = {
        QPalette.ColorRole.Window: "#2b2d30", QPalette.ColorRole.WindowText: "#dcdcdc",
        QPalette.ColorRole.Base: "#1e1f22", QPalette.ColorRole.AlternateBase: "#26282b",
        QPalette.ColorRole.ToolTipBase: "#2b2d30", QPalette.ColorRole.ToolTipText: "#dcdcdc",
        QPalette.ColorRole.Text: "#dcdcdc", QPalette.ColorRole.Button: "#33363a",
        QPalette.ColorRole.ButtonText: "#dcdcdc", QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Highlight: "#2f65ca", QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#6aa6ff", QPalette.ColorRole.PlaceholderText: "#8a8a8a",
    }
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f6f6f"))
    return palette


def settings_store() -> QSettings:
    """GUI settings (window state, dark mode) in ``config_dir()/gui.ini`` (honours ``LIMBIC_HOME``)."""
    return QSettings(str(config_dir() / "gui.ini"), QSettings.Format.IniFormat)


def _open_and_seed(db_path: str | None, embedder: Any, seed: bool) -> dict[str, Any]:
    """Worker: open the service, import the sample graph into an empty database, read params and counts."""
    from limbic.core.service import MemoryService

    started = time.perf_counter()
    if embedder is _AUTO:
        service = MemoryService.open(db_path, origin="gui", background_vectors=True)
    else:
        service = MemoryService.open(db_path, embedder=embedder, origin="gui", background_vectors=True)
    seeded = None
    if seed:
        from limbic.core.io.sample import seed_if_empty

        seeded = seed_if_empty(service)
        if seeded is not None:
            service.wait_for_vectors(timeout=120)  # the first view searches the sample by meaning at once
    return {
        "service": service,
        "params": service.scoring_params(),
        "stats": service.stats(),
        "seeded": seeded,
        "open_seconds": time.perf_counter() - started,
    }


class LimbicApp(QObject):
    """One running application: service, controller, change bridge, window and MCP server.

    ``ready`` is emitted once the window is shown (the MCP server may still be starting);
    ``mcp_state_changed(str)`` when the server started, failed or stopped. :meth:`shutdown` is safe
    to call twice.
    """

    ready = Signal()
    mcp_state_changed = Signal(str)
    failed = Signal(str)

    def __init__(
        self,
        db_path: str | Path | None = None,
        *,
        mcp: bool = True,
        mcp_port: int | None = None,
        embedder: Any = _AUTO,
        seed: bool = True,
        watch_interval: float = 0.2,
        settings: QSettings | None = None,
    ) -> None:
        super().__init__()
        self.db_path = None if db_path is None else str(db_path)
        self.mcp_enabled = mcp
        self.mcp_port = DEFAULT_PORT if mcp_port is None else mcp_port
        self.embedder = embedder
        self.seed = seed
        self.watch_interval = watch_interval
        self.settings = settings if settings is not None else settings_store()
        self.startup = TaskRunner(self, max_threads=1)
        self.service: MemoryService | None = None
        self.controller: AppController | None = None
        self.bridge: ChangeBridge | None = None
        self.window: MainWindow | None = None
        self.graph_view: GraphView | None = None
        self.editor: EntityEditor | None = None
        self.mcp_panel: McpPanel | None = None
        self.mcp_host: Any = None  # gui/mcp_host.McpHost once the SDK is loaded
        self.started_at = time.perf_counter()
        self.timings: dict[str, float] = {}
        self._closed = False

    # --- start-up -------------------------------------------------------------------------------

    def start(self) -> None:
        """Open the database in a worker; the window follows on the UI thread."""
        self.startup.run(_open_and_seed, self.db_path, self.embedder, self.seed,
                         on_success=self._opened, on_failure=self._open_failed)

    def _open_failed(self, error: BaseException) -> None:
        log.debug("could not open the database", exc_info=error)
        self.failed.emit(str(error))

    def _opened(self, answer: dict[str, Any]) -> None:
        if self._closed:
            answer["service"].close()
            return
        self.timings["open_seconds"] = answer["open_seconds"]
        self.service = service = answer["service"]
        self.controller = controller = AppController(service, params=answer["params"])
        service.changes.watch_interval = self.watch_interval
        self.bridge = ChangeBridge(service)
        self.bridge.changes_arrived.connect(controller.notify_changes)
        self.bridge.start()
        dark = bool(self.settings.value("view/dark", False, type=bool))
        self.graph_view = GraphView(controller)
        self.editor = editor = EntityEditor(controller)
        self.mcp_panel = McpPanel(controller)
        right = Qt.DockWidgetArea.RightDockWidgetArea
        self.window = window = MainWindow(
            controller, central=self.graph_view, toggle_dark=self.set_dark, dark=dark,
            extra_docks=[("Entity editor", "editorDock", self.editor, right), ("MCP", "mcpDock", self.mcp_panel, right)],
        )
        self._add_actions(window, editor)
        self.set_dark(dark)
        window.restore_state(self.settings)
        window.closing.connect(self._save_window_state)
        window.show_stats(answer["stats"])
        if answer["seeded"]:
            controller.status_message.emit("First run: the sample memory graph was imported")
        window.set_mcp_state("MCP: off" if not self.mcp_enabled else "MCP: starting…")
        window.show()
        self.timings["window_seconds"] = time.perf_counter() - self.started_at
        if self.mcp_enabled:
            # The MCP SDK takes seconds to import: load it in a worker, then start the host.
            self.startup.run(importlib.import_module, "limbic.gui.mcp_host",
                             on_success=self._start_mcp, on_failure=self._mcp_failed)
        self.startup.run(self._preload)
        self.controller.service.start_warm_up()  # the model and the vector copy, off the UI thread
        self.ready.emit()

    def _add_actions(self, window: MainWindow, editor: EntityEditor) -> None:
        """File ▸ Import/Export, Edit ▸ Undo/Redo, Model ▸ status and install (the other helpers' dialogs)."""
        def action(text: str, slot: Any, shortcut: str | None = None) -> QAction:
            item = QAction(text, window)
            if shortcut:
                item.setShortcut(QKeySequence(shortcut))
            item.triggered.connect(slot)
            return item

        window.add_actions("file", [
            action("&Import memory files…", self.show_import, "Ctrl+I"),
            action("&Export the graph…", self.show_export, "Ctrl+E"),
        ])
        window.add_actions("edit", [editor.undo_action, editor.redo_action,
                                    action("&Curation: duplicates and splits…", self.show_curation, "Ctrl+Shift+M")])
        window.add_actions("model", [action("Model &status and install…", self.show_model, "Ctrl+M")])

    def _dialog(self, module: str, name: str) -> Any:
        # The dialogs' modules pull in networkx and onnx (seconds): they are imported in a worker
        # after start-up (see _preload), so opening one is instant.
        dialog = getattr(importlib.import_module(module), name)(self.controller, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def show_import(self) -> Any:
        return self._dialog("limbic.gui.dialogs.import_export", "ImportDialog")

    def show_export(self) -> Any:
        return self._dialog("limbic.gui.dialogs.import_export", "ExportDialog")

    def show_model(self) -> Any:
        return self._dialog("limbic.gui.dialogs.model", "ModelDialog")

    def show_curation(self) -> Any:
        """The curation window (merge queue, split candidates); its edits go on the editor's undo stack."""
        from limbic.gui.curation.window import CurationWindow

        assert self.editor is not None and self.controller is not None
        window = CurationWindow(self.controller, self.window, stack=self.editor.stack, queue=self.editor.queue)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        window.show()
        return window

    @staticmethod
    def _preload() -> None:
        """Worker: import the modules that take seconds (the MCP SDK, networkx, onnx) off the UI thread."""
        for module in ("limbic.gui.dialogs.import_export", "limbic.gui.dialogs.model"):
            importlib.import_module(module)

    def _start_mcp(self, module: Any) -> None:
        if self._closed:
            return
        self.mcp_host = host = module.McpHost(self.controller, self, port=self.mcp_port)
        host.started.connect(self._mcp_started)
        host.failed.connect(self._mcp_failed)
        host.start()

    @property
    def mcp_server(self) -> Any:
        """The running ``HttpMcpServer`` (``None`` when off, starting or failed)."""
        return self.mcp_host.server if self.mcp_host is not None else None

    def _mcp_started(self, url: str) -> None:
        if self.mcp_panel is not None:
            self.mcp_panel.set_server(self.mcp_host)
        self._set_mcp_state(f"MCP: {url}")

    def _mcp_failed(self, error: Any) -> None:
        if self.mcp_panel is not None:
            self.mcp_panel.set_failed(str(error))
        self._set_mcp_state(f"MCP: failed ({error})")

    def _set_mcp_state(self, text: str) -> None:
        if self.window is not None:
            self.window.set_mcp_state(text)
        self.mcp_state_changed.emit(text)

    # --- view -----------------------------------------------------------------------------------

    def set_dark(self, dark: bool) -> None:
        """Apply a dark or light palette, ``resources/dark.qss`` or ``light.qss`` on top, and matching
        plot colours; the choice is remembered in the settings."""
        app = _application()
        app.setStyle("Fusion")
        app.setPalette(dark_palette() if dark else app.style().standardPalette())
        app.setStyleSheet(load_style(dark))
        background, foreground = ("#1e1f22", "#d0d0d0") if dark else ("#ffffff", "#303030")
        pg.setConfigOptions(background=background, foreground=foreground)
        if self.window is not None:
            for view in self.window.findChildren(pg.GraphicsView):
                view.setBackground(background)
            for plot in self.window.findChildren(pg.PlotWidget):
                for name in ("left", "bottom"):
                    axis = plot.getAxis(name)
                    axis.setPen(foreground)
                    axis.setTextPen(foreground)
            action = self.window.dark_action
            if action.isChecked() != dark:
                action.blockSignals(True)
                action.setChecked(dark)
                action.blockSignals(False)
        self.settings.setValue("view/dark", dark)

    def _save_window_state(self) -> None:
        if self.window is not None:
            self.window.save_state(self.settings)
            self.settings.sync()

    # --- quit -----------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop the MCP server (port freed), the watcher, the workers; close the database."""
        if self._closed:
            return
        self._closed = True
        if self.window is not None:
            self._save_window_state()
            self.window.hide()
        self.startup.shutdown()
        if self.mcp_host is not None:
            self.mcp_host.stop()  # also a server still starting; the port is free afterwards
        if self.graph_view is not None:
            self.graph_view.shutdown()
        if self.bridge is not None:
            self.bridge.stop()
        if self.controller is not None:
            self.controller.shutdown()
        if self.service is not None:
            self.service.close()
        self.settings.sync()


def _application() -> QApplication:
    """The running ``QApplication`` (the app creates it in :func:`run`; tests through pytest-qt)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        raise RuntimeError("Limbic Studio needs a QApplication")
    return app


def run(args: argparse.Namespace) -> int:
    """Open the main window (``limbic`` with no sub-command); returns the exit code."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("Limbic Studio")
    app.setOrganizationName("limbic")
    app.setDesktopFileName("limbic-studio")
    app.setWindowIcon(QIcon(str(resources.files("limbic.resources") / "limbic.svg")))
    app.setAttribute(Qt.ApplicationAttribute.AA_DontShowIconsInMenus, False)
    limbic = LimbicApp(
        getattr(args, "db", None),
        mcp=not getattr(args, "no_mcp", False),
        mcp_port=getattr(args, "mcp_port", None),
    )
    limbic.failed.connect(lambda message: (print(f"limbic: error: {message}", file=sys.stderr), app.exit(2)))
    app.aboutToQuit.connect(limbic.shutdown)
    # Ctrl+C / SIGTERM quit cleanly (MCP server stopped, database closed); the timer lets Python run
    # its signal handlers while Qt's event loop has the thread.
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: app.quit())
    heartbeat = QTimer()
    heartbeat.start(250)
    heartbeat.timeout.connect(lambda: None)
    limbic.start()
    return app.exec()
