"""Best-effort recording of usage signals after a read has answered (mcp-memory "The Limbic System", "Signal Tracking").

Two kinds of signal, kept apart:

- an **impression**: an entity returned by a search. The search is logged (``search_events``, with its
  A/B group and parameters) with each shown entity's rank (``search_results``, beside its cosine-only
  and BM25-only ranks) and its packed candidate arrays (``search_candidates``, for pure replay), and
  counted in ``entity_impressions``. Impressions never feed salience, access days or
  co-occurrence, so a ranking cannot feed on its own output.
- an **access**: a use of an entity (``open_nodes``, ``get_entity``, ``mark_used``, the app's *Mark as useful*; looking records nothing).
  Accesses update ``entity_access``, ``entity_access_days`` and, for two or more entities used
  together, ``co_occurrences``, and are logged with their origin (``use_events``, for the agents' timeline;
  bounded by the search log's retention). A use of an entity that a search by the same origin showed shortly
  before labels it relevant for that search (``implicit_feedback``).

Both are written on one background thread, so a read returns before they are stored. A failure is
logged, never raised to the reader.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING

import numpy as np

from limbic.core import validation as check
from limbic.core.errors import DatabaseClosedError, DatabaseUnavailableError, ValidationError
from limbic.core.learning import codec
from limbic.core.learning.shadow import ShadowConfig
from limbic.core.pacing import QuietWindow
from limbic.core.store import Connection, search_log, use_log, writes
from limbic.core.store.database import Database
from limbic.core.store.search_log import Impression, SearchEvent

if TYPE_CHECKING:
    from limbic.core.search.pipeline import SearchOutcome
    from limbic.core.service.memory import MemoryService

log = logging.getLogger(__name__)


def record_use(conn: Connection, entity_ids: Sequence[int], at: float, *, origin: str, source: str,
               config: ShadowConfig, search_id: int | None = None) -> None:
    """One use of each entity at ``at`` (UTC seconds) by ``origin``: access, access day, co-occurrence of every
    pair, a row of the use log (the oldest dropped past ``config.retention`` uses), and relevance labels: for
    ``search_id`` (shown or not) when the caller names the search the use answers, else for the searches by
    ``origin`` in the ``config.feedback_window_seconds`` before that showed them. Inside the caller's write
    transaction."""
    writes.record_access(conn, entity_ids, at, co_occurrence=True)
    use_log.insert_uses(conn, entity_ids, at, origin, source, search_id, retention=config.retention)
    if search_id is not None:
        search_log.label_search(conn, search_id, entity_ids, at, source)
    else:
        search_log.label_recent(conn, entity_ids, at, origin, config.feedback_window_seconds, source)


class SignalRecorder:
    """One worker thread writing usage signals in ``Database.maintenance`` transactions, in the order given.

    A search's log waits until the service has been quiet for :data:`QUIET_SECONDS` (at most
    :data:`LONGEST_DEFERRAL_SECONDS`; :class:`~limbic.core.pacing.QuietWindow`), so that writing it does not share the CPU with the answer being sent or
    the next search: on 2 cores that took about 1 ms from each ``search_semantic`` over stdio
    (docs/performance.md "search_semantic over stdio"). A use (:meth:`record_access`) and :meth:`wait` write
    everything queued before them at once, so a use always finds the search it answers.
    """

    QUIET_SECONDS = 0.05
    LONGEST_DEFERRAL_SECONDS = 1.0

    def __init__(self, database: Database) -> None:
        self._database = database
        self._changed = threading.Condition()
        self._queue: list[tuple[Callable[[], None], Future]] = []
        self._due_now = False  # a use or a wait() is queued: write everything without waiting for quiet
        self._closed = False
        self._window = QuietWindow(self.QUIET_SECONDS, self.LONGEST_DEFERRAL_SECONDS)
        self._thread: threading.Thread | None = None

    def _submit(self, task: Callable[[], None], *, deferrable: bool = False) -> Future:
        future: Future = Future()
        with self._changed:
            if self._closed:
                raise RuntimeError("the usage recorder is shut down")
            self._window.add(time.monotonic(), waiting=bool(self._queue))
            self._queue.append((task, future))
            self._due_now = self._due_now or not deferrable
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="limbic-signals")
                self._thread.start()
            self._changed.notify()
        return future

    def _next_batch(self) -> list[tuple[Callable[[], None], Future]] | None:
        """The tasks to write now (in order), once they are due; None when there are none left (the thread
        ends: it is not a daemon, so a process that exits writes what it queued first)."""
        with self._changed:
            while True:
                if not self._queue:
                    self._thread = None
                    return None
                now = time.monotonic()
                due = self._window.due()
                if self._due_now or self._closed or now >= due:
                    batch, self._queue, self._due_now = self._queue, [], False
                    return batch
                self._changed.wait(due - now)

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            for task, future in batch:
                try:
                    task()
                except (DatabaseClosedError, DatabaseUnavailableError) as exc:  # the database logs an outage itself
                    log.debug("usage signals not recorded: %s", exc)
                except Exception:  # best effort: a lost signal must not fail a read
                    log.exception("recording usage signals failed")
                future.set_result(None)

    def record_access(self, entity_ids: list[int], at: float, *, origin: str, source: str,
                      config: ShadowConfig) -> None:
        """Queue one access (a use) of each entity at ``at`` (UTC seconds) by ``origin``: :func:`record_use`
        (``source`` names the kind of use: open_nodes, get_entity, mark_used)."""

        def task() -> None:
            with self._database.maintenance() as conn:
                record_use(conn, entity_ids, at, origin=origin, source=source, config=config)

        self._submit(task)

    def record_search(self, outcome: SearchOutcome, search_id: int, origin: str, treatment: str,
                      params_json: str, preset: str | None, retention: int) -> None:
        """Queue the log of one search: the event, the impressions of its top-K with their ranks
        (treatment, cosine-only, BM25-only), its packed candidate arrays and its query vector. No access,
        no co-occurrence."""
        candidates = outcome.candidate_set
        ranks = dict(zip(candidates.entity_ids.tolist(),
                         zip(candidates.knn_rank.tolist(), candidates.fts_rank.tolist(), strict=True), strict=True))
        at = time.time()
        shown = [Impression(r.entity_id, r.rank, ranks[r.entity_id][0] or None, ranks[r.entity_id][1] or None,
                            r.limbic_score, r.final_score, None if r.distance is None else max(0.0, 1.0 - r.distance))
                 for r in outcome.results]

        def task() -> None:
            vector = None if outcome.query_vector is None else outcome.query_vector.astype(np.float32).tobytes()
            event = SearchEvent(search_id, at, candidates.query, candidates.limit, outcome.mode, outcome.strategy,
                                origin, outcome.timings.get("total", 0.0), treatment, preset, params_json,
                                codec.pack(candidates), vector, outcome.model)
            with self._database.maintenance() as conn:
                search_log.insert_search(conn, event, shown, retention=retention)

        self._submit(task, deferrable=True)

    def wait(self, timeout: float = 10.0) -> None:
        """Block until everything queued so far is written (at most ``timeout`` seconds; raises
        ``TimeoutError`` past it)."""
        with self._changed:
            if self._thread is None or self._closed:
                return
        self._submit(lambda: None).result(timeout=timeout)

    def shutdown(self) -> None:
        """Write everything queued, then stop the worker thread."""
        with self._changed:
            self._closed = True
            thread = self._thread
            self._changed.notify()
        if thread is not None:
            thread.join()


class Usage:
    """Implicit feedback: the uses a caller records (access, *mark as used*); looking is not using.

    Reached as ``memory.usage`` (:class:`~limbic.core.service.memory.MemoryService`).
    """

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory
        self.signals = SignalRecorder(memory.database)

    def record_access(self, names: Sequence[str], *, at: float | None = None, co_occurrence: bool = True) -> None:
        """Record one access of each named entity at ``at`` (UTC seconds, default now) and their co-occurrences.

        For replaying or seeding usage history (the sample graph); agents and the GUI use
        :meth:`mark_used`, :meth:`open_nodes` or :meth:`get_entity`. Raises NotFoundError for unknown
        names. Signals are not logged in ``changes``.
        """
        check.count(names, "entity names")
        at = check.timestamp(at, "access time") or time.time()
        names = [check.name(n) for n in names]
        with self.memory.database.maintenance() as conn:
            ids = writes.require_ids(conn, names)
            writes.record_access(conn, list(ids.values()), at, co_occurrence=co_occurrence)

    def mark_used(self, names: Sequence[str], *, search_id: int | None = None,
                  origin: str | None = None) -> list[str]:
        """Say that these entities were used (they helped): one access each and a co-occurrence per pair.

        The explicit form of a use for agents (MCP ``mark_used``), written before returning. With
        ``search_id`` (a ``SearchOutcome.search_id``) each entity is a relevance label for that search
        only; without it, the searches by the same ``origin`` in the feedback window that showed them.
        Returns the names, without duplicates. Raises ValidationError for an empty or too long list and
        NotFoundError naming every unknown entity or an unknown ``search_id`` (nothing is recorded then).
        """
        check.count(names, "entity names")
        unique = list(dict.fromkeys(check.name(n) for n in names))
        if not unique:
            raise ValidationError("name at least one entity that was used")
        origin = origin or self.memory.origin
        self.signals.wait()  # the searches it answers are logged first (a search's log waits for a quiet moment)
        with self.memory.database.maintenance() as conn:
            ids = list(writes.require_ids(conn, unique).values())
            if search_id is not None:
                self.memory.learning.require_search(conn, search_id)
            record_use(conn, ids, time.time(), origin=origin, source="mark_used", search_id=search_id,
                       config=self.memory.learning.config())
        return unique

    def record_use(self, entity_ids: list[int], origin: str | None, source: str) -> None:
        self.signals.record_access(entity_ids, time.time(), origin=origin or self.memory.origin, source=source,
                                    config=self.memory.learning.config())

    def wait_for_signals(self, timeout: float = 10.0) -> None:
        """Block until access/co-occurrence recordings queued so far are written (tests, shutdown)."""
        self.signals.wait(timeout)
