"""The drawing surface of the graph view: edges as one ``PlotCurveItem`` path (``connect="pairs"``) and
nodes as one ``ScatterPlotItem`` — whole arrays, never an item per node — rings for search hits (with a halo,
easy to find on a large map), the selection, the pinned entity of *Why not this one?*, a small dot on the
entities a replay marks, and labels where they fit (level of detail). Stacking, bottom to top: community regions,
edges, halos, labels (on a translucent patch), nodes, rings — so a label never hides a node.

Level of detail (:mod:`limbic.gui.graph.overlays`): only the edges with an end in view are drawn, at most
a budget, fainter when zoomed out; labels get a share of the canvas area each (more labels as you zoom in,
fewer where nodes crowd) and never cover a node's disc (nor a hit's ring) — on a view of more than
:data:`OBSTACLE_NODES` nodes, the disc of one of the most important ones: there a label may lie over lesser
nodes and is drawn above them. Labels never overlap each other nor a community region's name:
the selection and the search hits are labelled first, then the most important nodes where a label still
fits. A label touches its node (its box within the disc's radius + 6 px of the centre,
:func:`limbic.gui.graph.style.label_spots`); only the selection's and the hits' may go further out when
nothing fits beside them, and then a leader line in their ring's colour joins the box to the disc. Each
label is one item placed on its node (:class:`limbic.gui.graph.labels.NodeLabel`): a zoom, a fit or a
redraw moves it with its node at once. When nodes move (a new layout), ``GraphCanvas.draw(..., start=...)``
glides them there in :data:`ANIMATION_MS`.

Hovering a node emits ``node_hovered`` (the view shows a card); new nodes out of view get a marker on the
canvas edge (:meth:`GraphCanvas.point_to`). After :meth:`GraphCanvas.zoom_to_fit` the drawing stays fitted
while the canvas is resized until the user pans or zooms.

It knows nothing of the service or the controller: :class:`~limbic.gui.graph.view.GraphView` hands it
arrays (positions, edges, sizes, colour codes, opacity levels) and names, and listens to its signals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QEasingCurve, QLineF, QPoint, QPointF, QRectF, Qt, QVariantAnimation, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainterPath

from limbic.gui.graph import overlays, style
from limbic.gui.graph.labels import NodeLabel
from limbic.gui.widgets import single_shot_timer

LABEL_DELAY_MS = 40
MAX_LABELS = 120
LABEL_AREA = 7_000.0  # canvas pixels² per label: the density the level of detail allows
HOVER_SLACK = 4.0     # pixels beyond a node's disc that still hover it
HALO_SIZE = 26.0      # pixels added round a search hit's disc by its halo
LABEL_CHARS = 28
LABEL_PADDING = 6.0   # pixels added to a label's text width and height (its patch)
LABEL_CANDIDATES = 600  # most important visible nodes that may get a label
DENSE_NODES = 3000    # visible nodes from which a view counts as crowded
DENSE_LABELS = 30     # labels on a crowded view (besides the selection's and hits')
OBSTACLE_NODES = 600  # visible nodes from which only the most important ones' discs keep labels off
BIG_EDGE_ALPHA = 55   # of 255: the edges of a large map (times the level of detail's share), faint under its regions
FIT_MARGIN = 24.0     # pixels kept free around the fitted drawing
FIT_MARGIN_X = 80.0   # pixels beside it, for the outer nodes' labels
ANIMATION_MS = 350
BADGE_GAP = 6.0       # pixels added to a node's diameter for the box its replay badge sits in
HIT_BONUS, PINNED_BONUS, SELECTION_BONUS = 10.0, 15.0, 20.0  # label priority added to the marked nodes
RING_GAP = 7.0        # pixels added to a ringed node's diameter (hit, selection): the ring's diameter
RING_PEN = 2.5        # pixels: the ring's line width
RING_OUTER = RING_GAP / 2 + RING_PEN / 2  # pixels from a disc's edge to its ring's outer edge


def _badge() -> QPainterPath:
    """The symbol of a replay mark: a small dot on the node's upper right edge (in the unit box pyqtgraph scales
    to the symbol's size, y downwards)."""
    path = QPainterPath()
    path.addEllipse(QPointF(0.34, -0.34), 0.15, 0.15)
    return path


class GraphCanvas(pg.GraphicsLayoutWidget):
    """See the module docstring. ``node_clicked(index, double, ctrl)`` gives the drawn node's index."""

    node_clicked = Signal(int, bool, bool)
    node_hovered = Signal(int, QPoint)  # drawn index (-1: none) and where, in canvas pixels
    marker_clicked = Signal(str)        # the name a new-node marker points to
    fitted = False  # the view shows the fitted drawing; cleared when the user pans or zooms (class
    # defaults: Qt sends resize and range events from inside the constructors, before any data)
    _big = False
    _glide: tuple[np.ndarray, np.ndarray] | None = None

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
        self._halos = pg.ScatterPlotItem(pxMode=True, pen=None, brush=pg.mkBrush(*style.HIT_COLOUR, 70))
        self._halos.setZValue(0.5)
        self._halos.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.view.addItem(self._halos)
        self._nodes = pg.ScatterPlotItem(pxMode=True)
        self._nodes.setZValue(2)
        self._nodes.sigClicked.connect(self._on_points_clicked)
        self.view.addItem(self._nodes)
        # One ring item per kind, each with a single pen: no per-point pens to build on every change.
        self._rings = {kind: pg.ScatterPlotItem(pxMode=True, brush=None, symbol=symbol, pen=pg.mkPen(*colour, width=RING_PEN))
                       for kind, colour, symbol in (("hit", style.HIT_COLOUR, "o"),
                                                    ("selection", style.SELECTION_COLOUR, "o"),
                                                    ("pinned", style.PINNED_COLOUR, "d"))}
        self._rings["replay"] = pg.ScatterPlotItem(pxMode=True, symbol=_badge(),  # a light mark: a dot, rimmed
                                                   pen=pg.mkPen(255, 255, 255, 230, width=1.0),  # to part it from
                                                   brush=pg.mkBrush(*style.REPLAY_COLOUR, 235))  # a blue node
        for item in self._rings.values():
            item.setZValue(3)
            item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
            self.view.addItem(item)
        font = QFont()
        font.setPointSizeF(8.0)
        self._labels: list[NodeLabel] = []
        for _ in range(MAX_LABELS):
            item = NodeLabel(font, foreground, background)
            item.setZValue(1)
            item.hide()
            self.view.addItem(item, ignoreBounds=True)
            self._labels.append(item)
        self._metrics = QFontMetricsF(font)
        self.regions = overlays.Regions(self.view)
        self.markers = overlays.NewMarkers(self, self.marker_clicked.emit)
        self._pointing: list[str] = []  # new nodes the markers point to while out of view
        self._hovered = -1
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.view.sigRangeChangedManually.connect(self._user_moved)
        self._fit_timer = single_shot_timer(self, 0, self._refit)
        self._brushes = style.BrushCache()
        self.names: list[str] = []
        self.pos = np.zeros((0, 2))
        self._shown = np.zeros((0, 2))  # where the nodes are drawn this frame (mid-glide: not yet self.pos)
        self._sizes = np.zeros(0)
        self._priority = np.zeros(0)
        self._where: dict[str, int] = {}
        self._marked: dict[int, float] = {}  # drawn row → label priority bonus (selection, hits)
        self._accents = {bonus: QColor(*colour) for bonus, colour in ((HIT_BONUS, style.HIT_COLOUR),
                         (PINNED_BONUS, style.PINNED_COLOUR), (SELECTION_BONUS, style.SELECTION_COLOUR))}
        self.ringed: list[str] = []
        self.replay_marked: list[str] = []  # drawn entities a replay marks
        self._style = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))  # drawn type codes, alpha levels
        self._ring_rows: dict[str, np.ndarray] | None = None  # drawn rows per ring kind
        self._label_timer = single_shot_timer(self, LABEL_DELAY_MS, self.update_labels)
        self.view.sigRangeChanged.connect(self._range_changed)
        self._edge_rows = np.zeros((0, 2), dtype=np.int64)
        self._edge_key: tuple | None = None  # what the drawn edge path was built for
        self.edges_drawn = 0
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
            self._follow_labels()
            self._label_timer.start()

    def _follow_labels(self) -> None:
        """Move each shown label onto its node's new position and size (hide it when its node is gone) at once."""
        for item in self._labels:
            if item.isVisible():
                i = self._where.get(item.entity)
                if i is None:
                    item.hide()
                else:
                    item.setPos(float(self.pos[i, 0]), float(self.pos[i, 1]))
                    item.set_radius(float(self._sizes[i]) / 2.0)

    def index_of(self, name: str) -> int | None:
        """The drawn index of ``name`` (``None`` when not drawn)."""
        return self._where.get(name)

    def label_anchors(self) -> dict[str, tuple[float, float]]:
        """``{name: (x, y)}`` layout position of each shown label's anchor (its node's position when placed)."""
        return {item.entity: (float(item.pos().x()), float(item.pos().y()))
                for item in self._labels if item.isVisible()}

    def label_geometry(self) -> list[tuple[str, str, QRectF, QLineF | None]]:
        """Each shown label as drawn on screen: ``(entity, text, box, leader)``, the box and the leader line (``None``:
        the box is at its node) in this widget's pixels, like :meth:`node_position`."""
        self.view.updateMatrix()  # a zoom moves the drawing at the next paint; measure what that paint shows
        transform = self.viewportTransform()
        return [(item.entity, item.text, item.device_box(transform), item.device_leader(transform))
                for item in self._labels if item.isVisible()]

    def _place(self, pos: np.ndarray) -> None:
        """Show nodes, edges and rings at ``pos`` (the style and sizes as set by :meth:`draw`)."""
        self._shown = pos
        self._edge_key = None
        self._draw_edges()
        self._nodes.setData(pos=pos, size=self._sizes, brush=self._brushes.brushes(*self._style),
                            pen=None if self._big else pg.mkPen(30, 30, 30, 160, width=0.8))
        if self._ring_rows is not None:
            self._draw_rings(self._ring_rows)

    def _view_rect(self) -> tuple[float, float, float, float]:
        rect = self.view.viewRect()
        return rect.left(), rect.top(), rect.right(), rect.bottom()

    def _draw_edges(self) -> None:
        """The edge path for the current view (:func:`~limbic.gui.graph.overlays.visible_edges`): rebuilt only when
        the culled set changes."""
        rows, share = overlays.visible_edges(self._shown, self._edge_rows, self._view_rect(), self._priority) \
            if self._big else (np.arange(len(self._edge_rows)), 1.0)
        key = (len(rows), int(rows[:50].sum()) if len(rows) else 0, int(rows[-50:].sum()) if len(rows) else 0,
               round(share, 2))
        if key == self._edge_key:
            return
        self._edge_key = key
        self.edges_drawn = len(rows)
        ends = self._shown[self._edge_rows[rows]].reshape(-1, 2)
        self._edges.setData(x=ends[:, 0], y=ends[:, 1], connect="pairs",
                            pen=pg.mkPen(140, 140, 140, int((BIG_EDGE_ALPHA if self._big else 110) * share), width=1))

    def _range_changed(self, *_: object) -> None:
        if self._big and self._glide is None and len(self._shown):
            self._draw_edges()
            for item in self._labels:  # while a large map moves, labels wait (each would be re-transformed per frame)
                item.hide()
            self.regions.hide_names()  # their overlaps change with the zoom: placed again with the labels
        self._label_timer.start()

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

    def set_rings(self, hits: Sequence[str], selection: Sequence[str], pinned: Sequence[str] = (),
                  replay: Sequence[str] = ()) -> bool:
        """Red rings (and halos) round the drawn search hits, gold round the selection, a violet diamond round
        the pinned entity, a small teal dot on what a replay marks; the first three get labels first.

        Returns whether the rings changed: the same drawn rows (in any order) keep the rings and labels as
        they are (no repaint)."""
        rows = {"hit": self._drawn_rows(hits), "selection": self._drawn_rows(selection),
                "pinned": self._drawn_rows(pinned), "replay": self._drawn_rows(replay)}
        self.ringed = [self.names[i] for kind in ("hit", "selection", "pinned") for i in rows[kind].tolist()]
        self.replay_marked = [self.names[i] for i in rows["replay"].tolist()]
        previous = self._ring_rows
        if previous is not None and all(np.array_equal(np.sort(rows[k]), np.sort(previous[k])) for k in rows):
            return False
        self._ring_rows = rows
        self._marked = ({int(i): HIT_BONUS for i in rows["hit"].tolist()}
                        | {int(i): PINNED_BONUS for i in rows["pinned"].tolist()}
                        | {int(i): SELECTION_BONUS for i in rows["selection"].tolist()})
        self._draw_rings(rows)
        self._label_timer.start()
        return True

    def _draw_rings(self, rows: dict[str, np.ndarray]) -> None:
        for kind, item in self._rings.items():
            extra = {"pinned": 14.0, "replay": BADGE_GAP}.get(kind, RING_GAP)
            item.setData(pos=self._shown[rows[kind]], size=self._sizes[rows[kind]] + extra)
        self._halos.setData(pos=self._shown[rows["hit"]], size=self._sizes[rows["hit"]] + HALO_SIZE)

    def set_regions(self, regions: Sequence[tuple[np.ndarray, tuple[int, int, int], str]]) -> None:
        """Community regions (``(points (K, 2), rgb, label)`` each) under the drawing; empty clears them."""
        self.regions.set(regions)

    def point_to(self, names: Sequence[str]) -> None:
        """Mark the drawn ``names`` (new nodes) with an arrow on the canvas edge while they are out of view."""
        self._pointing = [n for n in names if n in self._where]
        self._update_markers()

    def _update_markers(self) -> None:
        rect = self.view.viewRect()
        targets = []
        for name in [n for n in self._pointing if n in self._where]:
            x, y = map(float, self.pos[self._where[name]])
            if not rect.contains(QPointF(x, y)):
                at = self.mapFromScene(self.view.mapViewToScene(QPointF(x, y)))
                targets.append((name, float(at.x()), float(at.y())))
        self.markers.place(targets)

    def apply_theme(self) -> None:
        """Take background and text colours from pyqtgraph's options (the app sets them for dark mode);
        the legend and the card follow the application palette by themselves."""
        background = pg.mkColor(pg.getConfigOption("background"))
        foreground = pg.mkColor(pg.getConfigOption("foreground"))
        self.setBackground(background)
        for item in self._labels:
            item.set_colours(foreground, background)

    # --- view -----------------------------------------------------------------------------------

    def node_position(self, name: str) -> QPointF | None:
        """Where ``name`` is drawn, in this widget's coordinates (``None`` when not drawn)."""
        i = self._where.get(name)
        if i is None:
            return None
        scene = self.view.mapViewToScene(QPointF(*map(float, self.pos[i])))
        return self.viewportTransform().map(scene)  # not mapFromScene: that rounds to whole pixels

    def shown_labels(self) -> list[str]:
        return [item.text for item in self._labels if item.isVisible()]

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
        drawing (:data:`FIT_MARGIN_X` beside it, for the outer labels). The legend sits beside the canvas."""
        if not len(self.pos):
            return
        self.fitted = True
        self._fit_rows(np.arange(len(self.pos)))

    def fit_to(self, names: Sequence[str]) -> bool:
        """Zoom and pan so that the drawn ``names`` (e.g. the search hits) fill the canvas; returns whether any
        is drawn. The view is no longer "fitted" (a resize keeps it)."""
        rows = self._drawn_rows(names)
        if not len(rows):
            return False
        self.fitted = False
        self._fit_rows(rows, least=12.0 * style.MAX_SIZE * self.units_per_pixel() if len(rows) == 1 else 0.0)
        return True

    def _fit_rows(self, rows: np.ndarray, least: float = 0.0) -> None:
        width, height = max(self.view.width(), 1.0), max(self.view.height(), 1.0)
        low, high = self.pos[rows].min(axis=0) - least / 2, self.pos[rows].max(axis=0) + least / 2
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
        overlapping and none over a node's disc (:func:`limbic.gui.graph.style.place_labels`); as many as the
        canvas area allows at :data:`LABEL_AREA` pixels² each. Also places the new-node markers."""
        if not shiboken6.isValid(self.view):
            return  # the timer fired while the window was being torn down
        self._labels = [item for item in self._labels if shiboken6.isValid(item)]
        for item in self._labels:
            item.hide()
        if not len(self.names) or self._glide is not None:
            return
        self._update_markers()
        rect = self.view.viewRect()
        width, height = max(self.view.width(), 1.0), max(self.view.height(), 1.0)
        names_taken = self.regions.place(lambda u, v: ((u - rect.left()) / rect.width() * width,
                                                       (rect.bottom() - v) / rect.height() * height),
                                         (0.0, 0.0, width, height))
        x, y = self.pos[:, 0], self.pos[:, 1]
        inside = np.flatnonzero((x >= rect.left()) & (x <= rect.right()) & (y >= rect.top()) & (y <= rect.bottom()))
        if not len(inside):
            return
        marked = np.zeros(len(inside))
        if self._marked:
            where = np.searchsorted(inside, list(self._marked))
            found = [(w, bonus) for (row, bonus), w in zip(self._marked.items(), where.tolist(), strict=True)
                     if w < len(inside) and inside[w] == row]
            for w, bonus in found:
                marked[w] = bonus
        dense = len(inside) > DENSE_NODES  # a crowded view: the regions' names speak; a few node labels
        candidates = 4 * DENSE_LABELS + int((marked > 0).sum()) if dense else LABEL_CANDIDATES
        order = np.argsort(-(self._priority[inside] + marked), kind="stable")[:candidates]
        pixels_all = np.stack([(x[inside] - rect.left()) / rect.width() * width,
                               (rect.bottom() - y[inside]) / rect.height() * height], axis=1)
        radius_all = self._sizes[inside] / 2.0
        reach = radius_all + np.where(marked > 0, RING_OUTER, 0.0)  # a ringed node's ring is part of it
        # The discs (and rings) labels keep clear of: every visible one on a view of up to OBSTACLE_NODES nodes,
        # else those of the most important OBSTACLE_NODES and the marked ones — labels lie over the other, minor
        # nodes (drawn above them), so that a crowded view still gets names. Exact for the selection and hits,
        # quick (a raster) for the rest.
        crowded = len(inside) > OBSTACLE_NODES
        solid = np.argsort(-(self._priority[inside] + marked), kind="stable")[:OBSTACLE_NODES] if crowded \
            else np.arange(len(inside))
        discs = style.DiscIndex(pixels_all[solid], reach[solid])
        raster = style.DiscRaster(pixels_all[solid], reach[solid], width, height)
        pixels, radius, offset = pixels_all[order], radius_all[order], reach[order]
        names = [self.names[i] for i in inside[order].tolist()]
        texts = [n if len(n) <= LABEL_CHARS else n[: LABEL_CHARS - 1] + "…" for n in names]
        widths = np.array([self._metrics.horizontalAdvance(t) + LABEL_PADDING for t in texts])
        label_height = self._metrics.height() + LABEL_PADDING
        allowed = int(min(len(self._labels), max(8, width * height / LABEL_AREA)))
        if dense:
            allowed = min(allowed, DENSE_LABELS)
        first = int((marked[order] > 0).sum())
        chosen = style.place_labels(pixels, widths, list(range(len(order))), offset=offset, first=first,
                                    height=label_height, max_labels=max(allowed, min(first, MAX_LABELS)),
                                    bounds=(0.0, 0.0, width, height), discs=discs, raster=raster,
                                    obstacles=names_taken)
        for item, (k, (dx, dy)) in zip(self._labels, chosen, strict=False):
            node = inside[order[k]]
            mark = self._marked.get(int(node))
            item.setZValue(4 if mark else 2.5 if crowded else 1)  # the selection's and hits' labels over edges; on
            # a crowded view every label over the minor nodes it may lie on
            item.place(texts[k], names[k], QRectF(dx, dy, widths[k], label_height), float(radius[k]),
                       self._accents.get(mark) if mark else None)
            item.setPos(float(x[node]), float(y[node]))  # on its node: box and leader at pixel offsets from there
            item.show()

    def node_at(self, where: QPointF) -> int:
        """The drawn node under ``where`` (canvas pixels; the nearest within its disc and :data:`HOVER_SLACK`), or -1."""
        if not len(self.pos):
            return -1
        point = self.view.mapSceneToView(self.mapToScene(where.toPoint()))
        rect = self.view.viewRect()
        per_pixel = rect.width() / max(self.view.width(), 1.0)
        distance = np.hypot(self.pos[:, 0] - point.x(), self.pos[:, 1] - point.y()) / max(per_pixel, 1e-12)
        i = int(np.argmin(distance))
        return i if distance[i] <= self._sizes[i] / 2 + HOVER_SLACK else -1

    def _mouse_moved(self, scene_pos: QPointF) -> None:
        where = self.mapFromScene(scene_pos)
        i = self.node_at(QPointF(where))
        if i != self._hovered or i >= 0:
            self._hovered = i
            self.node_hovered.emit(i, where)

    def leaveEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self._hovered = -1
        self.node_hovered.emit(-1, QPoint())
        super().leaveEvent(event)

    def units_per_pixel(self) -> float:
        """Layout units per screen pixel at the current zoom."""
        return float(self.view.viewRect().width() / max(self.view.width(), 1.0))

    def _on_points_clicked(self, _item: Any, points: Any, event: Any) -> None:
        if len(points):
            ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
            self.node_clicked.emit(points[0].index(), bool(event.double()), ctrl)
