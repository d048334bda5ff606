"""Semantic duplicates among observations: pairs of live observations whose stored vectors are close, grouped
into clusters. Detection only: nothing here writes.

Each observation's vector embeds ``"<entity name>: <content>"`` (:func:`~limbic.core.store.indexing.observation_passage`),
so the same words said of two different entities are further apart than a paraphrase about one. A pair is a
duplicate when its cosine similarity reaches the threshold and the two do not differ in a checkable value or in
polarity (:mod:`limbic.core.curation.values`: those pairs disagree rather than repeat). The default threshold,
:data:`DEFAULT_THRESHOLD`, was calibrated with all-MiniLM-L6-v2 on the labelled pairs of
``tests/fixtures/duplicate_pairs.json`` (docs/curation.md "Calibration").

All pairs are found exactly, by a blocked matrix product over the unit vectors (:func:`similar_pairs`:
``ROW_BLOCK × COLUMN_BLOCK`` similarities at a time, the upper triangle only); a cluster is a centre and its
duplicates (:func:`star_clusters`), so that a chain of pairs never joins statements that are not alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from limbic.core.curation import values
from limbic.core.store import Connection, vec_rows
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, vector_dimension

DEFAULT_THRESHOLD = 0.80
"""Cosine similarity from which two observations are proposed as duplicates (docs/curation.md "Calibration")."""
APPROXIMATE_FROM = 20_000  # rows from which an approximate scan may be asked for (the consolidation report)
PROBED = 6  # inverted lists searched per row by the approximate scan
TRAINING_PER_LIST = 64  # rows sampled per inverted list to place the lists
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


def load_observation_rows(conn: Connection, model: str, now: float) -> ObservationRows:
    """The live observations (not superseded, not expired at ``now``, UTC seconds) that have a vector made by
    ``model``, in one read of the vector table."""
    dimension = vector_dimension(conn, OBSERVATION_VECTOR_TABLE) or 0
    meta: list[tuple[Any, ...]] = conn.execute(_ROWS + " ORDER BY m.observation_id", (model, now)).fetchall()
    ids = np.array([r[0] for r in meta], dtype=np.int64)
    entity = np.array([r[1] for r in meta], dtype=np.int64)
    unit = np.zeros((len(ids), dimension), dtype=np.float32)
    found = np.zeros(len(ids), dtype=bool)
    if len(ids):
        for rowid, blob in vec_rows.scan(conn, OBSERVATION_VECTOR_TABLE):
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


def star_clusters(n: int, a: np.ndarray, b: np.ndarray, sims: np.ndarray) -> np.ndarray:
    """Each row's group ``(n,) int64`` (``-1``: none), so that every member of a group is a duplicate of its
    centre (no chain of pairs drifting away from the first): within each connected component of the pairs
    (scipy), the row with the most pairs (then the highest summed similarity, then the lowest row) is a centre
    and takes its duplicates not taken yet; then the next. A row whose duplicates were all taken by other
    centres is left out until those are settled. Every group has two rows or more."""
    graph = coo_matrix((sims.astype(np.float64), (a, b)), shape=(n, n)).tocsr()
    graph = (graph + graph.T).tocsr()
    degree = np.diff(graph.indptr)
    strength = np.asarray(graph.sum(axis=1)).ravel()
    _, labels = connected_components(graph, directed=False)
    involved = np.flatnonzero(degree)
    order = involved[np.lexsort((involved, -strength[involved], -degree[involved], labels[involved]))]
    group = np.full(n, -1, dtype=np.int64)
    count = 0
    for centre in order.tolist():
        if group[centre] >= 0:
            continue
        neighbours = graph.indices[graph.indptr[centre]:graph.indptr[centre + 1]]
        free = neighbours[group[neighbours] < 0]
        if len(free):
            group[centre] = count
            group[free] = count
            count += 1
    return group


def approximate_pairs(unit: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """As :func:`similar_pairs` without queries, but each row compared only with the rows of the
    :data:`PROBED` inverted lists nearest to it (faiss ``IndexIVFFlat``, inner product, about √n lists): every
    similarity returned is exact, a few pairs may be missed (recall 0.997 at 0.80 on 50,044 Debian
    observations, docs/performance.md). Below :data:`APPROXIMATE_FROM` rows it is :func:`similar_pairs`."""
    n, d = unit.shape
    if n < APPROXIMATE_FROM:
        return similar_pairs(unit, threshold)
    import faiss

    rows = np.ascontiguousarray(unit, dtype=np.float32)
    lists = int(np.sqrt(n))
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, lists, faiss.METRIC_INNER_PRODUCT)
    sample = np.random.default_rng(0).choice(n, min(n, TRAINING_PER_LIST * lists), replace=False)
    index.train(rows[np.sort(sample)])  # the lists' centres from a sample: 0.2 s instead of 4 s at 50,000 rows
    index.add(rows)
    index.nprobe = PROBED
    limits, sims, found = index.range_search(rows, float(threshold))
    left = np.repeat(np.arange(n, dtype=np.int64), np.diff(limits).astype(np.int64))
    keep = left < found
    return left[keep], found[keep].astype(np.int64), sims[keep].astype(np.float32)


@dataclass(frozen=True, slots=True)
class Cluster:
    """Rows that repeat one another: ``rows`` ``(m,) int64`` (m ≥ 2, ascending) and the duplicate pairs among
    them, most similar first: ``a``, ``b`` ``(p,) int64`` rows and ``sims`` ``(p,) float32``."""

    rows: np.ndarray
    a: np.ndarray
    b: np.ndarray
    sims: np.ndarray

    @property
    def best(self) -> float:
        return float(self.sims[0])

    @property
    def lowest(self) -> float:
        return float(self.sims[-1])


def _differ(rows: ObservationRows, texts: dict[int, str], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Which pairs ``(a, b)`` (rows) differ checkably (:func:`limbic.core.curation.values.differ`), ``(p,) bool``:
    each row's signature is read once and numbered, then the pairs are compared as arrays."""
    involved = np.unique(np.concatenate([a, b]))
    numbers: dict[values.Signature, int] = {}
    code = np.zeros(int(involved.max()) + 1 if len(involved) else 0, dtype=np.int64)
    has_values = np.zeros(len(code), dtype=bool)
    negated = np.zeros(len(code), dtype=bool)
    for row in involved.tolist():
        signature = values.signature(texts.get(int(rows.observation[row]), ""))
        code[row] = numbers.setdefault(signature, len(numbers))
        has_values[row], negated[row] = bool(signature.values), signature.negation
    return (negated[a] != negated[b]) | (has_values[a] & has_values[b] & (code[a] != code[b]))


def duplicate_clusters(rows: ObservationRows, texts: dict[int, str], threshold: float, *,
                       queries: np.ndarray | None = None, kept: frozenset[tuple[int, int]] = frozenset(),
                       approximate: bool = False) -> list[Cluster]:
    """Clusters of duplicate observations among ``rows`` (``texts`` maps observation id → content): pairs at or
    above ``threshold`` that do not differ checkably and that a person has not kept apart (``kept``:
    ``(smaller, larger)`` observation ids), grouped around centres (:func:`star_clusters`). With ``queries``
    (row indices), only pairs touching them; ``approximate`` (without queries) finds the pairs with
    :func:`approximate_pairs`. Most similar first, then larger first."""
    if approximate and queries is None:
        a, b, sims = approximate_pairs(rows.unit, threshold)
    else:
        a, b, sims = similar_pairs(rows.unit, threshold, queries)
    if not len(a):
        return []
    keep = ~_differ(rows, texts, a, b)
    if kept:
        n = int(rows.observation.max()) + 1
        ids_a, ids_b = rows.observation[a], rows.observation[b]
        pair = np.minimum(ids_a, ids_b) * n + np.maximum(ids_a, ids_b)
        kept_pairs = np.array([x * n + y for x, y in kept if y < n], dtype=np.int64)
        keep &= ~np.isin(pair, kept_pairs)
    a, b, sims = a[keep], b[keep], sims[keep]
    if not len(a):
        return []
    group = star_clusters(len(rows), a, b, sims)
    inside = (group[a] >= 0) & (group[a] == group[b])
    a, b, sims = a[inside], b[inside], sims[inside]
    if not len(a):
        return []
    order = np.lexsort((b, a, -sims, group[a]))
    a, b, sims = a[order], b[order], sims[order]
    bounds = np.flatnonzero(np.r_[True, group[a][1:] != group[a][:-1], True])
    rows_by_group = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[rows_by_group], np.arange(int(group.max()) + 2))
    clusters = []
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        label = int(group[a[start]])
        members = rows_by_group[starts[label]:starts[label + 1]]
        clusters.append(Cluster(np.sort(members), a[start:end], b[start:end], sims[start:end]))
    clusters.sort(key=lambda c: (-c.best, -len(c.rows), int(c.rows[0])))
    return clusters
