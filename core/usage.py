"""Best-effort recording of usage signals after a read has answered (seed 000 "Signal Tracking").

Access counts, distinct access days, co-occurrences and the search log (``search_events``,
``search_results``: the shadow A/B data, with the cosine-only KNN rank as baseline) are written on one
background thread, so a search or ``open_nodes`` returns before they are stored. A failure is logged,
never raised to the reader.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from limbic.core.store import writes
from limbic.core.store.database import Database

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
        """Queue one access of each entity at ``at`` (UTC seconds) and co-occurrence of every pair."""

        def task() -> None:
            with self._database.maintenance() as conn:
                writes.record_access(conn, entity_ids, at, co_occurrence=co_occurrence)

        self._submit(task)

    def record_search(self, outcome, origin: str) -> None:
        """Queue the search log rows and the access/co-occurrence signals of ``outcome``'s top-K."""
        candidates = outcome.candidate_set
        results = list(outcome.results)
        knn_rank = dict(zip(candidates.entity_ids.tolist(), candidates.knn_rank.tolist(), strict=True))
        at = time.time()

        def task() -> None:
            with self._database.maintenance() as conn:
                conn.execute(
                    "INSERT INTO search_events(at, query, k_limit, mode, strategy, origin, duration_ms) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (at, candidates.query, candidates.limit, outcome.mode, outcome.strategy, origin,
                     outcome.timings.get("total", 0.0)),
                )
                event = conn.last_insert_rowid()
                conn.executemany(
                    "INSERT INTO search_results(event_id, entity_id, rank, baseline_rank, limbic_score, "
                    "final_score, cosine_sim) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(event, r.entity_id, r.rank, knn_rank.get(r.entity_id) or None, r.limbic_score,
                      r.final_score, None if r.distance is None else max(0.0, 1.0 - r.distance))
                     for r in results],
                )
                writes.record_access(conn, [r.entity_id for r in results], at, co_occurrence=True)

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
