"""A scripted tour of the app on a database: start, a search, a selection, an edit, a failure message (and,
when asked, the global map and dark mode), printing the window's geometry after each step as JSON lines
and, with ``--shots``, taking a screenshot of the whole screen (under X11) or of the window.

    python tests/_gui_tour.py --db PATH [--shots DIR] [--model] [--steps start,search,select,edit,failure]

``tests/test_gui_layout.py`` runs it on the real corpus at 1366×768 and 1600×1000 (an offscreen screen of
that size, and a real X server when Xvfb is installed); with ``../shared/tools/xvfb_run.sh`` it takes the
screenshots in ``docs/screenshots/``. Without ``--model`` search uses the deterministic HashingEmbedder.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pydantic._internal._validators  # noqa: F401 - before Qt, as the app's launcher does
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from limbic.core.embedding.base import HashingEmbedder

STEPS = ("start", "search", "select", "edit", "failure")
QUERY = "memory graph architecture"
LONG = "a message much longer than any window is wide, " * 12


def _shown(widget) -> bool:
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


def tables(app) -> dict:
    """Per table shown (the results, the Review list, the MCP log): whether it scrolls sideways — its scroll bar is
    shown or its columns are wider than its viewport — and how many rows it shows."""
    found = {"results": app.window.search_panel.table, "review": app.review.tree, "mcp_log": app.mcp_panel.log,
             "observations": app.editor.observations}
    shown = {}
    for name, table in found.items():
        if not _shown(table):
            continue
        header = table.header() if hasattr(table, "header") else table.horizontalHeader()
        row = table.sizeHintForRow(0) if hasattr(table, "sizeHintForRow") else 0
        row = row if row > 0 else table.fontMetrics().height() + 8
        shown[name] = {"hscroll": table.horizontalScrollBar().isVisible() or header.length() > table.viewport().width(),
                       "rows": table.viewport().height() // row}
    return shown


def geometry(app, step: str) -> dict:
    """Where the window is, how much of it the graph gets, each dock shown (not behind a tab) and whether its
    content scrolls, and the tables shown (:func:`tables`)."""
    window = app.window
    frame, screen = window.frameGeometry(), window.screen().availableGeometry()
    docks = {name: dock.width() for name, dock in window.docks.items() if _shown(dock)}
    scrolling = {name: dock.widget().verticalScrollBar().isVisible() for name, dock in window.docks.items()
                 if _shown(dock)}
    hint = window.minimumSizeHint()
    return {"step": step, "frame": [frame.x(), frame.y(), frame.width(), frame.height()],
            "screen": [screen.x(), screen.y(), screen.width(), screen.height()],
            "window_width": window.width(), "graph_width": app.graph_view.width(),
            "graph_share": round(app.graph_view.width() / window.width(), 4), "docks": docks,
            "dock_scrolls": scrolling, "tables": tables(app), "minimum": [hint.width(), hint.height()]}


class Tour:
    def __init__(self, qt: QApplication, args: argparse.Namespace) -> None:
        from limbic.gui.app import LimbicApp

        options = {} if args.model else {"embedder": HashingEmbedder()}
        self.qt, self.args = qt, args
        self.app = LimbicApp(args.db, mcp_port=0, seed=False, **options)
        self.steps = list(args.steps.split(","))
        self.started = time.perf_counter()

    def wait(self, condition, then, timeout: float = 60.0) -> None:
        deadline = time.perf_counter() + timeout

        def poll() -> None:
            if condition():
                QTimer.singleShot(self.args.pause, then)
            elif time.perf_counter() > deadline:
                print(json.dumps({"error": "timed out", "steps_left": self.steps}), flush=True)
                self.qt.exit(3)
            else:
                QTimer.singleShot(50, poll)

        poll()

    def record(self, step: str) -> None:
        report = geometry(self.app, step)
        report["seconds"] = round(time.perf_counter() - self.started, 2)
        if self.args.shots:
            folder = Path(self.args.shots)
            folder.mkdir(parents=True, exist_ok=True)
            screen = self.app.window.screen()
            shot = screen.grabWindow(0) if self.qt.platformName() == "xcb" else self.app.window.grab()
            shot.save(str(folder / f"{self.args.prefix}{step}.png"))
        print(json.dumps(report), flush=True)
        self.next()

    def next(self) -> None:
        if not self.steps:
            self.app.window.close()
            self.qt.quit()
            return
        step = self.steps.pop(0)
        kind, _, argument = step.partition(":")
        if argument:  # "tab:tuningDock": raise that dock's tab; "pin:NAME": pin an entity; "mark": Mark as useful
            getattr(self, f"step_{kind}")(step, argument)
        else:
            getattr(self, f"step_{step}")(step)

    def step_start(self, step: str) -> None:
        app = self.app
        self.wait(lambda: app.window is not None and len(app.graph_view.shown_names()) > 0
                  and app.mcp_server is not None, lambda: self.record(step))

    def step_search(self, step: str) -> None:
        panel = self.app.window.search_panel
        panel.query.setText(QUERY)
        panel.search_now()
        self.wait(lambda: panel.model.rowCount() > 0 and not self.app.graph_view.canvas.animating,
                  lambda: self.record(step))

    def step_select(self, step: str) -> None:
        panel = self.app.window.search_panel
        panel.table.selectRow(1)
        name = panel.model.result(1).name
        self.wait(lambda: self.app.editor.detail is not None and self.app.editor.detail.entity.name == name,
                  lambda: self.record(step))

    def step_edit(self, step: str) -> None:
        editor = self.app.editor
        self.app.window.docks["editorDock"].raise_()
        editor.add_observation("Reviewed in the explorer: " + LONG)
        self.wait(lambda: editor.detail is not None and any(o.content.startswith("Reviewed in the explorer")
                                                            for o in editor.detail.entity.observations),
                  lambda: self.record(step))

    def step_failure(self, step: str) -> None:
        app = self.app
        app.window.docks["mcpDock"].raise_()
        app.controller.status_message.emit("Error: " + LONG)
        app._mcp_failed("cannot import name 'import_string' from " + LONG, "Traceback (most recent call last):\n" + LONG)
        app.controller.report_failure(RuntimeError(LONG), "A background task failed: " + LONG)
        QTimer.singleShot(self.args.pause, lambda: self.record(step))

    def step_global(self, step: str) -> None:
        view = self.app.graph_view
        view.set_mode("global")
        self.wait(lambda: len(view.shown_names()) == len(view.arrays) and not view.canvas.animating,
                  lambda: self.record(step))

    def step_focus(self, step: str) -> None:
        view = self.app.graph_view
        view.set_mode("focus")
        self.wait(lambda: 0 < len(view.shown_names()) < len(view.arrays) and not view.canvas.animating,
                  lambda: self.record(step))

    def step_dark(self, step: str) -> None:
        self.app.window.dark_action.setChecked(True)
        QTimer.singleShot(self.args.pause, lambda: self.record(step))

    def step_tab(self, step: str, dock: str) -> None:
        self.app.window.docks[dock].raise_()
        QTimer.singleShot(self.args.pause, lambda: self.record(step.replace(":", "-")))

    def step_pin(self, step: str, name: str) -> None:
        pin = self.app.window.search_panel.pin
        pin.pin(name)
        QTimer.singleShot(self.args.pause, lambda: self.record("pin"))

    def step_slider(self, step: str, setting: str) -> None:
        name, value = setting.split("=")
        controller = self.app.controller
        controller.set_params(controller.params.replace(**{name: float(value)}))
        QTimer.singleShot(self.args.pause, lambda: self.record("slider"))

    def step_mark(self, step: str) -> None:
        app = self.app
        before = app.window.tuning_panel.quality.history
        app.window.search_panel.mark_useful()
        self.wait(lambda: app.window.tuning_panel.quality.history is not before, lambda: self.record(step))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--shots", default="")
    parser.add_argument("--prefix", default="")
    parser.add_argument("--model", action="store_true", help="search with the installed model")
    parser.add_argument("--steps", default=",".join(STEPS))
    parser.add_argument("--pause", type=int, default=400, help="milliseconds to settle before each record")
    args = parser.parse_args(argv)
    qt = QApplication(sys.argv[:1])
    qt.setApplicationName("Limbic Studio")
    tour = Tour(qt, args)
    qt.aboutToQuit.connect(tour.app.shutdown)
    tour.app.ready.connect(tour.next)
    tour.app.start()
    return qt.exec()


if __name__ == "__main__":
    sys.exit(main())
