"""The graph view: the ego graph of the selection and the search results, or a global map of the graph.

Nodes are coloured by entity type (legend top-left, collapsible with L), sized by salience (access counts), faded by the
temporal factor (seed 000 "Sub-formula: temporal_factor(e)"); the selection has a gold ring, search
hits a red one. Click selects, Ctrl+click adds to the selection, double-click expands the neighbours.
Labels are drawn where they fit (:mod:`limbic.gui.graph.canvas` draws; the buttons above are
:mod:`limbic.gui.graph.toolbar`). The arrays come from ``MemoryService.graph_arrays`` and every
layout from :mod:`limbic.gui.graph.layout`, all through ``controller.run`` (off the UI thread). After a change only the entities its change record names
are read again and patched into the arrays (the whole graph past a share of them, see
:mod:`limbic.core.store.graph`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QTimer, Signal
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from limbic.core.service.graph_arrays import (
    GraphArrays,
    neighbours,
    salience,
    subgraph_edges,
    temporal_factor,
)
from limbic.gui.controller import AppController
from limbic.gui.graph import style
from limbic.gui.graph.canvas import GraphCanvas
from limbic.gui.graph.layout import LayoutEngine, ego_layout, extend_layout
from limbic.gui.graph.toolbar import GraphToolbar
from limbic.gui.widgets import CornerLabel, single_shot_timer

FOCUS_LIMIT = 300      # most nodes drawn in the focus (ego) view
OVERVIEW_SIZE = 150    # nodes shown in the focus view when nothing is selected or found
MAX_TYPE_FILTERS = 40  # type menu entries; rarer types share one "other types" entry
RELOAD_DELAY_MS = 150


class GraphView(QWidget):
    """Draws the memory graph with pyqtgraph (whole arrays per frame); see the module docstring.

    ``drawn`` is emitted after every redraw, ``global_ready`` when the global layout is known.
    """

    drawn = Signal()
    global_ready = Signal()
    _layout_posted = Signal(object)  # (generation, arrays, Future) from the layout process's callback

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self._channel = f"graph-view-{id(self)}"
        self.layout_engine = LayoutEngine()
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.layout_engine.close)
        self._arrays: GraphArrays | None = None
        self._index: dict[str, int] = {}
        self._salience = np.zeros(0)
        self._temporal = np.zeros(0)
        self._temporal_key: tuple[float, float] | None = None  # (λ, floor) behind _temporal
        self._global: tuple[np.ndarray, np.ndarray] | None = None  # (ids, positions)
        self._mode = "focus"
        self._selection: list[str] = list(controller.selection)
        self._hits: list[str] = []
        self._expanded: list[str] = []
        self._hidden_types: set[str] = set()
        self._hidden_statuses: set[str] = set()
        self._keep: Callable[[GraphArrays], np.ndarray] | None = None  # set_filter (project, time slider)
        self._replay: GraphArrays | None = None  # show_replay: drawn instead of the live graph
        self._rows = np.zeros(0, dtype=np.int64)
        self._drawn_ids = np.zeros(0, dtype=np.int64)
        self._fit_next = True
        self._warmed = False
        self._closed = False
        self._global_generation = 0
        self._layout_posted.connect(self._on_layout_future)
        self._build_ui()
        self._reload_timer = single_shot_timer(self, RELOAD_DELAY_MS, self.reload)
        controller.graph_changed.connect(self._on_changes)
        controller.selection_changed.connect(self._on_selection)
        controller.search_finished.connect(self._on_search)
        controller.results_reranked.connect(lambda results: self._set_hits([r.name for r in results]))
        controller.params_changed.connect(self._on_params)
        self.reload()

    # --- construction ---------------------------------------------------------------------------

    def _build_ui(self) -> None:
        self.toolbar = GraphToolbar()
        self.mode_box, self.type_button, self.legend_button = (
            self.toolbar.mode_box, self.toolbar.type_button, self.toolbar.legend_button)
        self.toolbar.mode_chosen.connect(self.set_mode)
        self.toolbar.type_toggled.connect(self.set_type_visible)
        self.toolbar.status_toggled.connect(self.set_status_visible)
        self.toolbar.fit_clicked.connect(self.zoom_to_fit)
        self.toolbar.clear_clicked.connect(self.clear_expanded)
        self.toolbar.relayout_clicked.connect(lambda: self._compute_global(force=True))

        self.canvas = GraphCanvas()
        self.info = CornerLabel(self.canvas)  # "shown of total" over the canvas's bottom-left corner
        self.toolbar.legend_toggled.connect(self.canvas.set_legend_visible)
        self.canvas.node_clicked.connect(self._on_node_clicked)
        self.view = self.canvas.view
        self.legend = self.canvas.legend

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.canvas, 1)

    # --- public API -----------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def arrays(self) -> GraphArrays | None:
        """The graph arrays last read from the service (``None`` before the first read)."""
        return self._arrays

    def shown_names(self) -> list[str]:
        """Names of the entities drawn now, in drawing order."""
        if self._arrays is None:
            return []
        return [self._arrays.names[r] for r in self._rows.tolist()]

    def shown_labels(self) -> list[str]:
        """Texts of the labels visible now (level of detail)."""
        return self.canvas.shown_labels()

    def highlighted_names(self) -> list[str]:
        """Shown entities with a ring: search hits (red) and the selection (gold)."""
        return list(self.canvas.ringed)

    def node_position(self, name: str) -> QPointF | None:
        """Where ``name`` is drawn, in ``self.canvas`` widget coordinates (``None`` when not shown)."""
        return self.canvas.node_position(name)

    def reload(self, *, full: bool = False) -> None:
        """Bring the graph arrays up to date (off the UI thread); the drawing follows.

        The entities changed since the arrays were read are patched in; ``full`` reads everything again.
        """
        previous = None if full else self._arrays
        self.controller.run(self.controller.service.graph_arrays, previous,
                            on_success=self._arrays_loaded, channel=self._channel + "-data")

    def set_filter(self, keep: Callable[[GraphArrays], np.ndarray] | None) -> None:
        """Also hide the entities where ``keep(arrays)`` ``(N,) bool`` is False (the project filter, the time slider)."""
        self._keep = keep
        self._refresh()

    def show_replay(self, arrays: GraphArrays | None, hits: Sequence[str] = ()) -> None:
        """Draw ``arrays`` (the live graph's entities with their relations as of a date, docs/lifecycle.md) with
        ``hits`` ringed, until called with ``None``: then the live graph is read again."""
        self._replay = arrays
        if arrays is None:
            self.reload(full=True)
            return
        self._arrays_loaded(arrays)
        self._set_hits(list(hits))

    def set_mode(self, mode: str) -> None:
        """``"focus"`` (ego graph of selection, hits and expansions) or ``"global"`` (whole graph)."""
        if mode not in ("focus", "global"):
            raise ValueError(f"unknown graph mode {mode!r}")
        self.toolbar.show_mode(mode)
        if mode != self._mode:
            self._mode = mode
            self._fit_next = True
            self._refresh()

    def set_type_visible(self, entity_type: str, visible: bool) -> None:
        """Show or hide the entities of one type (the selection stays visible)."""
        (self._hidden_types.discard if visible else self._hidden_types.add)(entity_type)
        self._refresh()

    def set_status_visible(self, status: str, visible: bool) -> None:
        """Show or hide the entities with one status (the selection stays visible)."""
        (self._hidden_statuses.discard if visible else self._hidden_statuses.add)(status)
        self._refresh()

    def expand(self, name: str) -> None:
        """Add ``name`` and its neighbours to the focus view (switches to focus mode)."""
        if name not in self._expanded:
            self._expanded.append(name)
        if self._mode != "focus":
            self.set_mode("focus")
        else:
            self._refresh()

    def clear_expanded(self) -> None:
        self._expanded = []
        self._refresh()

    def zoom_to_fit(self) -> None:
        """Show every drawn node."""
        self.canvas.zoom_to_fit()

    def apply_theme(self) -> None:
        """Colours from pyqtgraph's options (the app sets them when dark mode is switched)."""
        self.canvas.apply_theme()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.StyleChange, QEvent.Type.PaletteChange):
            QTimer.singleShot(0, self.apply_theme)  # after the app has set pyqtgraph's colours too
        super().changeEvent(event)

    def shutdown(self) -> None:
        """Stop the layout worker process (also done when the application quits)."""
        self._closed = True
        self.layout_engine.close()

    # --- data -----------------------------------------------------------------------------------

    def _arrays_loaded(self, arrays: GraphArrays) -> None:
        if arrays is self._arrays or (self._replay is not None and arrays is not self._replay):
            return
        self._arrays = arrays
        self._index = arrays.index_of()
        self._salience = salience(arrays)
        self._set_temporal(self.controller.params)
        self._rebuild_legend_and_filters()
        if len(arrays) > self.layout_engine.in_process_limit and not self._warmed:
            self._warmed = True
            self.layout_engine.warm_up()
        if self._global is not None or self._mode == "global":
            self._compute_global()
        self._refresh()

    def _compute_global(self, force: bool = False) -> None:
        arrays = self._arrays
        if arrays is None:
            return
        old = self._global
        if old is not None and not force:
            if len(old[0]) == len(arrays.ids) and np.array_equal(old[0], arrays.ids):
                return
            known = np.isin(arrays.ids, old[0]).sum()
            if known >= 0.8 * len(arrays.ids):
                self._global_generation += 1  # a full layout still computing is outdated now
                self.controller.run(extend_layout, old[0], old[1], arrays.ids, arrays.edges,
                                    on_success=lambda pos: self._global_done(arrays, pos),
                                    channel=self._channel + "-global")
                return
        self.info.set_full_text(f"Laying out {len(arrays):,} entities…")
        self._global_generation += 1
        if len(arrays) > self.layout_engine.in_process_limit and self.layout_engine.uses_process:
            # The worker process computes; no thread of the task runner waits for it.
            future = self.layout_engine.submit_global(len(arrays), arrays.edges)
            payload = (self._global_generation, arrays)
            future.add_done_callback(lambda done: self._post_layout(payload, done))
            return
        self.controller.run(self.layout_engine.global_layout, len(arrays), arrays.edges,
                            on_success=lambda pos: self._global_done(arrays, pos),
                            channel=self._channel + "-global")

    def _post_layout(self, payload: tuple[int, GraphArrays], future: Any) -> None:  # executor's thread
        if not self._closed:
            self._layout_posted.emit((*payload, future))

    def _on_layout_future(self, posted: tuple[int, GraphArrays, Any]) -> None:
        generation, arrays, future = posted
        if generation != self._global_generation or future.cancelled():
            return
        error = future.exception()
        if error is not None:
            self.info.set_full_text("Layout failed")
            self.controller.report_failure(error, "The graph layout failed")
            return
        self._global_done(arrays, future.result())

    def _global_done(self, arrays: GraphArrays, pos: np.ndarray) -> None:
        self._global = (arrays.ids, pos)
        self.global_ready.emit()
        if self._mode == "global" and arrays is self._arrays:
            self._refresh()

    def _visible_mask(self, arrays: GraphArrays) -> np.ndarray:
        mask = np.ones(len(arrays), dtype=bool)
        if self._hidden_types:
            hidden_codes = [i for i, t in enumerate(arrays.type_names) if t in self._hidden_types]
            if "other types" in self._hidden_types:
                hidden_codes += list(range(MAX_TYPE_FILTERS, len(arrays.type_names)))
            mask &= ~np.isin(arrays.type_codes, hidden_codes)
        if self._hidden_statuses:
            mask &= ~np.isin(np.array(arrays.statuses, dtype=object), list(self._hidden_statuses))
        if self._keep is not None:
            mask &= self._keep(arrays)
        for name in self._selection:
            if name in self._index:
                mask[self._index[name]] = True
        return mask

    def _refresh(self) -> None:
        arrays = self._arrays
        if arrays is None:
            return
        mask = self._visible_mask(arrays)
        if self._mode == "global":
            if self._global is None or not np.array_equal(self._global[0], arrays.ids):
                self._compute_global()
                return
            rows = np.flatnonzero(mask)
            self._draw(rows, self._global[1][rows])
            return
        rows = self._focus_rows(arrays, mask)
        edges, ids = subgraph_edges(arrays, rows), arrays.ids[rows]
        seed = None  # start from where nodes are drawn now, so a new focus does not reshuffle the picture
        if len(self._drawn_ids) and np.isin(ids, self._drawn_ids).any():
            seed = extend_layout(self._drawn_ids, self.canvas.pos, ids, edges)
        elif self._global is not None and np.array_equal(self._global[0], arrays.ids):
            seed = self._global[1][rows]
        self.controller.run(ego_layout, len(rows), edges, seed,
                            on_success=lambda pos: self._draw(rows, pos) if arrays is self._arrays else None,
                            channel=self._channel + "-ego")

    def _focus_rows(self, arrays: GraphArrays, mask: np.ndarray) -> np.ndarray:
        """Seeds (selection, hits, expanded) and their neighbours; the most salient when over budget."""
        top_degree = max(int(arrays.degree.max(initial=0)), 1)
        weight = self._salience + np.log1p(arrays.degree) / np.log1p(top_degree)
        seeds = np.array(sorted({self._index[n] for n in (*self._selection, *self._hits, *self._expanded)
                                 if n in self._index}), dtype=np.int64)
        if not len(seeds):
            candidates = np.flatnonzero(mask)
            return np.sort(candidates[np.argsort(-weight[candidates], kind="stable")[:OVERVIEW_SIZE]])
        rows = neighbours(arrays, seeds, depth=1)
        is_seed = np.isin(rows, seeds)
        rows, is_seed = rows[mask[rows] | is_seed], is_seed[mask[rows] | is_seed]
        if len(rows) > FOCUS_LIMIT:
            keep = np.argsort(-(weight[rows] + 10.0 * is_seed), kind="stable")[:FOCUS_LIMIT]
            rows = np.sort(rows[keep])
        return rows

    # --- drawing --------------------------------------------------------------------------------

    def _loaded(self) -> GraphArrays:
        """The arrays the view draws from; only called once they are loaded."""
        if self._arrays is None:
            raise RuntimeError("the graph arrays are not loaded yet")
        return self._arrays

    def _draw(self, rows: np.ndarray, pos: np.ndarray) -> None:
        arrays = self._loaded()
        self._rows, self._drawn_ids = rows, arrays.ids[rows]
        edges = subgraph_edges(arrays, rows)
        priority = self._salience[rows] + 0.1 * np.log1p(arrays.degree[rows])
        self.canvas.draw([arrays.names[r] for r in rows.tolist()], pos, edges, style.node_sizes(self._salience[rows]),
                         arrays.type_codes[rows], self._alpha(rows), priority)
        self.canvas.set_rings(self._hits, self._selection)
        if self._fit_next or not self.canvas.all_in_view():
            self._fit_next = False
            self.canvas.zoom_to_fit()
        self.info.set_full_text(f"{len(rows):,} of {len(arrays):,} entities · {len(edges):,} relations")
        self.drawn.emit()

    def _alpha(self, rows: np.ndarray) -> np.ndarray:
        return style.alpha_levels(self._temporal[rows], self.controller.params.temporal_floor)

    def _set_temporal(self, params: Any) -> None:
        self._temporal_key = (params.lambda_hourly, params.temporal_floor)
        self._temporal = temporal_factor(self._loaded(), params)

    def _on_params(self, params: Any) -> None:
        """Only λ and the temporal floor change how nodes look (their opacity); other parameters
        re-rank the results, which reach the view as hits (``results_reranked``)."""
        if self._arrays is None or (params.lambda_hourly, params.temporal_floor) == self._temporal_key:
            return
        self._set_temporal(params)
        if len(self._rows):
            self.canvas.restyle(self._arrays.type_codes[self._rows], self._alpha(self._rows))

    def _rebuild_legend_and_filters(self) -> None:
        arrays = self._loaded()
        counts = np.bincount(arrays.type_codes, minlength=len(arrays.type_names))
        entries = [(style.type_colour(code), f"{name} ({counts[code]:,})")
                   for code, name in enumerate(arrays.type_names[: len(style.PALETTE)])]
        rest = len(arrays.type_names) - len(style.PALETTE)
        if rest > 0:
            entries.append((style.OTHER_COLOUR, f"{rest} other types ({int(counts[len(style.PALETTE):].sum()):,})"))
        self.canvas.set_legend(entries)
        filter_names = list(arrays.type_names[:MAX_TYPE_FILTERS])
        if len(arrays.type_names) > MAX_TYPE_FILTERS:
            filter_names.append("other types")
        self.toolbar.set_types(filter_names, self._hidden_types)

    # --- controller signals and mouse -------------------------------------------------------------

    def _on_changes(self, changes: list[Any]) -> None:
        if not any(change.entity_ids for change in changes):  # e.g. saved scoring parameters
            return
        # Throttle, not debounce: a steady stream of agent writes still shows up every RELOAD_DELAY_MS.
        if not self._reload_timer.isActive():
            self._reload_timer.start()

    def _on_selection(self, names: list[str]) -> None:
        self._selection = list(names)
        if self._mode == "focus":
            self._refresh()
        else:
            self.canvas.set_rings(self._hits, self._selection)
            if names:
                self.canvas.center_on(names[0])

    def _on_search(self, outcome: Any) -> None:
        self._set_hits([r.name for r in outcome.results] if outcome is not None else [])

    def _set_hits(self, names: list[str]) -> None:
        changed_set = set(names) != set(self._hits)
        self._hits = list(names)
        if not changed_set:  # a re-rank that kept the same top-K: rings, labels and layout stay
            return
        if self._mode == "focus":
            self._fit_next = True
            self._refresh()
        else:
            self.canvas.set_rings(self._hits, self._selection)

    def _on_node_clicked(self, index: int, double: bool, ctrl: bool) -> None:
        if self._arrays is None or index >= len(self._rows):
            return
        name = self._arrays.names[int(self._rows[index])]
        if double:
            self.expand(name)
        elif ctrl:
            current = self.controller.selection
            self.controller.select([n for n in current if n != name] if name in current else [*current, name])
        else:
            self.controller.select([name])
