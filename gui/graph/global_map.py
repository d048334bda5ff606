"""The global map's layout and communities: every entity placed once, new ones added next to their neighbours.

:class:`GlobalMap` keeps the map's positions (a :class:`~limbic.gui.graph.positions.PositionStore`) for
the graph view. A first layout — or *Re-layout* — is python-igraph's Fruchterman–Reingold over the
whole graph (:mod:`limbic.gui.graph.layout`), in a worker process for large graphs; when at least
:data:`EXTEND_SHARE` of the entities are placed already, the others are added next to their
neighbours without moving anyone (``extend_layout``). Every computation runs off the UI thread.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication

from limbic.core.service.graph_arrays import GraphArrays
from limbic.gui.controller import AppController
from limbic.gui.graph.colouring import communities
from limbic.gui.graph.layout import LayoutEngine, extend_layout
from limbic.gui.graph.positions import PositionStore
from limbic.gui.widgets import CornerLabel, plural

EXTEND_SHARE = 0.8  # of the entities already placed, to add the rest without a new layout


class GlobalMap(QObject):
    """See the module docstring. ``ready(arrays)`` is emitted when the positions of ``arrays`` are known."""

    ready = Signal(object)
    _layout_posted = Signal(object)  # (generation, arrays, Future) from the layout process's callback

    def __init__(self, controller: AppController, channel: str, info: CornerLabel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.channel = channel
        self.info = info
        self.engine = LayoutEngine()
        self.store = PositionStore()
        self._groups: tuple[GraphArrays, np.ndarray] | None = None  # communities of the whole graph
        self._generation = 0
        self._warmed = False
        self._closed = False
        self._layout_posted.connect(self._on_layout_future)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.engine.close)

    def known(self, arrays: GraphArrays) -> bool:
        """Whether every entity of ``arrays`` has a position (and no other)."""
        return len(self.store) == len(arrays.ids) and np.array_equal(self.store.ids, arrays.ids)

    def warm_up(self, arrays: GraphArrays) -> None:
        """Start the layout process early when ``arrays`` is large enough to need it."""
        if len(arrays) > self.engine.in_process_limit and not self._warmed:
            self._warmed = True
            self.engine.warm_up()

    def compute(self, arrays: GraphArrays, force: bool = False) -> None:
        """Place the entities of ``arrays`` (off the UI thread); ``force`` lays everything out again."""
        if not force and self.known(arrays):
            return
        self._generation += 1  # a layout still computing is outdated now
        if not force and len(self.store) and np.isin(arrays.ids, self.store.ids).mean() >= EXTEND_SHARE:
            self.controller.run(extend_layout, self.store.ids, self.store.pos, arrays.ids, arrays.edges,
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

    def groups(self, arrays: GraphArrays) -> np.ndarray | None:
        """``(N,) int64`` communities of the whole graph (:func:`~limbic.gui.graph.colouring.communities`),
        or ``None`` while they are computed (off the UI thread; ``ready(arrays)`` follows)."""
        if self._groups is not None and self._groups[0] is arrays:
            return self._groups[1]
        self.controller.run(communities, len(arrays), arrays.edges,
                            on_success=lambda found: self._grouped(arrays, found), channel=self.channel + "-groups")
        return None

    def _grouped(self, arrays: GraphArrays, found: np.ndarray) -> None:
        self._groups = (arrays, found)
        self.ready.emit(arrays)

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
        self.ready.emit(arrays)
