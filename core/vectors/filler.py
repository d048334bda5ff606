"""The background embedder: one thread per service that fills pending vector marks.

Writers never wait for the model: a write commits its text and pending marks, then :meth:`VectorFiller.wake`
lets this thread compute the vectors (:func:`limbic.core.vectors.pending.fill_step`) and land them in
their own short write transactions. The thread starts on the first wake, so a service that only reads
never starts it; on its first round it also fills whatever an earlier process left pending (a crash
between the text commit and the vector commit).

Several processes write to one file (the app and agents' ``limbic mcp`` servers), and the marks are
shared: each thread fills the entities its own process wrote, and marks of others only once they are
:data:`ORPHAN_SECONDS` old (their writer may have stopped), or all of them when asked to (``wake()``
with no ids: start, ``wait``). Four servers all taking the oldest marks embedded every text four times
(400 writes: 2,932 texts for 372 entities). A failing step is reported to ``on_error`` and retried after
a pause that doubles from :data:`FIRST_RETRY_SECONDS` up to :data:`RETRY_SECONDS` (a wake meanwhile does not
cut it short), so one bad batch never stops the thread and a database away for a while costs a few
attempts, not a spin; the log gets one line when steps start failing (with the traceback only for an
unexpected error) and one when they work again, with how long they failed. The marks stay until a step
succeeds.
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable

from limbic.core.embedding.base import Embedder, holding_memory
from limbic.core.errors import LimbicError
from limbic.core.pacing import QuietWindow
from limbic.core.store import reads
from limbic.core.store.database import Database
from limbic.core.vectors.pending import Writer, fill_step

log = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 0.25
RETRY_SECONDS = 2.0
"""The longest pause between two attempts of a failing step."""


QUIET_SECONDS = 0.1
LONGEST_DEFERRAL_SECONDS = 1.0
"""Vectors of this process's writes are computed once its writes have paused for ``QUIET_SECONDS`` (at most
``LONGEST_DEFERRAL_SECONDS`` after the first one waiting; :class:`~limbic.core.pacing.QuietWindow`), in steps of up to :data:`BACKGROUND_STEP` entities:
back-to-back writes then do not share the cores with the model between them (docs/performance.md
"add_observations and its check"). A ``wake()`` with no ids (``wait``, start) does not wait."""

ORPHAN_SECONDS = 30.0
"""Marks of other processes this old are filled here too (their writer may have stopped before filling them)."""

BACKGROUND_NICE = 10
BACKGROUND_STEP = 16
"""Entities per background step: its landing transaction holds the write lock for a few milliseconds
only (64 entities, ~130 vec0 rows, held it long enough to show in concurrent writers' p99)."""


def _lower_priority() -> None:
    """Give this thread a lower scheduling priority (Linux: a thread has its own nice value), so that
    on a busy machine writers and searches run before the model; elsewhere nothing changes."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
        except OSError:  # not permitted here: run at normal priority
            log.debug("could not lower the background embedder's priority")


class VectorFiller:
    """Fills pending vectors on one daemon thread.

    Args:
        database: the store; embedder: the model (its ``embed`` runs on this thread only for fills).
        write: opens the short write transaction of each step (the service's, so the change is published).
        on_landed: called with the number of entities after each step that landed vectors.
        on_error: called with the exception when a step fails (it is retried after a pause).
    """

    def __init__(self, database: Database, embedder: Embedder, write: Writer, *,
                 on_landed: Callable[[int], None] | None = None,
                 on_error: Callable[[BaseException], None] | None = None) -> None:
        self._database = database
        self._embedder = embedder
        self._write = write
        self._on_landed = on_landed
        self._on_error = on_error
        self._wake = threading.Event()
        self._stopping = threading.Event()  # set by close(): cuts a retry pause short
        self._hurry = threading.Event()  # set by close() and a wake() without ids: cuts the wait for quiet short
        self._idle = threading.Condition()
        self._busy = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._own: dict[int, None] = {}  # entity ids this process wrote, in order (under _start_lock)
        self._sweep = False  # fill every pending mark, whoever wrote it (under _start_lock)
        self._window = QuietWindow(QUIET_SECONDS, LONGEST_DEFERRAL_SECONDS)  # this process's waiting writes (_start_lock)
        self.last_error: BaseException | None = None

    def wake(self, entity_ids: Iterable[int] | None = None) -> None:
        """Ask the thread to fill the marks of ``entity_ids`` (written by this process), or every pending
        mark when ``None`` (starts the thread on the first call)."""
        if self._closed:
            return
        with self._start_lock:
            if entity_ids is None:
                self._sweep = True
            else:
                self._window.add(time.monotonic(), waiting=bool(self._own))
                self._own.update(dict.fromkeys(int(i) for i in entity_ids))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="limbic-vector-filler", daemon=True)
                self._thread.start()
        if entity_ids is None:
            self._hurry.set()
        with self._idle:
            self._busy = True
        self._wake.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the thread has nothing left to fill (or ``timeout`` seconds); True when idle."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._busy or self._closed, timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Stop the thread after the step in flight (pending marks stay for the next start)."""
        self._closed = True
        self._stopping.set()
        self._hurry.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        with self._idle:
            self._idle.notify_all()

    def _run(self) -> None:
        _lower_priority()
        failing_since: float | None = None
        pause = FIRST_RETRY_SECONDS
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            self._until_quiet()
            with holding_memory(self._embedder):  # the model's memory is given back once the round ends
                while not self._closed:
                    try:
                        step = self._step()
                    except Exception as exc:  # noqa: BLE001 — reported, then retried: the thread must not die
                        if failing_since is None:
                            failing_since = time.monotonic()
                            if isinstance(exc, LimbicError):  # a named condition (the database is away): its message
                                log.warning("computing pending vectors failed, retrying: %s", exc)
                            else:
                                log.exception("computing pending vectors failed; retrying")
                        self.last_error = exc
                        if self._on_error is not None:
                            self._on_error(exc)
                        self._stopping.wait(pause)  # not the wake event: set by every write, it would end the pause
                        pause = min(pause * 2, RETRY_SECONDS)
                        continue
                    if failing_since is not None:
                        log.warning("computing pending vectors works again (failed for %.1f s)",
                                    time.monotonic() - failing_since)
                        failing_since, pause = None, FIRST_RETRY_SECONDS
                    if step is None:
                        break
                    if step[0] and self._on_landed is not None:
                        self._on_landed(step[0])
            with self._idle:
                if not self._wake.is_set():
                    self._busy = False
                    self._idle.notify_all()

    def _until_quiet(self) -> None:
        """Wait until this process's writes pause (:data:`QUIET_SECONDS`) or the oldest waited
        :data:`LONGEST_DEFERRAL_SECONDS`; at once when a sweep was asked for or the filler closes."""
        self._hurry.clear()
        while True:
            with self._start_lock:
                if self._sweep or not self._own or self._closed:
                    return
                due = self._window.due()
            left = due - time.monotonic()
            if left <= 0:
                return
            self._hurry.wait(left)

    def _step(self) -> tuple[int, int] | None:
        """One step: the next entities this process wrote, else every mark (a sweep was asked for) or the
        orphaned ones. Returns ``(entities landed, texts embedded)``, ``None`` when nothing is left."""
        with self._start_lock:
            own = list(itertools.islice(self._own, BACKGROUND_STEP))
            for entity_id in own:
                del self._own[entity_id]
            sweep = self._sweep
        if own:
            try:
                return fill_step(self._database, self._embedder, self._write, BACKGROUND_STEP, only=own)
            except Exception:
                with self._start_lock:  # retried after the pause, like any failed step
                    self._own.update(dict.fromkeys(own))
                raise
        cutoff = None if sweep else time.time() - ORPHAN_SECONDS
        landed, texts = fill_step(self._database, self._embedder, self._write, BACKGROUND_STEP, queued_before=cutoff)
        if landed or texts:
            return landed, texts
        with self._start_lock:
            if self._own:  # written meanwhile
                return 0, 0
            if sweep:
                self._sweep = False
        return None

    def pending(self) -> int:
        """How many entities wait for vectors (read now)."""
        return reads.pending_vector_count(self._database.read())
