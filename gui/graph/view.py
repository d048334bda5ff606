"""The graph view: the focus graph of the selection and the search results, or a global map of the graph.

Nodes are coloured by entity type or by community (:mod:`limbic.gui.graph.colouring`; the legend says
which), sized by salience, faded by the temporal factor (docs/scoring.md); the selection has a gold ring,
hits a red one. Click selects, Ctrl+click adds to the selection, double-click expands the neighbours.

The picture keeps its shape: entities keep their positions across re-ranks, selections, expansions and
agent writes, new ones are placed next to their neighbours (:mod:`limbic.gui.graph.positions`); only
*Re-layout*, or a new focus sharing little with the drawn one, moves placed nodes (they glide). Arrays
come from ``MemoryService.graph_arrays`` (patched with the entities a change names); layouts and
communities are computed through ``controller.run``, off the UI thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QSettings, QTimer, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from limbic.core.service.graph_arrays import GraphArrays, salience, subgraph_edges, temporal_factor
from limbic.gui.controller import AppController
from limbic.gui.graph import focus, style
from limbic.gui.graph.canvas import GraphCanvas
from limbic.gui.graph.colouring import colour_nodes
from limbic.gui.graph.global_map import GlobalMap
from limbic.gui.graph.positions import HOWS, PositionStore
from limbic.gui.graph.toolbar import GraphToolbar
from limbic.gui.widgets import CornerLabel, plural, single_shot_timer

RELOAD_DELAY_MS = 150


def _decay_key(params: Any) -> tuple[float, ...]:
    """The parameters behind the nodes' opacity (the temporal factor): λ, the floor and the decay model."""
    return (params.lambda_hourly, params.temporal_floor, params.decay_model, params.decay_alpha,
            params.decay_fast_hours, params.decay_fast_share)


class GraphView(QWidget):
    """Draws the memory graph with pyqtgraph (whole arrays per frame); see the module docstring.

    ``drawn`` is emitted after every redraw, ``global_ready`` when the global layout is known.
    """

    drawn = Signal()
    global_ready = Signal()

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self._channel = f"graph-view-{id(self)}"
        self._arrays: GraphArrays | None = None
        self._index: dict[str, int] = {}
        self._salience = np.zeros(0)
        self._temporal = np.zeros(0)
        self._temporal_key: tuple[float, ...] | None = None  # _decay_key behind _temporal
        self._focus = PositionStore()   # the focus view's positions, kept per entity
        self._colours: dict[int, int] = {}  # entity id → community colour code last drawn
        self._mode = "focus"
        self._colour_mode = "auto"    # the choice in the toolbar
        self._colour_shown = "type"   # what "auto" (or the choice) gave for the drawn nodes
        self._codes = np.zeros(0, dtype=np.int64)  # the drawn nodes' colour codes
        self._selection: list[str] = list(controller.selection)
        self._hits: list[str] = []
        self._expanded: list[str] = []
        self._filters = focus.Filters()
        self._replay: GraphArrays | None = None  # show_replay: drawn instead of the live graph
        self._rows = np.zeros(0, dtype=np.int64)
        self._drawn_ids = np.zeros(0, dtype=np.int64)
        self._fit_next = True
        self._how = "keep"  # the intent of the focus arrangement being computed (see positions.arrange)
        self._glide_next = False  # the next global draw animates from the drawn positions (Re-layout)
        self._build_ui()
        self.global_map = GlobalMap(controller, self._channel + "-global", self.info, self)
        self.global_map.ready.connect(self._global_done)
        self.layout_engine = self.global_map.engine
        self._reload_timer = single_shot_timer(self, RELOAD_DELAY_MS, self.reload)
        controller.graph_changed.connect(self._on_changes)
        controller.selection_changed.connect(self._on_selection)
        controller.search_finished.connect(self._on_search)
        controller.results_reranked.connect(lambda results: self._set_hits([r.name for r in results]))
        controller.params_changed.connect(self._on_params)
        self.reload()

    def _build_ui(self) -> None:
        self.toolbar = GraphToolbar()
        self.mode_box, self.type_button, self.legend_button = (
            self.toolbar.mode_box, self.toolbar.type_button, self.toolbar.legend_button)
        self.toolbar.mode_chosen.connect(self.set_mode)
        self.toolbar.colour_chosen.connect(self.set_colouring)
        self.toolbar.type_toggled.connect(self.set_type_visible)
        self.toolbar.status_toggled.connect(self.set_status_visible)
        self.toolbar.fit_clicked.connect(self.zoom_to_fit)
        self.toolbar.clear_clicked.connect(self.clear_expanded)
        self.toolbar.relayout_clicked.connect(self.relayout)
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
    def colouring(self) -> str:
        """The colouring the legend shows now: "type" or "community"."""
        return self._colour_shown

    @property
    def arrays(self) -> GraphArrays | None:
        """The graph arrays last read from the service (``None`` before the first read)."""
        return self._arrays

    def shown_names(self) -> list[str]:
        """Names of the entities drawn now, in drawing order."""
        return list(self.canvas.names)

    def shown_labels(self) -> list[str]:
        return self.canvas.shown_labels()  # texts of the labels visible now (level of detail)

    def highlighted_names(self) -> list[str]:
        return list(self.canvas.ringed)  # shown entities with a ring: search hits (red), the selection (gold)

    def node_position(self, name: str) -> QPointF | None:
        """Where ``name`` is drawn, in ``self.canvas`` widget coordinates (``None`` when not shown)."""
        return self.canvas.node_position(name)

    def layout_positions(self) -> dict[str, tuple[float, float]]:
        """Layout coordinates of every drawn entity (what stays put when the drawing changes)."""
        return {name: (float(x), float(y)) for name, (x, y) in zip(self.canvas.names, self.canvas.pos, strict=True)}

    def reload(self, *, full: bool = False) -> None:
        """Bring the graph arrays up to date (off the UI thread); the drawing follows.

        The entities changed since the arrays were read are patched in; ``full`` reads everything again.
        """
        previous = None if full else self._arrays
        self.controller.run(self.controller.service.graph_arrays, previous,
                            on_success=self._arrays_loaded, channel=self._channel + "-data")

    def set_filter(self, keep: Callable[[GraphArrays], np.ndarray] | None) -> None:
        """Also hide the entities where ``keep(arrays)`` ``(N,) bool`` is False (the project filter, the time slider)."""
        self._filters.keep = keep
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
        """``"focus"`` (selection, hits, expansions and their neighbours) or ``"global"`` (whole graph)."""
        if mode not in ("focus", "global"):
            raise ValueError(f"unknown graph mode {mode!r}")
        self.toolbar.show_mode(mode)
        if mode != self._mode:
            self._mode = mode
            self._fit_next = True
            self._refresh()

    def set_colouring(self, mode: str) -> None:
        """Colour by ``"type"``, by ``"community"``, or ``"auto"`` (type when a few types cover most nodes)."""
        self.toolbar.show_colour(mode)
        if mode != self._colour_mode:
            self._colour_mode = mode
            self._refresh()

    def set_type_visible(self, entity_type: str, visible: bool) -> None:
        """Show or hide the entities of one type (the selection stays visible)."""
        self._filters.show(self._filters.types, entity_type, visible)
        self._refresh()

    def set_status_visible(self, status: str, visible: bool) -> None:
        """Show or hide the entities with one status (the selection stays visible)."""
        self._filters.show(self._filters.statuses, status, visible)
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
        self._refresh(how="focus")

    def relayout(self) -> None:
        """Lay the drawn graph out again; the nodes glide to their new places."""
        self._fit_next = True
        if self._mode == "global":
            self._glide_next = True
            if self._arrays is not None:
                self.global_map.compute(self._arrays, force=True)
        else:
            self._refresh(how="relayout")

    def zoom_to_fit(self) -> None:
        """Show every drawn node, the drawing filling the canvas."""
        self.canvas.zoom_to_fit()

    def save_state(self, settings: QSettings) -> None:
        """Mode, colouring and legend in ``settings`` (kept between runs)."""
        for key, value in (("mode", self._mode), ("colour", self._colour_mode), ("legend", self.legend_button.isChecked())):
            settings.setValue(f"graph/{key}", value)

    def restore_state(self, settings: QSettings) -> None:
        colour, mode = settings.value("graph/colour"), settings.value("graph/mode")
        if colour in ("auto", "type", "community"):
            self.set_colouring(str(colour))
        if mode in ("focus", "global"):
            self.set_mode(str(mode))
        self.legend_button.setChecked(bool(settings.value("graph/legend", True, type=bool)))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.StyleChange, QEvent.Type.PaletteChange):
            QTimer.singleShot(0, self.canvas.apply_theme)  # after the app has set pyqtgraph's colours too
        super().changeEvent(event)

    def shutdown(self) -> None:
        """Stop the layout worker process (also done when the application quits)."""
        self.global_map.close()

    # --- data -----------------------------------------------------------------------------------

    def _arrays_loaded(self, arrays: GraphArrays) -> None:
        if arrays is self._arrays or (self._replay is not None and arrays is not self._replay):
            return
        self._arrays = arrays
        self._index = arrays.index_of()
        self._salience = salience(arrays)
        self._set_temporal(self.controller.params)
        filters = list(arrays.type_names[:focus.MAX_TYPE_FILTERS]) + (
            ["other types"] if len(arrays.type_names) > focus.MAX_TYPE_FILTERS else [])
        self.toolbar.set_types(filters, self._filters.types)
        self.global_map.warm_up(arrays)
        if len(self.global_map.store) or self._mode == "global":
            self.global_map.compute(arrays)
        self._refresh()

    def _global_done(self, arrays: GraphArrays) -> None:
        self.global_ready.emit()
        if self._mode == "global" and arrays is self._arrays:
            self._refresh()

    def _refresh(self, *, how: str = "keep") -> None:
        arrays = self._arrays
        if arrays is None:
            return
        # a newer refresh replaces one still computing: it inherits the stronger intent (relayout > focus > keep)
        how = self._how = max(how, self._how, key=HOWS.index)
        mask = self._filters.mask(arrays, [self._index[n] for n in self._selection if n in self._index])
        if self._mode == "global":
            self._refresh_global(arrays, mask)
            return
        seeds = [self._index[n] for n in (*self._selection, *self._hits, *self._expanded) if n in self._index]
        rows = focus.focus_rows(arrays, self._salience, mask, seeds)
        ids, edges = arrays.ids[rows], subgraph_edges(arrays, rows)
        current = focus.glide_start(self._drawn_ids, self.canvas.pos, ids, self._focus.lookup(ids)[0]) \
            if how == "relayout" else None
        self.controller.run(focus.arrange_view, self._focus.ids, self._focus.pos, self._drawn_ids, ids, edges, how,
                            current, self._colour_mode != "type",
                            on_success=lambda done: self._focus_arranged(arrays, rows, done),
                            channel=self._channel + "-ego")

    def _focus_arranged(self, arrays: GraphArrays, rows: np.ndarray, done: tuple[Any, np.ndarray | None]) -> None:
        if arrays is not self._arrays:
            return
        arrangement, groups = done
        self._how = "keep"
        ids = arrays.ids[rows]
        start = None
        if arrangement.fresh:
            self._focus.replace(ids, arrangement.pos)
            self._fit_next = True
            if np.isin(ids, self._drawn_ids).any():
                start = focus.glide_start(self._drawn_ids, self.canvas.pos, ids, arrangement.pos)
        else:
            self._focus.update(ids, arrangement.pos)
        self._draw(rows, arrangement.pos, groups, start)

    def _refresh_global(self, arrays: GraphArrays, mask: np.ndarray) -> None:
        if not self.global_map.known(arrays):
            self.global_map.compute(arrays)
            return
        groups = None
        if self._colour_mode != "type":
            groups = self.global_map.groups(arrays)
            if groups is None:
                return  # being computed: ready follows
        rows = np.flatnonzero(mask)
        groups = groups[rows] if groups is not None else None
        pos = self.global_map.store.lookup(arrays.ids[rows])[0]
        start = focus.glide_start(self._drawn_ids, self.canvas.pos, arrays.ids[rows], pos) if self._glide_next else None
        self._glide_next = False
        self._draw(rows, pos, groups, start)

    # --- drawing --------------------------------------------------------------------------------

    def _draw(self, rows: np.ndarray, pos: np.ndarray, groups: np.ndarray | None, start: np.ndarray | None) -> None:
        arrays = self._arrays
        if arrays is None:
            return
        self._rows, self._drawn_ids = rows, arrays.ids[rows]
        edges = subgraph_edges(arrays, rows)
        priority = self._salience[rows] + 0.1 * np.log1p(arrays.degree[rows])
        names = [arrays.names[r] for r in rows.tolist()]
        colouring = colour_nodes(self._colour_mode, arrays.type_codes[rows], arrays.type_names, names, priority,
                                 groups, self._drawn_ids, self._colours)
        self._colour_shown = colouring.mode
        if colouring.mode == "community":  # the groups keep these colours while they change
            self._colours = dict(zip(self._drawn_ids.tolist(), colouring.codes.tolist(), strict=True))
        self._codes = colouring.codes
        self.canvas.draw(names, pos, edges, style.node_sizes(self._salience[rows]), colouring.codes,
                         self._alpha(rows), priority, start=start)
        self.canvas.set_legend(colouring.title, colouring.entries)
        self.canvas.set_rings(self._hits, self._selection)
        if self._fit_next or (self.canvas.fitted and self.canvas.needs_fit()):
            self._fit_next = False
            self.canvas.zoom_to_fit()
        self.info.set_full_text(f"{len(rows):,} of {plural(len(arrays), 'entity')} · {plural(len(edges), 'relation')}")
        self.drawn.emit()

    def _alpha(self, rows: np.ndarray) -> np.ndarray:
        return style.alpha_levels(self._temporal[rows], self.controller.params.temporal_floor)

    def _set_temporal(self, params: Any) -> None:
        if self._arrays is not None:
            self._temporal_key, self._temporal = _decay_key(params), temporal_factor(self._arrays, params)

    def _on_params(self, params: Any) -> None:
        """Only the decay changes how nodes look (their opacity); other parameters re-rank the results,
        which reach the view as hits (``results_reranked``)."""
        if self._arrays is None or _decay_key(params) == self._temporal_key:
            return
        self._set_temporal(params)
        if len(self._rows):
            self.canvas.restyle(self._codes, self._alpha(self._rows))

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
        self._set_hits([r.name for r in outcome.results] if outcome is not None else [], how="focus")

    def _set_hits(self, names: list[str], how: str = "keep") -> None:
        changed_set = set(names) != set(self._hits)
        self._hits = list(names)
        if not changed_set:  # a re-rank that kept the same top-K: rings, labels and layout stay
            return
        if self._mode == "focus":
            self._refresh(how=how)
        else:
            self.canvas.set_rings(self._hits, self._selection)

    def _on_node_clicked(self, index: int, double: bool, ctrl: bool) -> None:
        if self._arrays is None or index >= len(self._rows):
            return
        name = self._arrays.names[int(self._rows[index])]
        if double:
            self.expand(name)
        else:
            self.controller.select(focus.clicked_selection(self.controller.selection, name, ctrl))
