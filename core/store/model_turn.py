"""One process at a time runs the embedding model over a database's pending texts (issue 11, concurrent
writers).

Every process that writes to a database (the app, each agent's ``limbic mcp`` server) has its own
background embedder. When several ran at once they took both cores of the development machine, and the
servers' request threads waited behind them: four ``limbic mcp`` writers' ``add_observations`` p99 was
70–178 ms over runs with four embedders at work and 33 ms with one at a time, the vectors landing as
soon (``tests/bench/bench_writes.py``, README "Measured performance"). So each embedding step first
takes this turn: an advisory lock on the file ``<database>-embed.lock`` next to the database (like
SQLite's ``-wal`` and ``-shm``; through ``filelock``), held while the model runs and never around SQL.
Threads of one process take turns the same way. A process that cannot use the lock file, or has waited
:data:`TURN_TIMEOUT_SECONDS`, embeds anyway: the turn only spreads the work, correctness never depends
on it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

log = logging.getLogger(__name__)

TURN_TIMEOUT_SECONDS = 120.0
"""Longest wait for the turn (a step embeds at most a few dozen entities' texts: seconds)."""


def turn_file(database_path: Path) -> Path:
    """The lock file of ``database_path``'s embedding turn."""
    return database_path.with_name(database_path.name + "-embed.lock")


@contextmanager
def model_turn(database_path: Path) -> Iterator[None]:
    """Hold the embedding turn of ``database_path`` inside the block (see the module docstring)."""
    lock = FileLock(str(turn_file(database_path)), timeout=TURN_TIMEOUT_SECONDS)
    try:
        lock.acquire()
        held = True
    except (Timeout, OSError) as exc:
        log.info("embedding without waiting for the other processes' turn: %s", exc)
        held = False
    try:
        yield
    finally:
        if held:
            lock.release()
