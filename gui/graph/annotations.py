"""The graph view's legend clicks, hover card, new-node markers and community regions, as a mixin of
:class:`~limbic.gui.graph.view.GraphView` (it uses the view's arrays, drawn rows, colouring, legend, card,
canvas and lenses, declared below for type checking).

- A click on a legend entry highlights its nodes (the others fade); in *Who wrote it* the chosen origin's
  writes are listed in order, in *What fades next* the fading memories with their dates.
- Hovering a node shows its card (:mod:`limbic.gui.graph.card`), its details read off the UI thread without
  recording a use.
- On a large global map coloured by community, the largest communities are drawn as named regions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QPoint

from limbic.core.service.graph_arrays import GraphArrays
from limbic.gui.controller import AppController
from limbic.gui.graph import style
from limbic.gui.graph.canvas import GraphCanvas
from limbic.gui.graph.card import HoverCard, card_html
from limbic.gui.graph.colouring import Colouring, community_lead
from limbic.gui.graph.legend import GraphLegend
from limbic.gui.graph.lenses import Lenses
from limbic.gui.widgets import plural

REGIONS = 30          # community regions drawn (and named) on a large global map
MIN_REGION = 20       # nodes: smaller communities get no region
REGION_NODES = 2000   # drawn nodes from which the global map shows community regions


class Annotations:
    """Legend, card, markers and regions of the graph view (mixed into ``GraphView``)."""

    controller: AppController
    canvas: GraphCanvas
    card: HoverCard
    legend: GraphLegend
    lenses: Lenses
    _arrays: GraphArrays | None
    _index: dict[str, int]
    _rows: np.ndarray
    _drawn_ids: np.ndarray
    _codes: np.ndarray
    _colouring: Colouring | None
    _colour_shown: str
    _chosen_code: int | None
    _details: dict[int, Any]
    _reading: int | None
    _mode: str
    _channel: str
    _alpha: Callable[[np.ndarray], np.ndarray]  # the drawn rows' opacity levels (GraphView)
    _index_of_id: Callable[[int], int | None]  # the arrays' row of an entity id (GraphView)

    def _draw_regions(self, colouring: Colouring, names: list[str], priority: np.ndarray, pos: np.ndarray,
                      groups: np.ndarray | None) -> None:
        """The :data:`REGIONS` largest communities as labelled regions on a large global map (none elsewhere),
        in their colour (grey past the palette)."""
        if self._mode != "global" or colouring.mode != "community" or groups is None or len(names) < REGION_NODES:
            self.canvas.set_regions([])
            return
        labels, sizes = np.unique(groups, return_counts=True)
        regions = []
        for group in labels[np.argsort(-sizes, kind="stable")][:REGIONS].tolist():
            members = np.flatnonzero(groups == group)
            if len(members) < MIN_REGION:
                break
            code = int(np.bincount(colouring.codes[members]).argmax())
            regions.append((pos[members], style.type_colour(code),
                            f"{community_lead(names, priority, members)} ({len(members):,})"))
        self.canvas.set_regions(regions)

    def _legend_clicked(self, index: int) -> None:
        """Highlight the nodes of legend entry ``index`` (the others fade); ``-1`` shows all again. In *Who wrote
        it* the chosen origin's writes are listed in order."""
        colouring = self._colouring
        self._chosen_code = colouring.entry_codes[index] if colouring and 0 <= index < len(colouring.entry_codes) \
            else None
        if len(self._rows):
            self.canvas.restyle(self._codes, self._alpha(self._rows))
        if colouring is not None and colouring.mode == "origin" and self._chosen_code is not None and self._arrays:
            origins = self.lenses.shown_origins(self.lenses.origins_of(self._drawn_ids))
            if 0 <= index < len(origins):
                self.lenses.load_writes(origins[index], self._show_detail)
                return
        self._show_detail()

    def _show_detail(self) -> None:
        mode = self._colour_shown
        if mode == "fades":
            rows = self.lenses.fade_rows()
            self.legend.set_detail(f"{len(self.lenses.fades or []):,} fade within {self.lenses.days:g} days (by "
                                   f"{self.lenses.until_date()}), soonest first (click: select)"
                                   if self.lenses.fades is not None else "reading…", rows)
        elif mode == "origin" and self._chosen_code is not None and self.lenses.writes is not None:
            origin, writes = self.lenses.writes
            self.legend.set_detail(f"{self.lenses.label(origin)}: {plural(len(writes), 'write')}, oldest first",
                                   self.lenses.write_rows())
        else:
            self.legend.set_detail("", [])

    def _on_hover(self, index: int, where: QPoint) -> None:
        arrays = self._arrays
        if index < 0 or arrays is None or index >= len(self._rows):
            self.card.hide()
            self.card.name = None
            return
        row = int(self._rows[index])
        name, entity_id = arrays.names[row], int(arrays.ids[row])
        entity_type = arrays.type_names[int(arrays.type_codes[row])]
        relations, last = int(arrays.degree[row]), float(arrays.last_access[row])
        self.card.show_at(name, card_html(name, entity_type, relations, last, self._details.get(entity_id)), where)
        if self._details.get(entity_id) is None and self._reading != entity_id:  # a newer hover drops an older read
            self._reading = entity_id
            # by id: a name may be held by several projects (and the read records no use: looking is not using)
            self.controller.run(self.controller.service.entities.get_entity_by_id, entity_id,
                                on_success=lambda detail: self._detail_read(entity_id, detail),
                                on_failure=lambda _error: None, channel=self._channel + "-card")

    def _detail_read(self, entity_id: int, detail: Any) -> None:
        self._details[entity_id] = detail
        self._reading = None
        arrays = self._arrays
        row = self._index_of_id(entity_id)
        if self.card.isVisible() and self.card.name == detail.entity.name and arrays is not None and row is not None:
            html = card_html(detail.entity.name, arrays.type_names[int(arrays.type_codes[row])], int(arrays.degree[row]),
                             float(arrays.last_access[row]), detail)
            self.card.show_at(detail.entity.name, html, self.card.pos() - QPoint(16, 16))

    def _go_to(self, name: str) -> None:
        self.canvas.center_on(name)
        self.canvas.point_to([n for n in self.canvas.markers.shown if n != name])

