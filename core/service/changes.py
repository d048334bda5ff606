"""One change feed per database: every committed change, of any origin, reaches each listener once.

the shape of Anki's change record (``OpChanges``): a listener learns which
operation ran and which entity ids it touched, never how. Two sources feed :class:`ChangeFeed`:

- commits of this process: ``MemoryService`` calls :meth:`ChangeFeed.publish` on the writer's thread
  right after ``COMMIT``;
- commits of other processes on the same file (``limbic mcp`` over stdio, the CLI): one
  :class:`ChangeWatcher` thread polls ``PRAGMA data_version`` and reads the ``changes`` log.

The watcher also sees this process's own commits, so both sources overlap: the feed delivers each
change id once (one de-duplication, here), and runs the one watcher thread only while a listener
asked for other processes' changes. The GUI bridge (``gui/bridge.py``) and the MCP resource notifier
(``core/mcp/events.py``) are two listeners of the same feed. Nothing here knows about Qt or asyncio.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from limbic.core.models import Changes
from limbic.core.store.database import Database, Follower

log = logging.getLogger(__name__)

SEEN_IDS_KEPT = 4096  # change ids remembered to drop the second delivery of one change

Listener = Callable[[list[Changes]], None]

__all__ = ["ChangeFeed", "Listener"]


class ChangeFeed:
    """The one subscription point for committed changes of a memory's database.

    Args:
        database: the memory's database; other processes' commits come through its follower
            (:meth:`~limbic.core.store.database.Database.follow`: a poll of a SQLite file, ``LISTEN`` on PostgreSQL).
        watch_interval: seconds between the follower's polls where it polls (0.2 s: a foreign write shows within
            ~0.2 s).

    Listeners are called with ``list[Changes]`` (oldest first) on the committing thread (this
    process) or on the watcher thread (other processes): they must hand the work to their own
    thread (a Qt signal, an event loop) and return quickly. A listener's exception is logged and
    never undoes a commit or stops the other listeners.
    """

    def __init__(self, database: Database, *, watch_interval: float = 0.2) -> None:
        self._database = database
        self.watch_interval = watch_interval
        self._lock = threading.Lock()
        self._listeners: list[tuple[Listener, bool]] = []
        self._seen: dict[int, None] = {}
        self._watcher: Follower | None = None

    def subscribe(self, listener: Listener, *, other_processes: bool = False) -> Callable[[], None]:
        """Call ``listener(changes)`` for every new committed change; returns the unsubscribe function.

        With ``other_processes`` the feed also follows commits made by other processes on the same
        file (the one watcher thread runs while at least one such listener is subscribed).
        """
        entry = (listener, other_processes)
        with self._lock:
            self._listeners.append(entry)
            if other_processes and self._watcher is None:
                self._watcher = self._database.follow(self._deliver, interval=self.watch_interval)

        def unsubscribe() -> None:
            stop: Follower | None = None
            with self._lock:
                if entry in self._listeners:
                    self._listeners.remove(entry)
                if self._watcher is not None and not any(watch for _, watch in self._listeners):
                    stop, self._watcher = self._watcher, None
            if stop is not None:  # outside the lock: the watcher thread may be delivering
                stop.stop()

        return unsubscribe

    def publish(self, changes: Changes) -> None:
        """Deliver a change committed by this process (called by the service after ``COMMIT``)."""
        self._deliver([changes])

    @property
    def watching(self) -> bool:
        """True while the watcher thread follows other processes' commits."""
        return self._watcher is not None

    def close(self) -> None:
        """Forget every listener and stop the watcher thread (idempotent)."""
        with self._lock:
            self._listeners.clear()
            stop, self._watcher = self._watcher, None
        if stop is not None:
            stop.stop()

    def _deliver(self, changes: list[Changes]) -> None:
        with self._lock:
            fresh = []
            for change in changes:
                if change.change_id in self._seen:
                    continue
                self._seen[change.change_id] = None
                if len(self._seen) > SEEN_IDS_KEPT:
                    self._seen.pop(next(iter(self._seen)))
                fresh.append(change)
            listeners = [listener for listener, _ in self._listeners]
        if not fresh:
            return
        for listener in listeners:
            try:
                listener(fresh)
            except Exception:  # a broken view must not undo a committed write or starve the others
                log.exception("change listener failed")
