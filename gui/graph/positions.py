"""Stable positions for the graph view: every entity keeps its place while the picture changes around it.

A :class:`PositionStore` remembers a position per entity id. When the drawn set changes (the sliders
re-rank the hits, a selection or an expansion adds neighbours, an agent writes), :func:`arrange` keeps
every known entity exactly where it was and places only the new ones (:func:`place_new`): each on the
nearest free spot next to its already placed neighbours, one without any in free space near the view's
centre, never closer than a node's diameter to another node; then a short relaxation in which only the
new nodes move (:func:`relax_new`), kept only where it leaves them free and near their neighbours. A whole new layout is made only when asked
(*Re-layout*), when nothing drawn stays, or when a new focus (a new search, *Clear focus*) keeps less
than :data:`NEAR_SHARE` of the drawing or brings mostly unseen nodes; the view then animates the change. All functions are pure numpy and igraph, run off the UI thread.
Positions are ``(N, 2) float64`` in layout units (the median edge about one unit, see ``layout.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from limbic.gui.graph.layout import ego_layout, extend_layout

NEAR_SHARE = 0.3   # a new focus sharing less than this with the drawing (either way) is laid out afresh
HOWS = ("keep", "focus", "relayout")
RELAX_STEPS = 60   # force steps that place the new nodes among the fixed ones
PLACE_RELAX_STEPS = 12  # the short relaxation after :func:`place_new`
MAX_GAP = 0.8      # layout units: a new node is placed at most this far beyond its neighbours' spacing
SPOT_RINGS = 40    # rings of candidate spots searched round a target
GOLDEN_ANGLE = np.pi * (3.0 - np.sqrt(5.0))  # each entity starts its search at its own angle
FEW_NEW = 300      # more new nodes than this are placed by the faster ``extend_layout``


class PositionStore:
    """Positions per entity id: ``ids`` ``(K,) int64`` ascending and ``pos`` ``(K, 2) float64``."""

    def __init__(self) -> None:
        self.ids = np.zeros(0, dtype=np.int64)
        self.pos = np.zeros((0, 2))

    def __len__(self) -> int:
        return len(self.ids)

    def lookup(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(pos (N, 2), known (N,) bool)`` for ``ids``; unknown rows are 0."""
        ids = np.asarray(ids, dtype=np.int64)
        pos = np.zeros((len(ids), 2))
        if not len(self.ids):
            return pos, np.zeros(len(ids), dtype=bool)
        where = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        known = self.ids[where] == ids
        pos[known] = self.pos[where[known]]
        return pos, known

    def update(self, ids: np.ndarray, pos: np.ndarray) -> None:
        """Set the positions of ``ids`` (others kept)."""
        ids = np.asarray(ids, dtype=np.int64)
        keep = ~np.isin(self.ids, ids)
        merged_ids = np.concatenate([self.ids[keep], ids])
        merged_pos = np.concatenate([self.pos[keep], np.asarray(pos, dtype=np.float64).reshape(-1, 2)])
        order = np.argsort(merged_ids, kind="stable")
        self.ids, self.pos = merged_ids[order], merged_pos[order]

    def replace(self, ids: np.ndarray, pos: np.ndarray) -> None:
        """Forget every position and keep only these."""
        self.ids, self.pos = np.zeros(0, dtype=np.int64), np.zeros((0, 2))
        self.update(ids, pos)


@dataclass(frozen=True, slots=True)
class Arrangement:
    """What :func:`arrange` decided: ``pos`` ``(N, 2)`` for the requested ids and whether it is a new
    layout (``fresh``: known nodes may have moved, the store is replaced and the view animates)."""

    pos: np.ndarray
    fresh: bool


def relax_new(pos: np.ndarray, movable: np.ndarray, edges: np.ndarray, steps: int = RELAX_STEPS,
              random_state: int = 7) -> np.ndarray:
    """Fruchterman–Reingold steps in which only the ``movable`` ``(N,) bool`` nodes move: repelled by every
    node, pulled along their ``(M, 2)`` edges, and weakly towards the drawing's centre. Returns a copy."""
    pos = np.array(pos, dtype=np.float64)
    moving = np.flatnonzero(movable)
    if not len(moving) or len(pos) < 2:
        return pos
    rng = np.random.default_rng(random_state)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    both = np.concatenate([edges, edges[:, ::-1]])
    pulled = both[np.isin(both[:, 0], moving)]
    centre = pos[~movable].mean(axis=0) if (~movable).any() else pos.mean(axis=0)
    step = 0.5
    for _ in range(steps):
        delta = pos[moving, None, :] - pos[None, :, :]  # (m, N, 2)
        distance = np.maximum(np.linalg.norm(delta, axis=2), 0.05)
        distance[np.arange(len(moving)), moving] = np.inf  # no force from itself
        force = (delta / distance[..., None] ** 2).sum(axis=1)  # repulsion k²/d along the unit vector, k = 1
        if len(pulled):
            spring = pos[pulled[:, 1]] - pos[pulled[:, 0]]
            length = np.linalg.norm(spring, axis=1, keepdims=True)
            index = np.searchsorted(moving, pulled[:, 0])
            np.add.at(force, index, spring * length)  # attraction d²/k
        force += 0.05 * (centre - pos[moving])
        size = np.maximum(np.linalg.norm(force, axis=1, keepdims=True), 1e-9)
        pos[moving] += force / size * np.minimum(size, step) + rng.normal(0.0, 1e-3, (len(moving), 2))
        step *= 0.95
    return pos


def free_spot(pos: np.ndarray, occupied: np.ndarray, target: np.ndarray, need: np.ndarray | float, angle: float,
              start: float | None = None) -> np.ndarray:
    """The spot nearest ``target`` ``(2,)`` at least ``need`` (a number, or ``(N,)`` per node) from every row of
    ``pos`` where ``occupied`` ``(N,) bool``: ``target`` itself when free, else rings of candidates (radius
    ``start``, default the least ``need``, then growing by half of it, spaced half of it along each ring,
    starting at ``angle`` radians). Returns ``(2,) float64`` (the last ring's first spot when none is free
    within :data:`SPOT_RINGS`)."""
    clear = np.broadcast_to(np.asarray(need, dtype=np.float64), (len(pos),))[occupied]
    others = pos[occupied]
    target = np.asarray(target, dtype=np.float64)
    if not len(others) or (np.linalg.norm(others - target, axis=1) >= clear).all():
        return target.copy()
    step = max(float(clear.min()) / 2, 1e-3)
    radius = 2 * step if start is None else max(start, step)
    candidate = target
    for _ in range(SPOT_RINGS):
        count = max(6, int(np.ceil(2 * np.pi * radius / step)))
        turns = angle + np.arange(count) * (2 * np.pi / count)
        spots = target + radius * np.stack([np.cos(turns), np.sin(turns)], axis=1)
        apart = np.sqrt(((spots[:, None, :] - others[None, :, :]) ** 2).sum(axis=2))
        free = np.flatnonzero((apart >= clear[None, :]).all(axis=1))
        if len(free):
            return spots[free[0]]
        candidate = spots[0]
        radius += step
    return candidate


def place_new(pos: np.ndarray, known: np.ndarray, edges: np.ndarray, ids: np.ndarray, *, gap: float | np.ndarray,
              anchor: np.ndarray | None = None, steps: int = PLACE_RELAX_STEPS) -> np.ndarray:
    """Positions for the nodes not ``known`` ``(N,) bool`` among fixed ``known`` ones: ``pos`` ``(N, 2)`` (rows of
    unknown nodes ignored), ``edges`` ``(M, 2)`` indices, ``ids`` ``(N,) int64`` (each entity searches from its
    own angle, so simultaneous writes never pile up), ``gap`` each node's diameter in layout units at the view's
    scale (a number, or ``(N,)``: a new node keeps the larger of its own and the other's diameter from every
    other node, at most :data:`MAX_GAP` median edges), ``anchor`` ``(2,)`` where unconnected nodes go (the view's
    centre; default the drawing's centre).

    A node with placed neighbours goes to the free spot (:func:`free_spot`) nearest their mean (chains of new
    nodes follow, in rounds); one without any to a free spot near ``anchor``, twice as clear. Then
    :data:`PLACE_RELAX_STEPS` force steps move only the new nodes (:func:`relax_new`); a node keeps its
    relaxed spot only if it is linked, still clear of every node and within the median edge of its nearest
    neighbour (the repulsion of the whole drawing would push an unconnected one away from the view). Returns a
    copy; known rows unchanged."""
    pos = np.array(pos, dtype=np.float64).reshape(-1, 2)
    known = np.asarray(known, dtype=bool)
    if known.all():
        return pos
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    both = np.concatenate([edges, edges[:, ::-1]]) if len(edges) else edges
    placed = known.copy()
    if anchor is None:
        anchor = pos[known].mean(axis=0) if known.any() else np.zeros(2)
    lengths = np.linalg.norm(pos[edges[:, 0]] - pos[edges[:, 1]], axis=1)[known[edges].all(axis=1)] \
        if len(edges) else np.zeros(0)
    median_edge = float(np.median(lengths)) if len(lengths) else 1.0
    sizes = np.broadcast_to(np.asarray(gap, dtype=np.float64), (len(pos),))
    if len(lengths):
        sizes = np.minimum(sizes, MAX_GAP * median_edge)

    def need(i: int) -> np.ndarray:
        return np.maximum(sizes, sizes[i])

    def place(i: int, target: np.ndarray, factor: float = 1.0) -> None:
        pos[i] = free_spot(pos, placed, target, factor * need(i), float(ids[i]) * GOLDEN_ANGLE)
        placed[i] = True

    while not placed.all():
        linked = both[placed[both[:, 1]] & ~placed[both[:, 0]]] if len(both) else both
        if len(linked):
            for i in np.unique(linked[:, 0]).tolist():
                place(i, pos[linked[linked[:, 0] == i, 1]].mean(axis=0))
            continue
        first = int(np.flatnonzero(~placed)[0])  # no placed neighbour: free space near the view
        place(first, np.asarray(anchor, dtype=np.float64), factor=2.0)
    new = np.flatnonzero(~known).tolist()
    first_pass = pos.copy()
    relaxed = relax_new(pos, ~known, edges, steps=steps)

    def fits(at: np.ndarray, i: int) -> bool:
        apart = np.linalg.norm(at - at[i], axis=1) >= need(i)
        apart[i] = True
        mates = both[both[:, 0] == i, 1] if len(both) else both
        near = len(mates) and np.linalg.norm(at[mates] - at[i], axis=1).min() <= median_edge
        return bool(apart.all() and near)  # an unconnected node keeps its free spot near the view

    for i in new:
        if not fits(relaxed, i):
            relaxed[i] = first_pass[i]
    for i in new:  # a reverted node may now sit on a relaxed one: all go back to their free spots
        if not fits(relaxed, i):
            return first_pass
    return relaxed


def grow(store_ids: np.ndarray, store_pos: np.ndarray, ids: np.ndarray, edges: np.ndarray, *,
         gap: float | np.ndarray, anchor: np.ndarray | None = None) -> np.ndarray:
    """``(N, 2)`` positions of ``ids`` with every entity of the store where it was and the others placed by
    :func:`place_new` (by :func:`~limbic.gui.graph.layout.extend_layout` when more than :data:`FEW_NEW`)."""
    store = PositionStore()
    store.ids, store.pos = np.asarray(store_ids, dtype=np.int64), np.asarray(store_pos, dtype=np.float64)
    pos, known = store.lookup(ids)
    if known.all():
        return pos
    if (~known).sum() > FEW_NEW:
        return extend_layout(store.ids, store.pos, ids, edges)
    return place_new(pos, known, edges, np.asarray(ids, dtype=np.int64), gap=gap, anchor=anchor)


def arrange(store_ids: np.ndarray, store_pos: np.ndarray, drawn_ids: np.ndarray, ids: np.ndarray,
            edges: np.ndarray, *, how: str = "keep", current: np.ndarray | None = None,
            gap: float | np.ndarray = 0.5, anchor: np.ndarray | None = None) -> Arrangement:
    """Positions for drawing ``ids`` ``(N,) int64`` with ``edges`` ``(M, 2)`` (indices into ``ids``).

    ``store_ids``/``store_pos`` are the remembered positions, ``drawn_ids`` what is drawn now. Known
    entities keep their positions and new ones are placed next to their neighbours (``how`` "keep": a
    re-rank, a selection, an expansion, a write), unless nothing drawn stays, or ``how`` is "relayout",
    or it is "focus" (a new search) and the shared nodes are less than :data:`NEAR_SHARE` of the drawing
    or of ``ids``: then the whole set is laid out again (:func:`~limbic.gui.graph.layout.ego_layout`,
    starting from ``current`` positions when given). ``gap`` and ``anchor``: see :func:`place_new`.
    """
    if how not in HOWS:
        raise ValueError(f"unknown arrangement {how!r}")
    ids = np.asarray(ids, dtype=np.int64)
    n = len(ids)
    shared = int(np.isin(ids, drawn_ids).sum())
    far = how == "focus" and min(shared / max(n, 1), shared / max(len(drawn_ids), 1)) < NEAR_SHARE
    if how == "relayout" or shared == 0 or far:
        seed = current if how == "relayout" and current is not None and len(current) == n else None
        return Arrangement(ego_layout(n, edges, seed), True)
    return Arrangement(grow(store_ids, store_pos, ids, edges, gap=gap, anchor=anchor), False)
