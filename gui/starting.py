"""The first window of ``limbic`` (no sub-command), shown before the app's modules are imported.

The process imports Qt alone (with pydantic's validators: see ``gui/launcher.py``), creates the
``QApplication`` and shows :class:`StartingWindow` — the app's title, "Starting Limbic Studio…" and a
busy bar, where the main window will be (its saved geometry, else :func:`first_geometry`), in the saved
light or dark palette. The app's modules (numpy, pyqtgraph, igraph, the store, the search) are then
imported on a thread (:class:`ModuleLoader`, about a second) while the event loop runs, so the window
paints and answers; once they are in, :func:`limbic.gui.app.start` opens the memory and the main window
takes the starting window's place. Closing the starting window quits, as closing the main window does.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
import threading
from importlib import resources
from typing import Any, NoReturn

from PySide6.QtCore import QObject, QRect, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QLabel, QProgressBar, QVBoxLayout, QWidget

from limbic.core.paths import config_dir
from limbic.gui.theme import apply_palette

log = logging.getLogger(__name__)
APP_MODULE = "limbic.gui.app"
STARTING_TEXT = "Starting Limbic Studio…"
SHOWN_ENV = "LIMBIC_SHOWN_FILE"  # set by an app opening another memory: the file written once this window shows
WINDOW_SIZE = (1500, 920)  # the first window, when the screen has room for it
SCREEN_MARGIN = 24       # pixels kept free around a first window on a small screen


def settings_store() -> QSettings:
    """GUI settings (window state, dark mode, graph view) in ``config_dir()/gui.ini`` (honours ``LIMBIC_HOME``)."""
    return QSettings(str(config_dir() / "gui.ini"), QSettings.Format.IniFormat)


def first_geometry(available: QRect) -> QRect:
    """Where a window goes when none was saved: :data:`WINDOW_SIZE`, or the free area ``available`` less
    :data:`SCREEN_MARGIN` on each side when smaller, centred in it."""
    width = min(WINDOW_SIZE[0], available.width() - 2 * SCREEN_MARGIN)
    height = min(WINDOW_SIZE[1], available.height() - 2 * SCREEN_MARGIN)
    return QRect(available.x() + (available.width() - width) // 2,
                 available.y() + (available.height() - height) // 2, width, height)


class StartingWindow(QWidget):
    """The window shown while the app's modules load and the memory opens: a title and a busy bar, placed
    where the main window was saved (``window/geometry`` in ``settings``) or at :func:`first_geometry`."""

    def __init__(self, settings: QSettings) -> None:
        super().__init__()
        self.setWindowTitle("Limbic Studio")
        self.setObjectName("startingWindow")
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        self.label = QLabel(STARTING_TEXT)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # busy
        self.bar.setTextVisible(False)
        self.bar.setFixedWidth(320)
        layout.addWidget(self.label)
        layout.addWidget(self.bar, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(1)
        geometry = settings.value("window/geometry")
        if geometry is None or not self.restoreGeometry(geometry):
            self.setGeometry(first_geometry(self.screen().availableGeometry()))


class ModuleLoader(QObject):
    """Imports a module on a thread of its own; ``loaded(module)`` or ``failed(text)`` (one line: what went wrong;
    the traceback goes to the log at debug level) arrives on the thread that made the loader."""

    loaded = Signal(object)
    failed = Signal(str)

    def start(self, name: str) -> None:
        threading.Thread(target=self._load, args=(name,), name="limbic-modules", daemon=True).start()

    def _load(self, name: str) -> None:
        try:
            module = importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - a broken install is told on the console, then the app ends
            log.debug("the app's modules could not be imported", exc_info=exc)
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            self.loaded.emit(module)


def tell_shown() -> None:
    """Write the file named by :data:`SHOWN_ENV` (taken out of the environment), if any: the app that started this
    one on another memory waits for it, its window up meanwhile, so that a window always shows."""
    path = os.environ.pop(SHOWN_ENV, "")
    if path:
        try:
            with open(path, "w", encoding="utf-8") as shown:
                shown.write("shown\n")
        except OSError as exc:  # its folder gone: that app stops waiting after OPEN_WAIT_SECONDS
            log.debug("could not tell the waiting app", exc_info=exc)


def launch(args: Any) -> NoReturn:
    """``limbic`` with no sub-command: the starting window at once, then the app (``args``: the parsed
    ``--db``, ``--no-mcp``, ``--mcp-port``). Ends the process with the app's exit code."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # until the app's own handlers are set: Ctrl+C ends it at once
    existing = QApplication.instance()
    qt = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    qt.setApplicationName("Limbic Studio")
    qt.setOrganizationName("limbic")
    qt.setDesktopFileName("limbic-studio")
    qt.setWindowIcon(QIcon(str(resources.files("limbic.resources") / "limbic.svg")))
    qt.setAttribute(Qt.ApplicationAttribute.AA_DontShowIconsInMenus, False)
    settings = settings_store()
    apply_palette(qt, bool(settings.value("view/dark", False, type=bool)))
    window = StartingWindow(settings)
    window.show()
    QTimer.singleShot(0, tell_shown)  # once the event loop runs: the window is up
    loader = ModuleLoader()

    def failed(text: str) -> None:
        print(f"limbic: error: the app could not start: {text}", file=sys.stderr)
        qt.exit(1)

    running: list[Any] = []  # the app, kept while the event loop runs
    loader.loaded.connect(lambda module: running.append(module.start(args, window)))
    loader.failed.connect(failed)
    loader.start(APP_MODULE)
    end_process(qt.exec())


def end_process(code: int) -> NoReturn:
    """Flush the log and the standard streams, then end the process at once: Python's own teardown of Qt and of
    every loaded module (half a second) is skipped; the app's shutdown did what has to be done."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or its reader gone
            pass
    os._exit(code)
