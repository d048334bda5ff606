"""Search and vectors of :class:`~limbic.core.service.MemoryService`: hybrid search with limbic re-ranking
(docs/architecture.md "The search pipeline"), re-ranking cached candidates, the saved scoring parameters, and the state of the vectors.

The manager :class:`Search` (``memory.search``); the vector index and upkeep it reads are the memory's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from limbic.core import validation as check
from limbic.core.embedding.base import Embedder
from limbic.core.embedding.onnx_embedder import release_free_memory
from limbic.core.errors import DatabaseClosedError
from limbic.core.learning.loop import PARAMS_KEY
from limbic.core.models import (
    Graph,
    GraphPage,
)
from limbic.core.search.params import ScoringParams
from limbic.core.search.presets import preset
from limbic.core.service.inputs import view_args
from limbic.core.store import scope, views
from limbic.core.store.schema import put_setting, vector_dimension

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService

log = logging.getLogger(__name__)
HYBRID_COVERAGE = 0.99
"""Search runs hybrid (KNN with full text) once at least this share of the entities is embedded, and ranks on
full text alone below it; 0.99 keeps a few writes whose vectors are being computed (milliseconds) from
switching a memory of 100+ entities to full text, while a memory embedding after an install stays on full
text until it is (nearly) done."""


def vectors_cover(embedded: int, total: int) -> bool:
    """Whether ``embedded`` of ``total`` entities are enough for KNN to join the search (``HYBRID_COVERAGE``)."""
    return embedded >= HYBRID_COVERAGE * total


class Search:
    """Ranked search (:mod:`limbic.core.search`), the reference ``search_nodes``, the scoring parameters, and the
    state of the vectors search runs on (pending, stale, warm-up of the KNN graph, re-embedding).

    Reached as ``memory.search`` (:class:`~limbic.core.service.memory.MemoryService`).
    """


    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory
        self._warm_up_thread: threading.Thread | None = None

    def scoring_params(self) -> ScoringParams:
        """The saved scoring parameters (defaults when none were saved); what MCP ``search_semantic`` uses."""
        text = self.memory.database.get_setting(PARAMS_KEY)
        return ScoringParams.from_json(text) if text else preset("default")

    def query(
        self, query: str, limit: int = 10, params: ScoringParams | None = None, *,
        record: bool = True, origin: str | None = None, project: str | None = None,
    ):
        """Hybrid search with limbic re-ranking (docs/architecture.md "The search pipeline"); returns a :class:`~limbic.core.search.SearchOutcome`.

        ``params`` defaults to the saved scoring parameters. Runs FTS-only when no embedder is attached
        or when the stored vectors have another dimension (until ``limbic model reembed``); vectors of
        another model with the same dimension are left out of KNN (see below for when KNN joins at all). With
        ``record`` (and shadow logging enabled), the search gets a ``search_id`` and is logged
        (``search_events``, with its A/B group) with the returned top-K as impressions
        (``search_results``, ``entity_impressions``) and its candidate arrays, off the caller's path.
        Being returned is not a use: no access, access day or co-occurrence is recorded (docs/mcp.md "Uses and impressions").
        ``pending_vectors`` says how many entities still wait for vectors (found by full-text only meanwhile).
        While the embedded entities (:meth:`embedding_progress`, the outcome's ``embedded``) cover less than
        ``HYBRID_COVERAGE`` of the memory — a model just installed, a memory written without one — the search
        ranks on full text alone (``mode`` ``fts_only``, as without a model): KNN over the embedded part only
        would rank those entities above better text matches.
        ``project``: search that project's memories and the global ones (weighed 1.0 and 0.8), never another
        project's (docs/lifecycle.md "Project scope"); a call bound to a project searches that one, and naming
        another is refused (:func:`limbic.core.store.scope.narrow`).
        Raises ValidationError for an empty or too long query, a limit outside 1..1000 or a bad project name.
        """
        from limbic.core.search.pipeline import run_search

        params = params or self.scoring_params()
        config = self.memory.learning.config()
        logged = record and config.enabled
        project = scope.narrow(None if project is None else check.label(project, "project"))
        conn = self.memory.database.read()
        with conn:  # one read snapshot for the whole search: on PostgreSQL one leased connection, one BEGIN
            embedder = self._search_embedder()
            pending = self.pending_vectors() if embedder is not None else 0
            embedded = self.embedding_progress() if embedder is not None else None
            if embedded is not None and not vectors_cover(*embedded):
                embedder = None  # KNN over a part of the memory would push the embedded part up: full text alone
            outcome = run_search(conn, embedder, query, limit, params, vectors=self.memory.index,
                                 search_id=self.memory.learning.new_search_id() if logged else None,
                                 pending_vectors=pending, embedded=embedded, project=project)
        if outcome.search_id is not None:
            self.memory.usage.signals.record_search(outcome, outcome.search_id, origin or self.memory.origin,
                                        self.memory.learning.treatment(outcome.candidate_set.query), params.to_json(),
                                        self.memory.learning.preset_name(params), config.retention)
        return outcome

    def rerank(self, candidate_set, params: ScoringParams):
        """Re-score a cached candidate set with other parameters: no SQL, no model call."""
        from limbic.core.search.pipeline import rerank

        return rerank(candidate_set, params)

    def stale_vectors(self) -> int:
        """Vectors that are missing or were made by another model than the attached embedder: entities
        without a current entity vector plus live observations without a current observation vector.

        Search ranks on full text alone while the entities with current vectors cover less than
        ``HYBRID_COVERAGE`` of the memory (:meth:`query`), until ``limbic model reembed`` (:meth:`reembed`)
        fills them in.
        """
        return self.memory.vectors.stale()

    def pending_vectors(self) -> int:
        """Entities whose new or changed texts wait for their vectors (0 without an embedding model).

        A write commits its text at once and its vectors land shortly after, computed outside the write
        lock (:mod:`limbic.core.vectors.upkeep`); until then the entity is found by full-text search.
        """
        return self.memory.vectors.pending()

    def embedding_progress(self) -> tuple[int, int] | None:
        """``(embedded, total)`` entities for the attached model, read from the database (so it is the same after
        a restart): an entity counts as embedded when its entity vector was made by the model and no newer text
        waits for one. ``None`` without a model."""
        return self.memory.vectors.coverage()

    def wait_for_vectors(self, timeout: float | None = None,
                         progress: Callable[[int, int], None] | None = None) -> bool:
        """Compute every pending vector (by the background embedder, or on this thread without one) and
        wait (``timeout`` seconds, ``None`` = no limit; only with ``background_vectors``).
        ``progress(done, total)`` counts entities. Returns True when none is pending (True without a model)."""
        return self.memory.vectors.wait(timeout, progress)

    def warm_up(self) -> None:
        """Load what the first search would otherwise wait for: the model (one query encoded) and the
        in-memory vector copy (4.9 s at all of Debian), and ask for the copy's KNN graph past 100,000
        vectors. Call from a worker thread at start-up (``limbic mcp`` and the app do); a search meanwhile
        simply waits for the copy as before. Does nothing without a model or stored vectors."""
        embedder = self._search_embedder()
        if embedder is None:
            return
        embedder.embed_query("warm-up")
        conn = self.memory.database.read()
        with conn:
            if vector_dimension(conn) is not None:
                self.memory.index.prepare(conn, embedder.name)
        self.memory.database.release_cache()  # SQLite: the vector tables' pages, read once
        release_free_memory()  # the rows read on the way into the copy (38 MB at 10,000 entities)

    def start_warm_up(self, then: Callable[[], None] | None = None) -> None:
        """Run :meth:`warm_up` once on a background thread, then ``then`` (on that thread, whether the warm-up
        succeeded or not); :meth:`MemoryService.close <limbic.core.service.memory.MemoryService.close>` waits for it
        (:meth:`wait_for_warm_up`). An error is logged and left to the first search, which loads the same things and
        reports it."""
        if self._warm_up_thread is not None:
            return

        def run() -> None:
            try:
                self.warm_up()
            except DatabaseClosedError:
                pass
            except Exception:
                log.exception("warming up the search failed; the first search loads the model and vectors")
            if then is not None:
                then()

        self._warm_up_thread = threading.Thread(target=run, name="limbic-warm-up", daemon=True)
        self._warm_up_thread.start()

    def warming_up(self) -> bool:
        """Whether the warm-up started by :meth:`start_warm_up` is still running."""
        return self._warm_up_thread is not None and self._warm_up_thread.is_alive()

    def wait_for_warm_up(self) -> None:
        """Wait for the warm-up started by :meth:`start_warm_up`, if any."""
        if self._warm_up_thread is not None:
            self._warm_up_thread.join()

    def wait_for_knn_graph(self, timeout: float | None = None) -> None:
        """Wait (``timeout`` seconds, ``None`` = until done) for the HNSW graph of a large vector copy
        (:mod:`limbic.core.vectors.approximate`) being built in the background; searches stay exact until
        it is ready. Returns at once when none is being built. For benchmarks and tests."""
        graphs = self.memory.index.graphs
        if graphs is not None:
            graphs.wait(timeout)

    def reembed(self, progress: Callable[[int, int], None] | None = None, batch_size: int = 64):
        """Re-embed every entity whose vector is stale (resumable); returns the
        :class:`~limbic.core.vectors.reembed.ReembedReport` (model, embedded, stale, recreated_table, seconds).

        Raises ModelNotInstalledError when no embedder is attached."""
        return self.memory.vectors.reembed(progress, batch_size)

    def _search_embedder(self) -> Embedder | None:
        """The query encoder, or ``None`` (FTS-only) when the stored vectors have another dimension."""
        if self.memory.embedder is None:
            return None
        stored = vector_dimension(self.memory.database.read())
        return self.memory.embedder if stored in (None, self.memory.embedder.dimension) else None

    def search_nodes(self, query: str, *, project: str | None = None, as_of: float | None = None) -> Graph:
        """Entities whose name, type or a current observation contains ``query`` (ASCII case-insensitive), and the
        active relations with at least one endpoint among them (reference server semantics); in the view of
        ``project`` / ``as_of`` when given (as :meth:`read_graph`)."""
        text = check.query(query)
        project, as_of = view_args(project, as_of)
        conn = self.memory.database.read()
        with conn:
            ids = views.substring_matches(conn, text, project=project, as_of=as_of)
            graph = Graph(tuple(views.entities(conn, ids, as_of=as_of)),
                          tuple(views.relations(conn, ids, project=project, as_of=as_of)))
        return graph

    def search_nodes_page(self, query: str, offset: int = 0, limit: int = 100, *, project: str | None = None,
                          as_of: float | None = None) -> GraphPage:
        """Matches ``offset .. offset+limit`` of :meth:`search_nodes` (same order: by entity id), with the active
        relations touching them; ``total_entities`` counts every match. Raises ``ValidationError`` on a bad
        query, offset, limit, project or time."""
        text = check.query(query)
        offset = check.limit(offset, low=0, high=10**9, what="offset")
        limit = check.limit(limit)
        project, as_of = view_args(project, as_of)
        conn = self.memory.database.read()
        with conn:
            ids = views.substring_matches(conn, text, project=project, as_of=as_of)
            page = ids[offset:offset + limit]
            result = GraphPage(tuple(views.entities(conn, page, as_of=as_of)),
                               tuple(views.relations(conn, page, project=project, as_of=as_of)), offset, limit, len(ids))
        return result

    def save_scoring_params(self, params: ScoringParams, *, origin: str | None = None) -> None:
        """Persist ``params`` as the default for every client of this database."""
        self.memory.write("save_scoring_params", origin, lambda txn: put_setting(txn.conn, PARAMS_KEY, params.to_json()))

    def deferred_vectors(self) -> AbstractContextManager[None]:
        """Inside the block, writes leave their vectors pending (text and FTS rows still commit at once);
        call :meth:`wait_for_vectors` after it to compute them all, e.g. with a progress bar (import)."""
        return self.memory.vectors.deferred()
