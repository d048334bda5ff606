"""The graph view: the focus graph of the selection and the search results, or a global map of the graph.

Nodes are coloured by entity type, by community, by who wrote them last or by what fades next
(:mod:`limbic.gui.graph.colouring`, :mod:`limbic.gui.graph.lenses`; the legend beside the canvas says
which, and clicking one of its entries highlights those nodes), sized by salience, faded by the temporal
factor (docs/scoring.md); the selection has a gold ring, hits a red one with a halo, the entity pinned in
*Why not this one?* a violet diamond. Hovering a node shows a card (:mod:`limbic.gui.graph.card`); click
selects, Ctrl+click adds to the selection, double-click opens the entity in the editor (``edit_requested``)
and keeps its neighbours in view.

The picture keeps its shape: entities keep their positions across re-ranks, selections, expansions and
agent writes, new ones are placed next to their neighbours (:mod:`limbic.gui.graph.positions`); only
*Re-layout*, or a new focus sharing little with the drawn one, moves placed nodes (they glide). A write
keeps the view's zoom and centre: entities written since the app started join the focus view, and a
marker on the canvas edge points to any that lands out of view. Arrays come from
``MemoryService.entities.graph_arrays`` (patched with the entities a change names); layouts and communities are
computed through ``controller.run``, off the UI thread.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QSettings, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from limbic.core.search.terms import temporal_key
from limbic.core.service.graph_arrays import GraphArrays, salience, subgraph_edges, temporal_factor
from limbic.gui.controller import AppController
from limbic.gui.graph import focus, style
from limbic.gui.graph.annotations import REGION_NODES, Annotations
from limbic.gui.graph.canvas import GraphCanvas
from limbic.gui.graph.card import HoverCard
from limbic.gui.graph.colouring import GREY, Colouring, by_fade, by_origin, colour_nodes, community_lead
from limbic.gui.graph.global_map import GlobalMap
from limbic.gui.graph.legend import GraphLegend
from limbic.gui.graph.lenses import Lenses
from limbic.gui.graph.positions import HOWS, Arrangement, PositionStore
from limbic.gui.graph.toolbar import GraphToolbar
from limbic.gui.widgets import CornerLabel, plural, single_shot_timer

RELOAD_DELAY_MS = 150
WRITTEN_KEPT = 20     # entities written while the app runs that stay in the focus view
FADING_SHOWN = 12     # the soonest fading entities added to the focus view in *What fades next*
CREATING_OPS = ("create_entities", "upsert_entities")


class GraphView(Annotations, QWidget):
    """Draws the memory graph with pyqtgraph (whole arrays per frame); see the module docstring.

    ``drawn`` is emitted after every redraw, ``global_ready`` when the global layout is known.
    """

    drawn = Signal()
    global_ready = Signal()
    edit_requested = Signal(str)  # a double-clicked entity: the app shows it in the editor

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self._channel = f"graph-view-{id(self)}"
        self._arrays: GraphArrays | None = None
        self._index: dict[str, int] = {}
        self._salience = np.zeros(0)
        self._temporal = np.zeros(0)
        self._temporal_key: tuple[object, ...] | None = None  # terms.temporal_key behind _temporal
        self._focus = PositionStore()   # the focus view's positions, kept per entity
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
        self._frozen = False  # the first global layout's objects left out of the collector's full passes
        self._regions_due = 0  # draws so far: a large map's regions come a turn later, for the newest draw only
        self._drawn_ids = np.zeros(0, dtype=np.int64)
        self._fit_next = True
        self._writing = False  # the arrays being loaded follow a write: keep the view's zoom and centre
        self._written: list[int] = []  # entity ids created while the app runs (newest last)
        self._pinned: str | None = None
        self._replay_marks: list[str] = []
        self._chosen_code: int | None = None  # the colour code picked in the legend (its nodes highlighted)
        self._colouring: Colouring | None = None
        self._details: dict[int, Any] = {}  # entity id → EntityDetail read for the hover card
        self._reading: int | None = None  # the entity id whose card details are being read
        self._loose: set[int] = set()  # placed without a drawn neighbour: placed again once linked
        self._how = "keep"  # the intent of the focus arrangement being computed (see positions.arrange)
        self._glide_next = False  # the next global draw animates from the drawn positions (Re-layout)
        self._build_ui()
        self.global_map = GlobalMap(controller, self._channel + "-global", self.info, self)
        self.global_map.ready.connect(self._global_done)
        self.global_map.grouped.connect(self._grouped)
        self.layout_engine = self.global_map.engine
        self.lenses = Lenses(controller, self._channel + "-lens", self)
        self.lenses.changed.connect(self._refresh)
        self._reload_timer = single_shot_timer(self, RELOAD_DELAY_MS, self._reload_after_writes)
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
        self.toolbar.fit_hits_clicked.connect(self.fit_to_hits)
        self.toolbar.clear_clicked.connect(self.clear_expanded)
        self.toolbar.relayout_clicked.connect(self.relayout)
        self.canvas = GraphCanvas()
        self.info = CornerLabel(self.canvas)  # "shown of total" over the canvas's bottom-left corner
        self.card = HoverCard(self.canvas)
        self.legend = GraphLegend()
        self.toolbar.legend_toggled.connect(self.legend.setVisible)
        self.legend.entry_clicked.connect(self._legend_clicked)
        self.legend.detail_clicked.connect(lambda name: self.controller.select([name]) if name else None)
        self.canvas.node_clicked.connect(self._on_node_clicked)
        self.canvas.node_hovered.connect(self._on_hover)
        self.canvas.marker_clicked.connect(self._go_to)
        self.view = self.canvas.view
        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(0)
        body.addWidget(self.canvas, 1)
        body.addWidget(self.legend)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toolbar)
        layout.addLayout(body, 1)

    # --- public API -----------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def colouring(self) -> str:
        """The colouring the legend shows now: "type", "community", "origin" or "fades"."""
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
        return list(self.canvas.ringed)  # shown entities with a ring: hits (red), selection (gold), pinned (violet)

    def emphasised_names(self) -> list[str]:
        """The drawn entities at full strength: all of them, or those of the legend entry chosen."""
        if self._chosen_code is None:
            return self.shown_names()
        return [n for n, c in zip(self.canvas.names, self._codes.tolist(), strict=True) if c == self._chosen_code]

    def colour_of(self, name: str) -> tuple[int, int, int] | None:
        """The RGB ``name`` is drawn in (``None`` when not drawn)."""
        i = self.canvas.index_of(name)
        return None if i is None else style.type_colour(int(self._codes[i]))

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
        self.controller.run(self.controller.service.entities.graph_arrays, previous,
                            on_success=self._arrays_loaded, channel=self._channel + "-data")

    def set_filter(self, keep: Callable[[GraphArrays], np.ndarray] | None) -> None:
        """Also hide the entities where ``keep(arrays)`` ``(N,) bool`` is False (the project filter, the time slider)."""
        self._filters.keep = keep
        self._refresh()

    def show_replay(self, arrays: GraphArrays | None, written: Sequence[str] = ()) -> None:
        """Draw ``arrays`` (the live graph's entities with their relations as of a date, docs/lifecycle.md) with
        the ``written`` entities marked (a small teal dot, not the search hits' red ring), until called with ``None``:
        then the live graph is read again."""
        self._replay = arrays
        self._replay_marks = list(written)
        if arrays is None:
            self.reload(full=True)
            return
        self._arrays_loaded(arrays)
        self._rings()

    def set_pinned(self, name: str | None) -> None:
        """Mark ``name`` (the entity pinned in *Why not this one?*; ``None``: none) with a violet diamond; it
        joins the focus view."""
        if name == self._pinned:
            return
        self._pinned = name
        if self._mode == "focus":
            self._refresh()
        else:
            self._rings()

    def show_fading(self, days: float | None) -> None:
        """*What fades next* within ``days`` (7, 30, 90…): colour what expires or would be proposed for forgetting
        by then (the service's forecast), list it with dates in the legend; ``None`` goes back to the colouring
        chosen before."""
        if days is None:
            if self._colour_mode == "fades":
                self.set_colouring(self._colour_before_fades)
            return
        self.lenses.set_days(days)
        self.set_colouring("fades")

    _colour_before_fades = "auto"

    def fit_to_hits(self) -> None:
        """Zoom to the search hits drawn now (all of them fill the canvas)."""
        self.canvas.fit_to(self._hits)

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
        """Colour by ``"type"``, by ``"community"``, ``"auto"`` (type when a few types cover most nodes), by
        ``"origin"`` (*Who wrote it*) or ``"fades"`` (*What fades next*)."""
        self.toolbar.show_colour(mode)
        if mode != self._colour_mode:
            if mode == "fades":
                self._colour_before_fades = self._colour_mode
            self._colour_mode = mode
            self._chosen_code = None
            self.lenses.refresh(mode)
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
        """Forget expanded neighbourhoods and the entities written meanwhile (the focus shrinks back)."""
        self._expanded = []
        self._written = []
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
        colour = self._colour_before_fades if self._colour_mode == "fades" else self._colour_mode
        for key, value in (("mode", self._mode), ("colour", colour), ("legend", self.legend_button.isChecked())):
            settings.setValue(f"graph/{key}", value)

    def restore_state(self, settings: QSettings) -> None:
        colour, mode = settings.value("graph/colour"), settings.value("graph/mode")
        if colour in ("auto", "type", "community", "origin"):
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

    def _reload_after_writes(self) -> None:
        self._writing = True
        self.reload()

    def _arrays_loaded(self, arrays: GraphArrays) -> None:
        if arrays is self._arrays or (self._replay is not None and arrays is not self._replay):
            return
        self._arrays = arrays
        self._index = arrays.index_of()
        self._salience = salience(arrays)
        self._details.clear()
        self._set_temporal(self.controller.params)
        filters = list(arrays.type_names[:focus.MAX_TYPE_FILTERS]) + (
            ["other types"] if len(arrays.type_names) > focus.MAX_TYPE_FILTERS else [])
        self.toolbar.set_types(filters, self._filters.types)
        self.global_map.warm_up(arrays)
        self._place_new_near_view()
        if len(self.global_map.store) or self._mode == "global":
            self.global_map.compute(arrays)
        if self._writing:
            self.lenses.refresh(self._colour_mode)
        self._refresh()

    def _place_new_near_view(self) -> None:
        """Tell the global map's placement the nodes' diameters at the view's scale (the ``(N,)`` salience just read,
        aligned with the arrays) and where unconnected new nodes go: the view's centre."""
        if self.canvas.fitted or len(self.canvas.pos):
            rect = self.view.viewRect()
            self.global_map.gap = (style.node_sizes(self._salience) + 1.0) * self.canvas.units_per_pixel()
            self.global_map.anchor = np.array([rect.center().x(), rect.center().y()])

    def _global_done(self, arrays: GraphArrays) -> None:
        if not self._frozen:  # once: a cycle frozen now is never collected, so later layouts are not frozen again
            self._frozen = True
            gc.freeze()  # the map's arrays and positions live on: out of the collector's full passes (app.py's warm-up)
        self.global_ready.emit()
        if self._mode == "global" and arrays is self._arrays:
            self._refresh()

    def _grouped(self, arrays: GraphArrays) -> None:
        if arrays is self._arrays:
            self._refresh()

    def _needs_groups(self) -> bool:
        return self._colour_mode in ("auto", "community")

    def _refresh(self, *, how: str = "keep") -> None:
        arrays = self._arrays
        if arrays is None:
            return
        if self._needs_groups() and self.global_map.groups(arrays) is None:
            self._how = max(how, self._how, key=HOWS.index)
            return  # being found (every view colours by the whole graph's communities): grouped follows
        # a newer refresh replaces one still computing: it inherits the stronger intent (relayout > focus > keep)
        how = self._how = max(how, self._how, key=HOWS.index)
        mask = self._filters.mask(arrays, [self._index[n] for n in self._selection if n in self._index])
        if self._mode == "global":
            self._refresh_global(arrays, mask)
            return
        extra = [self._index[n] for n in (self._pinned,) if n in self._index]
        extra += [r for r in (self._index_of_id(i) for i in self._written[-WRITTEN_KEPT:]) if r is not None]
        if self._colour_mode == "fades":
            extra += [r for r in (self._index_of_id(i) for i in self.lenses.fading_ids()[:FADING_SHOWN]) if r is not None]
        seeds = [self._index[n] for n in (*self._selection, *self._hits, *self._expanded) if n in self._index]
        kept = [r for r in (self._index_of_id(i) for i in self._drawn_ids.tolist()) if r is not None] \
            if self._writing else []
        rows = focus.focus_rows(arrays, self._salience, mask, seeds, extra, kept)
        ids, edges = arrays.ids[rows], subgraph_edges(arrays, rows)
        current = focus.glide_start(self._drawn_ids, self.canvas.pos, ids, self._focus.lookup(ids)[0]) \
            if how == "relayout" else None
        # An entity placed alone (an agent creates it, then links it) is placed again next to its new neighbours.
        linked = set(ids[np.unique(edges)].tolist()) if len(edges) else set()
        replace = np.array(sorted(self._loose & linked), dtype=np.int64)
        self._loose -= linked
        keep = ~np.isin(self._focus.ids, replace)
        store_ids, store_pos = self._focus.ids[keep], self._focus.pos[keep]
        gap: float | np.ndarray = 0.5
        anchor = None
        if len(self.canvas.pos):
            centre = self.view.viewRect().center()
            gap = (style.node_sizes(self._salience[rows]) + 1.0) * self.canvas.units_per_pixel()  # diameters
            anchor = np.array([centre.x(), centre.y()])
        placed_before = store_ids
        self.controller.run(focus.arrange_view, store_ids, store_pos, self._drawn_ids, ids, edges, how, current,
                            gap, anchor,
                            on_success=lambda done: self._focus_arranged(arrays, rows, done, placed_before, edges,
                                                                         0 if seeds else int(mask.sum()) - len(rows)),
                            channel=self._channel + "-ego")

    def _index_of_id(self, entity_id: int) -> int | None:
        arrays = self._arrays
        if arrays is None:
            return None
        where = int(np.searchsorted(arrays.ids, entity_id))
        return where if where < len(arrays.ids) and arrays.ids[where] == entity_id else None

    def _focus_arranged(self, arrays: GraphArrays, rows: np.ndarray, arrangement: Arrangement,
                        placed_before: np.ndarray, edges: np.ndarray, left_out: int) -> None:
        """Draw the arranged focus view; ``left_out``: the entities the overview (nothing chosen) leaves out."""
        if arrays is not self._arrays or self._mode != "focus":  # outdated, or the global map was chosen meanwhile
            return
        self._how = "keep"
        ids = arrays.ids[rows]
        if not arrangement.fresh:
            linked = np.zeros(len(ids), dtype=bool)
            linked[np.unique(edges)] = True
            self._loose |= set(ids[~np.isin(ids, placed_before) & ~linked].tolist())
        start = None
        if arrangement.fresh:
            self._focus.replace(ids, arrangement.pos)
            self._fit_next = True
            if np.isin(ids, self._drawn_ids).any():
                start = focus.glide_start(self._drawn_ids, self.canvas.pos, ids, arrangement.pos)
        else:
            self._focus.update(ids, arrangement.pos)
        self._draw(rows, arrangement.pos, start, left_out)

    def _refresh_global(self, arrays: GraphArrays, mask: np.ndarray) -> None:
        if not self.global_map.known(arrays):
            self.global_map.compute(arrays)
            return
        rows = np.flatnonzero(mask)
        pos = self.global_map.store.lookup(arrays.ids[rows])[0]
        start = focus.glide_start(self._drawn_ids, self.canvas.pos, arrays.ids[rows], pos) if self._glide_next else None
        self._glide_next = False
        self._draw(rows, pos, start)

    # --- drawing --------------------------------------------------------------------------------

    def _groups(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The drawn ``rows``' communities in the whole graph: ``(membership, colour codes)`` (``None``: not
        wanted, or not found yet)."""
        found = self.global_map.groups(self._arrays) if self._arrays is not None and self._needs_groups() else None
        return None if found is None else (found.membership[rows], found.codes[rows])

    def _leads(self, codes: np.ndarray) -> dict[int, str]:
        """Each community colour among ``codes`` named by its most salient member in the whole graph."""
        arrays = self._arrays
        found = self.global_map.groups(arrays) if arrays is not None else None
        if arrays is None or found is None:
            return {}
        priority = self._label_priority(arrays)
        return {code: community_lead(arrays.names, priority, np.flatnonzero(found.codes == code))
                for code in np.unique(codes[codes < GREY]).tolist()}

    def _label_priority(self, arrays: GraphArrays) -> np.ndarray:
        """``(N,)`` how much each entity deserves a name (its label, a community's): salience plus a little of
        its log-scaled degree."""
        return self._salience + 0.1 * np.log1p(arrays.degree)

    def _colour(self, rows: np.ndarray) -> Colouring:
        arrays = self._arrays
        assert arrays is not None
        ids = arrays.ids[rows]
        if self._colour_mode == "origin":
            return by_origin(self.lenses.origins_of(ids), self.lenses.colours,
                             self.lenses.origins.counts if self.lenses.origins is not None else {})
        if self._colour_mode == "fades":
            return by_fade(self.lenses.fades_of(ids), self.lenses.days, self.lenses.until_date())
        groups = self._groups(rows)
        return colour_nodes(self._colour_mode, arrays.type_codes[rows], arrays.type_names, groups,
                            self._leads(groups[1]) if groups is not None else {})

    def _draw(self, rows: np.ndarray, pos: np.ndarray, start: np.ndarray | None, left_out: int = 0) -> None:
        arrays = self._arrays
        if arrays is None:
            return
        before = self._drawn_ids
        drawn_before = self.layout_positions()  # where each entity was drawn (a written one may be placed again)
        self._rows, self._drawn_ids = rows, arrays.ids[rows]
        edges = subgraph_edges(arrays, rows)
        priority = self._label_priority(arrays)[rows]
        names = [arrays.names[r] for r in rows.tolist()]
        colouring = self._colour(rows)
        self._colour_shown = colouring.mode
        self._colouring = colouring
        self._codes = colouring.codes
        if self._chosen_code is not None and self._chosen_code not in colouring.entry_codes:
            self._chosen_code = None
        self.canvas.draw(names, pos, edges, style.node_sizes(self._salience[rows]), colouring.codes,
                         self._alpha(rows), priority, start=start)
        self.legend.set_entries(colouring.title, colouring.entries)
        if self._chosen_code is not None:
            self.legend.show_chosen(list(colouring.entry_codes).index(self._chosen_code))
        self._show_detail()
        groups = self._groups(rows)
        group_of = groups[0] if groups is not None else None
        self._regions_due += 1
        if self._mode == "global" and len(names) >= REGION_NODES:
            # a large map's regions (the hulls of thousands of points) on the event loop's next turn: its first
            # draw holds the UI thread about a third less (docs/performance.md "The UI thread at 10,000 entities")
            due = self._regions_due

            def regions() -> None:
                if due == self._regions_due:  # not after a newer draw
                    self._draw_regions(colouring, names, priority, pos, group_of)

            QTimer.singleShot(0, self, regions)
        else:
            self._draw_regions(colouring, names, priority, pos, group_of)
        self._rings()
        writing, self._writing = self._writing, False
        if self._fit_next or (not writing and self.canvas.fitted and self.canvas.needs_fit()):
            self._fit_next = False
            self.canvas.zoom_to_fit()
        if writing and len(before):  # new (or newly linked) nodes out of view get a marker; the view stays put
            written = set(self._written)
            self.canvas.point_to([n for n, i, xy in zip(names, self._drawn_ids.tolist(), pos.tolist(), strict=True)
                                  if i in written and drawn_before.get(n) != tuple(xy)])
        more = f" · {left_out:,} more on the global map" if left_out > 0 else ""
        self.info.set_full_text(f"{len(rows):,} of {plural(len(arrays), 'entity')} · {plural(len(edges), 'relation')}{more}")
        self.drawn.emit()

    def _rings(self) -> None:
        self.canvas.set_rings(self._hits, self._selection, [self._pinned] if self._pinned else [],
                              self._replay_marks if self._replay is not None else [])

    def _alpha(self, rows: np.ndarray) -> np.ndarray:
        levels = style.alpha_levels(self._temporal[rows], self.controller.params.temporal_floor)
        if self._chosen_code is not None and len(self._codes) == len(rows):
            levels = np.where(self._codes == self._chosen_code, style.ALPHA_LEVELS - 1, 0)
        return levels

    def _set_temporal(self, params: Any) -> None:
        if self._arrays is not None:
            self._temporal_key, self._temporal = temporal_key(params), temporal_factor(self._arrays, params)

    def _on_params(self, params: Any) -> None:
        """Only the decay changes how nodes look (their opacity); other parameters re-rank the results,
        which reach the view as hits (``results_reranked``)."""
        if self._arrays is None or temporal_key(params) == self._temporal_key:
            return
        self._set_temporal(params)
        if len(self._rows):
            self.canvas.restyle(self._codes, self._alpha(self._rows))

    # --- controller signals and mouse -------------------------------------------------------------

    def _on_changes(self, changes: list[Any]) -> None:
        if not any(change.entity_ids for change in changes):  # e.g. saved scoring parameters
            return
        for change in changes:
            if change.op in CREATING_OPS and len(change.entity_ids) <= WRITTEN_KEPT:
                self._written = [i for i in self._written if i not in change.entity_ids] + sorted(change.entity_ids)
        self._written = self._written[-WRITTEN_KEPT:]
        # Throttle, not debounce: a steady stream of agent writes still shows up every RELOAD_DELAY_MS.
        if not self._reload_timer.isActive():
            self._reload_timer.start()

    def _on_selection(self, names: list[str]) -> None:
        self._selection = list(names)
        if self._mode == "focus":
            self._refresh()
        else:
            self._rings()
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
            self._rings()

    def _on_node_clicked(self, index: int, double: bool, ctrl: bool) -> None:
        if self._arrays is None or index >= len(self._rows):
            return
        name = self._arrays.names[int(self._rows[index])]
        if double:
            self.edit_requested.emit(name)
            self.expand(name)
        else:
            self.controller.select(focus.clicked_selection(self.controller.selection, name, ctrl))
