"""Best-effort recording of usage signals after a read has answered (seed 000 "Signal Tracking", DESIGN.md §10).

Two kinds of signal, kept apart:

- an **impression**: an entity returned by a search. The search is logged (``search_events``) with each
  shown entity's rank (``search_results``, the shadow A/B data, with the cosine-only KNN rank as
  baseline) and counted in ``entity_impressions``. Impressions never feed salience, access days or
  co-occurrence, so a ranking cannot feed on its own output.
- an **access**: a use of an entity (``open_nodes``, ``get_entity``, ``mark_used``, the GUI opening it).
  Accesses update ``entity_access``, ``entity_access_days`` and, for two or more entities used
  together, ``co_occurrences``.

Both are written on one background thread, so a read returns before they are stored. A failure is
logged, never raised to the reader.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from limbic.core.store import writes
from limbic.core.store.database import Database
from limbic.core.store.search_log import Impression, SearchEvent, insert_search

if TYPE_CHECKING:
    from limbic.core.search.pipeline import SearchOutcome

log = logging.getLogger(__name__)


class SignalRecorder:
    """One worker thread writing usage signals in ``Database.maintenance`` transactions."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="limbic-signals")
        self._pending: list[Future] = []
        self._lock = threading.Lock()

    def _submit(self, task: Callable[[], None]) -> None:
        def guarded() -> None:
            try:
                task()
            except Exception:  # best effort: a lost signal must not fail a read
                log.exception("recording usage signals failed")

        with self._lock:
            self._pending = [f for f in self._pending if not f.done()]
            self._pending.append(self._executor.submit(guarded))

    def record_access(self, entity_ids: list[int], at: float, *, co_occurrence: bool = True) -> None:
        """Queue one access (a use) of each entity at ``at`` (UTC seconds) and co-occurrence of every pair."""

        def task() -> None:
            with self._database.maintenance() as conn:
                writes.record_access(conn, entity_ids, at, co_occurrence=co_occurrence)

        self._submit(task)

    def record_search(self, outcome: SearchOutcome, origin: str) -> None:
        """Queue the log of one search and the impressions of its top-K (no access, no co-occurrence)."""
        candidates = outcome.candidate_set
        knn_rank = dict(zip(candidates.entity_ids.tolist(), candidates.knn_rank.tolist(), strict=True))
        event = SearchEvent(time.time(), candidates.query, candidates.limit, outcome.mode, outcome.strategy,
                            origin, outcome.timings.get("total", 0.0))
        shown = [Impression(r.entity_id, r.rank, knn_rank.get(r.entity_id) or None, r.limbic_score,
                            r.final_score, None if r.distance is None else max(0.0, 1.0 - r.distance))
                 for r in outcome.results]

        def task() -> None:
            with self._database.maintenance() as conn:
                insert_search(conn, event, shown)

        self._submit(task)

    def wait(self, timeout: float = 10.0) -> None:
        """Block until everything queued so far is written."""
        with self._lock:
            pending, self._pending = self._pending, []
        for future in pending:
            future.result(timeout=timeout)

    def shutdown(self) -> None:
        self.wait()
        self._executor.shutdown(wait=True)
