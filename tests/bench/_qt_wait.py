"""Waiting on a running Qt app from a benchmark or screenshot script: events keep being processed meanwhile."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def settle(app: Any, seconds: float, poll: float = 0.01) -> None:
    """Process ``app``'s events for ``seconds`` seconds."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        app.processEvents()
        time.sleep(poll)


def wait_for(app: Any, condition: Callable[[], Any], timeout: float = 300.0, poll: float = 0.01) -> None:
    """Process ``app``'s events until ``condition()`` is true.

    Raises:
        TimeoutError: not true within ``timeout`` seconds.
    """
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not get there in time")
        app.processEvents()
        time.sleep(poll)
