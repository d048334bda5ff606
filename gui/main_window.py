"""The main window: the graph view in the centre, one side column of docks, menus with shortcuts, the status bar.

The graph gets the room: the side column holds the search with *What the agent sees* beside it (top) and the
tools as tabs of one dock group below it (scoring inspector, tuning, decay, *Why not this one?*, and the editor,
MCP and Review panels the app adds), about 38 % of the window width by default; the tools get the larger share of its
height, so the editor shows its observations and the MCP panel its log at 1366×768. The window opens within the screen it is on and stays there: no label,
status text or table column can ask for more width (long texts are elided, whole in their tooltips).
The window only arranges widgets and wires them to the :class:`AppController`; every panel is its own
small class. Window geometry and dock layout are kept in ``QSettings`` (see ``gui/app.py``).

Edit ▸ Undo and Redo name the memory edit they take back or do again ("Undo set new_features_branch archived")
and work from any window of the app; inside a text field Ctrl+Z stays that field's own undo. The mouse wheel
never changes a combo box, spin box or slider that does not have the focus (:class:`~limbic.gui.widgets.WheelGuard`):
it scrolls the panel under it instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QRect, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from limbic.core import version
from limbic.core.embedding.languages import MULTILINGUAL_MODEL, LanguageProfile, advice, summary
from limbic.core.search.terms import age_hours
from limbic.gui.controller import AppController
from limbic.gui.dialogs.failure import FailureDialog
from limbic.gui.search.agent_view import AgentView
from limbic.gui.search.decay_plot import DecayPlot
from limbic.gui.search.inspector import ScoringInspector
from limbic.gui.search.panel import SearchPanel
from limbic.gui.search.tuning import TuningPanel
from limbic.gui.starting import first_geometry
from limbic.gui.widgets import ElidedLabel, ProgressBanner, WheelGuard, plural, tool_button

STATS_REFRESH_MS = 300
STATE_VERSION = 3        # dock layouts saved by an older arrangement are not restored
SIDE_SHARE = 0.38        # of the window width, for the side column of docks by default
SEARCH_SHARE = 0.42      # of the side column's height, for the search dock
MIN_DOCK_WIDTH = 300     # pixels: the narrowest a dock is still readable at (the search row: legend, two buttons)
MIN_DOCK_HEIGHT = 120    # pixels: a dock taller than this scrolls rather than stretching the window


def fit_to_screen(wanted: QRect, available: QRect) -> QRect:
    """``wanted`` moved and shrunk so that it lies within ``available`` (a screen's free area)."""
    width, height = min(wanted.width(), available.width()), min(wanted.height(), available.height())
    x = min(max(wanted.x(), available.x()), available.right() + 1 - width)
    y = min(max(wanted.y(), available.y()), available.bottom() + 1 - height)
    return QRect(x, y, width, height)


class _NoHeightForWidth(QWidget):
    """Holds a panel and hides its height-for-width from a scroll area: a scroll area sizes a widget whose layout
    has height-for-width (any word-wrapped label) by its children's *preferred* heights, and scrolls as soon as
    those exceed the dock — though the panel would fit at its minimum (a table shrinks, a label wraps)."""

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        return False


def _sized_by_minimum(panel: QWidget) -> QWidget:
    """``panel`` in a holder that a dock's scroll area sizes by the panel's minimum size, not its wishes."""
    outer, holder = QWidget(), _NoHeightForWidth()
    for parent, child in ((holder, panel), (outer, holder)):
        layout = QVBoxLayout(parent)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(child)
    return outer


class MainWindow(QMainWindow):
    """The graph (centre) and one side column: search on top, the tools as tabs below (see the module docstring).

    ``central`` is the graph view; ``extra_docks`` are ``(title, object name, widget, area)`` tuples
    added as tabs of the tools group (the entity editor, the MCP panel, the Review view), ``beside_search``
    ``(title, object name, widget)`` tuples as tabs of the search's group (the Agents view); ``below_graph`` is a
    slim bar shown under the graph. ``toggle_dark`` is called
    with the new state when View ▸ Dark mode is switched.
    """

    closing = Signal()
    install_model_requested = Signal()  # *Install model* in the status bar or the search panel

    def __init__(
        self,
        controller: AppController,
        *,
        central: QWidget | None = None,
        extra_docks: Sequence[tuple[str, str, QWidget, Qt.DockWidgetArea]] = (),
        beside_search: Sequence[tuple[str, str, QWidget]] = (),
        below_graph: QWidget | None = None,
        toggle_dark: Callable[[bool], None] | None = None,
        dark: bool = False,
    ) -> None:
        super().__init__()
        self.controller = controller
        self.setWindowTitle("Limbic Studio")
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks
            | QMainWindow.DockOption.AllowNestedDocks
        )
        self.search_panel = SearchPanel(controller)
        self.inspector = ScoringInspector()
        self.decay_plot = DecayPlot(controller.params)
        self.tuning_panel = TuningPanel(controller)
        self.agent_view = AgentView(controller)
        self.pin_panel = self.search_panel.pin
        if central is None:
            central = QLabel("Graph view")
            central.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.graph_view = central
        self.progress_banner = ProgressBanner()
        centre = QWidget()
        centre_layout = QVBoxLayout(centre)
        centre_layout.setContentsMargins(0, 0, 0, 0)
        centre_layout.setSpacing(0)
        centre_layout.addWidget(self.progress_banner)
        centre_layout.addWidget(central, 1)
        if below_graph is not None:  # a slim bar under the graph (projects and the time slider)
            centre_layout.addWidget(below_graph)
        self.setCentralWidget(centre)
        self.docks: dict[str, QDockWidget] = {}
        side = Qt.DockWidgetArea.LeftDockWidgetArea
        self._dock("Search", "searchDock", self.search_panel, side)
        tools = [self._dock("Inspector", "inspectorDock", self.inspector, side),
                 self._dock("Tuning", "tuningDock", self.tuning_panel, side, fit=False),
                 self._dock("Decay", "decayDock", self.decay_plot, side),
                 self._dock("Why not?", "pinDock", self.pin_panel, side)]
        self._dock("What the agent sees", "agentDock", self.agent_view, side)
        self.docks["inspectorDock"].setToolTip("Scoring inspector: how the selected result was scored")
        self.docks["agentDock"].setToolTip("What the agent sees: the search_semantic answer an agent gets")
        self.docks["pinDock"].setToolTip("Why not this one? Where any entity ranks and what keeps it down")
        tools += [self._dock(title, name, widget, area) for title, name, widget, area in extra_docks]
        self.splitDockWidget(self.docks["searchDock"], tools[0], Qt.Orientation.Vertical)
        for dock in tools[1:]:
            self.tabifyDockWidget(tools[0], dock)
        tools[0].raise_()
        # the agent's answer is a tab beside the results: the tuning sliders below stay in view while it shows
        self.tabifyDockWidget(self.docks["searchDock"], self.docks["agentDock"])
        for title, name, widget in beside_search:  # more tabs of the search's group (the agents' timeline)
            self.tabifyDockWidget(self.docks["searchDock"], self._dock(title, name, widget, side))
        self.docks["searchDock"].raise_()

        self.counts_label = ElidedLabel(minimum=60)
        self.model_label = ElidedLabel(minimum=60)
        self.install_button = tool_button("Install model", "Download and install the embedding model "
                                          "(all-MiniLM-L6-v2, 83 MB) to search by meaning; progress over the graph")
        self.install_button.clicked.connect(self.install_model_requested)
        self.search_panel.install_model_requested.connect(self.install_model_requested)
        self.search_panel.why_not_requested.connect(self.show_why_not)
        self.mcp_label = ElidedLabel("MCP: off", minimum=60)
        self.languages_label = ElidedLabel(minimum=60)  # shown when much of the memory is not English
        self.languages_label.setVisible(False)
        self._languages_told_at: int | None = None  # the entity count when the languages were last told
        for widget in (self.counts_label, self.model_label, self.languages_label, self.install_button, self.mcp_label):
            self.statusBar().addPermanentWidget(widget)
        self.wheel_guard = WheelGuard(self)
        self._build_menus(toggle_dark, dark)

        self.stats_timer = QTimer(self)
        self.stats_timer.setSingleShot(True)
        self.stats_timer.setInterval(STATS_REFRESH_MS)
        self.stats_timer.timeout.connect(self.refresh_stats)
        controller.status_message.connect(lambda text: self.statusBar().showMessage(text, 5000))
        self.failure_dialog: FailureDialog | None = None  # made on the first failure
        controller.task_failed.connect(self.show_failure)
        controller.graph_changed.connect(lambda _: self.stats_timer.start())
        controller.params_changed.connect(self._params_changed)
        controller.search_finished.connect(self._results_changed)
        controller.results_reranked.connect(self._results_changed)
        self._ages_for: Any = None  # the candidate set whose ages (hours) are in _ages_of
        self._ages_of: dict[str, float] = {}
        controller.selection_changed.connect(self._selection_changed)
        self.set_model_state(getattr(controller.service.embedder, "name", None))
        controller.model_attached.connect(self.set_model_state)

    def show_failure(self, title: str, message: str, details: str) -> None:
        """Show a failed background task (``controller.task_failed``) in the failure dialog."""
        if self.failure_dialog is None:
            self.failure_dialog = FailureDialog(self)
        self.failure_dialog.show_failure(title, message, details)

    # --- construction ---------------------------------------------------------------------------

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea, *, fit: bool = True) -> QDockWidget:
        """A dock of ``widget`` in a scroll area: ``fit`` panels (tables that shrink) are sized by their minimum, so
        they fill the dock and never scroll while they fit; the others (the tuning sliders) scroll when taller."""
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        widget.setMinimumWidth(MIN_DOCK_WIDTH)  # its children's wishes cannot widen the dock beyond this
        scroll = QScrollArea()  # nor make it (and the window) taller than the screen: it scrolls instead
        scroll.setObjectName(name + "Scroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(_sized_by_minimum(widget) if fit else widget)
        scroll.setMinimumSize(MIN_DOCK_WIDTH, MIN_DOCK_HEIGHT)
        dock.setWidget(scroll)
        self.addDockWidget(area, dock)
        self.docks[name] = dock
        return dock

    def _action(self, menu: Any, text: str, slot: Callable, shortcut: Any = None, *, name: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        if name:
            action.setObjectName(name)
        menu.addAction(action)
        return action

    def _build_menus(self, toggle_dark: Callable[[bool], None] | None, dark: bool) -> None:
        bar = self.menuBar()
        self.file_menu = bar.addMenu("&File")
        self.edit_menu = bar.addMenu("&Edit")
        self.search_menu = bar.addMenu("&Search")
        self.view_menu = bar.addMenu("&View")
        self.model_menu = bar.addMenu("&Model")
        self.help_menu = bar.addMenu("&Help")
        self.file_menu.addSeparator()
        self._action(self.file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit,
                                        name="quitAction")
        self._action(self.search_menu, "&Find…", self.focus_search, QKeySequence.StandardKey.Find,
                     name="findAction")
        self._action(self.search_menu, "Search &again", self.controller.refresh_search, "F5")
        self._action(self.search_menu, "&Reset scoring parameters", self.tuning_panel.reset, "Ctrl+R")
        self._action(self.search_menu, "&Save parameters as default", self.tuning_panel.save_as_default,
                     "Ctrl+Shift+S")
        self.dark_action = self._action(self.view_menu, "&Dark mode", lambda: None, "Ctrl+Shift+D",
                                        name="darkAction")
        self.dark_action.setCheckable(True)
        self.dark_action.setChecked(dark)
        if toggle_dark is not None:
            self.dark_action.toggled.connect(toggle_dark)
        self.view_menu.addSeparator()
        for dock in self.docks.values():
            self.view_menu.addAction(dock.toggleViewAction())
        self._action(self.help_menu, "&Keyboard shortcuts", self.show_shortcuts, "F1")
        self._action(self.help_menu, "&About Limbic Studio", self.show_about)

    def add_actions(self, menu_name: str, actions: list[QAction]) -> None:
        """Add actions (from other panels: import/export, undo/redo, model install…) to a menu."""
        menu = {"file": self.file_menu, "edit": self.edit_menu, "search": self.search_menu,
                "view": self.view_menu, "model": self.model_menu, "help": self.help_menu}[menu_name]
        first = menu.actions()[0] if menu_name == "file" and menu.actions() else None
        for action in actions:
            if first is not None:
                menu.insertAction(first, action)
            else:
                menu.addAction(action)

    # --- state shown ----------------------------------------------------------------------------

    def focus_search(self) -> None:
        self.docks["searchDock"].show()
        self.docks["searchDock"].raise_()
        self.search_panel.focus_query()

    def refresh_stats(self) -> None:
        """Count entities, relations and observations off the UI thread; show them in the status bar."""
        self.controller.run(self.controller.service.entities.stats, on_success=self.show_stats, channel="stats")

    def refresh_languages(self) -> None:
        """Tell the memory's languages off the UI thread (:meth:`show_languages`)."""
        self.controller.run(self.controller.service.entities.languages, on_success=self.show_languages,
                            channel="languages")

    def show_languages(self, found: LanguageProfile) -> None:
        """A line in the status bar when much of the memory is not English
        (:func:`~limbic.core.embedding.languages.advice`): its languages and the multilingual model to install, the
        whole advice as its tooltip; hidden otherwise."""
        said = advice(found)
        self.languages_label.setVisible(said is not None)
        self.languages_label.setText(f"{summary(found, 2)} · better searched with {MULTILINGUAL_MODEL}"
                                     if said else "")
        self.languages_label.setToolTip(said or "")

    def show_stats(self, stats: Any) -> None:
        """The counts in the status bar; the memory's languages told again (:meth:`refresh_languages`) the first
        time and whenever the number of entities moved by a tenth since (200 ms at 10k, off the UI thread)."""
        self.counts_label.setText(f"{plural(stats.entities, 'entity')} · {plural(stats.relations, 'relation')} · "
                                  f"{plural(stats.observations, 'observation')}")
        told = self._languages_told_at
        if told is None or abs(stats.entities - told) * 10 > max(told, 1):
            self._languages_told_at = stats.entities
            self.refresh_languages()

    def set_model_state(self, model_name: str | None) -> None:
        self.model_label.setText(f"model: {model_name}" if model_name else "model: none (full-text search only)")
        self.install_button.setVisible(not model_name)

    def show_why_not(self) -> None:
        """*Why not this one?* in its own panel (the results keep their room), its name field focused."""
        dock = self.docks["pinDock"]
        dock.show()
        dock.raise_()
        self.pin_panel.field.setFocus(Qt.FocusReason.OtherFocusReason)

    def set_mcp_state(self, text: str) -> None:
        self.mcp_label.setText(text)

    def show_progress(self, done: int, total: int, text: str) -> None:
        """Long start-up work over the graph: ``done`` of ``total`` with ``text`` (empty: hide)."""
        self.progress_banner.show_progress(done, total, text)

    def _params_changed(self, params: Any) -> None:
        self.decay_plot.set_params(params)  # the inspector follows with the re-ranked results

    def _results_changed(self, _: Any) -> None:
        outcome = self.controller.last_outcome
        if outcome is None:
            self._ages_for, self._ages_of = None, {}
            self.inspector.clear()
            self.decay_plot.set_entities([])
            return
        if self._ages_for is not outcome.candidate_set:  # a new candidate set: ages once per search
            self._ages_for = outcome.candidate_set
            self._ages_of = self._ages(outcome.candidate_set)
        self._mark_decay()
        self._refresh_inspector()

    @staticmethod
    def _ages(candidates: Any) -> dict[str, float]:
        """Hours since the last access (or creation) of every candidate, from the cached arrays."""
        hours = age_hours(candidates.last_access, candidates.created_at, candidates.now)
        return dict(zip(candidates.names, hours.tolist(), strict=True))

    def _selection_changed(self, _names: list[str]) -> None:
        self._mark_decay()
        self._refresh_inspector()

    def _mark_decay(self) -> None:
        """Mark the selected entity on the decay plot, or the top five results when none is selected."""
        selection = [n for n in self.controller.selection[:1] if n in self._ages_of]
        names = selection or [r.name for r in self.controller.results[:5]]
        self.decay_plot.set_entities([(n, self._ages_of[n]) for n in names if n in self._ages_of])

    def _refresh_inspector(self) -> None:
        selection = self.controller.selection
        for result in self.controller.results:
            if selection and result.name == selection[0]:
                self._show_result(result)
                return
        self.inspector.clear()  # nothing selected, or the selection is not among the results

    def _show_result(self, result: Any) -> None:
        outcome = self.controller.last_outcome
        candidates = outcome.candidate_set if outcome is not None else None
        self.inspector.show_result(result, self.controller.params, candidates)
        self._mark_decay()

    # --- dialogs --------------------------------------------------------------------------------

    def show_shortcuts(self) -> None:
        lines = []
        for menu in (self.file_menu, self.edit_menu, self.search_menu, self.view_menu, self.model_menu):
            for action in menu.actions():
                if not action.shortcut().isEmpty():
                    text = action.text().replace("&", "")
                    lines.append(f"<tr><td>{action.shortcut().toString()}</td><td>{text}</td></tr>")
        QMessageBox.information(self, "Keyboard shortcuts", "<table>" + "".join(lines) + "</table>")

    def show_about(self) -> None:
        QMessageBox.about(
            self, "About Limbic Studio",
            f"<b>Limbic Studio</b> {version()}<br>A desktop knowledge-graph explorer for the long-term memory of AI "
            "agents, with a limbic re-ranker and an MCP server.<br>GPL-3.0-or-later.",
        )

    # --- state ----------------------------------------------------------------------------------

    def save_state(self, settings: QSettings) -> None:
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState(STATE_VERSION))

    def restore_state(self, settings: QSettings) -> None:
        """The saved geometry and dock layout, kept within the screen; the first time (or after the
        arrangement changed) :func:`~limbic.gui.starting.first_geometry`, and :meth:`default_layout`."""
        geometry = settings.value("window/geometry")
        state = settings.value("window/state")
        if geometry is None or not self.restoreGeometry(geometry):
            self.setGeometry(first_geometry(self.screen().availableGeometry()))
        self.keep_on_screen()
        if state is None or not self.restoreState(state, STATE_VERSION):
            QTimer.singleShot(0, self.default_layout)  # once the window has its real size

    def keep_on_screen(self) -> None:
        """Move and shrink the window (frame included) into its screen's free area if it is out of it."""
        available = self.screen().availableGeometry()
        frame = self.frameGeometry()
        fitted = fit_to_screen(frame, available)
        if fitted != frame:
            extra_w, extra_h = frame.width() - self.width(), frame.height() - self.height()
            self.resize(fitted.width() - extra_w, fitted.height() - extra_h)
            self.move(fitted.topLeft())

    def default_layout(self) -> None:
        """The side column at :data:`SIDE_SHARE` of the width, the search over :data:`SEARCH_SHARE` of its height."""
        side = max(MIN_DOCK_WIDTH, int(self.width() * SIDE_SHARE))
        self.resizeDocks([self.docks["searchDock"]], [side], Qt.Orientation.Horizontal)
        height = self.height()
        self.resizeDocks([self.docks["searchDock"], self.docks["inspectorDock"]],
                         [int(height * SEARCH_SHARE), int(height * (1 - SEARCH_SHARE))], Qt.Orientation.Vertical)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.closing.emit()
        super().closeEvent(event)
