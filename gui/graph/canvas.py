"""The drawing surface of the graph view: edges as one ``PlotCurveItem`` path (``connect="pairs"``) and
nodes as one ``ScatterPlotItem`` — whole arrays, never an item per node — rings for search hits and
the selection, a type legend (collapsible), and labels where they fit (level of detail). Stacking, bottom to top:
edges, labels (on a translucent patch), nodes, rings — so a label never hides a node — except on
dense maps (over 2,000 nodes), where labels go on top.

After :meth:`GraphCanvas.zoom_to_fit` the drawing stays fitted while the canvas is resized (the window
and its docks get their sizes after the first draw) until the user pans or zooms.

It knows nothing of the service or the controller: :class:`~limbic.gui.graph_view.GraphView` hands it
arrays (positions, edges, sizes, type codes, opacity levels) and names, and listens to ``node_clicked``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QFont

from limbic.gui.graph import style
from limbic.gui.widgets import single_shot_timer

LABEL_DELAY_MS = 40
MAX_LABELS = 80
LABEL_CHARS = 28
LABEL_WIDTH_PER_CHAR = 6.0  # pixels, the label placement estimate
LABEL_HEIGHT = 18.0   # pixels of a label with its patch
ALWAYS_LABELLED = 5   # besides selection and hits, the most important nodes may cover discs too
OBSTACLE_NODES = 300  # labels avoid covering the discs of this many most important visible nodes
LEGEND_TEXT_SIZE = "8pt"
LEGEND_OFFSET = 8.0      # pixels from the top-left corner to the legend
LEGEND_GAP = 16.0        # pixels between the legend and the fitted drawing
FIT_MARGIN_X = LABEL_WIDTH_PER_CHAR * LABEL_CHARS / 2 + 8  # pixels beside the fitted drawing: half the longest label
FIT_MARGIN_TOP = 12.0
FIT_MARGIN_BOTTOM = 28.0  # labels hang below their node


def _translucent(colour: QColor, alpha: int) -> Any:
    return pg.mkBrush(colour.red(), colour.green(), colour.blue(), alpha)


class GraphCanvas(pg.GraphicsLayoutWidget):
    """See the module docstring. ``node_clicked(index, double, ctrl)`` gives the drawn node's index."""

    node_clicked = Signal(int, bool, bool)
    fitted = False  # the view shows the fitted drawing; cleared when the user pans or zooms (class
    # default: Qt sends resize events from inside the base constructor)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        background = pg.mkColor(pg.getConfigOption("background"))
        foreground = pg.mkColor(pg.getConfigOption("foreground"))
        self.setBackground(background)
        self.view: pg.ViewBox = self.addViewBox()
        self.view.setAspectLocked(True)
        self.view.setMenuEnabled(False)
        self._edges = pg.PlotCurveItem(connect="pairs", antialias=False)
        self._edges.setZValue(0)
        self.view.addItem(self._edges)
        self._nodes = pg.ScatterPlotItem(pxMode=True)
        self._nodes.setZValue(2)
        self._nodes.sigClicked.connect(self._on_points_clicked)
        self.view.addItem(self._nodes)
        # One ring item per colour, each with a single pen: no per-point pens to build on every change.
        self._hit_rings, self._selection_rings = (
            pg.ScatterPlotItem(pxMode=True, brush=None, pen=pg.mkPen(*colour, width=2.5))
            for colour in (style.HIT_COLOUR, style.SELECTION_COLOUR))
        for item in (self._hit_rings, self._selection_rings):
            item.setZValue(3)
            item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
            self.view.addItem(item)
        font = QFont()
        font.setPointSizeF(8.0)
        self._labels: list[pg.TextItem] = []
        for _ in range(MAX_LABELS):
            item = pg.TextItem(color=foreground, anchor=(0.5, 0.0), fill=_translucent(background, 150))
            item.setFont(font)
            item.setZValue(1)
            item.hide()
            self.view.addItem(item)
            self._labels.append(item)
        self.legend = pg.LegendItem(offset=(LEGEND_OFFSET, LEGEND_OFFSET), labelTextColor=foreground, brush=_translucent(background, 200),
                                    labelTextSize=LEGEND_TEXT_SIZE)
        self.legend.setParentItem(self.view)
        self.view.sigRangeChangedManually.connect(self._user_moved)
        self._fit_timer = single_shot_timer(self, 0, self._refit)
        self._brushes = style.BrushCache()
        self.names: list[str] = []
        self.pos = np.zeros((0, 2))
        self._sizes = np.zeros(0)
        self._priority = np.zeros(0)
        self._where: dict[str, int] = {}
        self._marked: set[int] = set()
        self.ringed: list[str] = []
        self._style = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))  # drawn type codes, alpha levels
        self._ring_rows: tuple[np.ndarray, np.ndarray] | None = None  # drawn hit rows, selection rows
        self._label_timer = single_shot_timer(self, LABEL_DELAY_MS, self.update_labels)
        self.view.sigRangeChanged.connect(lambda *_: self._label_timer.start())

    # --- data -----------------------------------------------------------------------------------

    def draw(self, names: Sequence[str], pos: np.ndarray, edges: np.ndarray, sizes: np.ndarray,
             type_codes: np.ndarray, alpha_levels: np.ndarray, priority: np.ndarray) -> None:
        """Draw ``N`` nodes: ``pos`` ``(N, 2)``, ``edges`` ``(M, 2)`` indices into them, pixel ``sizes``,
        type codes and opacity levels (see :mod:`graph_style`), and a label ``priority`` (higher first)."""
        self.names = list(names)
        self._where = {name: i for i, name in enumerate(self.names)}
        self.pos = np.asarray(pos, dtype=np.float64).reshape(-1, 2)
        self._sizes, self._priority = np.asarray(sizes), np.asarray(priority, dtype=np.float64)
        big = len(self.names) > 2000
        for item in self._labels:  # dense maps: labels over the nodes, else under them (nodes stay whole)
            item.setZValue(4 if big else 1)
        ends = self.pos[np.asarray(edges, dtype=np.int64).reshape(-1, 2)].reshape(-1, 2)
        self._edges.setData(x=ends[:, 0], y=ends[:, 1], connect="pairs",
                            pen=pg.mkPen(140, 140, 140, 40 if big else 110, width=1))
        self._style = (np.array(type_codes, dtype=np.int64), np.array(alpha_levels, dtype=np.int64))
        self._nodes.setData(pos=self.pos, size=self._sizes, brush=self._brushes.brushes(*self._style),
                            pen=None if big else pg.mkPen(30, 30, 30, 160, width=0.8))
        self._ring_rows = None  # new positions: the rings are drawn again by the next set_rings
        self._label_timer.start()

    def restyle(self, type_codes: np.ndarray, alpha_levels: np.ndarray) -> bool:
        """New opacity levels (or colours) for the drawn nodes, positions unchanged.

        Returns whether anything changed: the same codes and levels as drawn are a no-op (no brush
        rebuilt, no repaint)."""
        codes, levels = np.asarray(type_codes, dtype=np.int64), np.asarray(alpha_levels, dtype=np.int64)
        if not len(self.names) or (np.array_equal(codes, self._style[0]) and np.array_equal(levels, self._style[1])):
            return False
        self._style = (codes.copy(), levels.copy())
        self._nodes.setBrush(self._brushes.brushes(codes, levels))
        return True

    def _drawn_rows(self, names: Sequence[str]) -> np.ndarray:
        """``(K,) int64`` drawn indices of ``names`` (those drawn, in the given order, no repeats)."""
        where = self._where
        rows = np.fromiter((where.get(name, -1) for name in names), dtype=np.int64, count=len(names))
        rows = rows[rows >= 0]
        _, first = np.unique(rows, return_index=True)
        return rows[np.sort(first)]

    def set_rings(self, hits: Sequence[str], selection: Sequence[str]) -> bool:
        """Red rings round the drawn search hits, gold round the selection; both get labels first.

        Returns whether the rings changed: the same drawn hits and selection (in any order) keep the
        rings and labels as they are (no repaint)."""
        hit_rows, selection_rows = self._drawn_rows(hits), self._drawn_rows(selection)
        self.ringed = [self.names[i] for i in (*hit_rows.tolist(), *selection_rows.tolist())]
        previous = self._ring_rows
        if previous is not None and all(
            np.array_equal(np.sort(new), np.sort(old)) for new, old in zip((hit_rows, selection_rows), previous, strict=True)
        ):
            return False
        self._ring_rows = (hit_rows, selection_rows)
        self._marked = set(hit_rows.tolist()) | set(selection_rows.tolist())
        for item, rows in ((self._hit_rings, hit_rows), (self._selection_rings, selection_rows)):
            item.setData(pos=self.pos[rows], size=self._sizes[rows] + 8)
        self._label_timer.start()
        return True

    def set_legend(self, entries: Sequence[tuple[tuple[int, int, int], str]]) -> None:
        """One legend row per ``(rgb, text)``."""
        self.legend.clear()
        for rgb, text in entries:
            self.legend.addItem(pg.ScatterPlotItem(symbol="o", size=10, pen=None, brush=pg.mkBrush(*rgb)), text)

    def set_legend_visible(self, visible: bool) -> None:
        """Show or collapse the type legend; a fitted drawing is fitted again around it."""
        self.legend.setVisible(visible)
        self._refit()

    def apply_theme(self) -> None:
        """Take background and text colours from pyqtgraph's options (the app sets them for dark mode)."""
        background = pg.mkColor(pg.getConfigOption("background"))
        foreground = pg.mkColor(pg.getConfigOption("foreground"))
        self.setBackground(background)
        self.legend.setBrush(_translucent(background, 200))
        self.legend.setLabelTextColor(foreground)
        for item in self._labels:
            item.setColor(foreground)
            item.fill = _translucent(background, 150)
            item.update()

    # --- view -----------------------------------------------------------------------------------

    def node_position(self, name: str) -> QPointF | None:
        """Where ``name`` is drawn, in this widget's coordinates (``None`` when not drawn)."""
        i = self._where.get(name)
        if i is None:
            return None
        scene = self.view.mapViewToScene(QPointF(*map(float, self.pos[i])))
        return self.mapFromScene(scene).toPointF()

    def shown_labels(self) -> list[str]:
        return [item.toPlainText() for item in self._labels if item.isVisible()]

    def all_in_view(self) -> bool:
        if not len(self.pos):
            return True
        rect = self.view.viewRect()
        low, high = self.pos.min(axis=0), self.pos.max(axis=0)
        return bool(rect.left() <= low[0] and high[0] <= rect.right() and rect.top() <= low[1]
                    and high[1] <= rect.bottom())

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self.fitted:
            self._fit_timer.start()  # once the view box has its new size

    def _refit(self) -> None:
        if self.fitted and shiboken6.isValid(self.view):
            self.zoom_to_fit()

    def _user_moved(self, *_: Any) -> None:
        self.fitted = False

    def zoom_to_fit(self) -> None:
        """Show every drawn node as large as the canvas allows, with room for the labels beside and
        below the outer nodes, clear of the legend (beside it or under it, whichever leaves the
        drawing larger) when the legend is shown."""
        if not len(self.pos):
            return
        self.fitted = True
        width, height = max(self.view.width(), 1.0), max(self.view.height(), 1.0)
        low, high = self.pos.min(axis=0), self.pos.max(axis=0)
        span = np.maximum(high - low, 1.0)  # layout units; a lone node still gets a finite zoom
        margins = [(FIT_MARGIN_X, FIT_MARGIN_TOP)]  # (left, top) pixels kept free
        if self.legend.items and self.legend.isVisible():
            box = self.legend.boundingRect()  # placed at LEGEND_OFFSET
            margins = [(LEGEND_OFFSET + box.width() + LEGEND_GAP, FIT_MARGIN_TOP),
                       (FIT_MARGIN_X, LEGEND_OFFSET + box.height() + LEGEND_GAP)]
        options = []  # (layout units per pixel, centre of the free area in pixels)
        for left, top in margins:
            free_w = max(width - left - FIT_MARGIN_X, 0.25 * width)
            free_h = max(height - top - FIT_MARGIN_BOTTOM, 0.25 * height)
            options.append((float(max(span[0] / free_w, span[1] / free_h)), left + free_w / 2, top + free_h / 2))
        unit, centre_x, centre_y = min(options)  # the option that draws the graph largest
        x_left = (low[0] + high[0]) / 2 - centre_x * unit
        y_top = (low[1] + high[1]) / 2 + centre_y * unit  # the view's y axis points up
        self.view.setRange(xRange=(x_left, x_left + width * unit), yRange=(y_top - height * unit, y_top), padding=0)

    def center_on(self, name: str) -> None:
        """Pan (same zoom) so that ``name`` is in view, if it is drawn and off screen."""
        i = self._where.get(name)
        if i is None:
            return
        x, y = map(float, self.pos[i])
        rect = self.view.viewRect()
        if not rect.contains(QPointF(x, y)):
            self.fitted = False
            half_w, half_h = rect.width() / 2, rect.height() / 2
            self.view.setRange(xRange=(x - half_w, x + half_w), yRange=(y - half_h, y + half_h), padding=0)

    def update_labels(self) -> None:
        """Label the most important visible nodes whose labels do not overlap (graph_style.place_labels)."""
        if not shiboken6.isValid(self.view):
            return  # the timer fired while the window was being torn down
        self._labels = [item for item in self._labels if shiboken6.isValid(item)]
        for item in self._labels:
            item.hide()
        if not len(self.names):
            return
        rect = self.view.viewRect()
        x, y = self.pos[:, 0], self.pos[:, 1]
        inside = np.flatnonzero((x >= rect.left()) & (x <= rect.right()) & (y >= rect.top()) & (y <= rect.bottom()))
        if not len(inside):
            return
        score = self._priority[inside] + 10.0 * np.isin(inside, list(self._marked))
        order = np.argsort(-score, kind="stable")[:2000]
        width, height = max(self.view.width(), 1.0), max(self.view.height(), 1.0)
        pixels = np.stack([(x[inside] - rect.left()) / rect.width() * width,
                           (rect.bottom() - y[inside]) / rect.height() * height], axis=1)
        radius = self._sizes[inside] / 2.0
        discs = order[:OBSTACLE_NODES]  # the most important discs stay uncovered
        obstacles = [(pixels[i, 0] - radius[i], pixels[i, 1] - radius[i], pixels[i, 0] + radius[i],
                      pixels[i, 1] + radius[i]) for i in discs.tolist()]
        texts = [n if len(n) <= LABEL_CHARS else n[: LABEL_CHARS - 1] + "…"
                 for n in (self.names[i] for i in inside.tolist())]
        widths = np.array([LABEL_WIDTH_PER_CHAR * len(t) + 6 for t in texts])
        first = int(np.isin(inside, list(self._marked)).sum()) + ALWAYS_LABELLED
        chosen = style.place_labels(pixels, widths, order.tolist(), offset=radius + 1.0, obstacles=obstacles,
                                    first=first, height=LABEL_HEIGHT, max_labels=len(self._labels))
        for item, k in zip(self._labels, chosen, strict=False):
            item.setText(texts[k])
            item.setAnchor((0.5, -(radius[k] + 1.0) / LABEL_HEIGHT))  # just below its node's disc
            item.setPos(float(x[inside[k]]), float(y[inside[k]]))
            item.show()
            item.updateTransform(force=True)  # hidden items miss view changes (pyqtgraph TextItem)

    def _on_points_clicked(self, _item: Any, points: Any, event: Any) -> None:
        if len(points):
            ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
            self.node_clicked.emit(points[0].index(), bool(event.double()), ctrl)
