"""The vector copy's blocks: rows grouped by entity, with the masks a search applies.

A :class:`Vectors` holds rows sorted by entity, :class:`Groups` where each entity's rows start, and a
:class:`Block` both with the rows a newer block supersedes (``dead``). :class:`~limbic.core.vectors.vector_index.VectorIndex`
loads them; :mod:`limbic.core.vectors.similarities` scores queries against them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits


def one_blas_thread() -> None:
    """Run this process's BLAS (numpy's OpenBLAS) on one thread.

    A search's matrix-vector product over the vector copy is memory-bound: a second thread barely shortens it,
    and OpenBLAS's workers spin after every call, so on a 2-core machine they take the core that the model,
    SQLite, the MCP transport and the client need. Measured at 10,000 entities (60,044 × 384 vectors, a loaded
    2-core machine): 2.7 ms of CPU per product on one thread against 6.8–7.6 ms on two, also faster by the clock;
    ``search_semantic`` over stdio took 12–15 ms of server CPU per call instead of 26–34 (docs/performance.md
    "search_semantic over stdio").
    """
    threadpool_limits(1, user_api="blas")


SPLIT_ROWS = 16_384
"""A product over more rows than this is computed in two halves at once, the second on a short-lived thread."""
SPLIT_ALIGN = 64
"""The halves part at a multiple of this many rows: OpenBLAS's kernel takes rows in blocks and the last few rows of
a product another way, so parting anywhere else changed a few cosines in the last bits."""


def cosines(unit: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``unit @ query``: ``(n, d) float32`` rows against a ``(d,) float32`` vector, ``(n,) float32``; bit for bit
    the one-thread product. Past :data:`SPLIT_ROWS` rows the two halves are computed at once, one on this thread
    and one on a thread of its own (numpy releases the GIL in BLAS): the memory-bound product of 60,044 × 384
    took 1.9–2.0 ms instead of 2.8–3.0 on an idle 2-core machine, without the busy-waiting of a second BLAS
    thread (:func:`one_blas_thread`).
    """
    n = len(unit)
    if n <= SPLIT_ROWS or unit.ndim != 2:
        return unit @ query
    half = n // 2 // SPLIT_ALIGN * SPLIT_ALIGN
    out = np.empty(n, dtype=np.result_type(unit, query))
    failed: list[BaseException] = []

    def second() -> None:
        try:
            np.matmul(unit[half:], query, out=out[half:])
        except BaseException as exc:  # noqa: BLE001 — raised again on the caller's thread
            failed.append(exc)

    helper = threading.Thread(target=second, name="limbic-knn-half", daemon=True)
    helper.start()
    try:
        np.matmul(unit[:half], query, out=out[:half])
    finally:
        helper.join()
    if failed:
        raise failed[0]
    return out


@dataclass(frozen=True, slots=True)
class Vectors:
    """Rows sorted by ``owner`` (entity id): ``owner`` ``(n,) int64``, ``observation`` ``(n,) int64`` the
    observation id of an observation vector (``-1`` for an entity's passage vector), ``expires`` ``(n,)
    float64`` UTC seconds (``inf`` = never; entity vectors never expire), ``unit`` ``(n, d) float32``
    L2-normalised. An entity's rows are its entity (passage) vector and its live observations' vectors."""

    owner: np.ndarray
    observation: np.ndarray
    expires: np.ndarray
    unit: np.ndarray

    @staticmethod
    def empty(dimension: int) -> Vectors:
        return Vectors(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64),
                        np.empty((0, dimension), np.float32))

    def without(self, entity_ids: np.ndarray) -> Vectors:
        keep = ~np.isin(self.owner, entity_ids)
        return Vectors(self.owner[keep], self.observation[keep], self.expires[keep], self.unit[keep])

    def plus(self, other: Vectors) -> Vectors:
        owner = np.concatenate([self.owner, other.owner])
        order = np.argsort(owner, kind="stable")
        place = np.empty(len(order), dtype=np.int64)  # where each row of self then other goes
        place[order] = np.arange(len(order), dtype=np.int64)
        unit = np.empty((len(order), max(self.unit.shape[1], other.unit.shape[1])), dtype=np.float32)
        unit[place[: len(self.owner)]] = self.unit  # one copy of the rows, not a concatenation and a reorder
        unit[place[len(self.owner):]] = other.unit
        return Vectors(owner[order], np.concatenate([self.observation, other.observation])[order],
                        np.concatenate([self.expires, other.expires])[order], unit)


@dataclass(frozen=True, slots=True)
class Groups:
    """Where each entity's rows of a :class:`Vectors` start: ``ids`` ``(m,) int64`` ascending, ``starts``
    ``(m,) int64``; ``expiring`` ``(e,) int64`` rows with a finite ``expires`` and ``expiring_at`` their times;
    ``observations`` ``(o,) int64`` the observation ids held, ascending, and ``observation_rows`` their rows."""

    ids: np.ndarray
    starts: np.ndarray
    expiring: np.ndarray
    expiring_at: np.ndarray
    observations: np.ndarray
    observation_rows: np.ndarray

    @staticmethod
    def of(vectors: Vectors) -> Groups:
        owner = vectors.owner
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(owner) else np.empty(0, np.int64)
        expiring = np.flatnonzero(np.isfinite(vectors.expires))
        rows = np.flatnonzero(vectors.observation >= 0)
        rows = rows[np.argsort(vectors.observation[rows], kind="stable")]
        return Groups(owner[starts], starts, expiring, vectors.expires[expiring], vectors.observation[rows], rows)


@dataclass(frozen=True, slots=True)
class Block:
    """Held vectors with their groups; ``dead`` ``(k,) int64``: rows superseded by a newer block."""

    vectors: Vectors
    groups: Groups
    dead: np.ndarray

    @staticmethod
    def of(vectors: Vectors) -> Block:
        return Block(vectors, Groups.of(vectors), np.empty(0, np.int64))

    def similarities(self, query: np.ndarray, now: float) -> tuple[np.ndarray, np.ndarray]:
        """Every row's cosine to ``query`` (``-inf`` for dead and expired rows) and each entity's best."""
        sims = self.row_similarities(None, query, now)
        return sims, np.maximum.reduceat(sims, self.groups.starts)

    def row_similarities(self, rows: np.ndarray | None, query: np.ndarray, now: float) -> np.ndarray:
        """The cosine to ``query`` of the rows ``rows`` ``(r,) int64`` (every row when ``None``), ``-inf``
        for dead rows and expired observations."""
        unit = self.vectors.unit if rows is None else self.vectors.unit[rows]
        sims = cosines(unit, query)
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
