"""When deferred background work is due: the one rule the search log and the background embedder share.

Both hold their work back while the foreground is busy, so that on a 2-core machine it does not share the cores
with the answer being sent or the next call (docs/performance.md "search_semantic over stdio", "The contradiction
check inside a write"), and both must not hold it back for ever under a steady stream of calls.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class QuietWindow:
    """Work waiting since ``first`` and last added to at ``last`` (monotonic seconds) is due once the foreground
    has been quiet for ``quiet`` seconds, and at the latest ``longest`` seconds after ``first``:
    ``due = min(last + quiet, first + longest)``. Not thread-safe: the owner calls it under its own lock."""

    quiet: float
    longest: float
    first: float = 0.0
    last: float = 0.0

    def add(self, now: float, *, waiting: bool) -> None:
        """Work was added at ``now``; ``waiting``: some was already waiting (``first`` stays)."""
        if not waiting:
            self.first = now
        self.last = now

    def due(self) -> float:
        """The monotonic time at which the waiting work is due."""
        return min(self.last + self.quiet, self.first + self.longest)
