"""The graph view: the ego graph of the selection and the search results, or a global map of the graph.

Nodes are coloured by entity type (legend top-left), sized by salience (access counts), faded by the
temporal factor (seed 000 "Sub-formula: temporal_factor(e)"); the selection has a gold ring, search
hits a red one. Click selects, Ctrl+click adds to the selection, double-click expands the neighbours.
Labels are drawn where they fit. The arrays come from :func:`limbic.core.graph_data.load_graph_arrays`
and every layout from :mod:`limbic.gui.graph_layout`, all through ``controller.run`` (off the UI thread).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from limbic.core.graph_data import (
    GraphArrays,
    load_graph_arrays,
    neighbours,
    salience,
    subgraph_edges,
    temporal_factor,
)
from limbic.core.models import STATUSES

from . import graph_style as style
from .graph_layout import LayoutEngine, ego_layout, extend_layout

FOCUS_LIMIT = 300      # most nodes drawn in the focus (ego) view
OVERVIEW_SIZE = 150    # nodes shown in the focus view when nothing is selected or found
MAX_TYPE_FILTERS = 40  # type menu entries; rarer types share one "other types" entry
RELOAD_DELAY_MS = 150
LABEL_DELAY_MS = 40


class GraphView(QWidget):
    """Draws the memory graph with pyqtgraph (whole arrays per frame); see the module docstring.

    ``drawn`` is emitted after every redraw, ``global_ready`` when the global layout is known.
    """

    drawn = Signal()
    global_ready = Signal()

    def __init__(self, controller: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self._channel = f"graph-view-{id(self)}"
        self._engine = LayoutEngine()
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self._engine.close)
        self._brushes = style.BrushCache()
        self._arrays: GraphArrays | None = None
        self._index: dict[str, int] = {}
        self._salience = np.zeros(0)
        self._temporal = np.zeros(0)
        self._global: tuple[np.ndarray, np.ndarray] | None = None  # (ids, positions)
        self._mode = "focus"
        self._selection: list[str] = list(controller.selection)
        self._hits: list[str] = []
        self._expanded: list[str] = []
        self._hidden_types: set[str] = set()
        self._hidden_statuses: set[str] = set()
        self._rows = np.zeros(0, dtype=np.int64)
        self._pos = np.zeros((0, 2))
        self._drawn_ids = np.zeros(0, dtype=np.int64)
        self._fit_next = True
        self._warmed = False
        self._ringed: list[str] = []
        self._build_ui()
        self._reload_timer = QTimer(self, singleShot=True, interval=RELOAD_DELAY_MS, timeout=self.reload)
        self._label_timer = QTimer(self, singleShot=True, interval=LABEL_DELAY_MS, timeout=self._update_labels)
        controller.graph_changed.connect(self._on_changes)
        controller.selection_changed.connect(self._on_selection)
        controller.search_finished.connect(self._on_search)
        controller.results_reranked.connect(lambda results: self._set_hits([r.name for r in results]))
        controller.params_changed.connect(lambda _params: self._restyle())
        self.reload()

    # --- construction ---------------------------------------------------------------------------

    def _build_ui(self) -> None:
        self.mode_box = QComboBox(toolTip="Focus: the selection, the search hits and their neighbours")
        self.mode_box.addItem("Focus", "focus")
        self.mode_box.addItem("Global map", "global")
        self.mode_box.currentIndexChanged.connect(lambda _i: self.set_mode(self.mode_box.currentData()))
        self.type_button = QToolButton(text="Types", popupMode=QToolButton.ToolButtonPopupMode.InstantPopup)
        self.type_button.setMenu(QMenu(self))
        self.status_button = QToolButton(text="Status", popupMode=QToolButton.ToolButtonPopupMode.InstantPopup)
        status_menu = QMenu(self)
        for status in STATUSES:
            action = status_menu.addAction(status)
            action.setCheckable(True)
            action.setChecked(True)
            action.toggled.connect(lambda on, s=status: self.set_status_visible(s, on))
        self.status_button.setMenu(status_menu)
        fit = QToolButton(text="Fit", toolTip="Zoom to fit (F)", shortcut="F")
        fit.clicked.connect(self.zoom_to_fit)
        clear = QToolButton(text="Clear focus", toolTip="Forget expanded neighbourhoods")
        clear.clicked.connect(self.clear_expanded)
        relayout = QToolButton(text="Re-layout", toolTip="Compute the global map layout again")
        relayout.clicked.connect(lambda: self._compute_global(force=True))
        self.info = QLabel()
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        for w in (self.mode_box, self.type_button, self.status_button, fit, clear, relayout):
            bar.addWidget(w)
        bar.addStretch(1)
        bar.addWidget(self.info)

        base = pg.mkColor(pg.getConfigOption("background"))
        self._text_colour = pg.mkColor(pg.getConfigOption("foreground"))
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground(base)
        self.view: pg.ViewBox = self.canvas.addViewBox()
        self.view.setAspectLocked(True)
        self.view.setMenuEnabled(False)
        self.view.sigRangeChanged.connect(lambda *_: self._label_timer.start())
        self._graph = pg.GraphItem()
        self._graph.scatter.sigClicked.connect(self._on_points_clicked)
        self.view.addItem(self._graph)
        self._rings = pg.ScatterPlotItem(pxMode=True, brush=None)
        self._rings.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.view.addItem(self._rings)
        font = QFont()
        font.setPointSizeF(8.0)
        self._labels: list[pg.TextItem] = []
        for _ in range(80):
            item = pg.TextItem(color=self._text_colour, anchor=(0.5, -0.35), fill=self._label_fill(base))
            item.setFont(font)
            item.hide()
            self.view.addItem(item)
            self._labels.append(item)
        self.legend = pg.LegendItem(offset=(8, 8), labelTextColor=self._text_colour,
                                    brush=pg.mkBrush(base.red(), base.green(), base.blue(), 200))
        self.legend.setParentItem(self.view)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.canvas, 1)

    # --- public API -----------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def arrays(self) -> GraphArrays | None:
        """The graph arrays last read from the service (``None`` before the first read)."""
        return self._arrays

    def shown_names(self) -> list[str]:
        """Names of the entities drawn now, in drawing order."""
        if self._arrays is None:
            return []
        return [self._arrays.names[r] for r in self._rows.tolist()]

    def shown_labels(self) -> list[str]:
        """Texts of the labels visible now (level of detail)."""
        return [item.toPlainText() for item in self._labels if item.isVisible()]

    def highlighted_names(self) -> list[str]:
        """Shown entities with a ring: search hits (red) and the selection (gold)."""
        return list(self._ringed)

    def node_position(self, name: str) -> QPointF | None:
        """Where ``name`` is drawn, in ``self.canvas`` widget coordinates (``None`` when not shown)."""
        where = np.flatnonzero(self._rows == self._index.get(name, -1))
        if not len(where):
            return None
        x, y = self._pos[where[0]]
        scene = self.view.mapViewToScene(QPointF(float(x), float(y)))
        return self.canvas.mapFromScene(scene).toPointF()

    def reload(self) -> None:
        """Read the graph arrays again (off the UI thread); the drawing follows."""
        self.controller.run(load_graph_arrays, self.controller.service,
                            on_success=self._arrays_loaded, channel=self._channel + "-data")

    def set_mode(self, mode: str) -> None:
        """``"focus"`` (ego graph of selection, hits and expansions) or ``"global"`` (whole graph)."""
        if mode not in ("focus", "global"):
            raise ValueError(f"unknown graph mode {mode!r}")
        self.mode_box.setCurrentIndex(0 if mode == "focus" else 1)
        if mode != self._mode:
            self._mode = mode
            self._fit_next = True
            self._refresh()

    def set_type_visible(self, entity_type: str, visible: bool) -> None:
        """Show or hide the entities of one type (the selection stays visible)."""
        (self._hidden_types.discard if visible else self._hidden_types.add)(entity_type)
        self._refresh()

    def set_status_visible(self, status: str, visible: bool) -> None:
        """Show or hide the entities with one status (the selection stays visible)."""
        (self._hidden_statuses.discard if visible else self._hidden_statuses.add)(status)
        self._refresh()

    def expand(self, name: str) -> None:
        """Add ``name`` and its neighbours to the focus view (switches to focus mode)."""
        if name not in self._expanded:
            self._expanded.append(name)
        if self._mode != "focus":
            self.set_mode("focus")
        else:
            self._refresh()

    def clear_expanded(self) -> None:
        self._expanded = []
        self._refresh()

    def zoom_to_fit(self) -> None:
        """Show every drawn node, clear of the legend in the top-left corner."""
        if not len(self._pos):
            return
        low, high = self._pos.min(axis=0), self._pos.max(axis=0)
        pad = np.maximum((high - low) * 0.06, 1.0)
        low, high = low - pad, high + pad
        self.view.setRange(xRange=(low[0], high[0]), yRange=(low[1], high[1]), padding=0)
        width = max(self.view.width(), 1.0)
        legend = self.legend.boundingRect().width() + 16 if self.legend.items else 0.0
        if not 0 < legend < 0.6 * width:
            return
        rect = self.view.viewRect()
        unit = rect.width() / width  # view units per pixel
        needed = legend - (low[0] - rect.left()) / unit  # pixels the drawing must move right
        if needed <= 0:
            return
        if (rect.right() - high[0]) / unit >= needed:  # room on the right: slide
            self.view.setXRange(rect.left() - needed * unit, rect.right() - needed * unit, padding=0)
        else:  # no room: widen to the left
            self.view.setXRange(low[0] - (high[0] - low[0]) * legend / (width - legend), high[0], padding=0)

    def apply_theme(self) -> None:
        """Take the background and text colours from pyqtgraph's options (the app sets them in dark mode)."""
        background = pg.mkColor(pg.getConfigOption("background"))
        foreground = pg.mkColor(pg.getConfigOption("foreground"))
        self.canvas.setBackground(background)
        self.legend.setBrush(pg.mkBrush(background.red(), background.green(), background.blue(), 200))
        self.legend.setLabelTextColor(foreground)
        for item in self._labels:
            item.setColor(foreground)
            item.fill = self._label_fill(background)
            item.update()

    @staticmethod
    def _label_fill(background: Any) -> Any:
        """Labels sit on a translucent patch of the background, readable over dense drawings."""
        return pg.mkBrush(background.red(), background.green(), background.blue(), 150)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.StyleChange, QEvent.Type.PaletteChange):
            QTimer.singleShot(0, self.apply_theme)  # after the app has set pyqtgraph's colours too
        super().changeEvent(event)

    def shutdown(self) -> None:
        """Stop the layout worker process (also done when the application quits)."""
        self._engine.close()

    # --- data -----------------------------------------------------------------------------------

    def _arrays_loaded(self, arrays: GraphArrays) -> None:
        self._arrays = arrays
        self._index = arrays.index_of()
        self._salience = salience(arrays)
        self._temporal = temporal_factor(arrays, self.controller.params)
        self._rebuild_legend_and_filters()
        if len(arrays) > self._engine.in_process_limit and not self._warmed:
            self._warmed = True
            self.controller.run(self._engine.warm_up, on_failure=lambda _e: None)
        if self._global is not None or self._mode == "global":
            self._compute_global()
        self._refresh()

    def _compute_global(self, force: bool = False) -> None:
        arrays = self._arrays
        if arrays is None:
            return
        old = self._global
        if old is not None and not force:
            if len(old[0]) == len(arrays.ids) and np.array_equal(old[0], arrays.ids):
                return
            known = np.isin(arrays.ids, old[0]).sum()
            if known >= 0.8 * len(arrays.ids):
                self.controller.run(extend_layout, old[0], old[1], arrays.ids, arrays.edges,
                                    on_success=lambda pos: self._global_done(arrays, pos),
                                    channel=self._channel + "-global")
                return
        self.info.setText(f"Laying out {len(arrays):,} entities…")
        self.controller.run(self._engine.global_layout, len(arrays), arrays.edges,
                            on_success=lambda pos: self._global_done(arrays, pos),
                            channel=self._channel + "-global")

    def _global_done(self, arrays: GraphArrays, pos: np.ndarray) -> None:
        self._global = (arrays.ids, pos)
        self.global_ready.emit()
        if self._mode == "global" and arrays is self._arrays:
            self._refresh()

    def _visible_mask(self, arrays: GraphArrays) -> np.ndarray:
        mask = np.ones(len(arrays), dtype=bool)
        if self._hidden_types:
            hidden_codes = [i for i, t in enumerate(arrays.type_names) if t in self._hidden_types]
            if "other types" in self._hidden_types:
                hidden_codes += list(range(MAX_TYPE_FILTERS, len(arrays.type_names)))
            mask &= ~np.isin(arrays.type_codes, hidden_codes)
        if self._hidden_statuses:
            mask &= ~np.isin(np.array(arrays.statuses, dtype=object), list(self._hidden_statuses))
        for name in self._selection:
            if name in self._index:
                mask[self._index[name]] = True
        return mask

    def _refresh(self) -> None:
        arrays = self._arrays
        if arrays is None:
            return
        mask = self._visible_mask(arrays)
        if self._mode == "global":
            if self._global is None or not np.array_equal(self._global[0], arrays.ids):
                self._compute_global()
                return
            rows = np.flatnonzero(mask)
            self._draw(rows, self._global[1][rows])
            return
        rows = self._focus_rows(arrays, mask)
        edges, ids = subgraph_edges(arrays, rows), arrays.ids[rows]
        seed = None  # start from where nodes are drawn now, so a new focus does not reshuffle the picture
        if len(self._drawn_ids) and np.isin(ids, self._drawn_ids).any():
            seed = extend_layout(self._drawn_ids, self._pos, ids, edges)
        elif self._global is not None and np.array_equal(self._global[0], arrays.ids):
            seed = self._global[1][rows]
        self.controller.run(ego_layout, len(rows), edges, seed,
                            on_success=lambda pos: self._draw(rows, pos) if arrays is self._arrays else None,
                            channel=self._channel + "-ego")

    def _focus_rows(self, arrays: GraphArrays, mask: np.ndarray) -> np.ndarray:
        """Seeds (selection, hits, expanded) and their neighbours; the most salient when over budget."""
        top_degree = max(int(arrays.degree.max(initial=0)), 1)
        weight = self._salience + np.log1p(arrays.degree) / np.log1p(top_degree)
        seeds = np.array(sorted({self._index[n] for n in (*self._selection, *self._hits, *self._expanded)
                                 if n in self._index}), dtype=np.int64)
        if not len(seeds):
            candidates = np.flatnonzero(mask)
            return np.sort(candidates[np.argsort(-weight[candidates], kind="stable")[:OVERVIEW_SIZE]])
        rows = neighbours(arrays, seeds, depth=1)
        is_seed = np.isin(rows, seeds)
        rows, is_seed = rows[mask[rows] | is_seed], is_seed[mask[rows] | is_seed]
        if len(rows) > FOCUS_LIMIT:
            keep = np.argsort(-(weight[rows] + 10.0 * is_seed), kind="stable")[:FOCUS_LIMIT]
            rows = np.sort(rows[keep])
        return rows

    # --- drawing --------------------------------------------------------------------------------

    def _draw(self, rows: np.ndarray, pos: np.ndarray) -> None:
        arrays = self._arrays
        self._rows, self._pos = rows, np.asarray(pos, dtype=np.float64).reshape(-1, 2)
        self._drawn_ids = arrays.ids[rows]
        edges = subgraph_edges(arrays, rows)
        big = len(rows) > 2000
        self._graph.setData(
            pos=self._pos, adj=edges if len(edges) else None,
            pen=pg.mkPen(140, 140, 140, 40 if big else 110, width=1),
            size=style.node_sizes(self._salience[rows]),
            symbolBrush=self._brushes.brushes(arrays.type_codes[rows], self._alpha(rows)),
            symbolPen=None if big else pg.mkPen(30, 30, 30, 160, width=0.8),
            pxMode=True,
        )
        self._update_rings()
        if self._fit_next or not self._all_in_view():
            self._fit_next = False
            self.zoom_to_fit()
        self.info.setText(f"{len(rows):,} of {len(arrays):,} entities · {len(edges):,} relations")
        self._label_timer.start()
        self.drawn.emit()

    def _all_in_view(self) -> bool:
        rect = self.view.viewRect()
        if not len(self._pos):
            return True
        low, high = self._pos.min(axis=0), self._pos.max(axis=0)
        return bool(rect.left() <= low[0] and high[0] <= rect.right() and rect.top() <= low[1]
                    and high[1] <= rect.bottom())

    def _alpha(self, rows: np.ndarray) -> np.ndarray:
        return style.alpha_levels(self._temporal[rows], self.controller.params.temporal_floor)

    def _restyle(self) -> None:
        if self._arrays is None or not len(self._rows):
            return
        self._temporal = temporal_factor(self._arrays, self.controller.params)
        self._graph.scatter.setBrush(self._brushes.brushes(self._arrays.type_codes[self._rows], self._alpha(self._rows)))

    def _update_rings(self) -> None:
        sizes = style.node_sizes(self._salience[self._rows]) if len(self._rows) else np.zeros(0)
        rings, ring_sizes, pens = [], [], []
        self._ringed = []
        for names, colour in ((self._hits, style.HIT_COLOUR), (self._selection, style.SELECTION_COLOUR)):
            pen = pg.mkPen(*colour, width=2.5)
            for name in names:
                where = np.flatnonzero(self._rows == self._index.get(name, -1))
                if len(where):
                    rings.append(self._pos[where[0]])
                    ring_sizes.append(sizes[where[0]] + 8)
                    pens.append(pen)
                    self._ringed.append(name)
        if rings:
            self._rings.setData(pos=np.array(rings), size=np.array(ring_sizes), pen=pens, brush=None)
        else:
            self._rings.setData(pos=np.zeros((0, 2)))

    def _update_labels(self) -> None:
        arrays = self._arrays
        for item in self._labels:
            item.hide()
        if arrays is None or not len(self._rows):
            return
        rect = self.view.viewRect()
        x, y = self._pos[:, 0], self._pos[:, 1]
        inside = np.flatnonzero((x >= rect.left()) & (x <= rect.right()) & (y >= rect.top()) & (y <= rect.bottom()))
        if not len(inside):
            return
        rows = self._rows[inside]
        marked = {self._index[n] for n in (*self._selection, *self._hits) if n in self._index}
        score = self._salience[rows] + 0.1 * np.log1p(arrays.degree[rows]) + 10.0 * np.isin(rows, list(marked))
        order = np.argsort(-score, kind="stable")[:2000]
        width, height = max(self.view.width(), 1.0), max(self.view.height(), 1.0)
        pixels = np.stack([(x[inside] - rect.left()) / rect.width() * width,
                           (rect.bottom() - y[inside]) / rect.height() * height], axis=1)
        names = [arrays.names[r] for r in rows.tolist()]
        texts = [n if len(n) <= 28 else n[:27] + "…" for n in names]
        widths = np.array([6.0 * len(t) + 6 for t in texts])
        chosen = style.place_labels(pixels, widths, order.tolist(), max_labels=len(self._labels))
        for item, k in zip(self._labels, chosen, strict=False):
            item.setText(texts[k])
            item.setPos(float(x[inside[k]]), float(y[inside[k]]))
            item.show()
            item.updateTransform(force=True)  # hidden items miss view changes (pyqtgraph TextItem)

    def _rebuild_legend_and_filters(self) -> None:
        arrays = self._arrays
        counts = np.bincount(arrays.type_codes, minlength=len(arrays.type_names))
        self.legend.clear()
        for code, name in enumerate(arrays.type_names[: len(style.PALETTE)]):
            sample = pg.ScatterPlotItem(symbol="o", size=10, pen=None, brush=pg.mkBrush(*style.type_colour(code)))
            self.legend.addItem(sample, f"{name} ({counts[code]:,})")
        rest = len(arrays.type_names) - len(style.PALETTE)
        if rest > 0:
            sample = pg.ScatterPlotItem(symbol="o", size=10, pen=None, brush=pg.mkBrush(*style.OTHER_COLOUR))
            self.legend.addItem(sample, f"{rest} other types ({int(counts[len(style.PALETTE):].sum()):,})")
        menu = self.type_button.menu()
        menu.clear()
        entries = list(arrays.type_names[:MAX_TYPE_FILTERS])
        if len(arrays.type_names) > MAX_TYPE_FILTERS:
            entries.append("other types")
        for name in entries:
            action = QAction(name, menu, checkable=True, checked=name not in self._hidden_types)
            action.toggled.connect(lambda on, t=name: self.set_type_visible(t, on))
            menu.addAction(action)

    # --- controller signals and mouse -------------------------------------------------------------

    def _on_changes(self, _changes: list[Any]) -> None:
        # Throttle, not debounce: a steady stream of agent writes still shows up every RELOAD_DELAY_MS.
        if not self._reload_timer.isActive():
            self._reload_timer.start()

    def _on_selection(self, names: list[str]) -> None:
        self._selection = list(names)
        if self._mode == "focus":
            self._refresh()
        else:
            self._update_rings()
            self._center_on(names[0] if names else None)
            self._label_timer.start()

    def _center_on(self, name: str | None) -> None:
        """Pan (same zoom) so that ``name`` is in view, if it is drawn and off screen."""
        where = np.flatnonzero(self._rows == self._index.get(name, -1)) if name is not None else []
        if not len(where):
            return
        x, y = self._pos[where[0]]
        rect = self.view.viewRect()
        if not rect.contains(QPointF(float(x), float(y))):
            half_w, half_h = rect.width() / 2, rect.height() / 2
            self.view.setRange(xRange=(x - half_w, x + half_w), yRange=(y - half_h, y + half_h), padding=0)

    def _on_search(self, outcome: Any) -> None:
        self._set_hits([r.name for r in outcome.results] if outcome is not None else [])

    def _set_hits(self, names: list[str]) -> None:
        changed_set = set(names) != set(self._hits)
        self._hits = list(names)
        if changed_set and self._mode == "focus":
            self._fit_next = True
            self._refresh()
        else:
            self._update_rings()

    def _on_points_clicked(self, _item: Any, points: Any, event: Any) -> None:
        if not len(points) or self._arrays is None:
            return
        name = self._arrays.names[int(self._rows[points[0].index()])]
        if event.double():
            self.expand(name)
        elif event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            current = self.controller.selection
            self.controller.select([n for n in current if n != name] if name in current else [*current, name])
        else:
            self.controller.select([name])
