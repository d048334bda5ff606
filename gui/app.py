"""The desktop application: start-up, the embedded MCP server, dark mode, window state, clean quit.

:func:`start` is what ``limbic`` (no sub-command) calls with the parsed options ``--db PATH``,
``--no-mcp`` and ``--mcp-port P``, once its modules are in: the starting window (``gui/starting.py``) shows
before they are imported. Start-up never blocks the UI thread on SQL or ONNX, and the window comes first: the
database is opened in a worker (a fraction of a second) and the main window takes the starting window's place; then,
on the start-up runner's one thread and in this order (``gui/startup.py``), the sample graph is imported
into an empty database (its progress shown in the window), the modules that are slow or not safe to
import from two threads at once are imported, the Streamable HTTP MCP server (``core/mcp/http.py``) is
started, and the warm-up thread loads the model. The server is stopped on quit, so no thread is left and
the port is free afterwards. A quit (the window closed, SIGTERM, Ctrl+C) ends the process within
``QUIT_SECONDS``, start-up included; the layout worker ends with it, also when the app is killed.

*File ▸ New database…*, *Open database…* and *Open recent* start the app again on the chosen memory (a new process
with the same options; this one quits, freeing the MCP port); the window's title names the memory it is on. An
empty memory is never filled silently: the window asks whether to import the sample or leave it empty
(:class:`~limbic.gui.databases.SampleQuestion`; a memory left empty is not asked about again). Without a model, *Install model* (status bar, search panel)
installs it in one click with its progress over the graph and loads it into the running app (no restart, no
question). Whenever entities wait for their vectors (a model just installed, the sample just imported, a start
after either), the banner over the graph shows the entities embedded of all, read from the database, until
none waits; search ranks on full text meanwhile (``MemoryService.search.query``). *Help ▸ Getting started*
is a short tour of the window, shown once on the first run.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QObject,
    QProcess,
    QProcessEnvironment,
    QSettings,
    QSocketNotifier,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QWidget

from limbic.core.cli.main import address_refusal
from limbic.core.mcp.config import DEFAULT_PORT
from limbic.gui import startup
from limbic.gui.agent_timeline import AgentTimeline
from limbic.gui.bridge import ChangeBridge
from limbic.gui.controller import AppController
from limbic.gui.databases import SampleQuestion, recent_entry, window_title
from limbic.gui.dialogs.failure import describe_failure
from limbic.gui.edit.editor import EntityEditor
from limbic.gui.graph.view import GraphView
from limbic.gui.main_window import MainWindow
from limbic.gui.mcp_panel import McpPanel
from limbic.gui.review.timeline import TimelineBar
from limbic.gui.review.view import ReviewView
from limbic.gui.starting import SHOWN_ENV, end_process, settings_store
from limbic.gui.theme import apply_theme
from limbic.gui.workers import TaskRunner

if TYPE_CHECKING:
    from limbic.core.service import MemoryService

log = logging.getLogger(__name__)
VECTOR_POLL_MS = 500  # how often the embedding progress is read while entities wait for vectors
RECENT_KEY = "recent/databases"
LEFT_EMPTY_KEY = "sample/left_empty"  # memories whose owner chose to leave them empty: not asked again
RECENT_COUNT = 8  # databases listed in File ▸ Open recent
DATABASE_FILES = "Limbic memory (*.db *.sqlite *.sqlite3);;All files (*)"
OPEN_WAIT_SECONDS = 30.0  # File ▸ Open: the longest this app waits for the new one's window before it quits
OPEN_POLL_MS = 100  # how often it looks
QUIT_SECONDS = 0.4  # after a quit is asked (window closed, SIGTERM, Ctrl+C), the process ends at the latest then


def relaunch_arguments(db: str, options: list[str]) -> list[str]:
    """The command line that starts the app on ``db`` with the same Python and ``options`` (``--no-mcp``, …)."""
    return ["-c", "from limbic.gui.launcher import main; raise SystemExit(main())", "--db", db, *options]


class LimbicApp(QObject):
    """One running application: service, controller, change bridge, window and MCP server.

    ``seed``: what an empty memory gets — ``"ask"`` (the window asks: the sample, or left empty), ``True`` (the
    sample, without asking: scripts and tests) or ``False`` (nothing). ``ready`` is emitted once the window is
    shown (the MCP server may still be starting);
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
        embedder: Any = startup.AUTO,
        seed: bool | str = "ask",
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
        self.startup = TaskRunner(self, max_threads=1)  # one thread: the start-up steps run in order
        self.progress = startup.Progress(self)
        self._vectors_shown = False  # the embedding progress is in the banner over the graph
        self._vectors_timer = QTimer(self)
        self._vectors_timer.setInterval(VECTOR_POLL_MS)
        self._vectors_timer.timeout.connect(self._poll_vectors)
        self.service: MemoryService | None = None
        self.controller: AppController | None = None
        self.bridge: ChangeBridge | None = None
        self.window: MainWindow | None = None
        self.graph_view: GraphView | None = None
        self.editor: EntityEditor | None = None
        self.mcp_panel: McpPanel | None = None
        self.review: ReviewView | None = None
        self.agents: AgentTimeline | None = None
        self.timeline: TimelineBar | None = None
        self.mcp_host: Any = None  # gui/mcp_host.McpHost once the SDK is loaded
        self.started_at = time.perf_counter()
        self.timings: dict[str, float] = {}
        self.installer: Any = None  # gui/dialogs/model.InstallInWindow, made on the first *Install model*
        self.recent_menu: Any = None
        self.sample_question: SampleQuestion | None = None
        self._closed = False
        self._continued = False  # the start-up went on past the MCP server
        self.signal_wake: Any = None  # the notifier and sockets that wake the event loop on a signal (start())

    # --- start-up -------------------------------------------------------------------------------

    def start(self) -> None:
        """Open the database in a worker; the window follows on the UI thread, then the rest of start-up."""
        self.startup.run(startup.open_service, self.db_path, self.embedder,
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
        service.offload = self.graph_view.layout_engine.run  # a split's clustering runs in the layout's worker
        self.editor = editor = EntityEditor(controller)
        self.mcp_panel = McpPanel(controller)
        self.review = ReviewView(controller, editor.execute)  # its actions go on the editor's undo stack
        self.agents = AgentTimeline(controller)
        self.timeline = TimelineBar(controller, self.graph_view)
        side = Qt.DockWidgetArea.LeftDockWidgetArea
        self.window = window = MainWindow(
            controller, central=self.graph_view, toggle_dark=self.set_dark, dark=dark,
            extra_docks=[("Editor", "editorDock", self.editor, side), ("MCP", "mcpDock", self.mcp_panel, side),
                         ("Review", "reviewDock", self.review, side)],
            beside_search=[("Agents", "agentsDock", self.agents)],
            below_graph=self.timeline,
        )
        self._add_actions(window, editor)
        window.search_panel.pin.pinned_changed.connect(self.graph_view.set_pinned)
        self.graph_view.edit_requested.connect(lambda _name: window.docks["editorDock"].raise_())
        self.set_dark(dark)
        window.restore_state(self.settings)
        self.graph_view.restore_state(self.settings)
        window.closing.connect(self._save_window_state)
        window.show_stats(answer["stats"])
        window.setWindowTitle(window_title(service.shown_address))
        window.install_model_requested.connect(self.install_model)
        controller.model_attached.connect(lambda _name: self._follow_vectors())
        self._remember(service.shareable_address)
        self.progress.advanced.connect(window.show_progress)
        self.mcp_panel.retry_requested.connect(self._retry_mcp)
        self._set_mcp_state("MCP: off" if not self.mcp_enabled else "MCP: starting…")
        window.show()
        self.timings["window_seconds"] = time.perf_counter() - self.started_at
        empty = not answer["stats"].entities
        if self.seed is True:
            self._seed()
        elif self.seed == "ask" and empty and service.shareable_address not in self._left_empty():
            self._ask_sample(service.shareable_address)
        if service.embedder is not None:
            self._follow_vectors()  # what an earlier start left to embed (a model installed, the sample imported)
        if self.mcp_enabled:
            self.startup.run(startup.import_mcp_modules, on_success=self._start_mcp, on_failure=self._mcp_import_failed)
        else:
            self._continue_startup()
        self.ready.emit()

    def _seed(self) -> None:
        assert self.service is not None
        self.startup.run(startup.seed_sample, self.service, self.progress, on_success=self._seeded,
                         on_failure=self._seed_failed)

    def _left_empty(self) -> list[str]:
        value = self.settings.value(LEFT_EMPTY_KEY, [])
        return [value] if isinstance(value, str) else [str(v) for v in value] if isinstance(value, list | tuple) else []

    def _ask_sample(self, address: str) -> None:
        """Ask whether the empty memory at ``address`` gets the sample or stays empty (the start-up goes on)."""
        self.sample_question = question = SampleQuestion(address, self.window)
        question.answered.connect(lambda sample: self._sample_answered(address, sample))
        question.open()

    def _sample_answered(self, address: str, sample: bool) -> None:
        self.sample_question = None
        if self._closed:
            return
        if sample:
            self._seed()
            return
        self.settings.setValue(LEFT_EMPTY_KEY, [address, *(a for a in self._left_empty() if a != address)][:50])
        if self.controller is not None:
            self.controller.status_message.emit("The memory stays empty: your agents' writes will show up here")
        self._first_tour()

    def _first_tour(self) -> None:
        if not self.settings.value("help/tour_shown", False, type=bool):
            self.settings.setValue("help/tour_shown", True)
            self.show_getting_started()

    def _seeded(self, seeded: bool) -> None:
        if self.window is None or self.controller is None:
            return
        if not seeded:
            self.window.show_progress(0, 0, "")
            return
        self.window.refresh_stats()
        self.controller.status_message.emit("The sample memory graph was imported")
        self._first_tour()
        self._vectors_shown = True  # the import's banner is up: hidden once no vector waits, even if none waited
        self._follow_vectors()  # its vectors are computed in the background

    def _follow_vectors(self) -> None:
        """Show how far the embedding is (entities embedded of all, from the database) until none waits."""
        if not self._vectors_timer.isActive():
            self._vectors_timer.start()
            self._poll_vectors()

    def _poll_vectors(self) -> None:
        if self.controller is not None and not self._closed:
            self.controller.run(startup.embedding_state, self.controller.service, on_success=self._vectors_state,
                                channel="startup-vectors")

    def _vectors_state(self, state: tuple[int, tuple[int, int] | None]) -> None:
        if self.window is None or self.controller is None:
            return
        pending, embedded = state
        if pending and embedded is not None:
            self._vectors_shown = True
            self.window.show_progress(embedded[0], embedded[1], startup.EMBEDDING_TEXT)
            return
        self._vectors_timer.stop()
        if self._vectors_shown:
            self._vectors_shown = False
            self.window.show_progress(0, 0, "")
            self.controller.refresh_search(record=False)  # the shown search, now also by meaning

    def _seed_failed(self, error: BaseException) -> None:
        if self.window is not None and self.controller is not None:
            self.window.show_progress(0, 0, "")
            self.controller.report_failure(error, "The sample memory graph could not be imported")

    def _start_mcp(self, host_module: Any) -> None:
        if self._closed or self.controller is None:
            return
        self.mcp_host = host = host_module.McpHost(self.controller, self, port=self.mcp_port, runner=self.startup)
        host.started.connect(self._mcp_started)
        host.failed.connect(self._mcp_failed)
        host.start()
        self._continue_startup()

    def _mcp_import_failed(self, error: BaseException) -> None:
        self._mcp_failed(*describe_failure(error))
        self._continue_startup()

    def _continue_startup(self) -> None:
        """After the MCP server's start (queued on the same runner): the dialogs' modules, then the warm-up."""
        if self._continued:
            return
        self._continued = True
        self.startup.run(startup.import_dialog_modules, on_success=lambda _: self._warm_up(),
                         on_failure=lambda _e: self._warm_up())

    def _warm_up(self) -> None:
        if not self._closed and self.controller is not None:
            # the model and the vector copy, off the UI thread; then what the app holds for its whole life is
            # left out of the collector's full passes (:func:`gc.freeze`): at 10,000 entities each pass walked
            # ~280,000 objects for 50-220 ms with the interpreter lock held, whichever thread ran it, and the UI
            # thread waited (docs/performance.md "The UI thread at 10,000 entities")
            self.controller.service.search.start_warm_up(then=gc.freeze)

    def _add_actions(self, window: MainWindow, editor: EntityEditor) -> None:
        """File ▸ Import/Export, Edit ▸ Undo/Redo, Model ▸ status and install (the other helpers' dialogs)."""
        def action(text: str, slot: Any, shortcut: str | None = None) -> QAction:
            item = QAction(text, window)
            if shortcut:
                item.setShortcut(QKeySequence(shortcut))
            item.triggered.connect(slot)
            return item

        window.add_actions("file", [
            action("&New database…", self.ask_new_database, "Ctrl+N"),
            action("&Open database…", self.ask_database, "Ctrl+O"),
            action("&Import memory files…", self.show_import, "Ctrl+I"),
            action("&Export the graph…", self.show_export, "Ctrl+E"),
        ])
        self.recent_menu = window.file_menu.addMenu("Open &recent")
        window.file_menu.insertMenu(window.file_menu.actions()[2], self.recent_menu)
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        window.help_menu.insertAction(window.help_menu.actions()[0],
                                      action("&Getting started", self.show_getting_started))
        window.add_actions("edit", [editor.undo_action, editor.redo_action,
                                    action("&Curation: duplicates and splits…", self.show_curation, "Ctrl+Shift+M")])
        window.add_actions("model", [action("Model &status and install…", self.show_model, "Ctrl+M")])

    def _dialog(self, module: str, name: str) -> Any:
        # The dialogs' modules pull in networkx (a second): they are imported in a worker
        # during start-up (gui/startup.py), so opening one is instant.
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

    # --- databases, the model, the tour -----------------------------------------------------------

    def recent_databases(self) -> list[str]:
        """The databases opened last, newest first (at most :data:`RECENT_COUNT`)."""
        value = self.settings.value(RECENT_KEY, [])
        items = [value] if isinstance(value, str) else list(value) if isinstance(value, list | tuple) else []
        return [str(item) for item in items if item][:RECENT_COUNT]

    def _remember(self, address: str) -> None:
        recent = [address, *(item for item in self.recent_databases() if item != address)][:RECENT_COUNT]
        self.settings.setValue(RECENT_KEY, recent)

    def _fill_recent(self) -> None:
        menu = self.recent_menu
        menu.clear()
        current = self.service.shareable_address if self.service is not None else None
        for address in self.recent_databases():
            text, found = recent_entry(address)
            item = menu.addAction(text, partial(self.open_database, address))
            item.setEnabled(found and address != current)
        if menu.isEmpty():
            menu.addAction("(none yet)").setEnabled(False)

    def ask_database(self) -> str:
        """*File ▸ Open database…*: pick a database file and open it (see :meth:`open_database`); "" when cancelled."""
        chosen, _ = QFileDialog.getOpenFileName(self.window, "Open a memory database", "", DATABASE_FILES)
        if chosen:
            self.open_database(chosen)
        return chosen

    def ask_new_database(self) -> str:
        """*File ▸ New database…*: name a new database file and start on it (see :meth:`new_database`); "" when
        cancelled."""
        chosen, _ = QFileDialog.getSaveFileName(self.window, "New memory database", "memory.db", DATABASE_FILES,
                                                options=QFileDialog.Option.DontConfirmOverwrite)
        if chosen and not self.new_database(chosen):
            return ""
        return chosen

    def new_database(self, path: str | Path) -> bool:
        """Start the app on a new database file at ``path`` (``.db`` added when it has no suffix): it is created
        empty, and the window asks whether to import the sample. A file that exists is never replaced: the window
        says so (File ▸ Open database… opens it) and nothing starts; returns whether the app starts on it."""
        path = Path(path).expanduser()
        if not path.suffix:
            path = path.with_suffix(".db")
        if path.exists():
            box = QMessageBox(QMessageBox.Icon.Information, "New memory database",
                              f"“{path.name}” exists already, and a new database never replaces a file. Open it "
                              "with File ▸ Open database…, or choose another name.", parent=self.window)
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()
            return False
        if not path.parent.is_dir():
            if self.controller is not None:
                self.controller.status_message.emit(f"No folder {path.parent}: the new database was not created")
            return False
        self.open_database(str(path))
        return True

    def open_database(self, address: str) -> None:
        """Start the app again on ``address`` (a file or a PostgreSQL URL) with the same options; this app quits
        once the new one's starting window shows (at most :data:`OPEN_WAIT_SECONDS` later), its window up
        meanwhile with a busy bar, so that a window always shows. Its MCP server stops first (the port is the
        new app's). An address that cannot be one (``postgresql:/…``, another scheme…) is refused in the status
        bar, and this app goes on."""
        refused = address_refusal(address)
        if refused is not None:
            if self.controller is not None:
                self.controller.status_message.emit(f"Cannot open that memory: {refused}")
            return
        options = [] if self.mcp_enabled else ["--no-mcp"]
        if self.mcp_port != DEFAULT_PORT:
            options += ["--mcp-port", str(self.mcp_port)]
        self._save_window_state()  # the new app's starting window goes where this window is
        shown = Path(tempfile.mkdtemp(prefix="limbic-open-")) / "shown"
        process = QProcess()
        environment = QProcessEnvironment.systemEnvironment()
        environment.insert(SHOWN_ENV, str(shown))
        process.setProcessEnvironment(environment)
        process.setProgram(sys.executable)
        process.setArguments(relaunch_arguments(address, options))
        if not process.startDetached():
            shutil.rmtree(shown.parent, ignore_errors=True)
            if self.controller is not None:
                self.controller.status_message.emit(f"Could not start Limbic Studio on {address}")
            return
        self._remember(address)
        if self.mcp_host is not None:
            self.mcp_host.stop()
        if self.window is not None:
            self.window.show_progress(0, 0, f"Opening {address}…")
        deadline = time.monotonic() + OPEN_WAIT_SECONDS

        def wait() -> None:
            if shown.exists() or time.monotonic() > deadline:
                shutil.rmtree(shown.parent, ignore_errors=True)
                _application().quit()
            else:
                QTimer.singleShot(OPEN_POLL_MS, wait)

        wait()

    def install_model(self) -> None:
        """*Install model*: install the default model with the progress over the graph, then load it into this
        app (:class:`~limbic.gui.dialogs.model.InstallInWindow`); nothing is asked and nothing restarts."""
        if self.controller is None or self.window is None:
            return
        if self.installer is None:
            from limbic.gui.dialogs.model import InstallInWindow

            self.installer = InstallInWindow(self.controller, self.window.show_progress, self)
        self.installer.start()

    def show_getting_started(self) -> Any:
        """*Help ▸ Getting started*: the tour of the window's five areas (not modal)."""
        from limbic.gui.dialogs.getting_started import GettingStarted

        dialog = GettingStarted(self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    @property
    def mcp_server(self) -> Any:
        """The running ``HttpMcpServer`` (``None`` when off, starting or failed)."""
        return self.mcp_host.server if self.mcp_host is not None else None

    def _mcp_started(self, url: str) -> None:
        if self.mcp_panel is not None:
            self.mcp_panel.set_server(self.mcp_host)
        self._set_mcp_state(f"MCP: {url}")

    def _mcp_failed(self, message: str, details: str = "") -> None:
        """A failed start is shown in the MCP panel (wrapped, details, Retry); the status bar says only
        "MCP: failed" and the log gets the whole text."""
        log.warning("the MCP server could not start: %s\n%s", message, details)
        if self.mcp_panel is not None:
            self.mcp_panel.set_failed(message, details)
        self._set_mcp_state("MCP: failed (see the MCP panel)")

    def _retry_mcp(self) -> None:
        if self.mcp_host is None:  # the SDK itself failed to import: try that again
            self.startup.run(startup.import_mcp_modules, on_success=self._start_mcp, on_failure=self._mcp_failed_again)
        else:
            self.mcp_host.start()
        if self.mcp_panel is not None:
            self.mcp_panel.set_starting()
        self._set_mcp_state("MCP: starting…")

    def _mcp_failed_again(self, error: BaseException) -> None:
        self._mcp_failed(*describe_failure(error))

    def _set_mcp_state(self, text: str) -> None:
        if self.window is not None:
            self.window.set_mcp_state(text)
        if self.mcp_panel is not None and text == "MCP: starting…":
            self.mcp_panel.set_starting()
        self.mcp_state_changed.emit(text)

    # --- view -----------------------------------------------------------------------------------

    def set_dark(self, dark: bool) -> None:
        """Apply the dark or light theme (``gui/theme.py``) live; the choice is remembered in the settings."""
        apply_theme(_application(), dark, self.window)
        if self.window is not None:
            action = self.window.dark_action
            if action.isChecked() != dark:
                action.blockSignals(True)
                action.setChecked(dark)
                action.blockSignals(False)
        self.settings.setValue("view/dark", dark)

    def _save_window_state(self) -> None:
        if self.window is not None:
            self.window.save_state(self.settings)
        if self.graph_view is not None:
            self.graph_view.save_state(self.settings)
        self.settings.sync()

    # --- quit -----------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop the layout worker, the MCP server (port freed), the watcher, the workers; close the database."""
        if self._closed:
            return
        self._closed = True
        if self.window is not None:
            self._save_window_state()
            self.window.hide()
        self._vectors_timer.stop()
        if self.graph_view is not None:
            self.graph_view.shutdown()  # first: quick unless a layout is computing (the start-up may take longer)
        self.startup.shutdown()
        if self.mcp_host is not None:
            self.mcp_host.stop()  # also a server still starting; the port is free afterwards
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


def start(args: argparse.Namespace, starting: QWidget) -> LimbicApp:
    """Start the app (``limbic`` with no sub-command) in the running ``QApplication`` once its modules are in
    (``gui/starting.py``): ``args`` the parsed ``--db``, ``--no-mcp`` and ``--mcp-port``; ``starting`` the window
    shown meanwhile, closed when the main window shows (or the memory cannot be opened). The process ends, with
    the exit code, at most :data:`QUIT_SECONDS` after a quit was asked (:class:`QuitDeadline`)."""
    app = _application()
    limbic = LimbicApp(
        getattr(args, "db", None),
        mcp=not getattr(args, "no_mcp", False),
        mcp_port=getattr(args, "mcp_port", None),
    )
    deadline = QuitDeadline(QUIT_SECONDS)

    def fail(message: str) -> None:
        print(f"limbic: error: {message}", file=sys.stderr)
        deadline.code = 2
        app.exit(2)

    limbic.ready.connect(starting.close)
    limbic.failed.connect(fail)
    app.aboutToQuit.connect(deadline.start)  # before the shutdown: it bounds it
    app.aboutToQuit.connect(limbic.shutdown)
    limbic.signal_wake = _wake_on_signals(app)  # kept while the event loop runs

    def quit_on_signal(*_: object) -> None:  # Ctrl+C, SIGTERM: quit as when the window is closed
        deadline.start()  # now: the UI thread may be busy before the event loop sees the quit
        app.quit()

    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, quit_on_signal)
    limbic.start()
    return limbic


def _wake_on_signals(app: QApplication) -> tuple[QSocketNotifier, socket.socket, socket.socket]:
    """Let Python run its signal handlers at once while Qt's event loop has the UI thread: the C-level handler
    writes the signal's number to a socket (``signal.set_wakeup_fd``), whose notifier wakes the loop; Python
    runs the pending handlers before the notifier's slot."""
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    signal.set_wakeup_fd(writer.fileno())
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read, app)
    notifier.activated.connect(lambda *_: reader.recv(64))
    return notifier, reader, writer


class QuitDeadline:
    """Ends the process with ``code`` ``seconds`` after :meth:`start` (the first call counts), whatever still runs.

    A quit saves the window state, stops the layout worker and the MCP server and closes the database
    (:meth:`LimbicApp.shutdown`), waiting for the tasks under way: reads, or writes in a transaction that SQLite
    or PostgreSQL rolls back when the process ends (docs/architecture.md "Quitting"), none worth a longer wait.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.code = 0
        self._timer: threading.Timer | None = None

    def start(self) -> None:
        if self._timer is None:
            self._timer = threading.Timer(self.seconds, self._expired)
            self._timer.daemon = True
            self._timer.start()

    def _expired(self) -> None:
        log.warning("quitting after %.1f s: the work still under way is left off", self.seconds)
        end_process(self.code)


