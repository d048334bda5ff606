"""Keeping a service's vectors in step with its text: where pending vectors are computed.

A write commits its text and pending marks (:mod:`limbic.core.vectors.pending`); :class:`VectorUpkeep`
then computes them — on a background thread (:class:`~limbic.core.vectors.filler.VectorFiller`: the app
and the MCP server, whose callers never wait for the model) or on the writing thread right after the
commit (one-shot commands, tests) — and answers how many are pending or stale.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from limbic.core.embedding.base import Embedder
from limbic.core.errors import ModelNotInstalledError
from limbic.core.store import reads
from limbic.core.store.database import Database, WriteTransaction
from limbic.core.store.schema import LANDED_OP
from limbic.core.store.vector_meta import entity_coverage, stale_vector_count
from limbic.core.vectors.filler import VectorFiller
from limbic.core.vectors.pending import fill
from limbic.core.vectors.reembed import ReembedReport, reembed

BACKGROUND_THREADS = 1
"""Intra-op threads of the background embedder's model session: on 2 cores, four concurrent MCP writers'
p99 was 211–278 ms with 2 and 86–164 ms with 1 (tests/bench/bench_writes.py, docs/performance.md)."""

Progress = Callable[[int, int], None]


def background_embedder(embedder: Embedder) -> Embedder:
    """The background thread's embedder: an ONNX model gets its own session of ``BACKGROUND_THREADS``
    threads (its ``with_threads``); other embedders are shared as they are."""
    with_threads = getattr(embedder, "with_threads", None)
    return with_threads(BACKGROUND_THREADS) if callable(with_threads) else embedder


class VectorUpkeep:
    """Computes the vectors that writes to ``database`` leave pending, with ``embedder`` (``None``: none are).

    ``background``: on a :class:`VectorFiller` thread (started at once when something is pending, e.g.
    after a crash), else on the writing thread after each commit.
    """

    def __init__(self, database: Database, embedder: Embedder | None, *, background: bool) -> None:
        self.database = database
        self.embedder: Embedder | None = None
        self.after_land: Callable[[list[int]], None] | None = None
        """Called with the entity ids after each step that landed vectors (the service's contradiction check)."""
        self._deferred = 0
        self._background = background
        self._filler: VectorFiller | None = None
        if embedder is not None:
            self.attach(embedder)

    def attach(self, embedder: Embedder) -> None:
        """Compute vectors with ``embedder`` from now on (a model installed while the service runs). In the
        background the thread starts at once when something is pending: what an earlier process (or this one
        without a model) committed but did not embed. Raises ValueError when a model is attached already."""
        if self.embedder is not None:
            raise ValueError(f"the model {self.embedder.name!r} is attached already")
        self.embedder = embedder
        if self._background:
            self._filler = VectorFiller(self.database, background_embedder(embedder), self.land)
            if reads.pending_vector_count(self.database.read()):
                self._filler.wake()

    def close(self) -> None:
        """Stop the background thread after its step in flight (pending marks stay for the next start)."""
        if self._filler is not None:
            self._filler.close()

    def land(self, body: Callable[[WriteTransaction], list[int]]) -> list[int]:
        """The short write transaction of one step of computed vectors (logged, not delivered to listeners);
        then :attr:`after_land`, when set."""
        with self.database.write("system", LANDED_OP) as txn:
            landed = body(txn)
        if landed and self.after_land is not None:
            self.after_land(landed)
        return landed

    def after_commit(self, entity_ids: list[int]) -> None:
        """A write that marked ``entity_ids`` pending committed: compute their vectors (see the class)."""
        if self._deferred or self.embedder is None:
            return
        if self._filler is not None:
            self._filler.wake(entity_ids)
        else:
            fill(self.database, self.embedder, self.land, only=entity_ids)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Inside the block, writes leave their vectors pending (text and FTS rows still commit at once)."""
        self._deferred += 1
        try:
            yield
        finally:
            self._deferred -= 1

    @property
    def deferring(self) -> bool:
        """Whether writes leave their vectors pending now (inside :meth:`deferred`)."""
        return bool(self._deferred)

    def pending(self) -> int:
        """Entities whose new or changed texts wait for their vectors (0 without a model)."""
        return 0 if self.embedder is None else reads.pending_vector_count(self.database.read())

    def wait(self, timeout: float | None = None, progress: Progress | None = None) -> bool:
        """Compute every pending vector and wait (``timeout`` seconds only applies to the background
        thread); ``progress(done, total)`` counts entities. True when none is pending (or no model)."""
        if self.embedder is None:
            return True
        if self._filler is None:
            fill(self.database, self.embedder, self.land, progress=progress)
            return True
        total = self.pending()
        self._filler.wake()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            idle = self._filler.wait(step)
            if progress is not None:
                left = self.pending()
                total = max(total, left)
                progress(total - left, total)
            if idle or (deadline is not None and time.monotonic() >= deadline):
                return idle

    def coverage(self) -> tuple[int, int] | None:
        """``(embedded, total)`` entities for the attached model (:func:`~limbic.core.store.vector_meta.entity_coverage`:
        an entity waiting for a newer vector is not embedded); ``None`` without a model."""
        return None if self.embedder is None else entity_coverage(self.database.read(), self.embedder.name)

    def stale(self) -> int:
        """Vectors missing or made by another model than ``embedder`` (entity and observation vectors)."""
        return 0 if self.embedder is None else stale_vector_count(self.database.read(), self.embedder.name)

    def reembed(self, progress: Progress | None = None, batch_size: int = 64) -> ReembedReport:
        """Embed every entity whose vectors are stale (resumable; :func:`~limbic.core.vectors.reembed.reembed`).

        Raises ModelNotInstalledError when there is no model."""
        if self.embedder is None:
            raise ModelNotInstalledError("no embedding model is installed; run `limbic model install`")
        return reembed(self.database, self.embedder, progress=progress, batch_size=batch_size)
