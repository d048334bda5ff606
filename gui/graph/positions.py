"""Stable positions for the graph view: every entity keeps its place while the picture changes around it.

A :class:`PositionStore` remembers a position per entity id. When the drawn set changes (the sliders
re-rank the hits, a selection or an expansion adds neighbours, an agent writes), :func:`arrange` keeps
every known entity exactly where it was and places only the new ones: next to their already placed
neighbours (:func:`limbic.gui.graph.layout.extend_layout`), then nudged apart by a few force steps in
which only the new nodes move (:func:`relax_new`). A whole new layout is made only when asked
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


def arrange(store_ids: np.ndarray, store_pos: np.ndarray, drawn_ids: np.ndarray, ids: np.ndarray,
            edges: np.ndarray, *, how: str = "keep", current: np.ndarray | None = None) -> Arrangement:
    """Positions for drawing ``ids`` ``(N,) int64`` with ``edges`` ``(M, 2)`` (indices into ``ids``).

    ``store_ids``/``store_pos`` are the remembered positions, ``drawn_ids`` what is drawn now. Known
    entities keep their positions and new ones are placed next to their neighbours (``how`` "keep": a
    re-rank, a selection, an expansion, a write), unless nothing drawn stays, or ``how`` is "relayout",
    or it is "focus" (a new search) and the shared nodes are less than :data:`NEAR_SHARE` of the drawing
    or of ``ids``: then the whole set is laid out again (:func:`~limbic.gui.graph.layout.ego_layout`,
    starting from ``current`` positions when given).
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
    store = PositionStore()
    store.ids, store.pos = np.asarray(store_ids, dtype=np.int64), np.asarray(store_pos, dtype=np.float64)
    _, known = store.lookup(ids)
    if known.all():
        return Arrangement(store.lookup(ids)[0], False)
    pos = extend_layout(store.ids, store.pos, ids, edges)
    return Arrangement(relax_new(pos, ~known, edges), False)
