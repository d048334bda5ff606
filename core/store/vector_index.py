"""An in-memory copy of the stored vectors for exact KNN with matrix products, aggregated per entity.

sqlite-vec's brute-force scan is the slowest stage of a search (11.5 ms of 22 ms at 10,000 entities on
2 cores); the same exact cosine over a ``(n, d) float32`` numpy matrix takes about a millisecond. The
copy holds the entity vectors (``entity_embeddings``) and the observation vectors
(``observation_embeddings``) made by the search's model; vectors of another model, and observations
that are superseded, are left out (the full-text branch still finds them).

An entity's semantic similarity is the best cosine among its live observations (issue 9 item 5;
measured against the entity vector alone, soft-max and the best of both with ``limbic eval locomo``,
README "Observations are searched one by one"); observations past their ``expires_at`` do not count.
An entity without observation vectors (no observations, or not yet embedded) uses its entity vector. The copy follows the database through the
``changes`` log: every write that changes a vector is logged with its entity ids in the same
transaction (service mutations and ``reembed``), so before each search the index reloads just the rows
of the entities changed since the last change id it saw — by this process or any other — and
everything when the model or the dimension changed. sqlite-vec stays the store of record.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np

from limbic.core.store import reads
from limbic.core.store.database import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE, vector_dimension

FULL_RELOAD_SHARE = 0.25  # reload everything when more than this share of the entities changed

_ENTITY_META = "SELECT entity_id FROM entity_embedding_meta WHERE model = ?1"
_OBSERVATION_META = (
    "SELECT m.observation_id, m.entity_id, coalesce(o.expires_at, 'inf') FROM observation_embedding_meta m "
    "JOIN observations o ON o.id = m.observation_id WHERE m.model = ?1 AND o.superseded_at IS NULL"
)
_ONLY = " AND {column} IN (SELECT value FROM json_each(?2))"


@dataclass(frozen=True, slots=True)
class _Vectors:
    """Rows sorted by ``owner`` (entity id): ``keys`` ``(n,) int64`` vector rowids, ``expires`` ``(n,) float64``
    UTC seconds (``inf`` = never), ``unit`` ``(n, d) float32`` L2-normalised."""

    keys: np.ndarray
    owner: np.ndarray
    expires: np.ndarray
    unit: np.ndarray

    @staticmethod
    def empty(dimension: int) -> _Vectors:
        return _Vectors(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64),
                        np.empty((0, dimension), np.float32))

    def without(self, entity_ids: np.ndarray) -> _Vectors:
        keep = ~np.isin(self.owner, entity_ids)
        return _Vectors(self.keys[keep], self.owner[keep], self.expires[keep], self.unit[keep])

    def plus(self, other: _Vectors) -> _Vectors:
        owner = np.concatenate([self.owner, other.owner])
        order = np.argsort(owner, kind="stable")
        return _Vectors(np.concatenate([self.keys, other.keys])[order], owner[order],
                        np.concatenate([self.expires, other.expires])[order],
                        np.concatenate([self.unit, other.unit])[order])


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
    expires = np.array([float(r[2]) if len(r) > 2 else np.inf for r in meta], dtype=np.float64)
    rows: list[tuple[Any, ...]]
    if entity_ids is None:
        rows = conn.execute(f"SELECT rowid, embedding FROM {table}").fetchall()
    else:
        rows = conn.execute(f"SELECT rowid, embedding FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))",
                            (json.dumps(keys.tolist()),)).fetchall()
    stored = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dimension)
    position = {int(k): i for i, k in enumerate(stored.tolist())}
    found = np.array([int(k) in position for k in keys.tolist()], dtype=bool)
    keys, owner, expires = keys[found], owner[found], expires[found]
    matrix = matrix[[position[int(k)] for k in keys.tolist()]] if len(keys) else matrix[:0]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)
    return _Vectors(keys, owner, expires, unit).plus(_Vectors.empty(dimension))


class VectorIndex:
    """Exact cosine KNN over cached entity and observation vectors (thread-safe, shared by a service)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: tuple[str, int] | None = None  # (model, dimension) of the copy
        self._change_id = -1
        self._entities = _Vectors.empty(0)
        self._observations = _Vectors.empty(0)

    def __len__(self) -> int:
        """Number of vectors held (entity and observation vectors)."""
        return int(self._entities.keys.shape[0] + self._observations.keys.shape[0])

    @staticmethod
    def _read(conn: apsw.Connection, model: str, dimension: int, ids: list[int] | None) -> tuple[_Vectors, _Vectors]:
        entities = _load(conn, VECTOR_TABLE, _ENTITY_META, "entity_id", model, dimension, ids)
        if vector_dimension(conn, OBSERVATION_VECTOR_TABLE) is None:
            return entities, _Vectors.empty(dimension)  # a database from before schema 4, not yet written to
        observations = _load(conn, OBSERVATION_VECTOR_TABLE, _OBSERVATION_META, "m.entity_id", model, dimension, ids)
        return entities, observations

    def refresh(self, conn: apsw.Connection, model: str) -> None:
        """Bring the copy up to date with what ``conn`` sees for ``model`` (call inside the caller's read snapshot)."""
        with self._lock:
            dimension = vector_dimension(conn)
            last = reads.last_change_id(conn)
            if dimension is None:
                self._state, self._change_id = None, last
                self._entities, self._observations = _Vectors.empty(0), _Vectors.empty(0)
                return
            state = (model, dimension)
            if state == self._state and last == self._change_id:
                return
            changed: set[int] = set()
            if state == self._state and self._change_id >= 0:
                for change in reads.changes_since(conn, self._change_id, limit=1_000_000):
                    changed |= change.entity_ids
            known = len(np.unique(self._entities.owner)) if state == self._state else 0
            if state != self._state or len(changed) > FULL_RELOAD_SHARE * max(known, 1):
                self._entities, self._observations = self._read(conn, model, dimension, None)
            elif changed:
                ids = sorted(changed)
                fresh_entities, fresh_observations = self._read(conn, model, dimension, ids)
                gone = np.array(ids, dtype=np.int64)
                self._entities = self._entities.without(gone).plus(fresh_entities)
                self._observations = self._observations.without(gone).plus(fresh_observations)
            self._state, self._change_id = state, last

    def _similarities(self, query: np.ndarray, now: float) -> tuple[np.ndarray, np.ndarray]:
        """Entity ids ``(m,) int64`` (ascending) and their similarities ``(m,) float32``: the best live
        observation's cosine, or the entity vector's for an entity without observation vectors."""
        entities, observations = self._entities, self._observations  # replaced, never changed in place
        entity_ids, entity_sims = entities.owner, entities.unit @ query
        if not len(observations.keys):
            return entity_ids, entity_sims
        sims = np.where(observations.expires > now, observations.unit @ query, -np.inf).astype(np.float32)
        starts = np.flatnonzero(np.r_[True, observations.owner[1:] != observations.owner[:-1]])
        best = np.maximum.reduceat(sims, starts)
        live = np.isfinite(best)
        group_ids, best = observations.owner[starts][live], best[live]
        all_ids = np.union1d(entity_ids, group_ids)
        merged = np.full(len(all_ids), -np.inf, dtype=np.float32)
        merged[np.searchsorted(all_ids, entity_ids)] = entity_sims
        merged[np.searchsorted(all_ids, group_ids)] = best
        return all_ids, merged

    def search(self, conn: apsw.Connection, model: str, vector: np.ndarray, k: int,
               now: float) -> tuple[list[int], dict[int, float]]:
        """The ``k`` nearest entities to ``vector`` ``(d,) float32`` by aggregated cosine distance ``1 − sim``.

        ``model`` is the name of the query's embedder (only its vectors count); ``now`` (UTC seconds)
        decides which observations have expired. Returns ``(ids, {id: distance})``, nearest first, one
        entry per entity; ties go to the lower id.
        """
        self.refresh(conn, model)
        if k <= 0 or not len(self):
            return [], {}
        query = np.asarray(vector, dtype=np.float32)
        query = query / (float(np.linalg.norm(query)) or 1.0)
        ids, sims = self._similarities(query, now)
        if not len(ids):
            return [], {}
        distances = 1.0 - sims.astype(np.float64)
        k = min(k, len(ids))
        top = np.argpartition(distances, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
        top = top[np.lexsort((ids[top], distances[top]))]
        chosen = ids[top].tolist()
        return chosen, dict(zip(chosen, distances[top].tolist(), strict=True))

    def distances(self, conn: apsw.Connection, model: str, vector: np.ndarray, entity_ids: list[int],
                  now: float) -> dict[int, float]:
        """The aggregated cosine distance ``1 − sim`` of ``vector`` ``(d,) float32`` to each of ``entity_ids``
        that has a vector (as :meth:`search` computes it, without choosing the nearest)."""
        self.refresh(conn, model)
        if not len(self):
            return {}
        query = np.asarray(vector, dtype=np.float32)
        ids, sims = self._similarities(query / (float(np.linalg.norm(query)) or 1.0), now)
        rows = np.flatnonzero(np.isin(ids, np.asarray(entity_ids, dtype=np.int64)) & np.isfinite(sims))
        return dict(zip(ids[rows].tolist(), (1.0 - sims[rows].astype(np.float64)).tolist(), strict=True))
