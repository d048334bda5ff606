"""How the graph view draws nodes: a colour per colour code (entity type or community, see
:mod:`limbic.gui.graph.colouring`), size by salience, opacity by temporal factor, and which labels fit
on screen and where (level of detail).

Pure helpers over numpy arrays plus a small brush cache; :mod:`limbic.gui.graph.view` uses them.
"""

from __future__ import annotations

from collections.abc import Sequence

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
MARKED_RINGS = 5  # rings of label spots tried round the selection and the hits
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


class DiscRaster:
    """Node discs as a boolean raster of ``cell``-pixel squares over a ``width`` × ``height`` canvas: the
    obstacle test of :func:`place_labels` for thousands of discs (numpy fill, one slice per test). A cell
    counts as covered when the disc's bounding box touches it (conservative: a label never covers a disc)."""

    def __init__(self, pixels: np.ndarray, radii: np.ndarray, width: float, height: float, cell: float = 3.0) -> None:
        self.cell = cell
        self.grid = np.zeros((int(height // cell) + 2, int(width // cell) + 2), dtype=bool)
        pixels = np.asarray(pixels, dtype=np.float64).reshape(-1, 2)
        radii = np.broadcast_to(np.asarray(radii, dtype=np.float64), (len(pixels),))
        rows, cols = self.grid.shape
        for radius in np.unique(radii).tolist():
            which = radii == radius
            low = np.floor((pixels[which] - radius) / cell).astype(np.int64)
            span = int(np.ceil(2 * radius / cell)) + 1
            for dy in range(span):
                for dx in range(span):
                    y, x = low[:, 1] + dy, low[:, 0] + dx
                    keep = (y >= 0) & (y < rows) & (x >= 0) & (x < cols)
                    self.grid[y[keep], x[keep]] = True

    def overlaps(self, box: Box) -> bool:
        c = self.cell
        y0, y1 = max(int(box[1] // c), 0), int(box[3] // c) + 1
        x0, x1 = max(int(box[0] // c), 0), int(box[2] // c) + 1
        return bool(self.grid[y0:y1, x0:x1].any())


def label_spots(width: float, height: float, radius: float, rings: int = 1) -> list[tuple[float, float]]:
    """Where a ``width`` × ``height`` label may go round a node of ``radius`` pixels: the offsets of its
    top-left corner from the node's centre — below, above, right, left; then (``rings`` > 1) the same
    further out and the four diagonals, ring by ring."""
    spots = []
    for ring in range(rings):
        gap, side = 1.0 + ring * height, radius + 2 + ring * width / 2
        spots += [(-width / 2, radius + gap), (-width / 2, -radius - gap - height),
                  (side, -height / 2), (-side - width, -height / 2)]
        if ring:
            spots += [(side, radius + gap), (side, -radius - gap - height),
                      (-side - width, radius + gap), (-side - width, -radius - gap - height)]
    return spots


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
    marked_cover: bool = True,
    raster: DiscRaster | None = None,
) -> list[tuple[int, tuple[float, float]]]:
    """Greedy level of detail: which labels can be drawn, and where, without two overlapping.

    ``pixels`` ``(K, 2)`` screen positions of the nodes, ``widths`` ``(K,)`` label widths in pixels,
    ``priority`` the candidate indices, most important first; ``offset`` is a node's radius (a number,
    or ``(K,)``). A label may go below, above, right or left of its node (:func:`label_spots`); a spot
    that overlaps an accepted label or one of the ``obstacles`` (boxes, e.g. the largest node discs) is
    skipped, and so is one reaching out of ``bounds`` (the canvas) or into a ``keep_out`` box (the legend)
    for every candidate. The ``first`` candidates (the selection, the hits) also try :data:`MARKED_RINGS`
    rings of spots further out and may cover discs (unless ``marked_cover`` is False), never another label.
    ``raster`` (:class:`DiscRaster`) adds every disc it holds to the obstacles, for many nodes at once. Returns ``(index, (dx, dy))`` per accepted label, the offset
    of its box's top-left corner from its node, at most ``max_labels``.
    """
    labels, blocked, walls = _BoxGrid(cell), _BoxGrid(cell), _BoxGrid(cell)
    for box in obstacles:
        blocked.add(box)
    for box in keep_out:
        walls.add(box)
    offsets = np.broadcast_to(np.asarray(offset, dtype=np.float64), (len(pixels),))
    accepted: list[tuple[int, tuple[float, float]]] = []
    for rank, i in enumerate(priority):
        x, y = float(pixels[i, 0]), float(pixels[i, 1])
        marked = rank < first
        for dx, dy in label_spots(float(widths[i]), height, float(offsets[i]), rings=MARKED_RINGS if marked else 1):
            box = (x + dx, y + dy, x + dx + float(widths[i]), y + dy + height)
            outside = bounds is not None and not (bounds[0] <= box[0] and box[2] <= bounds[2]
                                                  and bounds[1] <= box[1] and box[3] <= bounds[3])
            avoid_discs = not marked or not marked_cover
            on_disc = avoid_discs and (blocked.overlaps(box) or (raster is not None and raster.overlaps(box)))
            if outside or labels.overlaps(box) or walls.overlaps(box) or on_disc:
                continue
            labels.add(box)
            accepted.append((int(i), (dx, dy)))
            break
        if len(accepted) >= max_labels:
            break
    return accepted
