"""Which entities the focus view draws, and the worker step that places and groups them.

:func:`focus_rows` picks the selection, the search hits, the expanded nodes and their neighbours (the
most salient ones past :data:`FOCUS_LIMIT`), or the :data:`OVERVIEW_SIZE` most used and connected
entities when there is nothing to focus on. :func:`arrange_view` runs off the UI thread: positions
(:func:`limbic.gui.graph.positions.arrange`). :func:`glide_start` says where each node starts when a new
layout is animated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from limbic.core.service.graph_arrays import GraphArrays, neighbours
from limbic.gui.graph.positions import Arrangement, arrange

FOCUS_LIMIT = 300      # most nodes drawn in the focus view
OVERVIEW_SIZE = FOCUS_LIMIT  # nodes shown when nothing is selected or found: a memory file imported beside the
                             # sample (229 entities) is drawn whole, not just its few best-connected entities


def node_weight(arrays: GraphArrays, salience: np.ndarray) -> np.ndarray:
    """``(N,) float64``: salience plus log-scaled degree (which nodes matter most when not all fit)."""
    top_degree = max(int(arrays.degree.max(initial=0)), 1)
    return salience + np.log1p(arrays.degree) / np.log1p(top_degree)


def focus_rows(arrays: GraphArrays, salience: np.ndarray, mask: np.ndarray, seeds: Iterable[int],
               extra: Iterable[int] = (), kept: Iterable[int] = ()) -> np.ndarray:
    """Sorted ``(K,) int64`` rows to draw: the ``seeds`` (rows of the selection, hits and expanded nodes)
    and their neighbours among the ``mask`` ``(N,) bool`` (seeds always), the heaviest past
    :data:`FOCUS_LIMIT`; without seeds the :data:`OVERVIEW_SIZE` heaviest visible entities, and the visible
    ``kept`` rows (drawn before a write: a write that reweighs the last places moves none of them out). The
    ``extra`` rows (entities just written, the pinned one, what fades) join either way, with their neighbours."""
    weight = node_weight(arrays, salience)
    seed_rows = np.array(sorted(set(seeds)), dtype=np.int64)
    extra_rows = np.array(sorted(set(extra)), dtype=np.int64)
    if not len(seed_rows):
        candidates = np.flatnonzero(mask)
        kept_rows = np.array(sorted(set(kept)), dtype=np.int64)
        rows = np.union1d(candidates[np.argsort(-weight[candidates], kind="stable")[:OVERVIEW_SIZE]],
                          kept_rows[mask[kept_rows]])
        if not len(extra_rows):
            return rows
        seed_rows = extra_rows
        around = neighbours(arrays, extra_rows, depth=1)
        return np.union1d(rows, around[mask[around] | np.isin(around, extra_rows)])
    seed_rows = np.union1d(seed_rows, extra_rows)
    rows = neighbours(arrays, seed_rows, depth=1)
    is_seed = np.isin(rows, seed_rows)
    keep = mask[rows] | is_seed
    rows, is_seed = rows[keep], is_seed[keep]
    if len(rows) > FOCUS_LIMIT:
        best = np.argsort(-(weight[rows] + 10.0 * is_seed), kind="stable")[:FOCUS_LIMIT]
        rows = np.sort(rows[best])
    return rows


def arrange_view(store_ids: np.ndarray, store_pos: np.ndarray, drawn_ids: np.ndarray, ids: np.ndarray,
                 edges: np.ndarray, how: str, current: np.ndarray | None, gap: float | np.ndarray = 0.5,
                 anchor: np.ndarray | None = None) -> Arrangement:
    """Worker: the :class:`~limbic.gui.graph.positions.Arrangement` of ``ids`` (``how``, ``gap``, ``anchor``: see
    :func:`~limbic.gui.graph.positions.arrange`)."""
    return arrange(store_ids, store_pos, drawn_ids, ids, edges, how=how, current=current, gap=gap, anchor=anchor)


def glide_start(old_ids: np.ndarray, old_pos: np.ndarray, ids: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``(N, 2)`` start positions of an animated change: where each node of ``ids`` is drawn now, or its
    new position ``pos`` when it is not drawn yet (it appears in place)."""
    start = np.array(pos, dtype=np.float64)
    if len(old_ids):
        order = np.argsort(old_ids)
        where = np.minimum(np.searchsorted(old_ids, ids, sorter=order), len(old_ids) - 1)
        found = old_ids[order[where]] == ids
        start[found] = old_pos[order[where[found]]]
    return start


MAX_TYPE_FILTERS = 40
"""Entries of the type menu; rarer types share one "other types" entry."""


@dataclass
class Filters:
    """What the graph view hides: entity types (``"other types"`` hides every type past :data:`MAX_TYPE_FILTERS`),
    statuses, and the entities where ``keep(arrays)`` ``(N,) bool`` is False (the project filter, the time slider)."""

    types: set[str] = field(default_factory=set)
    statuses: set[str] = field(default_factory=set)
    keep: Callable[[GraphArrays], np.ndarray] | None = None

    def show(self, hidden: set[str], value: str, visible: bool) -> None:
        """Show (or hide) ``value`` of ``hidden`` (``self.types`` or ``self.statuses``)."""
        (hidden.discard if visible else hidden.add)(value)

    def mask(self, arrays: GraphArrays, always: Sequence[int]) -> np.ndarray:
        """``(N,) bool``: the entities these filters leave shown, and the rows ``always`` (the selection)."""
        mask = np.ones(len(arrays), dtype=bool)
        if self.types:
            hidden_codes = [i for i, t in enumerate(arrays.type_names) if t in self.types]
            if "other types" in self.types:
                hidden_codes += list(range(MAX_TYPE_FILTERS, len(arrays.type_names)))
            mask &= ~np.isin(arrays.type_codes, hidden_codes)
        if self.statuses:
            mask &= ~np.isin(np.array(arrays.statuses, dtype=object), list(self.statuses))
        if self.keep is not None:
            mask &= self.keep(arrays)
        mask[list(always)] = True
        return mask


def clicked_selection(current: Sequence[str], name: str, ctrl: bool) -> list[str]:
    """The selection after a click on ``name``: only it, or with Ctrl it is added to (or taken out of) ``current``."""
    if not ctrl:
        return [name]
    return [n for n in current if n != name] if name in current else [*current, name]
