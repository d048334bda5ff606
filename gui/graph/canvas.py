"""The drawing surface of the graph view: edges as one ``PlotCurveItem`` path (``connect="pairs"``) and
nodes as one ``ScatterPlotItem`` — whole arrays, never an item per node — rings for search hits and
the selection, the legend over a corner (:mod:`limbic.gui.graph.legend`, the one where it hides the
fewest nodes; it takes no canvas room), and labels where they fit (level of detail). Stacking, bottom
to top: edges, labels (on a translucent patch), nodes, rings — so a label never hides a node — except
the selection's and hits' labels, and every label on dense maps (over 2,000 nodes), which go on top.

Labels never overlap each other: the selection and the search hits are labelled first (trying below,
above, right and left of their node, then further out), then the most important nodes where a label
still fits; label boxes are measured with the label font. When nodes move (a new layout),
``GraphCanvas.draw(..., start=...)`` glides them there in :data:`ANIMATION_MS`.

After :meth:`GraphCanvas.zoom_to_fit` the drawing stays fitted while the canvas is resized (the window
and its docks get their sizes after the first draw) until the user pans or zooms.

It knows nothing of the service or the controller: :class:`~limbic.gui.graph.view.GraphView` hands it
arrays (positions, edges, sizes, colour codes, opacity levels) and names, and listens to ``node_clicked``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QEasingCurve, QPointF, Qt, QVariantAnimation, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF

from limbic.gui.graph import style
from limbic.gui.graph.legend import GraphLegend
from limbic.gui.widgets import single_shot_timer

LABEL_DELAY_MS = 40
MAX_LABELS = 80
LABEL_CHARS = 28
LABEL_PADDING = 8.0   # pixels around a label's text (its patch: the text item's document margin)
OBSTACLE_NODES = 300  # labels avoid covering the discs of this many most important visible nodes
FIT_MARGIN = 24.0     # pixels kept free around the fitted drawing
FIT_MARGIN_X = 80.0   # pixels beside it, for the outer nodes' labels
ANIMATION_MS = 350


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
        self._metrics = QFontMetricsF(font)
        self.legend = GraphLegend(self)
        self.view.sigRangeChangedManually.connect(self._user_moved)
        self._fit_timer = single_shot_timer(self, 0, self._refit)
        self._brushes = style.BrushCache()
        self.names: list[str] = []
        self.pos = np.zeros((0, 2))
        self._sizes = np.zeros(0)
        self._priority = np.zeros(0)
        self._where: dict[str, int] = {}
        self._marked: dict[int, float] = {}  # drawn row → label priority bonus (selection, hits)
        self.ringed: list[str] = []
        self._style = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))  # drawn type codes, alpha levels
        self._ring_rows: tuple[np.ndarray, np.ndarray] | None = None  # drawn hit rows, selection rows
        self._label_timer = single_shot_timer(self, LABEL_DELAY_MS, self.update_labels)
        self.view.sigRangeChanged.connect(lambda *_: self._label_timer.start())
        self._edge_rows = np.zeros((0, 2), dtype=np.int64)
        self._animation = QVariantAnimation(self)
        self._animation.setDuration(ANIMATION_MS)
        self._animation.setEasingCurve(QEasingCurve.Type.InOutCubic)
        self._animation.setStartValue(0.0)
        self._animation.setEndValue(1.0)
        self._animation.valueChanged.connect(self._animate_step)
        self._animation.finished.connect(lambda: self._label_timer.start())
        self._glide: tuple[np.ndarray, np.ndarray] | None = None  # (start, end) positions of an animation

    # --- data -----------------------------------------------------------------------------------

    def draw(self, names: Sequence[str], pos: np.ndarray, edges: np.ndarray, sizes: np.ndarray,
             colour_codes: np.ndarray, alpha_levels: np.ndarray, priority: np.ndarray,
             start: np.ndarray | None = None) -> None:
        """Draw ``N`` nodes: ``pos`` ``(N, 2)``, ``edges`` ``(M, 2)`` indices into them, pixel ``sizes``,
        colour codes and opacity levels (see :mod:`limbic.gui.graph.style`), and a label ``priority``
        (higher first). With ``start`` ``(N, 2)`` the nodes glide from there to ``pos``."""
        self._animation.stop()
        self.names = list(names)
        self._where = {name: i for i, name in enumerate(self.names)}
        self._sizes, self._priority = np.asarray(sizes), np.asarray(priority, dtype=np.float64)
        self._edge_rows = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        self._style = (np.array(colour_codes, dtype=np.int64), np.array(alpha_levels, dtype=np.int64))
        self._big = len(self.names) > 2000
        end = np.asarray(pos, dtype=np.float64).reshape(-1, 2)
        self.pos = end  # where the nodes are (or are going): fitting, clicks and labels use it
        self._ring_rows = None  # new nodes: the rings are drawn again
        if start is not None and len(start) == len(end) and not np.array_equal(start, end):
            self._glide = (np.asarray(start, dtype=np.float64), end)
            self._place(self._glide[0])
            for item in self._labels:
                item.hide()
            self._animation.start()
        else:
            self._glide = None
            self._place(end)
            self._label_timer.start()

    def _place(self, pos: np.ndarray) -> None:
        """Show nodes, edges and rings at ``pos`` (the style and sizes as set by :meth:`draw`)."""
        self._shown = pos
        ends = pos[self._edge_rows].reshape(-1, 2)
        self._edges.setData(x=ends[:, 0], y=ends[:, 1], connect="pairs",
                            pen=pg.mkPen(140, 140, 140, 40 if self._big else 110, width=1))
        self._nodes.setData(pos=pos, size=self._sizes, brush=self._brushes.brushes(*self._style),
                            pen=None if self._big else pg.mkPen(30, 30, 30, 160, width=0.8))
        if self._ring_rows is not None:
            self._draw_rings(*self._ring_rows)

    def _animate_step(self, value: float) -> None:
        if self._glide is None:
            return
        start, end = self._glide
        t = float(value)
        self._place(start + (end - start) * t)
        if t >= 1.0:
            self._glide = None

    @property
    def animating(self) -> bool:
        return self._glide is not None

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
        self._marked = {int(i): 10.0 for i in hit_rows.tolist()} | {int(i): 20.0 for i in selection_rows.tolist()}
        self._draw_rings(hit_rows, selection_rows)
        self._label_timer.start()
        return True

    def _draw_rings(self, hit_rows: np.ndarray, selection_rows: np.ndarray) -> None:
        for item, rows in ((self._hit_rings, hit_rows), (self._selection_rings, selection_rows)):
            item.setData(pos=self._shown[rows], size=self._sizes[rows] + 8)

    def set_legend(self, title: str, entries: Sequence[tuple[tuple[int, int, int], str]]) -> None:
        """The legend's ``title`` and one row per ``(rgb, text)``."""
        self.legend.set_entries(title, entries)

    def set_legend_visible(self, visible: bool) -> None:
        """Show or collapse the legend (an overlay: the drawing keeps its place)."""
        self.legend.setVisible(visible)

    def apply_theme(self) -> None:
        """Take background and text colours from pyqtgraph's options (the app sets them for dark mode);
        the legend follows the application palette by itself."""
        background = pg.mkColor(pg.getConfigOption("background"))
        foreground = pg.mkColor(pg.getConfigOption("foreground"))
        self.setBackground(background)
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

    def needs_fit(self) -> bool:
        """Whether a fitted view should fit again: a node is out of view, or the drawing fills less than
        half of the view both ways (it shrank)."""
        if not len(self.pos):
            return False
        rect = self.view.viewRect()
        span = self.pos.max(axis=0) - self.pos.min(axis=0)
        return not self.all_in_view() or (span[0] < 0.5 * rect.width() and span[1] < 0.5 * rect.height())

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
        """Show every drawn node as large as the canvas allows, with :data:`FIT_MARGIN` pixels around the
        drawing (:data:`FIT_MARGIN_X` beside it, for the outer labels). The legend floats over the canvas,
        in the corner where it covers the fewest nodes (collapse it with L)."""
        if not len(self.pos):
            return
        self.fitted = True
        width, height = max(self.view.width(), 1.0), max(self.view.height(), 1.0)
        low, high = self.pos.min(axis=0), self.pos.max(axis=0)
        span = np.maximum(high - low, 1.0)  # layout units; a lone node still gets a finite zoom
        free_w = max(width - 2 * FIT_MARGIN_X, 0.5 * width)
        free_h = max(height - 2 * FIT_MARGIN, 0.5 * height)
        unit = float(max(span[0] / free_w, span[1] / free_h))  # layout units per pixel
        x_left = (low[0] + high[0]) / 2 - width / 2 * unit
        y_bottom = (low[1] + high[1]) / 2 - height / 2 * unit
        self.view.setRange(xRange=(x_left, x_left + width * unit), yRange=(y_bottom, y_bottom + height * unit),
                           padding=0)

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
        """Label the selection, the hits and then the most important visible nodes, no two labels
        overlapping (:func:`limbic.gui.graph.style.place_labels`)."""
        if not shiboken6.isValid(self.view):
            return  # the timer fired while the window was being torn down
        self._labels = [item for item in self._labels if shiboken6.isValid(item)]
        for item in self._labels:
            item.hide()
        if not len(self.names) or self._glide is not None:
            return
        rect = self.view.viewRect()
        x, y = self.pos[:, 0], self.pos[:, 1]
        inside = np.flatnonzero((x >= rect.left()) & (x <= rect.right()) & (y >= rect.top()) & (y <= rect.bottom()))
        if not len(inside):
            return
        width, height = max(self.view.width(), 1.0), max(self.view.height(), 1.0)
        pixels = np.stack([(x[inside] - rect.left()) / rect.width() * width,
                           (rect.bottom() - y[inside]) / rect.height() * height], axis=1)
        marked = np.array([self._marked.get(int(i), 0.0) for i in inside.tolist()])
        self.legend.settle(pixels + [self.view.pos().x(), self.view.pos().y()], 1.0 + 5.0 * marked)
        order = np.argsort(-(self._priority[inside] + marked), kind="stable")[:2000]
        radius = self._sizes[inside] / 2.0
        discs = order[:OBSTACLE_NODES]  # the most important discs stay uncovered
        obstacles = [(pixels[i, 0] - radius[i], pixels[i, 1] - radius[i], pixels[i, 0] + radius[i],
                      pixels[i, 1] + radius[i]) for i in discs.tolist()]
        keep_out = []
        if self.legend.isVisible():  # no label hides under the legend
            box = self.legend.geometry().translated(-int(self.view.pos().x()), -int(self.view.pos().y()))
            keep_out.append((float(box.left()), float(box.top()), float(box.right()), float(box.bottom())))
        texts = [n if len(n) <= LABEL_CHARS else n[: LABEL_CHARS - 1] + "…"
                 for n in (self.names[i] for i in inside.tolist())]
        widths = np.array([self._metrics.horizontalAdvance(t) + LABEL_PADDING for t in texts])
        label_height = self._metrics.height() + LABEL_PADDING
        chosen = style.place_labels(pixels, widths, order.tolist(), offset=radius + 1.0, obstacles=obstacles,
                                    first=int((marked > 0).sum()), height=label_height,
                                    max_labels=len(self._labels), bounds=(0.0, 0.0, width, height),
                                    keep_out=keep_out)
        for item, (k, (dx, dy)) in zip(self._labels, chosen, strict=False):
            item.setZValue(4 if self._big or marked[k] else 1)  # the selection's and hits' labels over the nodes
            item.setText(texts[k])
            item.setAnchor((-dx / widths[k], -dy / label_height))  # the box's top-left, from its node
            item.setPos(float(x[inside[k]]), float(y[inside[k]]))
            item.show()
            item.updateTransform(force=True)  # hidden items miss view changes (pyqtgraph TextItem)

    def _on_points_clicked(self, _item: Any, points: Any, event: Any) -> None:
        if len(points):
            ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
            self.node_clicked.emit(points[0].index(), bool(event.double()), ctrl)
