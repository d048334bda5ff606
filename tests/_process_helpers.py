"""Helpers of the child-process tests: which processes run, read from /proc (Linux)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def _stat(pid: int) -> tuple[str, int] | None:
    """``(state, ppid)`` of ``pid``, or None when there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after the command name, which may hold spaces
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended: in a container nobody may reap an orphan)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ").strip()
    except OSError:
        return "(ended)"


def descendants(pid: int) -> list[int]:
    """The running children of ``pid``, theirs, and so on."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None and stat[0] != "Z":
            parents[int(entry.name)] = stat[1]
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, of in parents.items() if of == parent]
        found += children
        frontier += children
    return found


def gone_after(pids: list[int], limit: float) -> float | None:
    """Seconds until none of ``pids`` runs any more, or None if one still runs after ``limit`` seconds."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if not any(alive(pid) for pid in pids):
            return time.monotonic() - started
        time.sleep(0.01)
    return None


def kill_left(pids: list[int]) -> None:
    """SIGKILL those of ``pids`` that still run (a test's cleanup, whatever it found)."""
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
