"""How the graph view draws nodes: a colour per colour code (entity type or community, see
:mod:`limbic.gui.graph.colouring`), size by salience, opacity by temporal factor, and which labels fit
on screen and where (level of detail).

Pure helpers over numpy arrays plus a small brush cache; :mod:`limbic.gui.graph.view` uses them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QBrush

# Colour-blind-friendly qualitative palette (Okabe–Ito, then Tableau tones); types beyond it are grey.
PALETTE: tuple[tuple[int, int, int], ...] = (
    (0, 114, 178), (230, 159, 0), (0, 158, 115), (204, 121, 167), (86, 180, 233), (213, 94, 0),
    (240, 228, 66), (148, 103, 189), (140, 86, 75), (23, 190, 207), (188, 189, 34), (227, 119, 194),
)
OTHER_COLOUR = (150, 150, 150)
SELECTION_COLOUR = (255, 215, 0)
HIT_COLOUR = (255, 64, 64)
PINNED_COLOUR = (200, 60, 220)   # the entity pinned in *Why not this one?*
REPLAY_COLOUR = (0, 170, 200)    # entities written in the replay's window
NEW_COLOUR = (40, 170, 90)       # the marker pointing to new nodes out of view
MIN_SIZE = 7.0   # pixels, salience 0
MAX_SIZE = 24.0  # pixels, salience 1
ALPHA_LEVELS = 8
NEAR_GAP = 1.0   # pixels between a node's disc and its label's box (the selection's, the hits': exact test)
RASTER_CELL = 2.0  # pixels: the squares of a DiscRaster
RASTER_GAP = RASTER_CELL * math.sqrt(2.0) + 0.2  # pixels between a disc and a label tested on a DiscRaster
FAR_GAPS = (8.0, 14.0, 22.0, 32.0, 44.0, 58.0, 76.0, 96.0, 120.0)  # pixels: further spots for the selection's
# and hits' labels, joined to their node by a leader line
MIN_ALPHA = 50   # of 255, at the temporal floor


def type_colour(code: int) -> tuple[int, int, int]:
    """RGB of a colour code (a type ranked by frequency, or a community); codes past the palette are grey."""
    return PALETTE[code] if 0 <= code < len(PALETTE) else OTHER_COLOUR


def node_sizes(salience: np.ndarray) -> np.ndarray:
    """``(N,) float64`` pixel diameters from salience in [0, 1], in whole pixels (few distinct sizes
    keep pyqtgraph's symbol atlas small)."""
    return np.rint(MIN_SIZE + (MAX_SIZE - MIN_SIZE) * np.clip(salience, 0.0, 1.0))


def alpha_levels(temporal: np.ndarray, floor: float) -> np.ndarray:
    """``(N,) int64`` in ``0..ALPHA_LEVELS-1``: the temporal factor rescaled from [floor, 1] and quantised."""
    span = max(1.0 - floor, 1e-9)
    unit = np.clip((np.asarray(temporal, dtype=np.float64) - floor) / span, 0.0, 1.0)
    return np.rint(unit * (ALPHA_LEVELS - 1)).astype(np.int64)


class BrushCache:
    """One ``QBrush`` per (type colour, alpha level): a few dozen brushes shared by thousands of nodes."""

    def __init__(self) -> None:
        self._brushes: dict[tuple[int, int], QBrush] = {}

    def brush(self, code: int, level: int) -> QBrush:
        key = (min(int(code), len(PALETTE)), int(level))
        found = self._brushes.get(key)
        if found is None:
            alpha = MIN_ALPHA + (255 - MIN_ALPHA) * key[1] / (ALPHA_LEVELS - 1)
            found = pg.mkBrush(*type_colour(key[0]), int(alpha))
            self._brushes[key] = found
        return found

    def brushes(self, codes: np.ndarray, levels: np.ndarray) -> list[QBrush]:
        """A brush per node for ``(N,)`` type codes and alpha levels."""
        codes = np.minimum(np.asarray(codes, dtype=np.int64), len(PALETTE))
        keys = codes * ALPHA_LEVELS + np.asarray(levels, dtype=np.int64)
        unique, inverse = np.unique(keys, return_inverse=True)
        table = [self.brush(k // ALPHA_LEVELS, k % ALPHA_LEVELS) for k in unique.tolist()]
        return [table[i] for i in inverse.ravel().tolist()]


Box = tuple[float, float, float, float]  # left, top, right, bottom in pixels


class _BoxGrid:
    """Boxes bucketed in square cells, for fast overlap tests."""

    def __init__(self, cell: float) -> None:
        self.cell = cell
        self.buckets: dict[tuple[int, int], list[Box]] = {}

    def _cells(self, box: Box) -> list[tuple[int, int]]:
        c = self.cell
        return [(cx, cy) for cx in range(int(box[0] // c), int(box[2] // c) + 1)
                for cy in range(int(box[1] // c), int(box[3] // c) + 1)]

    def overlaps(self, box: Box) -> bool:
        return any(b[0] < box[2] and box[0] < b[2] and b[1] < box[3] and box[1] < b[3]
                   for c in self._cells(box) for b in self.buckets.get(c, ()))

    def add(self, box: Box) -> None:
        for c in self._cells(box):
            self.buckets.setdefault(c, []).append(box)


class DiscIndex:
    """Node discs — centres ``(D, 2)`` and radii ``(D,)`` in pixels — bucketed by centre in square cells of
    ``cell`` pixels: the obstacle test of :func:`place_labels` for thousands of discs. The test is exact (a box
    overlaps a disc when the box's point nearest the centre lies inside the circle); touching is not
    overlapping, so a label may sit right beside a disc."""

    def __init__(self, centres: np.ndarray, radii: np.ndarray | float, cell: float = 48.0) -> None:
        self.centres = np.asarray(centres, dtype=np.float64).reshape(-1, 2)
        self.radii = np.broadcast_to(np.asarray(radii, dtype=np.float64), (len(self.centres),))
        self.cell = cell
        self.reach = float(self.radii.max()) if len(self.radii) else 0.0
        keys = np.floor(self.centres / cell).astype(np.int64)
        flat = keys[:, 0] * (1 << 32) + keys[:, 1]
        order = np.argsort(flat, kind="stable")
        unique, starts = np.unique(flat[order], return_index=True)
        self.buckets = dict(zip(unique.tolist(), np.split(order, starts[1:]), strict=True)) if len(order) else {}

    def near(self, box: Box) -> np.ndarray:
        """``(K,) int64`` discs that may overlap ``box``: those centred within it widened by the largest radius."""
        c, r = self.cell, self.reach
        found = [self.buckets[key] for cx in range(int((box[0] - r) // c), int((box[2] + r) // c) + 1)
                 for cy in range(int((box[1] - r) // c), int((box[3] + r) // c) + 1)
                 if (key := cx * (1 << 32) + cy) in self.buckets]
        return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)

    def free(self, boxes: np.ndarray) -> np.ndarray:
        """``(S,) bool``: which of ``boxes`` ``(S, 4)`` (left, top, right, bottom) overlap no disc."""
        boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        if not len(boxes):
            return np.zeros(0, dtype=bool)
        rows = self.near((float(boxes[:, 0].min()), float(boxes[:, 1].min()),
                          float(boxes[:, 2].max()), float(boxes[:, 3].max())))
        if not len(rows):
            return np.ones(len(boxes), dtype=bool)
        cx, cy, radius = self.centres[rows, 0], self.centres[rows, 1], self.radii[rows]
        nx = np.clip(cx[None, :], boxes[:, 0:1], boxes[:, 2:3]) - cx[None, :]
        ny = np.clip(cy[None, :], boxes[:, 1:2], boxes[:, 3:4]) - cy[None, :]
        return ~((nx * nx + ny * ny) < (radius * radius)[None, :]).any(axis=1)

    def clear(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """``(S,) bool``: which segments ``starts`` → ``ends`` (``(S, 2)`` each) cross no disc."""
        starts, ends = np.asarray(starts, dtype=np.float64).reshape(-1, 2), np.asarray(ends, dtype=np.float64).reshape(-1, 2)
        if not len(starts):
            return np.zeros(0, dtype=bool)
        low, high = np.minimum(starts, ends).min(axis=0), np.maximum(starts, ends).max(axis=0)
        rows = self.near((float(low[0]), float(low[1]), float(high[0]), float(high[1])))
        if not len(rows):
            return np.ones(len(starts), dtype=bool)
        step = ends - starts
        length = np.maximum((step * step).sum(axis=1), 1e-12)
        towards = self.centres[rows][None, :, :] - starts[:, None, :]
        t = np.clip((towards * step[:, None, :]).sum(axis=2) / length[:, None], 0.0, 1.0)
        miss = towards - t[:, :, None] * step[:, None, :]
        return ~(((miss * miss).sum(axis=2)) < (self.radii[rows] ** 2)[None, :]).any(axis=1)


class DiscRaster:
    """Node discs as a grid of ``cell``-pixel squares over a ``width`` × ``height`` canvas, with its summed-area
    table: whether a box is clear of every disc in four lookups, for thousands of discs and boxes. Conservative: a
    square counts as covered when it may touch a disc (its centre within the radius plus half its diagonal), so a
    box it calls clear touches no disc; a box :data:`RASTER_GAP` pixels or more from a disc's edge never counts as
    touching that disc — a label that far from its own node is not blocked by it."""

    def __init__(self, centres: np.ndarray, radii: np.ndarray | float, width: float, height: float,
                 cell: float = RASTER_CELL) -> None:
        self.cell = cell
        centres = np.asarray(centres, dtype=np.float64).reshape(-1, 2)
        radii = np.broadcast_to(np.asarray(radii, dtype=np.float64), (len(centres),))
        rows, cols = int(np.ceil(height / cell)) + 2, int(np.ceil(width / cell)) + 2
        grid = np.zeros((rows, cols), dtype=bool)
        for radius in np.unique(radii).tolist():
            points = centres[radii == radius]
            reach = radius + cell * math.sqrt(0.5)
            span = int(np.ceil(reach / cell))
            steps = np.arange(-span, span + 1)
            dx, dy = (a.ravel() for a in np.meshgrid(steps, steps))
            home = np.floor(points / cell).astype(np.int64)
            x, y = home[:, 0][:, None] + dx[None, :], home[:, 1][:, None] + dy[None, :]  # (P, K) cells round each
            near = ((x + 0.5) * cell - points[:, 0:1]) ** 2 + ((y + 0.5) * cell - points[:, 1:2]) ** 2 <= reach * reach
            keep = near & (x >= 0) & (x < cols) & (y >= 0) & (y < rows)
            grid[y[keep], x[keep]] = True
        self.table = np.zeros((rows + 1, cols + 1), dtype=np.int32)
        self.table[1:, 1:] = grid.cumsum(axis=0).cumsum(axis=1)

    def clear(self, boxes: np.ndarray) -> np.ndarray:
        """``(S,) bool``: which of ``boxes`` ``(S, 4)`` (left, top, right, bottom, pixels) no disc may touch."""
        boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        rows, cols = self.table.shape[0] - 1, self.table.shape[1] - 1
        x0 = np.clip(np.floor(boxes[:, 0] / self.cell).astype(np.int64), 0, cols)
        y0 = np.clip(np.floor(boxes[:, 1] / self.cell).astype(np.int64), 0, rows)
        x1 = np.clip(np.floor(boxes[:, 2] / self.cell).astype(np.int64) + 1, 0, cols)
        y1 = np.clip(np.floor(boxes[:, 3] / self.cell).astype(np.int64) + 1, 0, rows)
        t = self.table
        return (t[y1, x1] - t[y0, x1] - t[y1, x0] + t[y0, x0]) == 0


def label_spots(width: float, height: float, radius: float, gaps: Sequence[float] = (NEAR_GAP,)) -> list[tuple[float, float]]:
    """Where a ``width`` × ``height`` label may go round a node of ``radius`` pixels: the offsets of its
    top-left corner from the node's centre, 24 per gap. For each of ``gaps`` (pixels between
    the disc and the box's nearest point, nearest first): below, above, right and left of the node (centred on
    it), then slid along those sides (the box still faces the node), then the four diagonals and the eight
    directions between — every spot of a gap at the same distance from the node's centre."""
    spots: list[tuple[float, float]] = []
    slide, lift = min(8.0, width / 2), min(4.0, height / 2)
    for gap in gaps:
        d = radius + gap
        spots += [(-width / 2, d), (-width / 2, -d - height), (d, -height / 2), (-d - width, -height / 2),
                  (-slide, d), (slide - width, d), (-slide, -d - height), (slide - width, -d - height),
                  (d, -lift), (d, lift - height), (-d - width, -lift), (-d - width, lift - height)]
        for cos, sin in _CORNERS:  # the box's corner nearest the node at distance d in that direction
            x, y = d * cos, d * sin
            spots.append((x if cos > 0 else x - width, y if sin > 0 else y - height))
    return spots


_CORNERS = [(math.cos(a), math.sin(a)) for a in np.radians([45, 135, 225, 315, 22.5, 67.5, 112.5, 157.5,
                                                            202.5, 247.5, 292.5, 337.5])]


def _free_spot(x: float, y: float, width: float, height: float, radius: float, gap: float, bounds: Box | None,
               discs: DiscIndex | None, raster: DiscRaster | None,
               open_box: Callable[[Box], bool]) -> tuple[float, float] | None:
    """The first of :func:`label_spots` ``gap`` pixels from a node at ``(x, y)`` of ``radius`` whose box stays
    in ``bounds``, is clear of the discs (on ``raster`` when the gap allows, else exactly on ``discs``) and
    ``open_box``; past :data:`NEAR_GAP`, its leader line must cross no disc either. ``None`` when none is."""
    spots = np.array(label_spots(width, height, radius, (gap,)))
    boxes = np.column_stack([x + spots[:, 0], y + spots[:, 1], x + spots[:, 0] + width, y + spots[:, 1] + height])
    usable = np.ones(len(boxes), dtype=bool)
    if bounds is not None:
        usable &= ((boxes[:, 0] >= bounds[0]) & (boxes[:, 2] <= bounds[2]) & (boxes[:, 1] >= bounds[1])
                   & (boxes[:, 3] <= bounds[3]))
    if raster is not None and gap >= RASTER_GAP and usable.any():
        usable[usable] = raster.clear(boxes[usable])
    elif discs is not None and usable.any():
        usable[usable] = discs.free(boxes[usable])
    if gap > NEAR_GAP and discs is not None and usable.any():  # a leader line joins it: it crosses no disc
        nearest = np.column_stack([np.clip(0.0, spots[usable, 0], spots[usable, 0] + width),
                                   np.clip(0.0, spots[usable, 1], spots[usable, 1] + height)])
        edge = nearest / np.linalg.norm(nearest, axis=1, keepdims=True) * (radius + 0.5)
        usable[usable] = discs.clear(np.array([x, y]) + edge, np.array([x, y]) + nearest)
    for k in np.flatnonzero(usable).tolist():
        if open_box((float(boxes[k, 0]), float(boxes[k, 1]), float(boxes[k, 2]), float(boxes[k, 3]))):
            return float(spots[k, 0]), float(spots[k, 1])
    return None


def place_labels(
    pixels: np.ndarray,
    widths: np.ndarray,
    priority: Sequence[int],
    *,
    height: float = 18.0,
    offset: float | np.ndarray = 6.0,
    obstacles: Sequence[Box] = (),
    first: int = 0,
    max_labels: int = 60,
    cell: float = 64.0,
    bounds: Box | None = None,
    keep_out: Sequence[Box] = (),
    discs: DiscIndex | None = None,
    raster: DiscRaster | None = None,
) -> list[tuple[int, tuple[float, float]]]:
    """Greedy level of detail: which labels can be drawn, and where, without two overlapping.

    ``pixels`` ``(K, 2)`` screen positions of the nodes, ``widths`` ``(K,)`` label widths in pixels,
    ``priority`` the candidate indices, most important first; ``offset`` is a node's radius (a number,
    or ``(K,)``). A label goes right next to its node (:func:`label_spots` at :data:`NEAR_GAP`); a spot that
    overlaps an accepted label, one of the ``obstacles`` (boxes), a disc of ``discs`` (:class:`DiscIndex`, every
    node at once, exact; a spot never overlaps its own node's disc) or a ``keep_out`` box, or that reaches out of
    ``bounds`` (the canvas), is skipped. With a ``raster`` (:class:`DiscRaster`, conservative and much quicker)
    the candidates past the ``first`` are tested on it instead, their spots :data:`RASTER_GAP` from their disc.
    The ``first`` candidates (the selection, the hits) also try spots further out (:data:`FAR_GAPS`, nearest
    first; the canvas joins those to their node with a leader line).
    Returns ``(index, (dx, dy))`` per accepted label, the offset of its box's top-left corner from its node, at
    most ``max_labels``.
    """
    labels, blocked, walls = _BoxGrid(cell), _BoxGrid(cell), _BoxGrid(cell)
    for box in obstacles:
        blocked.add(box)
    for box in keep_out:
        walls.add(box)
    offsets = np.broadcast_to(np.asarray(offset, dtype=np.float64), (len(pixels),))
    accepted: list[tuple[int, tuple[float, float]]] = []
    for rank, i in enumerate(priority):
        x, y, width = float(pixels[i, 0]), float(pixels[i, 1]), float(widths[i])
        gaps = (NEAR_GAP, *FAR_GAPS) if rank < first else (RASTER_GAP if raster is not None else NEAR_GAP,)
        for gap in gaps:  # nearest first: the first gap with a free spot wins
            spot = _free_spot(x, y, width, height, float(offsets[i]), gap, bounds, discs, raster,
                              lambda box: not (labels.overlaps(box) or walls.overlaps(box) or blocked.overlaps(box)))
            if spot is not None:
                labels.add((x + spot[0], y + spot[1], x + spot[0] + width, y + spot[1] + height))
                accepted.append((int(i), spot))
                break
        if len(accepted) >= max_labels:
            break
    return accepted
