"""The global map's layout and communities: every entity placed once, new ones added next to their neighbours.

:class:`GlobalMap` keeps the map's positions (a :class:`~limbic.gui.graph.positions.PositionStore`) for
the graph view. A first layout — or *Re-layout* — is python-igraph's Fruchterman–Reingold over the
whole graph (:mod:`limbic.gui.graph.layout`), in a worker process for large graphs; when at least
:data:`EXTEND_SHARE` of the entities are placed already, the others are added next to their
neighbours without moving anyone (``extend_layout``). Every computation runs off the UI thread.

The layout is seeded (the same graph, the same map) and kept per database in the cache folder
(:func:`saved_layout`, :func:`save_layout`): the next launch draws the map it showed last, and only places
entities written since.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication

from limbic.core import paths
from limbic.core.service.graph_arrays import GraphArrays
from limbic.gui.controller import AppController
from limbic.gui.graph.colouring import Communities, find_communities
from limbic.gui.graph.layout import LayoutEngine
from limbic.gui.graph.positions import PositionStore, grow
from limbic.gui.widgets import CornerLabel, plural

EXTEND_SHARE = 0.8  # of the entities already placed, to add the rest without a new layout
log = logging.getLogger(__name__)


def layout_file(address: str) -> Path:
    """Where the global map of the database at ``address`` (a file path or a PostgreSQL URL) is kept: a
    ``.npz`` in the cache folder named by a hash of the address (no credentials in a file name)."""
    digest = hashlib.sha256(address.encode("utf-8")).hexdigest()[:24]
    return paths.cache_dir() / "layouts" / f"{digest}.npz"


def saved_layout(address: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``(ids (K,) int64 ascending, pos (K, 2))`` kept for ``address``, or ``None`` (none, or unreadable)."""
    path = layout_file(address)
    if not path.is_file():
        return None
    try:
        with np.load(path) as data:
            ids, pos = np.asarray(data["ids"], dtype=np.int64), np.asarray(data["pos"], dtype=np.float64)
    except (OSError, ValueError, KeyError) as exc:
        log.warning("ignoring the kept graph layout %s: %s", path.name, exc)
        return None
    if pos.shape != (len(ids), 2) or not np.isfinite(pos).all():
        return None
    return ids, pos


def save_layout(address: str, ids: np.ndarray, pos: np.ndarray) -> None:
    """Keep the global map of ``address`` for the next launch (written atomically; failures are logged)."""
    path = layout_file(address)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial.npz")
        np.savez(partial, ids=np.asarray(ids, dtype=np.int64), pos=np.asarray(pos, dtype=np.float64))
        partial.replace(path)
    except OSError as exc:
        log.warning("could not keep the graph layout: %s", exc)


def database_address(service: Any) -> str:
    """The identity of the service's database: its URL without the password (PostgreSQL) or its resolved file
    path."""
    return str(service.shareable_address)


class GlobalMap(QObject):
    """See the module docstring. ``ready(arrays)`` is emitted when the positions of ``arrays`` are known,
    ``grouped(arrays)`` when their communities are."""

    ready = Signal(object)
    grouped = Signal(object)
    _layout_posted = Signal(object)  # (generation, arrays, Future) from the layout process's callback

    def __init__(self, controller: AppController, channel: str, info: CornerLabel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.channel = channel
        self.info = info
        self.engine = LayoutEngine()
        self.store = PositionStore()
        self._groups: tuple[GraphArrays, Communities] | None = None  # communities of the whole graph
        self._grouping: GraphArrays | None = None  # the arrays whose communities are being found
        self._generation = 0
        self.gap: float | np.ndarray = 0.5  # the nodes' diameters in layout units (see positions.grow)
        self.anchor: np.ndarray | None = None  # where unconnected new nodes go (the view's centre)
        self._warmed = False
        self._closed = False
        self._address = database_address(controller.service)
        self._saved = saved_layout(self._address)  # read once, at start: the map the last launch showed
        self._layout_posted.connect(self._on_layout_future)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.engine.close)

    def known(self, arrays: GraphArrays) -> bool:
        """Whether every entity of ``arrays`` has a position (and no other)."""
        return len(self.store) == len(arrays.ids) and np.array_equal(self.store.ids, arrays.ids)

    def warm_up(self, arrays: GraphArrays) -> None:
        """Start the layout process early when ``arrays`` is large enough to need it, and import SciPy's Qhull
        off the UI thread (a large map's regions are drawn with it: 0.1 s and more of imports otherwise taken
        from its first draw)."""
        if len(arrays) > self.engine.in_process_limit and not self._warmed:
            self._warmed = True
            self.engine.warm_up()
            self.controller.run(importlib.import_module, "scipy.spatial", channel=self.channel + "-imports")

    def compute(self, arrays: GraphArrays, force: bool = False) -> None:
        """Place the entities of ``arrays`` (off the UI thread); ``force`` lays everything out again."""
        if not force and self.known(arrays):
            return
        self._generation += 1  # a layout still computing is outdated now
        if force:
            self._saved = None
        elif not len(self.store) and self._saved is not None:
            self.store.replace(*self._saved)  # the map of the last launch; entities written since are added
            self._saved = None
        if not force and len(self.store) and np.isin(arrays.ids, self.store.ids).mean() >= EXTEND_SHARE:
            store_ids, store_pos, gap, anchor = self.store.ids, self.store.pos, self.gap, self.anchor
            self.controller.run(lambda: grow(store_ids, store_pos, arrays.ids, arrays.edges, gap=gap, anchor=anchor),
                                on_success=lambda pos: self._done(arrays, pos), channel=self.channel)
            return
        self.info.set_full_text(f"Laying out {plural(len(arrays), 'entity')}…")
        if len(arrays) > self.engine.in_process_limit and self.engine.uses_process:
            # The worker process computes; no thread of the task runner waits for it.
            future = self.engine.submit_global(len(arrays), arrays.edges)
            payload = (self._generation, arrays)
            future.add_done_callback(lambda done: self._post_layout(payload, done))
            return
        self.controller.run(self.engine.global_layout, len(arrays), arrays.edges,
                            on_success=lambda pos: self._done(arrays, pos), channel=self.channel)

    def groups(self, arrays: GraphArrays) -> Communities | None:
        """The :class:`~limbic.gui.graph.colouring.Communities` of the whole graph of ``arrays`` (the first time the
        same seeded grouping the map's regions were laid out by, then each time starting from the groups found
        before, which keep their colours), or ``None`` while they are found (off the UI thread;
        ``grouped(arrays)`` follows). Every view colours by these, so a community has one colour everywhere."""
        if self._groups is not None and self._groups[0] is arrays:
            return self._groups[1]
        if self._grouping is not arrays:
            self._grouping = arrays
            before = self._groups[1] if self._groups is not None else None
            self.controller.run(find_communities, arrays.ids, arrays.edges, before, self.engine.communities,
                                on_success=lambda found: self._grouped(arrays, found), on_failure=self._group_failed,
                                channel=self.channel + "-groups")
        return None

    def _group_failed(self, error: BaseException) -> None:
        self._grouping = None
        self.controller.report_failure(error, "The communities could not be found")

    def _grouped(self, arrays: GraphArrays, found: Communities) -> None:
        self._groups = (arrays, found)
        self._grouping = None
        self.grouped.emit(arrays)

    def close(self) -> None:
        """Stop the layout process (also done when the application quits)."""
        self._closed = True
        self.engine.close()

    def _post_layout(self, payload: tuple[int, GraphArrays], future: Any) -> None:  # executor's thread
        if not self._closed:
            self._layout_posted.emit((*payload, future))

    def _on_layout_future(self, posted: tuple[int, GraphArrays, Any]) -> None:
        generation, arrays, future = posted
        if generation != self._generation or future.cancelled():
            return
        error = future.exception()
        if error is not None:
            self.info.set_full_text("Layout failed")
            self.controller.report_failure(error, "The graph layout failed")
            return
        self._done(arrays, future.result())

    def _done(self, arrays: GraphArrays, pos: np.ndarray) -> None:
        self.store.replace(arrays.ids, pos)
        self.controller.run(save_layout, self._address, self.store.ids, self.store.pos,
                            channel=self.channel + "-keep")
        self.ready.emit(arrays)
