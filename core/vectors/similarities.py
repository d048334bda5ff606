"""A query's cosine similarity to the entities of a :class:`~limbic.core.vectors.vector_index.VectorIndex`
copy, as the search pipeline asks for it: the nearest entities (KNN), the similarity of given entities
(full-text candidates) and of given observations (observation evidence).

:class:`Similarities` holds every entity's similarity from one exact product over the copy;
:class:`ApproximateSimilarities` scores the main block only for the entities its HNSW graph proposes
and those asked about (:mod:`limbic.core.vectors.approximate`), each score still exact.
"""

from __future__ import annotations

import numpy as np

from limbic.core.vectors.approximate import Proposer
from limbic.core.vectors.blocks import Block


class Similarities:
    """The cosine similarity of one query to every entity with a vector, as KNN and the full-text
    candidates need it (one matrix product per search).

    ``ids`` ``(m,) int64`` ascending and ``similarity`` ``(m,) float32``: the best of the entity's
    (passage) vector and its live, unexpired observations' vectors. ``lookups``: per block of held
    vectors, ``(observations (o,) int64 ascending, their rows (o,) int64, every row's similarity (n,)
    float32)`` (``-inf`` once expired or superseded), looked up per observation on request; a later block
    holds the newer vectors.
    """

    approximate = False
    """Whether the nearest entities are proposed by an HNSW graph (:class:`ApproximateSimilarities`)."""

    def __init__(self, ids: np.ndarray, similarity: np.ndarray,
                 lookups: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...] = ()) -> None:
        self.ids = ids
        self.similarity = similarity
        self.lookups = lookups

    def of_observations(self, observation_ids: list[int]) -> dict[int, float]:
        """The cosine similarity of each of ``observation_ids`` that has a live, unexpired vector."""
        wanted = np.asarray(observation_ids, dtype=np.int64)
        out: dict[int, float] = {}
        for observations, rows, row_similarity in self.lookups:
            if not len(observations) or not len(wanted):
                continue
            at = np.minimum(np.searchsorted(observations, wanted), len(observations) - 1)
            similarity = row_similarity[rows[at]]
            found = (observations[at] == wanted) & np.isfinite(similarity)
            out.update(zip(wanted[found].tolist(), similarity[found].astype(np.float64).tolist(), strict=True))
        return out

    def nearest(self, k: int) -> tuple[list[int], dict[int, float]]:
        """The ``k`` nearest entities by cosine distance ``1 − sim``: ``(ids, {id: distance})``, nearest
        first, ties to the lower id."""
        ids, distances = self.ids, 1.0 - self.similarity.astype(np.float64)
        k = min(max(int(k), 0), len(ids))
        if k == 0:
            return [], {}
        top = np.argpartition(distances, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
        top = top[np.lexsort((ids[top], distances[top]))]
        chosen = ids[top].tolist()
        return chosen, dict(zip(chosen, distances[top].tolist(), strict=True))

    def distances(self, entity_ids: list[int]) -> dict[int, float]:
        """The cosine distance ``1 − sim`` of each of ``entity_ids`` that has a vector."""
        wanted = np.asarray(entity_ids, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, wanted), max(len(self.ids) - 1, 0))
        found = (self.ids[at] == wanted) if len(self.ids) else np.zeros(len(wanted), dtype=bool)
        rows = at[found]
        return dict(zip(self.ids[rows].tolist(), (1.0 - self.similarity[rows].astype(np.float64)).tolist(),
                        strict=True))


class ApproximateSimilarities(Similarities):
    """:class:`Similarities` where the main block is searched through its HNSW graph
    (:mod:`limbic.core.vectors.approximate`): its rows are scored only for the entities the graph proposes
    (:meth:`nearest`) and those asked about (:meth:`distances`, :meth:`of_observations`). Every score is
    exact, the best of all of the entity's live rows; ``ids`` and ``similarity`` hold the entities scored
    so far. The recent block is scanned whole.
    """

    approximate = True

    def __init__(self, main: Block, recent: Block, graph: Proposer, query: np.ndarray,
                 now: float) -> None:
        self._main, self._graph, self._query, self._now = main, graph, query, now
        self._main_sims = np.full(len(main.vectors.owner), np.nan, np.float32)  # nan: not scored yet
        lookups = [(main.groups.observations, main.groups.observation_rows, self._main_sims)]
        self._recent: tuple[np.ndarray, np.ndarray] = (np.empty(0, np.int64), np.empty(0, np.float32))
        if len(recent.groups.ids):
            recent_sims, recent_best = recent.similarities(query, now)
            lookups.append((recent.groups.observations, recent.groups.observation_rows, recent_sims))
            self._recent = (recent.groups.ids, recent_best)
        self._scored = np.empty(0, np.int64)
        super().__init__(np.empty(0, np.int64), np.empty(0, np.float32), tuple(lookups))
        self._score(self._recent[0])

    def _fill(self, rows: np.ndarray) -> None:
        missing = rows[np.isnan(self._main_sims[rows])]
        if len(missing):
            self._main_sims[missing] = self._main.row_similarities(missing, self._query, self._now)

    def _score(self, entity_ids: np.ndarray) -> None:
        """Score ``entity_ids`` not scored yet and add the live ones to ``ids``/``similarity``."""
        wanted = np.setdiff1d(np.asarray(entity_ids, dtype=np.int64), self._scored)
        if not len(wanted):
            return
        self._scored = np.union1d(self._scored, wanted)
        best = np.full(len(wanted), -np.inf, np.float32)
        held, offsets, rows = self._main.rows_of(wanted)
        if len(rows):
            self._fill(rows)
            best[np.searchsorted(wanted, held)] = np.maximum.reduceat(self._main_sims[rows], offsets)
        recent_ids, recent_best = self._recent
        if len(recent_ids):  # an entity in the recent block has its main rows dead
            at = np.minimum(np.searchsorted(recent_ids, wanted), len(recent_ids) - 1)
            found = recent_ids[at] == wanted
            best[found] = np.maximum(best[found], recent_best[at[found]])
        live = np.isfinite(best)
        ids = np.concatenate([self.ids, wanted[live]])
        order = np.argsort(ids, kind="stable")
        self.ids, self.similarity = ids[order], np.concatenate([self.similarity, best[live]])[order]

    def nearest(self, k: int) -> tuple[list[int], dict[int, float]]:
        """As :meth:`Similarities.nearest`, among the entities of the rows the graph proposes for ``k``
        results and those of the recent block."""
        proposed = self._graph.propose(self._query, k)
        self._score(np.unique(self._main.vectors.owner[proposed]))
        return super().nearest(k)

    def distances(self, entity_ids: list[int]) -> dict[int, float]:
        self._score(np.unique(np.asarray(entity_ids, dtype=np.int64)))
        return super().distances(entity_ids)

    def of_observations(self, observation_ids: list[int]) -> dict[int, float]:
        observations, rows = self._main.groups.observations, self._main.groups.observation_rows
        wanted = np.asarray(observation_ids, dtype=np.int64)
        if len(observations) and len(wanted):
            at = np.minimum(np.searchsorted(observations, wanted), len(observations) - 1)
            self._fill(rows[at[observations[at] == wanted]])
        return super().of_observations(observation_ids)
