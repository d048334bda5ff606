"""The whole memory graph as numpy arrays, for drawing and layout (no Qt here).

:func:`build_graph_arrays` turns the rows read by :mod:`limbic.core.store.graph` into arrays, and
:func:`patch_graph_arrays` replaces just the entities a change touched; ``MemoryService.entities.graph_arrays``
does both off the UI thread, so the GUI hands the arrays to pyqtgraph in one call. The other
functions are pure numpy over a :class:`GraphArrays` value: salience, temporal factor,
neighbourhoods and sub-graphs.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, replace
from itertools import compress
from typing import Any, cast

import numpy as np

from limbic.core.search import terms
from limbic.core.search.params import ScoringParams
from limbic.core.store.graph import GraphRows


@dataclass(frozen=True, slots=True, eq=False)
class GraphArrays:
    """The graph in array form; row ``i`` of every per-node array is the same entity.

    Attributes:
        ids: ``(N,) int64`` entity ids, ascending.
        names: the ``N`` entity names.
        type_codes: ``(N,) int32`` index into ``type_names``; types are ordered by frequency, largest first.
        type_names: the distinct entity types.
        statuses: the ``N`` statuses (active, paused, completed, archived).
        created_at: ``(N,) float64`` UTC unix seconds.
        access_count: ``(N,) int64`` number of recorded accesses.
        last_access: ``(N,) float64`` UTC unix seconds of the last access, ``nan`` when never accessed.
        edges: ``(M, 2) int32`` row indices ``(source, target)`` of the active relations.
        edge_types: the ``M`` relation types.
        degree: ``(N,) int64`` number of active relations touching each entity.
        change_id: the newest row of the ``changes`` log when the arrays were read.
    """

    ids: np.ndarray
    names: tuple[str, ...]
    type_codes: np.ndarray
    type_names: tuple[str, ...]
    statuses: tuple[str, ...]
    created_at: np.ndarray
    access_count: np.ndarray
    last_access: np.ndarray
    edges: np.ndarray
    edge_types: tuple[str, ...]
    degree: np.ndarray
    change_id: int = 0

    def __len__(self) -> int:
        return len(self.names)

    def index_of(self) -> dict[str, int]:
        """Name → row index."""
        return {name: i for i, name in enumerate(self.names)}


def build_graph_arrays(
    entity_rows: list[tuple[Any, ...]], relation_rows: list[tuple[int, int, str]], change_id: int = 0
) -> GraphArrays:
    """Arrays from rows ``(id, name, type, status, created_at, access_count, last_access)`` ordered by
    id and ``(from_id, to_id, relation_type)`` (:mod:`limbic.core.store.graph`); relations whose
    endpoints are not among the rows are dropped."""
    n, m = len(entity_rows), len(relation_rows)
    raw = np.empty((m, 2), dtype=np.int64)
    if m:
        raw[:, 0] = np.fromiter((r[0] for r in relation_rows), dtype=np.int64, count=m)
        raw[:, 1] = np.fromiter((r[1] for r in relation_rows), dtype=np.int64, count=m)
    return _assemble(
        ids=np.fromiter((r[0] for r in entity_rows), dtype=np.int64, count=n),
        names=[r[1] for r in entity_rows],
        types=[r[2] for r in entity_rows],
        statuses=[r[3] for r in entity_rows],
        created=np.fromiter((r[4] for r in entity_rows), dtype=np.float64, count=n),
        access=np.fromiter((r[5] for r in entity_rows), dtype=np.int64, count=n),
        last=np.fromiter((math.nan if r[6] is None else r[6] for r in entity_rows), dtype=np.float64, count=n),
        raw_edges=raw,
        edge_types=[r[2] for r in relation_rows],
        change_id=change_id,
    )


def _assemble(
    *, ids: np.ndarray, names: list[str], types: list[str], statuses: list[str], created: np.ndarray,
    access: np.ndarray, last: np.ndarray, raw_edges: np.ndarray, edge_types: list[str], change_id: int,
) -> GraphArrays:
    """:class:`GraphArrays` from per-entity columns ordered by id and ``(M, 2) int64`` relation endpoints (ids)."""
    n = len(ids)
    type_names = tuple(t for t, _ in sorted(Counter(types).items(), key=lambda kv: (-kv[1], kv[0])))
    code_of = {t: i for i, t in enumerate(type_names)}
    type_codes = np.fromiter((code_of[t] for t in types), dtype=np.int32, count=n)
    rows = np.searchsorted(ids, raw_edges) if n else np.zeros_like(raw_edges)
    rows_clipped = np.minimum(rows, max(n - 1, 0))
    known = (rows < n) & (ids[rows_clipped] == raw_edges) if n else np.zeros_like(raw_edges, dtype=bool)
    keep = known.all(axis=1)
    edges = rows_clipped[keep].astype(np.int32)
    degree = np.bincount(edges.ravel(), minlength=n).astype(np.int64) if n else np.zeros(0, np.int64)
    return GraphArrays(
        ids=ids,
        names=tuple(names),
        type_codes=type_codes,
        type_names=type_names,
        statuses=tuple(statuses),
        created_at=created,
        access_count=access,
        last_access=last,
        edges=edges.reshape(-1, 2),
        edge_types=tuple(edge_types) if keep.all() else tuple(compress(edge_types, cast(list[bool], keep.tolist()))),
        degree=degree,
        change_id=change_id,
    )


def patch_graph_arrays(arrays: GraphArrays, rows: GraphRows) -> GraphArrays:
    """``arrays`` with the entities of ``rows.touched`` replaced by ``rows`` (the whole graph when
    ``rows.touched`` is ``None``): touched entities missing from ``rows`` are dropped, and the active
    relations touching them are the ones in ``rows``. The same entities, in the same order, and the
    same relations as :func:`build_graph_arrays` over a full read of the same snapshot (the relations
    read again come last); the untouched rows are carried over as arrays, not read again."""
    if rows.touched is None:
        return build_graph_arrays(rows.entities, rows.relations, rows.change_id)
    if not rows.touched:
        return replace(arrays, change_id=rows.change_id)
    touched = np.fromiter(rows.touched, dtype=np.int64, count=len(rows.touched))
    fresh = build_graph_arrays(rows.entities, [], rows.change_id)
    kept = np.flatnonzero(~np.isin(arrays.ids, touched))
    ids = np.concatenate([arrays.ids[kept], fresh.ids])
    order = np.argsort(ids, kind="stable")
    picks = order.tolist()

    def column(old: tuple[str, ...], new: tuple[str, ...]) -> list[str]:
        both = [old[i] for i in kept.tolist()] + list(new)
        return [both[i] for i in picks]

    old_types = tuple(arrays.type_names[c] for c in arrays.type_codes.tolist())
    new_types = tuple(fresh.type_names[c] for c in fresh.type_codes.tolist())

    edge_ids = arrays.ids[arrays.edges] if len(arrays.edges) else np.zeros((0, 2), dtype=np.int64)
    carried = ~np.isin(edge_ids, touched).any(axis=1)
    raw = np.concatenate([edge_ids[carried], np.array([r[:2] for r in rows.relations], dtype=np.int64).reshape(-1, 2)])
    types = [*compress(arrays.edge_types, cast(list[bool], carried.tolist())), *(r[2] for r in rows.relations)]
    return _assemble(
        ids=ids[order],
        names=column(arrays.names, fresh.names),
        types=column(old_types, new_types),
        statuses=column(arrays.statuses, fresh.statuses),
        created=np.concatenate([arrays.created_at[kept], fresh.created_at])[order],
        access=np.concatenate([arrays.access_count[kept], fresh.access_count])[order],
        last=np.concatenate([arrays.last_access[kept], fresh.last_access])[order],
        raw_edges=raw,
        edge_types=types,
        change_id=rows.change_id,
    )


def salience(arrays: GraphArrays) -> np.ndarray:
    """``(N,) float64`` in [0, 1]: the scorer's ``access_norm`` over the whole graph as one set,
    ``log2(1 + access_count) / log2(1 + max access_count)`` (0 when no access; :func:`terms.log_share`,
    docs/scoring.md "Limbic factors"); degree and access days are left out (the view shows degree by itself)."""
    return terms.log_share(terms.Segments.single(len(arrays)), arrays.access_count)


def temporal_factor(arrays: GraphArrays, params: ScoringParams, now: float | None = None) -> np.ndarray:
    """``(N,) float64``: the scorer's :func:`terms.temporal_factor` per entity (docs/scoring.md "Limbic
    factors"): decay since the last access, or since ``created_at`` when the entity was never accessed.
    ``now`` in UTC unix seconds (default: now)."""
    now = time.time() if now is None else now
    return terms.temporal_factor(arrays.last_access, arrays.created_at, now, params)


def neighbours(arrays: GraphArrays, rows: np.ndarray, depth: int = 1) -> np.ndarray:
    """Sorted ``(K,) int64`` row indices within ``depth`` hops of ``rows`` (``rows`` included)."""
    n = len(arrays)
    mask = np.zeros(n, dtype=bool)
    mask[np.asarray(rows, dtype=np.int64)] = True
    edges = arrays.edges
    for _ in range(depth):
        if not len(edges):
            break
        touching = mask[edges[:, 0]] | mask[edges[:, 1]]
        reached = np.zeros(n, dtype=bool)
        reached[edges[touching].ravel()] = True
        if not (reached & ~mask).any():
            break
        mask |= reached
    return np.flatnonzero(mask)


def subgraph_edges(arrays: GraphArrays, rows: np.ndarray) -> np.ndarray:
    """Edges among ``rows`` as ``(M', 2) int32`` indices *into* ``rows`` (positions 0..K-1)."""
    n = len(arrays)
    position = np.full(n, -1, dtype=np.int64)
    position[np.asarray(rows, dtype=np.int64)] = np.arange(len(rows))
    if not len(arrays.edges):
        return np.zeros((0, 2), dtype=np.int32)
    mapped = position[arrays.edges]
    inside = (mapped >= 0).all(axis=1)
    return mapped[inside].astype(np.int32).reshape(-1, 2)
