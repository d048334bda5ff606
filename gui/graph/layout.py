"""Graph layouts as plain numpy functions, and an engine that runs the large ones in a worker process.

- :func:`global_layout`: python-igraph Fruchterman–Reingold with its grid approximation (docs/performance.md;
  timed by ``tests/bench/bench_layout.py``). igraph holds the GIL while it lays out, so
  :class:`LayoutEngine` runs large layouts in a separate process — the UI thread keeps painting.
- :func:`ego_layout`: the same algorithm per connected component of a small focus graph, the components
  then packed in rows (largest first, lone nodes in a grid) into a rectangle shaped like the canvas, so
  that scattered hits neither drift to the edges nor leave the canvas half empty.

Positions are ``(N, 2) float64`` in layout units, centred on the origin and scaled so that the median
edge is about one unit long whatever the graph size (node sizes are drawn in pixels).
"""

from __future__ import annotations

import multiprocessing
import os
import random
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

import numpy as np

from limbic.core.processes import exit_with_parent

IN_PROCESS_LIMIT = 1500  # nodes; larger global layouts go to the worker process
PACK_ASPECT = 1.3  # width / height of the rectangle the focus graph's components are packed into
PACK_GAP = 1.5     # layout units (median edges) between packed components
TAIL_COMPONENT = 5  # nodes: smaller components of the global map are packed beside it (the long tail)
TAIL_GAP = 0.6      # layout units between packed tail components
TAIL_SPREAD = 1.5   # layout units: the widest a packed tail component may be
REGION_LAYOUT = 2000  # nodes: larger global maps are laid out as regions, one per community
REGION_GAP = 6.0      # layout units between regions
_RNG = random.Random()  # igraph's random numbers, seeded before each run


def _normalise(pos: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Centre on the median, pull far outliers (drifting isolated nodes) onto a rim just outside the
    99th-percentile radius, and scale so that the median edge is one unit long."""
    pos = np.asarray(pos, dtype=np.float64).reshape(-1, 2)
    if not len(pos):
        return pos
    pos = pos - np.median(pos, axis=0)
    radius = np.linalg.norm(pos, axis=1)
    if len(pos) >= 20:
        limit = 1.1 * float(np.percentile(radius, 99))
        far = np.flatnonzero(radius > limit)
        if len(far) and limit > 0:
            order = np.argsort(np.argsort(radius[far]))
            new_radius = limit * (1.0 + 0.1 * order / max(len(far), 1))
            pos[far] *= (new_radius / radius[far])[:, None]
    if len(edges):
        lengths = np.linalg.norm(pos[edges[:, 0]] - pos[edges[:, 1]], axis=1)
        scale = float(np.median(lengths[lengths > 0])) if (lengths > 0).any() else 0.0
    else:
        scale = float(np.abs(pos).max()) / max(np.sqrt(len(pos)), 1.0)
    return pos / scale if scale > 0 else pos


def _seeded_igraph(random_state: int) -> None:
    """Seed igraph's random numbers (the grid layout and Leiden draw from them): the same graph, the same picture."""
    import igraph

    _RNG.seed(random_state)
    igraph.set_random_number_generator(_RNG)


def communities(n: int, edges: np.ndarray, initial: np.ndarray | None = None) -> np.ndarray:
    """``(n,) int64`` community of each node of the graph with ``(M, 2)`` ``edges`` (Leiden, modularity, seeded).

    ``initial`` ``(n,) int64`` (the groups drawn before; new nodes each alone) starts the search there, so a
    small change of the graph moves only the nodes it concerns."""
    import igraph

    if n == 0:
        return np.zeros(0, dtype=np.int64)
    graph = igraph.Graph(n=n, edges=np.asarray(edges, dtype=np.int64).reshape(-1, 2).tolist(), directed=False)
    graph.simplify()
    _seeded_igraph(7)
    start = None if initial is None else np.unique(np.asarray(initial), return_inverse=True)[1].ravel().tolist()
    found = graph.community_leiden(objective_function="modularity", n_iterations=-1, initial_membership=start)
    return np.asarray(found.membership, dtype=np.int64)


def global_layout(n: int, edges: np.ndarray, iterations: int = 300, random_state: int = 7) -> np.ndarray:
    """Fruchterman–Reingold layout of ``n`` nodes and ``(M, 2)`` integer ``edges`` with python-igraph.

    The grid approximation is used above 1,000 nodes. 300 iterations: on the 10k-node Debian graph
    the picture is the same as with igraph's default 500 (compared side by side) at 60 % of the time.
    Seeded (start positions and igraph's random numbers from ``random_state``): the same graph gives the
    same map on every launch. Up to :data:`REGION_LAYOUT` nodes, components are laid out together, then the
    small ones (fewer than :data:`TAIL_COMPONENT` nodes: the long tail) are packed in a band beside the main
    map (:func:`pack_tail`); larger graphs are drawn as regions (:func:`region_layout`). Returns
    ``(n, 2) float64``.
    """
    import igraph

    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if n == 0:
        return np.zeros((0, 2))
    if n == 1:
        return np.zeros((1, 2))
    graph = igraph.Graph(n=n, edges=edges.tolist(), directed=False)
    if n > REGION_LAYOUT:
        return region_layout(graph, iterations, random_state)
    start = np.random.default_rng(random_state).uniform(-1.0, 1.0, (n, 2)) * np.sqrt(n)
    _seeded_igraph(random_state)
    layout = graph.layout_fruchterman_reingold(niter=iterations, grid=n > 1000, seed=start.tolist())
    pos = _normalise(np.asarray(layout.coords, dtype=np.float64), edges)
    return pack_tail(pos, graph.connected_components().membership)


def region_layout(graph: object, iterations: int = 300, random_state: int = 7) -> np.ndarray:
    """A large graph as a map of regions: its communities (Leiden, modularity, seeded: the grouping the view
    colours by) each laid out by Fruchterman–Reingold on its own, the regions packed in rows, largest first,
    :data:`REGION_GAP` apart (:func:`_pack`), and the groups under :data:`TAIL_COMPONENT` nodes (lone nodes,
    pairs) packed in a band below (:func:`pack_tail`). Each region keeps the median edge one unit long, so the
    regions read as separate places instead of one hairball. Returns ``(n, 2) float64``."""
    import igraph

    assert isinstance(graph, igraph.Graph)
    n = graph.vcount()
    simple = graph.copy()
    simple.simplify()
    _seeded_igraph(random_state)
    membership = np.asarray(simple.community_leiden(objective_function="modularity", n_iterations=-1).membership,
                            dtype=np.int64)
    sizes = np.bincount(membership)
    rng = np.random.default_rng(random_state)
    parts = []
    for group in sorted(np.flatnonzero(sizes >= TAIL_COMPONENT).tolist(), key=lambda g: (-int(sizes[g]), g)):
        members = np.flatnonzero(membership == group)
        part = simple.subgraph(members.tolist())
        local = np.asarray(part.get_edgelist(), dtype=np.int64).reshape(-1, 2)
        start = rng.uniform(-1.0, 1.0, (len(members), 2)) * np.sqrt(len(members))
        _seeded_igraph(random_state)
        layout = part.layout_fruchterman_reingold(niter=iterations, grid=len(members) > 1000, seed=start.tolist())
        parts.append((members, _normalise(np.asarray(layout.coords, dtype=np.float64), local)))
    pos = np.zeros((n, 2))
    if parts:
        packed = _pack(parts, n, gap=REGION_GAP)
        inside = np.concatenate([members for members, _ in parts])
        pos[inside] = packed[inside]
    labels = membership.copy()
    return pack_tail(pos, labels.tolist())


def pack_tail(pos: np.ndarray, membership: list[int]) -> np.ndarray:
    """Move the small components (under :data:`TAIL_COMPONENT` nodes) of a laid-out graph into a band below the
    main map, packed in rows (largest first, each keeping its own shape) as wide as the map: the long tail
    of lone nodes and pairs no longer rings the map. ``pos`` ``(n, 2)`` in layout units; returns a copy."""
    pos = np.array(pos, dtype=np.float64)
    labels = np.asarray(membership, dtype=np.int64)
    if not len(labels):
        return pos
    sizes = np.bincount(labels)
    small = sizes[labels] < TAIL_COMPONENT
    if small.all() or not small.any():
        return pos
    main = ~small
    low, high = pos[main].min(axis=0), pos[main].max(axis=0)
    parts = []
    for label in sorted(np.unique(labels[small]).tolist(), key=lambda c: (-int(sizes[c]), c)):
        rows = np.flatnonzero(labels == label)
        local = pos[rows] - pos[rows].mean(axis=0)
        extent = float(np.abs(local).max()) if len(rows) > 1 else 0.0
        if extent > TAIL_SPREAD:  # a pair or a chain drifted apart: keep its shape, not its span
            local *= TAIL_SPREAD / extent
        elif len(rows) > 1 and extent < 1e-9:  # not laid out (a small group of a region map): side by side
            local = np.stack([np.arange(len(rows)) * TAIL_GAP, np.zeros(len(rows))], axis=1)
        parts.append((rows, local))
    width = max(float(high[0] - low[0]), 10.0)
    x, y, row_height = low[0], low[1] - 2 * PACK_GAP, 0.0
    for rows, local in parts:
        size = np.ptp(local, axis=0) if len(rows) > 1 else np.zeros(2)
        if x > low[0] and x + size[0] > low[0] + width:
            x, y, row_height = low[0], y - row_height - TAIL_GAP, 0.0
        pos[rows] = local - local.min(axis=0) + [x, y - size[1]]
        x += float(size[0]) + TAIL_GAP
        row_height = max(row_height, float(size[1]))
    return pos


def _pack(parts: list[tuple[np.ndarray, np.ndarray]], n: int, gap: float = PACK_GAP) -> np.ndarray:
    """Place each ``(members, positions)`` part in rows, in the given order, ``gap`` apart, inside a rectangle of
    aspect :data:`PACK_ASPECT`; returns ``(n, 2)`` positions centred on the origin."""
    boxes = [(pos - pos.min(axis=0), np.ptp(pos, axis=0) + gap) for _, pos in parts]
    area = sum(float(size[0] * size[1]) for _, size in boxes)
    row_width = max(max(float(size[0]) for _, size in boxes), float(np.sqrt(area * PACK_ASPECT)))
    out = np.zeros((n, 2))
    x = y = row_height = 0.0
    for (members, _), (local, size) in zip(parts, boxes, strict=True):
        if x > 0 and x + size[0] > row_width + 1e-9:
            x, y, row_height = 0.0, y - row_height, 0.0
        out[members] = local + [x, y - size[1]]
        x += float(size[0])
        row_height = max(row_height, float(size[1]))
    return out - (out.min(axis=0) + out.max(axis=0)) / 2


def ego_layout(
    n: int, edges: np.ndarray, seed: np.ndarray | None = None, iterations: int = 200, random_state: int = 7
) -> np.ndarray:
    """Layout of a small graph (a focus graph: a few hundred nodes): python-igraph Fruchterman–Reingold per
    connected component, the components packed by :func:`_pack`, largest first.

    ``seed`` (``(n, 2)``) gives starting positions; without it they are drawn from ``random_state``, so
    the result is deterministic either way. Returns ``(n, 2) float64``.
    """
    import igraph

    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if n <= 1:
        return np.zeros((n, 2))
    graph = igraph.Graph(n=n, edges=edges.tolist(), directed=False)
    rng = np.random.default_rng(random_state)
    start = rng.uniform(-1.0, 1.0, (n, 2)) * np.sqrt(n) if seed is None else np.asarray(seed, dtype=np.float64)
    _seeded_igraph(random_state)
    parts = []
    for members in sorted(graph.connected_components(), key=lambda m: (-len(m), m[0])):
        rows = np.asarray(members, dtype=np.int64)
        if len(rows) == 1:
            parts.append((rows, np.zeros((1, 2))))
            continue
        part = graph.subgraph(members)  # vertices keep the order of ``members``
        local = np.asarray(part.get_edgelist(), dtype=np.int64).reshape(-1, 2)
        layout = part.layout_fruchterman_reingold(niter=iterations, grid=False, seed=start[rows].tolist())
        parts.append((rows, _normalise(np.asarray(layout.coords, dtype=np.float64), local)))
    return _pack(parts, n)


def extend_layout(
    old_ids: np.ndarray, old_pos: np.ndarray, ids: np.ndarray, edges: np.ndarray, random_state: int = 7
) -> np.ndarray:
    """Positions for an updated graph that keep every known node where it was.

    ``old_ids`` ``(K,) int64`` and ``old_pos`` ``(K, 2)`` are the previous layout; ``ids`` ``(N,) int64``
    and ``edges`` ``(M, 2)`` row indices describe the new graph. A new node goes to the mean position of
    its already placed neighbours (repeated so chains of new nodes follow), with a small random offset,
    or onto the rim of the drawing when it has none. Returns ``(N, 2) float64``.
    """
    rng = np.random.default_rng(random_state)
    n = len(ids)
    pos = np.zeros((n, 2))
    placed = np.zeros(n, dtype=bool)
    if len(old_ids):
        order = np.argsort(old_ids)
        where = np.searchsorted(old_ids, ids, sorter=order)
        where = np.minimum(where, len(old_ids) - 1)
        found = old_ids[order[where]] == ids
        pos[found] = old_pos[order[where[found]]]
        placed[found] = True
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    both = np.concatenate([edges, edges[:, ::-1]]) if len(edges) else edges
    for _ in range(8):
        if placed.all() or not len(both):
            break
        usable = placed[both[:, 1]] & ~placed[both[:, 0]]
        if not usable.any():
            break
        src, dst = both[usable, 0], both[usable, 1]
        counts = np.bincount(src, minlength=n)
        sums = np.stack([np.bincount(src, pos[dst, k], minlength=n) for k in (0, 1)], axis=1)
        fresh = counts > 0
        pos[fresh] = sums[fresh] / counts[fresh, None] + rng.normal(0.0, 0.5, (int(fresh.sum()), 2))
        placed |= fresh
    rest = ~placed
    if rest.any():
        radius = float(np.abs(pos[placed]).max()) * 1.1 + 1.0 if placed.any() else np.sqrt(n)
        angle = rng.uniform(0, 2 * np.pi, int(rest.sum()))
        pos[rest] = np.stack([np.cos(angle), np.sin(angle)], axis=1) * radius
    return pos


class LayoutEngine:
    """Runs :func:`global_layout` in a single worker process for large graphs (spawned on first use; it ends with
    the app, also when the app is killed), and (:meth:`run`) the service's other CPU-heavy pure steps.

    :meth:`submit_global` returns a ``Future``; :meth:`global_layout` blocks (call it from a worker
    thread). Call :meth:`close` when the application quits.
    """

    def __init__(self, in_process_limit: int = IN_PROCESS_LIMIT) -> None:
        self.in_process_limit = in_process_limit
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker process has been stopped (the app is quitting)")
            if self._executor is None:
                # The worker ends with this process, also when it is killed (limbic.core.processes). It is started
                # by this thread's submit, right after: Linux's PR_SET_PDEATHSIG would also end it with this
                # thread, so only a worker started by the main thread (the app's UI thread) asks for it.
                started_by_main = threading.current_thread() is threading.main_thread()
                self._executor = ProcessPoolExecutor(
                    max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                    initializer=exit_with_parent, initargs=(os.getpid(), started_by_main))
            return self._executor

    @property
    def uses_process(self) -> bool:
        """False inside a frozen bundle (PyInstaller): a spawned child would start the bundle's entry
        point unless it called ``multiprocessing.freeze_support()`` first, so layouts stay in-process."""
        return not getattr(sys, "frozen", False)

    def warm_up(self) -> None:
        """Start the worker process now (it imports igraph in the background); returns at once."""
        if self.uses_process:
            self._pool().submit(global_layout, 2, np.zeros((1, 2), dtype=np.int64))

    def submit_global(self, n: int, edges: np.ndarray) -> Future:
        """:func:`global_layout` in the worker process; returns its ``Future`` at once (no thread waits)."""
        return self._pool().submit(global_layout, n, edges)

    def global_layout(self, n: int, edges: np.ndarray) -> np.ndarray:
        """Same contract as the module function :func:`global_layout`; blocks until done (worker thread)."""
        if n <= self.in_process_limit or not self.uses_process:
            return global_layout(n, edges)
        return self.submit_global(n, edges).result()

    def communities(self, n: int, edges: np.ndarray, initial: np.ndarray | None = None) -> np.ndarray:
        """Same contract as the module function :func:`communities`, in the worker process for a graph over
        :attr:`in_process_limit` nodes (igraph's Leiden holds the interpreter lock for its whole run: 0.1–0.2 s of
        CPU at 10,000 entities, which a thread of the app would take from the UI thread); blocks (worker thread)."""
        if n <= self.in_process_limit or not self.uses_process:
            return communities(n, edges, initial)
        return self._pool().submit(communities, n, edges, initial).result()

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in the worker process, blocking (a worker thread; ``fn`` a module-level function, its
        arguments and result picklable): the service's :attr:`~limbic.core.service.memory.MemoryService.offload`
        in the app, which keeps scikit-learn and a split's clustering out of the app's process. In-process inside a
        frozen bundle (:attr:`uses_process`). Raises what ``fn`` raises, or ``BrokenProcessPool`` when the worker
        died."""
        if not self.uses_process:
            return fn(*args)
        return self._pool().submit(fn, *args).result()

    def close(self) -> None:
        """Stop the worker process, if one was started."""
        with self._lock:
            executor, self._executor, self._closed = self._executor, None, True
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
