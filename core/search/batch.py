"""Many candidate sets as one: their arrays concatenated row by row, for one vectorised scoring pass.

A :class:`CandidateBatch` concatenates the arrays of several :class:`CandidateSet` once (rows of set
``s`` are ``starts[s]:starts[s + 1]``, :class:`~limbic.core.search.terms.Segments`);
:func:`limbic.core.search.scoring.score` then scores every set at once. A single search is a batch of
one, so the scores of a search and of the replayed search log are the same numbers (bit for bit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from limbic.core.search.candidates import ARRAY_DTYPES, ARRAYS_PER_ROW, CandidateSet
from limbic.core.search.terms import Segments


@dataclass(frozen=True, slots=True)
class CandidateBatch:
    """Candidate sets concatenated.

    Every per-candidate array of :class:`CandidateSet` (``ARRAYS_PER_ROW["candidate"]``) is an
    attribute of the batch over all ``N`` rows, same dtype (``batch.distance``, ``batch.knn_rank``, …).
    ``segments`` says where each of the ``S`` sets lies; ``now`` ``(N,) float64`` is each row's set's
    scoring time (UTC seconds); ``strategies`` the routing strategy of each set; ``bm25_ceiling`` and
    ``observation_bm25_ceiling`` ``(S,) float64`` each set's ``Σ idf``. The co-occurrence pairs
    (``cooc_a``, ``cooc_b`` ``int64``, ``cooc_count``, ``cooc_last`` ``float64``), the context pairs
    (``context_a``, ``context_b``) and the observation evidence (``observation_row``, with
    ``observation_segment`` its set, ``observation_cosine``, ``observation_bm25``, ``observation_confidence``)
    index global rows.
    """

    segments: Segments
    now: np.ndarray
    strategies: tuple[str, ...]
    bm25_ceiling: np.ndarray
    observation_bm25_ceiling: np.ndarray
    rows: dict[str, np.ndarray]
    cooc_a: np.ndarray
    cooc_b: np.ndarray
    cooc_count: np.ndarray
    cooc_last: np.ndarray
    context_a: np.ndarray
    context_b: np.ndarray
    observation_row: np.ndarray
    observation_segment: np.ndarray
    observation_cosine: np.ndarray
    observation_bm25: np.ndarray
    observation_confidence: np.ndarray

    @classmethod
    def of(cls, sets: Sequence[CandidateSet]) -> CandidateBatch:
        """Concatenate ``sets`` (already validated by :class:`CandidateSet`); an empty sequence gives an empty batch."""
        segments = Segments.of_lengths(np.array([len(c) for c in sets], dtype=np.int64))
        offsets = segments.starts[:-1]

        def joined(name: str, dtype: type = np.float64) -> np.ndarray:
            arrays = [getattr(c, name) for c in sets]
            return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.zeros(0, dtype=dtype)

        def shifted(name: str, group: str) -> np.ndarray:  # set-local row indices → global rows
            counts = [len(getattr(c, ARRAYS_PER_ROW[group][0])) for c in sets]
            return joined(name, np.int64) + np.repeat(offsets, counts)

        observations = np.array([len(c.observation_row) for c in sets], dtype=np.int64)
        return cls(segments=segments, now=np.array([c.now for c in sets], dtype=np.float64)[segments.segment],
                   strategies=tuple(c.strategy for c in sets),
                   bm25_ceiling=np.array([c.bm25_ceiling for c in sets], dtype=np.float64),
                   observation_bm25_ceiling=np.array([c.observation_bm25_ceiling for c in sets], dtype=np.float64),
                   rows={name: joined(name, ARRAY_DTYPES[name]) for name in ARRAYS_PER_ROW["candidate"]},
                   cooc_a=shifted("cooc_a", "cooc"), cooc_b=shifted("cooc_b", "cooc"),
                   cooc_count=joined("cooc_count"), cooc_last=joined("cooc_last"),
                   context_a=shifted("context_a", "context"), context_b=shifted("context_b", "context"),
                   observation_row=shifted("observation_row", "observation"),
                   observation_segment=np.repeat(np.arange(len(sets), dtype=np.int64), observations),
                   observation_cosine=joined("observation_cosine"), observation_bm25=joined("observation_bm25"),
                   observation_confidence=joined("observation_confidence"))

    def __getattr__(self, name: str) -> np.ndarray:
        """A per-candidate array over all rows (``batch.distance``, …).

        Raises:
            AttributeError: ``name`` is not an attribute nor a per-candidate array.
        """
        rows = object.__getattribute__(self, "rows") if name != "rows" else {}
        try:
            return rows[name]
        except KeyError:
            raise AttributeError(f"CandidateBatch has no attribute {name!r}") from None

    def __len__(self) -> int:
        """Number of rows (candidates over all sets)."""
        return int(self.segments.segment.shape[0])

    @property
    def starts(self) -> np.ndarray:
        """``(S + 1,) int64`` row offsets of the sets."""
        return self.segments.starts

    @property
    def segment(self) -> np.ndarray:
        """``(N,) int64`` the set of each row."""
        return self.segments.segment
