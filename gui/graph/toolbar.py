"""The graph view's toolbar: mode, colouring, type and status filters, fit, fit to hits, legend, clear focus,
re-layout.

It owns no graph state: it emits what the user chose; :class:`~limbic.gui.graph.view.GraphView` acts.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QMenu, QWidget

from limbic.core.models import STATUSES
from limbic.gui.graph.colouring import MODES as COLOUR_MODES
from limbic.gui.widgets import tool_button

MODES = (("Focus", "focus"), ("Global map", "global"))


class GraphToolbar(QWidget):
    """Buttons over the graph canvas; the signals carry the user's choices to :class:`GraphView`."""

    mode_chosen = Signal(str)            # "focus" or "global"
    colour_chosen = Signal(str)          # "auto", "type" or "community"
    type_toggled = Signal(str, bool)     # entity type, visible
    status_toggled = Signal(str, bool)   # status, visible
    fit_clicked = Signal()
    fit_hits_clicked = Signal()
    clear_clicked = Signal()
    relayout_clicked = Signal()
    legend_toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mode_box = QComboBox()
        self.mode_box.setToolTip("Focus: the selection, the search hits and their neighbours")
        for label, mode in MODES:
            self.mode_box.addItem(label, mode)
        self.mode_box.currentIndexChanged.connect(lambda _i: self.mode_chosen.emit(self.mode_box.currentData()))
        self.colour_box = QComboBox()
        self.colour_box.setToolTip("Colour by entity type, by community (groups of densely linked entities in view; "
                                   "auto picks type when a few types cover most nodes), by who wrote each entity "
                                   "last, or by what fades next")
        for label, mode in COLOUR_MODES:
            self.colour_box.addItem(label, mode)
        self.colour_box.currentIndexChanged.connect(
            lambda _i: self.colour_chosen.emit(self.colour_box.currentData()))
        self.type_button = tool_button("Types", "Show or hide entity types", popup=True)
        self.type_button.setMenu(QMenu(self))
        self.status_button = tool_button("Status", "Show or hide statuses", popup=True)
        status_menu = QMenu(self)
        for status in STATUSES:
            action = status_menu.addAction(status)
            action.setCheckable(True)
            action.setChecked(True)
            action.toggled.connect(lambda on, s=status: self.status_toggled.emit(s, on))
        self.status_button.setMenu(status_menu)
        fit = tool_button("Fit", "Zoom to fit (F)", shortcut="F")
        fit.clicked.connect(self.fit_clicked)
        fit_hits = tool_button("Fit to hits", "Zoom to the search hits (H)", shortcut="H")
        fit_hits.clicked.connect(self.fit_hits_clicked)
        self.legend_button = tool_button("Legend", "Show or collapse the legend (L)", shortcut="L",
                                         checkable=True, checked=True)
        self.legend_button.toggled.connect(self.legend_toggled)
        clear = tool_button("Clear focus", "Forget expanded neighbourhoods")
        clear.clicked.connect(self.clear_clicked)
        relayout = tool_button("Re-layout", "Lay the drawn graph out again (the only action that moves nodes "
                               "already placed)")
        relayout.clicked.connect(self.relayout_clicked)
        bar = QHBoxLayout(self)
        bar.setContentsMargins(4, 2, 4, 2)
        for widget in (self.mode_box, self.colour_box, self.type_button, self.status_button, fit, fit_hits,
                       self.legend_button, clear, relayout):
            bar.addWidget(widget)
        bar.addStretch(1)

    def show_mode(self, mode: str) -> None:
        """Select ``mode`` in the box (emits ``mode_chosen`` only when it changes)."""
        self.mode_box.setCurrentIndex([m for _, m in MODES].index(mode))

    def show_colour(self, mode: str) -> None:
        """Select the colouring ``mode`` in the box (emits ``colour_chosen`` only when it changes)."""
        self.colour_box.setCurrentIndex([m for _, m in COLOUR_MODES].index(mode))

    def set_types(self, names: Iterable[str], hidden: set[str]) -> None:
        """Rebuild the type menu: one checkable entry per name, unchecked when in ``hidden``."""
        menu = self.type_button.menu()
        menu.clear()
        for name in names:
            action = QAction(name, menu)
            action.setCheckable(True)
            action.setChecked(name not in hidden)
            action.toggled.connect(lambda on, t=name: self.type_toggled.emit(t, on))
            menu.addAction(action)
