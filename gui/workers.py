"""Run a core call off the Qt UI thread and deliver its result or error back on the UI thread.

Modelled on Anki's ``QueryOp``/``CollectionOp`` (``qt/aqt/operations``): the background function
never touches a widget; ``on_success(result)`` / ``on_failure(exception)`` run on the UI thread.

Stale answers: each :class:`TaskRunner` call may name a *channel* (e.g. ``"search"``). Starting a
new task on a channel bumps that channel's generation counter; when an older task finishes, its
answer is dropped silently, so a slow search never overwrites the answer to a newer query.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

log = logging.getLogger(__name__)


class _Relay(QObject):
    """Lives on the UI thread; its signal carries a finished task's outcome across threads (queued)."""

    finished = Signal(object, object, object)  # task id, result, exception (one of the two is None)


class _Task(QRunnable):
    def __init__(self, task_id: int, relay: _Relay, fn: Callable[..., Any], args: tuple) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._task_id = task_id
        self._relay = relay
        self._fn = fn
        self._args = args

    def run(self) -> None:  # worker thread: never touch a widget here
        try:
            result = self._fn(*self._args)
        except BaseException as exc:  # noqa: BLE001 - every failure is handed back to the UI thread
            self._relay.finished.emit(self._task_id, None, exc)
        else:
            self._relay.finished.emit(self._task_id, result, None)


class TaskRunner(QObject):
    """Runs callables on a private ``QThreadPool`` and calls back on the thread that owns the runner.

    Create it on the UI thread. ``max_threads`` bounds concurrent core calls (each running task reads on
    a connection leased from the database's pool, given back when its thread ends).
    """

    def __init__(self, parent: QObject | None = None, *, max_threads: int = 2) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._relay = _Relay(self)
        self._relay.finished.connect(self._deliver)
        self._lock = threading.Lock()
        self._next_id = 0
        self._pending: dict[int, tuple[str | None, int, Callable | None, Callable | None]] = {}
        self._generations: dict[str, int] = {}
        self._closed = False

    def run(
        self,
        fn: Callable[..., Any],
        *args: Any,
        on_success: Callable[[Any], None] | None = None,
        on_failure: Callable[[BaseException], None] | None = None,
        channel: str | None = None,
    ) -> int:
        """Start ``fn(*args)`` in the pool; returns a task id.

        ``on_success(result)`` or ``on_failure(exc)`` runs later on the UI thread, unless a newer task
        was started on the same ``channel`` meanwhile (then the answer is dropped). Without
        ``on_failure`` an error is logged.
        """
        if self._closed:
            return -1
        with self._lock:
            self._next_id += 1
            task_id = self._next_id
            generation = 0
            if channel is not None:
                generation = self._generations.get(channel, 0) + 1
                self._generations[channel] = generation
            self._pending[task_id] = (channel, generation, on_success, on_failure)
        self._pool.start(_Task(task_id, self._relay, fn, args))
        return task_id

    def cancel_channel(self, channel: str) -> None:
        """Drop whatever answer is still due on ``channel`` (the work itself runs to its end)."""
        with self._lock:
            self._generations[channel] = self._generations.get(channel, 0) + 1

    def pending(self) -> int:
        """Number of tasks started and not yet delivered (or dropped)."""
        with self._lock:
            return len(self._pending)

    def wait(self, msecs: int = -1) -> bool:
        """Block until every running task finished (tests and shutdown only). True if all finished."""
        return self._pool.waitForDone(msecs)

    def shutdown(self, msecs: int = 10_000) -> bool:
        """Refuse new tasks, drop pending answers, wait for running ones. True if the pool drained."""
        self._closed = True
        with self._lock:
            self._pending.clear()
        self._pool.clear()
        return self._pool.waitForDone(msecs)

    @Slot(object, object, object)
    def _deliver(self, task_id: int, result: Any, error: BaseException | None) -> None:
        with self._lock:
            entry = self._pending.pop(task_id, None)
            if entry is None:
                return
            channel, generation, on_success, on_failure = entry
            if channel is not None and self._generations.get(channel) != generation:
                return
        if error is not None:
            if on_failure is not None:
                on_failure(error)
            else:
                log.error("background task failed", exc_info=error)
        elif on_success is not None:
            on_success(result)
