"""Semantic duplicates among observations: pairs of live observations whose stored vectors are close, grouped
into clusters. Detection only: nothing here writes.

Each observation's vector embeds ``"<entity name>: <content>"`` (:func:`~limbic.core.store.indexing.observation_passage`),
so the same words said of two different entities are further apart than a paraphrase about one. A pair is a
duplicate when its cosine similarity reaches the threshold and the two do not differ in a checkable value or in
polarity (:mod:`limbic.core.curation.values`: those pairs disagree rather than repeat). The default threshold,
:data:`DEFAULT_THRESHOLD`, was calibrated with all-MiniLM-L6-v2 on the labelled pairs of
``tests/fixtures/duplicate_pairs.json`` (docs/curation.md "Calibration").

All pairs are found exactly, by a blocked matrix product over the unit vectors (:func:`similar_pairs`:
``ROW_BLOCK × COLUMN_BLOCK`` similarities at a time, the upper triangle only); clusters are the connected
components of the pairs (scipy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np
from scipy.sparse import coo_matrix  # type: ignore[import-untyped]
from scipy.sparse.csgraph import connected_components  # type: ignore[import-untyped]

from limbic.core.curation import values
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, vector_dimension

DEFAULT_THRESHOLD = 0.80
"""Cosine similarity from which two observations are proposed as duplicates (docs/curation.md "Calibration")."""
ROW_BLOCK = 1024
COLUMN_BLOCK = 8192  # a block of similarities is 1024 × 8192 float32 = 32 MB

_ROWS = (
    "SELECT m.observation_id, m.entity_id FROM observation_embedding_meta m "
    "JOIN observations o ON o.id = m.observation_id "
    "WHERE m.model = ?1 AND o.superseded_at IS NULL AND (o.expires_at IS NULL OR o.expires_at > ?2)"
)


@dataclass(frozen=True, slots=True)
class ObservationRows:
    """Live, unexpired observations with a vector of one model: ``observation`` ``(n,) int64`` ids
    ascending, ``entity`` ``(n,) int64`` their entities, ``unit`` ``(n, d) float32`` L2-normalised."""

    observation: np.ndarray
    entity: np.ndarray
    unit: np.ndarray

    def __len__(self) -> int:
        return len(self.observation)


def load_observation_rows(conn: apsw.Connection, model: str, now: float) -> ObservationRows:
    """The live observations (not superseded, not expired at ``now``, UTC seconds) that have a vector made by
    ``model``, in one read of the vector table."""
    dimension = vector_dimension(conn, OBSERVATION_VECTOR_TABLE) or 0
    meta: list[tuple[Any, ...]] = conn.execute(_ROWS + " ORDER BY m.observation_id", (model, now)).fetchall()
    ids = np.array([r[0] for r in meta], dtype=np.int64)
    entity = np.array([r[1] for r in meta], dtype=np.int64)
    unit = np.zeros((len(ids), dimension), dtype=np.float32)
    found = np.zeros(len(ids), dtype=bool)
    if len(ids):
        for rowid, blob in conn.execute(f"SELECT rowid, embedding FROM {OBSERVATION_VECTOR_TABLE}"):
            at = int(np.searchsorted(ids, rowid))
            if at < len(ids) and ids[at] == rowid:
                unit[at] = np.frombuffer(blob, dtype=np.float32)
                found[at] = True
    ids, entity, unit = ids[found], entity[found], unit[found]
    norms = np.linalg.norm(unit, axis=1, keepdims=True)
    np.divide(unit, np.where(norms == 0, 1.0, norms), out=unit)
    return ObservationRows(ids, entity, unit)


def similar_pairs(unit: np.ndarray, threshold: float,
                  queries: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of rows ``i < j`` of ``unit`` ``(n, d) float32`` (unit rows) whose cosine similarity is at
    least ``threshold``: ``(i (p,) int64, j (p,) int64, similarity (p,) float32)``. With ``queries`` (row
    indices), only the pairs with at least one row among them. Exact: a blocked matrix product."""
    n = len(unit)
    lefts, rights, sims = [np.empty(0, np.int64)], [np.empty(0, np.int64)], [np.empty(0, np.float32)]
    rows = np.arange(n, dtype=np.int64) if queries is None else np.unique(np.asarray(queries, dtype=np.int64))
    for start in range(0, len(rows), ROW_BLOCK):
        left = rows[start:start + ROW_BLOCK]
        first = int(left[0]) if queries is None else 0  # the upper triangle: columns from the block's first row
        for column in range(first, n, COLUMN_BLOCK):
            block = unit[left] @ unit[column:column + COLUMN_BLOCK].T
            i, j = np.nonzero(block >= threshold)
            a, b = left[i], j.astype(np.int64) + column
            keep = a < b if queries is None else a != b
            lefts.append(np.minimum(a, b)[keep])
            rights.append(np.maximum(a, b)[keep])
            sims.append(block[i[keep], j[keep]])
    a, b, s = np.concatenate(lefts), np.concatenate(rights), np.concatenate(sims)
    if queries is None:
        return a, b, s
    key = a * n + b  # a pair found from both of its rows is kept once
    _, first_at = np.unique(key, return_index=True)
    return a[first_at], b[first_at], s[first_at]


@dataclass(frozen=True, slots=True)
class Cluster:
    """Rows that repeat one another: ``rows`` ``(m,) int64`` (m ≥ 2, ascending) and the duplicate ``pairs``
    among them as ``(row, row, similarity)``, most similar first."""

    rows: np.ndarray
    pairs: tuple[tuple[int, int, float], ...]

    @property
    def best(self) -> float:
        return self.pairs[0][2]


def duplicate_clusters(rows: ObservationRows, texts: dict[int, str], threshold: float, *,
                       queries: np.ndarray | None = None,
                       kept: frozenset[tuple[int, int]] = frozenset()) -> list[Cluster]:
    """Clusters of duplicate observations among ``rows`` (``texts`` maps observation id → content): pairs at or
    above ``threshold`` that do not differ checkably and that a person has not kept apart (``kept``:
    ``(smaller, larger)`` observation ids), joined into connected components. With ``queries`` (row indices),
    only pairs touching them. Most similar first, then larger first."""
    a, b, sims = similar_pairs(rows.unit, threshold, queries)
    if not len(a):
        return []
    involved = np.unique(np.concatenate([a, b]))
    signatures = {int(r): values.signature(texts.get(int(rows.observation[r]), "")) for r in involved}
    keep = np.fromiter((not values.differ(signatures[int(x)], signatures[int(y)]) for x, y in zip(a, b, strict=True)),
                       dtype=bool, count=len(a))
    if kept:
        ids_a, ids_b = rows.observation[a], rows.observation[b]
        keep &= np.fromiter(((int(min(x, y)), int(max(x, y))) not in kept for x, y in zip(ids_a, ids_b, strict=True)),
                            dtype=bool, count=len(a))
    a, b, sims = a[keep], b[keep], sims[keep]
    if not len(a):
        return []
    n = len(rows)
    graph = coo_matrix((np.ones(len(a), dtype=np.int8), (a, b)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    component = labels[a]
    order = np.lexsort((b, a, -sims, component))
    clusters = []
    bounds = np.flatnonzero(np.r_[True, component[order][1:] != component[order][:-1], True])
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        chosen = order[start:end]
        members = np.unique(np.concatenate([a[chosen], b[chosen]]))
        pairs = tuple((int(a[k]), int(b[k]), float(sims[k])) for k in chosen)
        clusters.append(Cluster(members, pairs))
    clusters.sort(key=lambda c: (-c.best, -len(c.rows), int(c.rows[0])))
    return clusters
