"""Turns that processes sharing a database take one at a time, through lock files next to it; first of
all, running the embedding model over the pending texts (concurrent writers).

Every process that writes to a database (the app, each agent's ``limbic mcp`` server) has its own
background embedder. When several ran at once they took both cores of the development machine, and the
servers' request threads waited behind them: four ``limbic mcp`` writers' ``add_observations`` p99 was
70–178 ms over runs with four embedders at work and 33 ms with one at a time, the vectors landing as
soon (``tests/bench/bench_writes.py``, docs/performance.md). So each embedding step first
takes this turn: an advisory lock on the file ``<database>-embed.lock`` next to the database (like
SQLite's ``-wal`` and ``-shm``; through ``filelock``), held while the model runs and never around SQL.
Threads of one process take turns the same way. A process that cannot use the lock file, or has waited
:data:`TURN_TIMEOUT_SECONDS`, embeds anyway: the turn only spreads the work, correctness never depends
on it. The KNN graph of a large vector copy is made in a turn of its own (``<database>-knn.lock``,
:mod:`limbic.core.vectors.approximate`).
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


def turn_file(database_path: Path, name: str) -> Path:
    """The lock file of ``database_path``'s turn ``name``: ``<database>-<name>.lock``."""
    return database_path.with_name(f"{database_path.name}-{name}.lock")


@contextmanager
def turn(database_path: Path, name: str, timeout: float) -> Iterator[bool]:
    """Hold the turn ``name`` of ``database_path`` inside the block when it can be had within ``timeout``
    seconds; yields whether it is held. A process that cannot use the lock file (a read-only folder) or
    waited too long goes on without it: a turn spreads work between processes, and what the caller does
    must stay correct without it."""
    lock = FileLock(str(turn_file(database_path, name)), timeout=timeout)
    try:
        lock.acquire()
        held = True
    except (Timeout, OSError) as exc:
        log.info("going on without the other processes' %s turn: %s", name, exc)
        held = False
    try:
        yield held
    finally:
        if held:
            lock.release()


@contextmanager
def model_turn(database_path: Path) -> Iterator[None]:
    """Hold the embedding turn of ``database_path`` (``<database>-embed.lock``) inside the block, or go on
    without it after :data:`TURN_TIMEOUT_SECONDS` (see the module docstring)."""
    with turn(database_path, "embed", TURN_TIMEOUT_SECONDS):
        yield
