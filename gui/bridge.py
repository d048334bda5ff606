"""Bridge the core's change notifications into one Qt signal on the UI thread.

Two sources feed the same path (Anki's ``mediasrv``: an agent's write and a person's edit reach the
views the same way):

- in-process writes (GUI edits, the embedded MCP server): ``service.subscribe`` callbacks, run on
  the writer's thread after commit;
- other processes' writes (``limbic mcp`` over stdio, the CLI): ``core/watcher.py``'s
  ``ChangeWatcher``, a thread polling ``PRAGMA data_version`` and reading the ``changes`` log.

Both may fire from any thread. Changes are queued under a lock and flushed once per event-loop turn
on the UI thread as ``changes_arrived(list[Changes])``, so a burst (an import of 10,000 entities)
becomes a few signals, not thousands. A change id seen from both sources is delivered once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

SEEN_IDS_KEPT = 4096  # change ids remembered to drop duplicates between the two sources


class ChangeBridge(QObject):
    """Turns service callbacks and watcher callbacks into ``changes_arrived`` on the UI thread.

    Create on the UI thread; call :meth:`start` to subscribe and start watching ``db_path`` (omit it
    to skip watching other processes) and :meth:`stop` before closing the service.
    """

    changes_arrived = Signal(object)
    _wake = Signal()

    def __init__(
        self,
        service: Any,
        db_path: str | Path | None = None,
        parent: QObject | None = None,
        *,
        interval: float = 0.2,
        watcher_factory: Callable[..., Any] | None = None,
    ) -> None:
        super().__init__(parent)
        self._service = service
        self._db_path = db_path
        self._interval = interval
        self._watcher_factory = watcher_factory
        self._lock = threading.Lock()
        self._queue: list = []
        self._seen: dict[int, None] = {}
        self._unsubscribe: Callable[[], None] | None = None
        self._watcher: Any = None
        self._wake.connect(self._flush)

    def start(self) -> None:
        """Subscribe to the service and start the watcher thread (idempotent)."""
        if self._unsubscribe is None:
            self._unsubscribe = self._service.subscribe(self._on_service_change)
        if self._watcher is None and self._db_path is not None:
            factory = self._watcher_factory
            if factory is None:
                from limbic.core.watcher import ChangeWatcher

                factory = ChangeWatcher
            self._watcher = factory(self._db_path, self._on_watcher_changes, interval=self._interval)
            self._watcher.start()

    def stop(self) -> None:
        """Unsubscribe and stop (join) the watcher thread; pending changes are dropped."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        with self._lock:
            self._queue.clear()

    @property
    def watching(self) -> bool:
        return self._watcher is not None

    # --- any thread -----------------------------------------------------------------------------

    def _on_service_change(self, changes: Any) -> None:
        self._post([changes])

    def _on_watcher_changes(self, changes: Iterable[Any]) -> None:
        self._post(list(changes))

    def _post(self, items: list) -> None:
        with self._lock:
            was_empty = not self._queue
            for change in items:
                change_id = getattr(change, "change_id", None)
                if change_id is not None:
                    if change_id in self._seen:
                        continue
                    self._seen[change_id] = None
                    if len(self._seen) > SEEN_IDS_KEPT:
                        self._seen.pop(next(iter(self._seen)))
                self._queue.append(change)
            wake = was_empty and bool(self._queue)
        if wake:
            self._wake.emit()  # queued to the UI thread when called from another thread

    # --- UI thread ------------------------------------------------------------------------------

    @Slot()
    def _flush(self) -> None:
        with self._lock:
            batch, self._queue = self._queue, []
        if batch:
            self.changes_arrived.emit(batch)
