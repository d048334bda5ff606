"""An in-memory copy of the stored vectors for exact KNN with matrix products, aggregated per entity.

sqlite-vec's brute-force scan was the slowest stage of a search (11.5 ms of 22 ms at 10,000 entities
on 2 cores). The copy holds the entity vectors (``entity_embeddings``) and the observation vectors
(``observation_embeddings``) made by the search's model in one ``(n, d) float32`` matrix, rows grouped
by entity; vectors of another model, and observations that are superseded, are left out (the
full-text branch still finds them). A search is one matrix-vector product over it (memory-bound:
about 4.7 ms for 60,000 × 384 on this project's 2-core machine) and one ``maximum.reduceat`` per
entity group; the cosines of the full-text candidates come from the same pass (:class:`Similarities`).

An entity's semantic similarity is the best of its entity (passage) vector and its live observations'
vectors (issue 9 item 5; measured against the entity vector alone and soft-max with ``limbic eval
locomo``, README "Observations are searched one by one"); observations past their ``expires_at`` do
not count. The copy follows the database through the ``changes`` log: every write that changes a
vector is logged with its entity ids in the same transaction (service mutations and ``reembed``), so
before each search the index reloads just the rows of the entities changed since the last change id
it saw — by this process or any other — into a small block of recent rows, marking their old rows dead
(the main matrix is not copied), and everything when the model or the dimension changed.
sqlite-vec stays the store of record.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np

from limbic.core.store import approximate, reads, vec_rows
from limbic.core.store.database import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE, vector_dimension
from limbic.core.store.similarities import ApproximateSimilarities, Similarities

FULL_RELOAD_SHARE = 0.25  # reload everything when more than this share of the entities changed
COMPACT_SHARE = 0.05  # merge the recent block into the main one past this share of its rows

_ENTITY_META = "SELECT entity_id FROM entity_embedding_meta WHERE model = ?1"
_OBSERVATION_META = (
    "SELECT m.observation_id, m.entity_id, coalesce(o.expires_at, 'inf') FROM observation_embedding_meta m "
    "JOIN observations o ON o.id = m.observation_id WHERE +m.model = ?1 AND o.superseded_at IS NULL"
)  # +m.model: a refresh of a few entities looks them up by entity_id (every row has the one model)
_ONLY = " AND {column} IN (SELECT value FROM json_each(?2))"


@dataclass(frozen=True, slots=True)
class _Vectors:
    """Rows sorted by ``owner`` (entity id): ``owner`` ``(n,) int64``, ``observation`` ``(n,) int64`` the
    observation id of an observation vector (``-1`` for an entity's passage vector), ``expires`` ``(n,)
    float64`` UTC seconds (``inf`` = never; entity vectors never expire), ``unit`` ``(n, d) float32``
    L2-normalised. An entity's rows are its entity (passage) vector and its live observations' vectors."""

    owner: np.ndarray
    observation: np.ndarray
    expires: np.ndarray
    unit: np.ndarray

    @staticmethod
    def empty(dimension: int) -> _Vectors:
        return _Vectors(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64),
                        np.empty((0, dimension), np.float32))

    def without(self, entity_ids: np.ndarray) -> _Vectors:
        keep = ~np.isin(self.owner, entity_ids)
        return _Vectors(self.owner[keep], self.observation[keep], self.expires[keep], self.unit[keep])

    def plus(self, other: _Vectors) -> _Vectors:
        owner = np.concatenate([self.owner, other.owner])
        order = np.argsort(owner, kind="stable")
        place = np.empty(len(order), dtype=np.int64)  # where each row of self then other goes
        place[order] = np.arange(len(order), dtype=np.int64)
        unit = np.empty((len(order), max(self.unit.shape[1], other.unit.shape[1])), dtype=np.float32)
        unit[place[: len(self.owner)]] = self.unit  # one copy of the rows, not a concatenation and a reorder
        unit[place[len(self.owner):]] = other.unit
        return _Vectors(owner[order], np.concatenate([self.observation, other.observation])[order],
                        np.concatenate([self.expires, other.expires])[order], unit)


@dataclass(frozen=True, slots=True)
class _Groups:
    """Where each entity's rows of a :class:`_Vectors` start: ``ids`` ``(m,) int64`` ascending, ``starts``
    ``(m,) int64``; ``expiring`` ``(e,) int64`` rows with a finite ``expires`` and ``expiring_at`` their times;
    ``observations`` ``(o,) int64`` the observation ids held, ascending, and ``observation_rows`` their rows."""

    ids: np.ndarray
    starts: np.ndarray
    expiring: np.ndarray
    expiring_at: np.ndarray
    observations: np.ndarray
    observation_rows: np.ndarray

    @staticmethod
    def of(vectors: _Vectors) -> _Groups:
        owner = vectors.owner
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(owner) else np.empty(0, np.int64)
        expiring = np.flatnonzero(np.isfinite(vectors.expires))
        rows = np.flatnonzero(vectors.observation >= 0)
        rows = rows[np.argsort(vectors.observation[rows], kind="stable")]
        return _Groups(owner[starts], starts, expiring, vectors.expires[expiring], vectors.observation[rows], rows)


def _load(conn: apsw.Connection, table: str, meta_sql: str, column: str, model: str, dimension: int,
          entity_ids: list[int] | None) -> _Vectors:
    """Vectors of ``table`` made by ``model`` (only those of ``entity_ids`` when given)."""
    args: tuple = (model,) if entity_ids is None else (model, json.dumps(entity_ids))
    sql = meta_sql if entity_ids is None else meta_sql + _ONLY.format(column=column)
    meta: list[tuple[Any, ...]] = conn.execute(sql, args).fetchall()
    if not meta:
        return _Vectors.empty(dimension)
    keys = np.array([r[0] for r in meta], dtype=np.int64)
    owner = np.array([r[1 if len(r) > 1 else 0] for r in meta], dtype=np.int64)
    is_observation = len(meta[0]) > 1
    expires = np.array([float(r[2]) if len(r) > 2 else np.inf for r in meta], dtype=np.float64)
    rows: Iterable[tuple[Any, ...]]
    if entity_ids is None:
        rows = conn.execute(f"SELECT rowid, embedding FROM {table}")
    else:
        rows = vec_rows.read(conn, table, keys.tolist())
    position = {int(k): i for i, k in enumerate(keys.tolist())}
    unit = np.zeros((len(keys), dimension), dtype=np.float32)
    found = np.zeros(len(keys), dtype=bool)
    for rowid, blob in rows:  # straight into the matrix: no list of blobs, no joined copy of them
        at = position.get(rowid)
        if at is not None:
            unit[at] = np.frombuffer(blob, dtype=np.float32)
            found[at] = True
    if not found.all():
        keys, owner, expires, unit = keys[found], owner[found], expires[found], unit[found]
    norms = np.linalg.norm(unit, axis=1, keepdims=True)
    np.divide(unit, np.where(norms == 0, 1.0, norms), out=unit)
    observation = keys if is_observation else np.full(len(keys), -1, dtype=np.int64)
    order = np.argsort(owner, kind="stable")
    if np.any(order != np.arange(len(order))):
        owner, observation, expires, unit = owner[order], observation[order], expires[order], unit[order]
    return _Vectors(owner, observation, expires, unit)


@dataclass(frozen=True, slots=True)
class _Block:
    """Held vectors with their groups; ``dead`` ``(k,) int64``: rows superseded by a newer block."""

    vectors: _Vectors
    groups: _Groups
    dead: np.ndarray

    @staticmethod
    def of(vectors: _Vectors) -> _Block:
        return _Block(vectors, _Groups.of(vectors), np.empty(0, np.int64))

    def similarities(self, query: np.ndarray, now: float) -> tuple[np.ndarray, np.ndarray]:
        """Every row's cosine to ``query`` (``-inf`` for dead and expired rows) and each entity's best."""
        sims = self.row_similarities(None, query, now)
        return sims, np.maximum.reduceat(sims, self.groups.starts)

    def row_similarities(self, rows: np.ndarray | None, query: np.ndarray, now: float) -> np.ndarray:
        """The cosine to ``query`` of the rows ``rows`` ``(r,) int64`` (every row when ``None``), ``-inf``
        for dead rows and expired observations."""
        unit = self.vectors.unit if rows is None else self.vectors.unit[rows]
        sims = unit @ query
        hidden = self.dead
        expired = self.groups.expiring[self.groups.expiring_at <= now]
        if len(expired):
            hidden = np.concatenate([hidden, expired])
        if len(hidden):
            sims[hidden if rows is None else np.isin(rows, hidden)] = -np.inf
        return sims

    def rows_of(self, entity_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For ``entity_ids`` ``(m,) int64`` ascending: those held here, where each one's rows start in the
        third array, and all their rows (grouped per entity in that order)."""
        ids = self.groups.ids
        at = np.minimum(np.searchsorted(ids, entity_ids), max(len(ids) - 1, 0))
        held = (ids[at] == entity_ids) if len(ids) else np.zeros(len(entity_ids), dtype=bool)
        at = at[held]
        starts = self.groups.starts[at]
        ends = np.r_[self.groups.starts[1:], len(self.vectors.owner)][at]
        lengths = ends - starts
        offsets = np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)
        rows = np.repeat(starts - offsets, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
        return entity_ids[held], offsets, rows


class VectorIndex:
    """Cosine KNN over cached entity and observation vectors (thread-safe, shared by a service): an exact
    scan, or, for a main block with an HNSW graph (``graphs``), candidates the graph proposes, each scored
    exactly (:class:`~limbic.core.store.similarities.ApproximateSimilarities`).

    The copy is a sorted main block and a small block of the entities changed since the main block was
    built: a change reloads only those entities' rows into the small block and marks their rows of the
    main block dead, so a search right after a write does not copy the whole matrix. When the small block
    passes :data:`COMPACT_SHARE` of the main block's rows, the two are merged into a new main block.
    """

    def __init__(self, graphs: approximate.GraphBuilder | None = None) -> None:
        """``graphs``: builds the HNSW graph of a large main block (:mod:`limbic.core.store.approximate`);
        ``None`` keeps every search an exact scan."""
        self.graphs = graphs
        self._lock = threading.Lock()
        self._state: tuple[str, int] | None = None  # (model, dimension) of the copy
        self._change_id = -1
        # (main, recent): one attribute, so that a search never pairs a new main block with an old recent one
        self._blocks = (_Block.of(_Vectors.empty(0)), _Block.of(_Vectors.empty(0)))

    def __len__(self) -> int:
        """Number of vectors held (entity and observation vectors, the current ones only)."""
        main, recent = self._blocks
        return int(len(main.vectors.owner) - len(main.dead) + len(recent.vectors.owner))

    @staticmethod
    def _read(conn: apsw.Connection, model: str, dimension: int, ids: list[int] | None) -> _Vectors:
        entities = _load(conn, VECTOR_TABLE, _ENTITY_META, "entity_id", model, dimension, ids)
        if vector_dimension(conn, OBSERVATION_VECTOR_TABLE) is None:
            return entities  # a database from before schema 4, not yet written to
        return entities.plus(_load(conn, OBSERVATION_VECTOR_TABLE, _OBSERVATION_META, "m.entity_id", model,
                                   dimension, ids))

    def refresh(self, conn: apsw.Connection, model: str) -> None:
        """Bring the copy up to date with what ``conn`` sees for ``model`` (call inside the caller's read snapshot)."""
        with self._lock:
            dimension = vector_dimension(conn)
            last = reads.last_change_id(conn)
            if dimension is None:
                self._state, self._change_id = None, last
                self._rebuild(_Vectors.empty(0))
                return
            state = (model, dimension)
            if state == self._state and last == self._change_id:
                return
            changed: set[int] = set()
            if state == self._state and self._change_id >= 0:
                for change in reads.changes_since(conn, self._change_id, limit=1_000_000):
                    changed |= change.entity_ids
            known = len(self._blocks[0].groups.ids) if state == self._state else 0
            if state != self._state or len(changed) > FULL_RELOAD_SHARE * max(known, 1):
                self._rebuild(self._read(conn, model, dimension, None))
            elif changed:
                self._update(np.array(sorted(changed), dtype=np.int64), self._read(conn, model, dimension, sorted(changed)))
            self._state, self._change_id = state, last

    def _rebuild(self, vectors: _Vectors) -> None:
        self._blocks = (_Block.of(vectors), _Block.of(_Vectors.empty(vectors.unit.shape[1])))

    def _update(self, changed: np.ndarray, fresh: _Vectors) -> None:
        """``changed`` entity ids now have the rows ``fresh``: they replace their rows in the recent block,
        and their rows of the main block are marked dead; past COMPACT_SHARE the blocks are merged."""
        main, held = self._blocks
        recent = held.vectors.without(changed).plus(fresh)
        dead = np.union1d(main.dead, np.flatnonzero(np.isin(main.vectors.owner, changed)))
        if len(recent.owner) > COMPACT_SHARE * max(len(main.vectors.owner), 1):
            superseded = np.union1d(np.unique(main.vectors.owner[dead]), recent.owner)
            self._rebuild(main.vectors.without(superseded).plus(recent))
            return
        self._blocks = (_Block(main.vectors, main.groups, dead), _Block.of(recent))

    def prepare(self, conn: apsw.Connection, model: str) -> None:
        """Load the copy for ``model`` now (call inside the caller's read snapshot) and, for a large one,
        ask for its KNN graph (made on a background thread), so that the first search finds both ready."""
        self.refresh(conn, model)
        if self.graphs is not None:
            self.graphs.graph_for(self._blocks[0].vectors)

    def similarities(self, conn: apsw.Connection, model: str, vector: np.ndarray, now: float) -> Similarities:
        """The cosine similarity of ``vector`` ``(d,) float32`` to every entity with a vector of ``model``
        (the query's embedder), after bringing the copy up to date; ``now`` (UTC seconds) decides which
        observations have expired. One matrix product over all the vectors held."""
        self.refresh(conn, model)
        main, recent = self._blocks  # replaced together, never changed in place
        if not len(main.groups.ids) and not len(recent.groups.ids):
            return Similarities(np.empty(0, np.int64), np.empty(0, np.float32))
        query = np.asarray(vector, dtype=np.float32)
        query = query / (float(np.linalg.norm(query)) or 1.0)
        graph = self.graphs.graph_for(main.vectors) if self.graphs is not None else None
        if graph is not None:
            return ApproximateSimilarities(main, recent, graph, query, now)
        sims, best = main.similarities(query, now)
        ids = main.groups.ids
        lookups: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...] = (
            (main.groups.observations, main.groups.observation_rows, sims),)
        if len(recent.groups.ids):
            recent_sims, recent_best = recent.similarities(query, now)
            at = np.searchsorted(ids, recent.groups.ids)
            held = at < len(ids)
            held[held] = ids[at[held]] == recent.groups.ids[held]
            best[at[held]] = recent_best[held]
            ids = np.insert(ids, at[~held], recent.groups.ids[~held])
            best = np.insert(best, at[~held], recent_best[~held])
            lookups += ((recent.groups.observations, recent.groups.observation_rows, recent_sims),)
        live = np.isfinite(best)
        if live.all():
            return Similarities(ids, best, lookups)
        return Similarities(ids[live], best[live], lookups)

    def search(self, conn: apsw.Connection, model: str, vector: np.ndarray, k: int,
               now: float) -> tuple[list[int], dict[int, float]]:
        """The ``k`` nearest entities to ``vector`` ``(d,) float32`` by aggregated cosine distance ``1 − sim``
        (:meth:`similarities`, then :meth:`Similarities.nearest`): ``(ids, {id: distance})``, nearest first,
        one entry per entity; ties go to the lower id."""
        return self.similarities(conn, model, vector, now).nearest(k)
