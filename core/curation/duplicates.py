"""Duplicate observations: two statements of one entity that say one fact, found from their stored vectors and
their words, grouped into clusters. Detection only: nothing here writes.

Each observation's vector embeds ``"<entity name>: <content>"`` (:func:`~limbic.core.store.indexing.observation_passage`).
Only observations of one *owner* are compared: an entity, or entities whose names are one once normalised
(:func:`~limbic.core.curation.entities.same_name_owners`: ``NIMCP Project`` / ``NIMCP_Project``, ``CPUPackage`` /
``cpu_package``). The same field or sentence on two different entities is each entity's own (:func:`shared_texts`
reports it as a shared fact, never as something to merge). A pair is a duplicate when its cosine similarity
reaches the threshold — the one similarity floor: every pair at or above it is compared by its words, none below
— and its words say the same (:func:`limbic.core.curation.statements.relation`: fields, values, identifiers,
names, polarity, state and wording agree; a short statement's every word). A pair where one side adds facts to
all of the other's is *more specific*, reported apart with "keep both" first. The default threshold was
calibrated with all-MiniLM-L6-v2 on hand-labelled pairs from real agent memory,
``tests/fixtures/duplicate_pairs_corpus.jsonl`` (docs/curation.md "Calibration"). What settling a cluster keeps
is :mod:`limbic.core.curation.survivors`.

Pairs are found exactly, owner by owner (:func:`owner_pairs`: one small matrix product per owner); in a cluster
every member repeats every other (:func:`tight_clusters`), so that neither a chain of pairs nor a statement
alike to two others joins statements that are not alike. :func:`similar_pairs` (a blocked product over all
rows) serves the entity vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from limbic.core.curation import statements
from limbic.core.store import Connection, vec_rows, vector_meta
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, vector_dimension

DEFAULT_THRESHOLD = 0.73
"""The lowest cosine similarity of two observations of one owner that may be duplicates (docs/curation.md
"Calibration"): every pair at or above it is compared by its words, none below it."""
DUPLICATE = "duplicate"
MORE_SPECIFIC = statements.MORE_SPECIFIC
ROW_BLOCK = 1024
COLUMN_BLOCK = 8192  # a block of similarities is 1024 × 8192 float32 = 32 MB


SCAN_CHUNK = 4096
"""Vector rows read from the table before they are placed in the matrix at once (6 MB at 384 dimensions)."""


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
    meta = vector_meta.live_observations(conn, model, now)
    ids = np.array([r[0] for r in meta], dtype=np.int64)
    entity = np.array([r[1] for r in meta], dtype=np.int64)
    unit = np.zeros((len(ids), dimension), dtype=np.float32)
    found = np.zeros(len(ids), dtype=bool)
    if len(ids):
        rowids: list[int] = []
        blobs: list[bytes] = []

        def place() -> None:  # the rows read so far, SCAN_CHUNK at a time
            scanned = np.array(rowids, dtype=np.int64)
            at = np.minimum(np.searchsorted(ids, scanned), len(ids) - 1)
            wanted = ids[at] == scanned
            unit[at[wanted]] = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(rowids), dimension)[wanted]
            found[at[wanted]] = True
            rowids.clear()
            blobs.clear()

        for rowid, blob in vec_rows.scan(conn, OBSERVATION_VECTOR_TABLE):
            rowids.append(rowid)
            blobs.append(blob)
            if len(rowids) == SCAN_CHUNK:
                place()
        if rowids:
            place()
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


def tight_clusters(n: int, a: np.ndarray, b: np.ndarray, sims: np.ndarray) -> np.ndarray:
    """Each row's group ``(n,) int64`` (``-1``: none), so that every member of a group is a duplicate of every
    other (no chain of pairs drifting away from the first, no two statements joined only through a third): the
    row with the most pairs (then the highest summed similarity, then the lowest row) is a centre; its free
    duplicates join it most similar first, each only if it is a duplicate of every member already in; then the
    next centre among the rows still free. Every group has two rows or more."""
    from scipy.sparse import coo_matrix  # here: importing SciPy costs a second at every start of the app

    graph = coo_matrix((sims.astype(np.float64), (a, b)), shape=(n, n)).tocsr()
    graph = (graph + graph.T).tocsr()
    degree = np.diff(graph.indptr)
    strength = np.asarray(graph.sum(axis=1)).ravel()
    involved = np.flatnonzero(degree)
    order = involved[np.lexsort((involved, -strength[involved], -degree[involved]))]
    group = np.full(n, -1, dtype=np.int64)
    count = 0
    for centre in order.tolist():
        if group[centre] >= 0:
            continue
        row = slice(graph.indptr[centre], graph.indptr[centre + 1])
        neighbours, weights = graph.indices[row], graph.data[row]
        members = [centre]
        for candidate in neighbours[np.lexsort((neighbours, -weights))].tolist():
            if group[candidate] < 0 and all(graph[candidate, m] > 0 for m in members[1:]):
                members.append(candidate)
        if len(members) > 1:
            group[members] = count
            count += 1
    return group


@dataclass(frozen=True, slots=True)
class Cluster:
    """Rows that repeat one another: ``rows`` ``(m,) int64`` (m ≥ 2, ascending) and the pairs among them, most
    similar first: ``a``, ``b`` ``(p,) int64`` rows and ``sims`` ``(p,) float32``. ``relation``:
    :data:`DUPLICATE` (each member says its centre's fact) or :data:`MORE_SPECIFIC` (two rows, the longer one
    adds facts to the other's)."""

    rows: np.ndarray
    a: np.ndarray
    b: np.ndarray
    sims: np.ndarray
    relation: str = DUPLICATE

    @property
    def best(self) -> float:
        return float(self.sims[0])

    @property
    def lowest(self) -> float:
        return float(self.sims[-1])


def owner_pairs(unit: np.ndarray, owners: np.ndarray, threshold: float,
                queries: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of rows ``i < j`` of ``unit`` ``(n, d) float32`` (unit rows) with the same ``owners`` ``(n,)
    int64`` value and a cosine similarity of at least ``threshold``: ``(i, j, similarity)`` as in
    :func:`similar_pairs`; with ``queries`` (row indices), only those touching them. Exact: one matrix product
    per owner of two rows or more (the sum of their squared sizes, not n²)."""
    order = np.argsort(owners, kind="stable")
    bounds = np.flatnonzero(np.r_[True, owners[order][1:] != owners[order][:-1], True])
    lefts, rights, sims = [np.empty(0, np.int64)], [np.empty(0, np.int64)], [np.empty(0, np.float32)]
    asked = None if queries is None else np.zeros(len(unit), dtype=bool)
    if asked is not None:
        asked[np.asarray(queries, dtype=np.int64)] = True
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        if end - start < 2:
            continue
        members = np.sort(order[start:end])
        if asked is not None and not asked[members].any():
            continue
        block = unit[members] @ unit[members].T
        i, j = np.nonzero(np.triu(block >= threshold, 1))
        lefts.append(members[i])
        rights.append(members[j])
        sims.append(block[i, j].astype(np.float32))
    a, b, s = np.concatenate(lefts), np.concatenate(rights), np.concatenate(sims)
    if asked is not None:
        touching = asked[a] | asked[b]
        a, b, s = a[touching], b[touching], s[touching]
    return a, b, s


def _relations(rows: ObservationRows, texts: dict[int, str], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each pair's verdict, ``(p,) object``: :data:`DUPLICATE`, :data:`MORE_SPECIFIC` or ``""`` (neither). Each
    text is read once (:func:`statements.read`), however many rows say it (a quarter of the rows at 10k Debian)."""
    read: dict[int, statements.Statement] = {}
    by_text: dict[str, statements.Statement] = {}
    for row in np.unique(np.concatenate([a, b])).tolist():
        text = texts.get(int(rows.observation[row]), "")
        if text not in by_text:
            by_text[text] = statements.read(text)
        read[row] = by_text[text]
    out = np.full(len(a), "", dtype=object)
    for k, (x, y) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        relation = statements.relation(read[x], read[y])
        if relation == statements.SAME:
            out[k] = DUPLICATE
        elif relation == statements.MORE_SPECIFIC:
            out[k] = MORE_SPECIFIC
    return out


def duplicate_clusters(rows: ObservationRows, texts: dict[int, str], threshold: float, *,
                       owners: np.ndarray | None = None, queries: np.ndarray | None = None,
                       kept: frozenset[tuple[int, int]] = frozenset()) -> tuple[list[Cluster], int]:
    """Clusters of duplicate observations among ``rows`` (``texts`` maps observation id → content) and the
    number of pairs compared by their words: every pair of one owner (``owners`` ``(n,) int64`` per row, default
    each row's entity) at or above ``threshold`` that a person has not kept apart (``kept``: ``(smaller,
    larger)`` observation ids). Those whose words say one fact (:func:`_relations`) are grouped so that every
    member repeats every other (:func:`tight_clusters`); then the *more specific* pairs, one cluster each. With
    ``queries`` (row indices), only pairs touching them. Duplicates first, each kind most similar first, then
    larger first."""
    a, b, sims = owner_pairs(rows.unit, rows.entity if owners is None else owners, threshold, queries)
    if kept and len(a):
        n = int(rows.observation.max()) + 1
        ids_a, ids_b = rows.observation[a], rows.observation[b]
        pair = np.minimum(ids_a, ids_b) * n + np.maximum(ids_a, ids_b)
        kept_pairs = np.array([x * n + y for x, y in kept if y < n], dtype=np.int64)
        free = ~np.isin(pair, kept_pairs)
        a, b, sims = a[free], b[free], sims[free]
    if not len(a):
        return [], 0
    verdict = _relations(rows, texts, a, b)
    clusters = _groups(len(rows), *(x[verdict == DUPLICATE] for x in (a, b, sims)))
    specific = np.flatnonzero(verdict == MORE_SPECIFIC)
    clusters.sort(key=lambda c: (-c.best, -len(c.rows), int(c.rows[0])))
    more = [Cluster(np.sort(np.array([a[k], b[k]], dtype=np.int64)), a[k:k + 1], b[k:k + 1], sims[k:k + 1],
                    MORE_SPECIFIC) for k in specific[np.argsort(-sims[specific], kind="stable")].tolist()]
    return clusters + more, len(a)


def _groups(n: int, a: np.ndarray, b: np.ndarray, sims: np.ndarray) -> list[Cluster]:
    """The duplicate pairs ``(a, b, sims)`` grouped (:func:`tight_clusters`), pairs most similar first."""
    if not len(a):
        return []
    group = tight_clusters(n, a, b, sims)
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
    return clusters


def shared_texts(rows: ObservationRows, texts: dict[int, str], owners: np.ndarray | None = None,
                 queries: np.ndarray | None = None) -> list[np.ndarray]:
    """Rows whose texts are equal once normalised (case, white space, Unicode form, edge punctuation) on two
    owners or more: each entity's own field or fact, said alike (``Priority: high`` on many tasks). Each group
    ``(m,) int64`` ascending, most owners first; with ``queries``, groups holding one of them."""
    owner = rows.entity if owners is None else owners
    groups: dict[str, list[int]] = {}
    for row, observation in enumerate(rows.observation.tolist()):
        groups.setdefault(statements.normalised(texts.get(int(observation), "")), []).append(row)
    asked = None if queries is None else set(np.asarray(queries).tolist())
    found = [np.array(g, dtype=np.int64) for key, g in groups.items()
             if key and len(g) > 1 and len(set(owner[g].tolist())) > 1 and (asked is None or asked & set(g))]
    found.sort(key=lambda g: (-len(set(owner[g].tolist())), int(g[0])))
    return found
