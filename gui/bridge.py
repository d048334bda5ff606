"""Bridge the core's change feed into one Qt signal on the UI thread.

The bridge is one listener of the service's change feed (:mod:`limbic.core.service.changes`), beside the MCP
resource notifier: in-process writes (GUI edits, the embedded MCP server) and other processes' writes
(``limbic mcp`` over stdio, the CLI, seen by the feed's one watcher thread) reach the views the same
way (Anki's ``mediasrv``: an agent's write and a person's edit are one path), each change once.

The feed calls from any thread. Changes are queued under a lock and flushed once per event-loop
turn on the UI thread as ``changes_arrived(list[Changes])``, so a burst (an import of 10,000
entities) becomes a few signals, not thousands.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from limbic.core.models import Changes
from limbic.core.service import MemoryService


class ChangeBridge(QObject):
    """Turns change-feed callbacks into ``changes_arrived(list[Changes])`` on the UI thread.

    Create on the UI thread; :meth:`start` subscribes to ``service.changes`` (with
    ``other_processes``, the feed also follows commits of other processes on the same file) and
    :meth:`stop` unsubscribes; call it before closing the service.
    """

    changes_arrived = Signal(object)
    _wake = Signal()

    def __init__(self, service: MemoryService, parent: QObject | None = None, *, other_processes: bool = True) -> None:
        super().__init__(parent)
        self._service = service
        self._other_processes = other_processes
        self._lock = threading.Lock()
        self._queue: list[Changes] = []
        self._unsubscribe: Callable[[], None] | None = None
        self._wake.connect(self._flush)

    def start(self) -> None:
        """Subscribe to the service's change feed (idempotent)."""
        if self._unsubscribe is None:
            self._unsubscribe = self._service.subscribe(self._post, other_processes=self._other_processes)

    def stop(self) -> None:
        """Unsubscribe; pending changes are dropped."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        with self._lock:
            self._queue.clear()

    @property
    def watching(self) -> bool:
        """True while the bridge follows other processes' commits through the feed's watcher."""
        return self._unsubscribe is not None and self._other_processes and self._service.changes.watching

    def _post(self, changes: list[Changes]) -> None:  # any thread
        with self._lock:
            was_empty = not self._queue
            self._queue.extend(changes)
        if was_empty and changes:
            self._wake.emit()  # queued to the UI thread when called from another thread

    @Slot()
    def _flush(self) -> None:
        with self._lock:
            batch, self._queue = self._queue, []
        if batch:
            self.changes_arrived.emit(batch)
