"""What the graph canvas draws besides nodes, edges and labels, and the level of detail of its edges.

- :func:`visible_edges`: the edges worth drawing in the current view (culled to it, at most a budget, the
  edges of the most important nodes first) and how strongly (fainter when zoomed out) — so a wheel zoom on a
  10,000-node map builds one short path, not 62,000 segments, per frame.
- :func:`hull` and :class:`Regions`: communities of a large map drawn as translucent labelled regions (the
  convex hull of each group's core), under the nodes.
- :class:`NewMarkers`: small arrows at the canvas edge pointing to new nodes out of view (an agent wrote
  them; the view keeps its zoom and centre instead of jumping to them). Clicking one pans to its node.

Pure numpy where possible; the Qt items are plain pyqtgraph/Qt items added to the canvas's view box.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFont, QPainterPath, QPolygonF
from PySide6.QtWidgets import QGraphicsPathItem, QPushButton, QWidget

from limbic.gui.graph import style

EDGE_BUDGET = 5_000   # most edges drawn at once
LONG_EDGE = 0.15      # of the view's diagonal: longer edges of a large map are left out
INK_BUDGET = 120      # view diagonals: the most length of edges drawn at once (what drawing them costs)
CORE_SHARE = 0.85     # of a community's nodes (nearest its centre) that its region wraps
MAX_MARKERS = 4
ARROWS = "→↗↑↖←↙↓↘"


def visible_edges(pos: np.ndarray, edges: np.ndarray, rect: tuple[float, float, float, float],
                  priority: np.ndarray, budget: int = EDGE_BUDGET) -> tuple[np.ndarray, float]:
    """``(rows of edges to draw (K,) int64, opacity share 0..1)`` for nodes at ``pos`` ``(N, 2)``, ``edges`` ``(M, 2)``
    and the view ``rect`` (left, bottom, right, top in layout units): the edges with an end in view (a margin
    of a quarter view round it) and at most :data:`LONG_EDGE` of the view's diagonal long (the long edges of a
    large map, between its regions or out to hubs far away, are a fan of lines that hides the regions; zoomed
    in, a neighbour's edges are short again; the focus view draws every edge); past ``budget`` edges or
    :data:`INK_BUDGET` view diagonals of length in all, those whose ends weigh most by ``priority`` ``(N,)``
    (the time a paint takes grows with the pixels the edges cover: 5,000 edges of a zoomed-out 10k map cost the
    UI thread 45–65 ms a paint, 120 diagonals about 20). The opacity share falls as more edges are in view (1 for
    a few hundred, about 0.35 at the budget). The canvas culls only large maps."""
    if not len(edges):
        return np.zeros(0, dtype=np.int64), 1.0
    left, bottom, right, top = rect
    mx, my = (right - left) / 4, (top - bottom) / 4
    inside = ((pos[:, 0] >= left - mx) & (pos[:, 0] <= right + mx) & (pos[:, 1] >= bottom - my)
              & (pos[:, 1] <= top + my))
    rows = np.flatnonzero(inside[edges[:, 0]] | inside[edges[:, 1]])
    span = pos[edges[rows, 0]] - pos[edges[rows, 1]]
    length = np.hypot(span[:, 0], span[:, 1])
    diagonal = math.hypot(right - left, top - bottom)
    short = length <= LONG_EDGE * diagonal
    rows, length = rows[short], length[short]
    if len(rows) > budget or length.sum() > INK_BUDGET * diagonal:
        weight = priority[edges[rows, 0]] + priority[edges[rows, 1]]
        heaviest = np.argpartition(-weight, budget)[:budget] if len(rows) > budget else np.arange(len(rows))
        order = heaviest[np.argsort(-weight[heaviest], kind="stable")]  # sorting only what the count allows
        kept = order[np.cumsum(length[order]) <= INK_BUDGET * diagonal]
        rows = np.sort(rows[kept])
    share = float(np.clip(1.0 - 0.25 * math.log10(max(len(rows), 100) / 100), 0.35, 1.0))
    return rows, share


def hull(points: np.ndarray) -> np.ndarray:
    """``(K, 2)`` convex hull of ``points`` ``(N, 2)``, counter-clockwise (Qhull through SciPy: a large map's
    regions hold thousands of points, and the UI thread draws them); fewer than three distinct points come back
    as they are (distinct, sorted), points all on one line as the line's two ends."""
    from scipy.spatial import ConvexHull, QhullError  # here: SciPy takes most of a second to import

    pts = np.unique(np.asarray(points, dtype=np.float64), axis=0)
    if len(pts) < 3:
        return pts
    try:
        return pts[ConvexHull(pts).vertices]
    except QhullError:  # every point on one line: no area to wrap
        return pts[[0, -1]]


def core_points(points: np.ndarray, share: float = CORE_SHARE) -> np.ndarray:
    """The ``share`` of ``points`` nearest their median: a region wraps a group's core, not its stragglers."""
    if len(points) < 8:
        return points
    distance = np.linalg.norm(points - np.median(points, axis=0), axis=1)
    return points[distance <= np.quantile(distance, share)]


class Regions:
    """Translucent labelled regions (one per community) in ``view``; :meth:`set` replaces them, :meth:`place`
    puts their names where they do not overlap at the current zoom."""

    def __init__(self, view: pg.ViewBox) -> None:
        self.view = view
        self.items: list[QGraphicsPathItem | pg.TextItem] = []
        self.labels: list[str] = []
        self.names: list[tuple[pg.TextItem, list[tuple[float, float]]]] = []  # each name and its spots (layout units)
        font = QFont()
        font.setPointSizeF(10.0)
        font.setBold(True)
        self.font = font

    def set(self, regions: Sequence[tuple[np.ndarray, tuple[int, int, int], str]]) -> None:
        """``(points (K, 2), rgb, label)`` per region; the region is the hull of the points' core."""
        for item in self.items:
            self.view.removeItem(item)
        self.items, self.labels, self.names = [], [], []
        for points, rgb, label in regions:
            outline = hull(core_points(np.asarray(points, dtype=np.float64)))
            if len(outline) < 3:
                continue
            path = QPainterPath()
            path.addPolygon(QPolygonF([QPointF(float(x), float(y)) for x, y in outline]))
            path.closeSubpath()
            shape = QGraphicsPathItem(path)
            shape.setBrush(QColor(*rgb, 38))
            shape.setPen(pg.mkPen(*rgb, 110, width=1.5, cosmetic=True))
            shape.setZValue(-1)
            self.view.addItem(shape)
            background = pg.mkColor(pg.getConfigOption("background"))  # light or dark: the label reads on both
            background.setAlpha(170)
            text = pg.TextItem(label, color=QColor(*rgb), anchor=(0.5, 1.0), fill=pg.mkBrush(background))
            text.setFont(self.font)
            text.setZValue(5)
            middle, low, high = float(outline[:, 0].mean()), float(outline[:, 1].min()), float(outline[:, 1].max())
            centre = float(np.median(np.asarray(points, dtype=np.float64)[:, 1]))
            text.setPos(middle, high)  # above the region; place() may move it to its centre or below it
            text.hide()
            self.view.addItem(text)
            self.items += [shape, text]
            self.labels.append(label)
            self.names.append((text, [(middle, high), (middle, centre), (middle, low)]))

    def place(self, to_pixels: Callable[[float, float], tuple[float, float]],
              bounds: tuple[float, float, float, float]) -> list[tuple[float, float, float, float]]:
        """Show each region's name (largest region first) at the first of its spots — above the region, on its
        centre, below it — where it overlaps no name placed before and lies within ``bounds`` (left, top, right,
        bottom pixels); hide it when none is. ``to_pixels`` maps a layout position to canvas pixels. Returns the
        boxes of the names shown (pixels), for the node labels to keep clear of."""
        placed: list[tuple[float, float, float, float]] = []
        for text, spots in self.names:
            size = text.textItem.boundingRect()  # pixels (the item's own rect is in layout units)
            width, height = float(size.width()), float(size.height())
            text.hide()
            for x, y in spots:
                px, py = to_pixels(x, y)
                box = (px - width / 2, py - height, px + width / 2, py)  # anchored at its bottom centre
                inside = box[0] >= bounds[0] and box[2] <= bounds[2] and box[1] >= bounds[1] and box[3] <= bounds[3]
                if inside and not any(b[0] < box[2] and box[0] < b[2] and b[1] < box[3] and box[1] < b[3]
                                      for b in placed):
                    text.setPos(x, y)
                    text.show()
                    placed.append(box)
                    break
        return placed

    def hide_names(self) -> None:
        """Hide every region's name (while the view moves; :meth:`place` shows them again)."""
        for text, _ in self.names:
            text.hide()


class NewMarkers:
    """Up to :data:`MAX_MARKERS` small buttons on ``host``'s edge pointing to new nodes out of view."""

    def __init__(self, host: QWidget, on_click: Callable[[str], None]) -> None:
        self.host = host
        self.buttons: list[QPushButton] = []
        for _ in range(MAX_MARKERS):
            button = QPushButton(host)
            button.setFlat(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            rgb = style.NEW_COLOUR
            button.setStyleSheet(f"QPushButton {{ color: rgb{rgb}; font-size: 8pt; padding: 1px 4px; "
                                 f"border: 1px solid rgba{(*rgb, 140)}; border-radius: 3px; }}")
            button.clicked.connect(lambda _=False, b=button: on_click(b.property("entity")))
            button.hide()
            self.buttons.append(button)

    @property
    def shown(self) -> list[str]:
        """Entities the visible markers point to."""
        return [b.property("entity") for b in self.buttons if not b.isHidden()]

    def place(self, targets: Sequence[tuple[str, float, float]]) -> None:
        """``(name, x, y)`` per new node out of view, in ``host`` pixels (outside its rect): each marker sits on
        the edge where the line from the centre to its node leaves the canvas."""
        width, height = self.host.width(), self.host.height()
        cx, cy = width / 2, height / 2
        for button, target in zip(self.buttons, [*targets, *([None] * MAX_MARKERS)], strict=False):
            if target is None:
                button.hide()
                continue
            name, x, y = target
            angle = math.atan2(cy - y, x - cx)  # screen y grows downwards
            arrow = ARROWS[int(round(angle / (math.pi / 4))) % 8]
            short = name if len(name) <= 18 else name[:17] + "…"
            button.setText(f"{arrow} new: {short}")
            button.setToolTip(f"{name}: written just now, out of view; click to go there")
            button.setProperty("entity", name)
            button.adjustSize()
            dx, dy = x - cx, y - cy
            scale = min((cx - 6) / abs(dx) if dx else math.inf, (cy - 6) / abs(dy) if dy else math.inf)
            px, py = cx + dx * scale, cy + dy * scale
            button.move(int(min(max(px - button.width() / 2, 2), width - button.width() - 2)),
                        int(min(max(py - button.height() / 2, 2), height - button.height() - 2)))
            button.show()
            button.raise_()
