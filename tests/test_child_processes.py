"""Child processes end with their parent, also when it is killed with SIGKILL (``limbic.core.processes``).

Real processes: a parent Python process starts a child and is killed; the child must have ended within a few
seconds — through Linux's parent-death signal while it computes in C with the GIL held, through the portable
fallback alone (it notices within ``POLL_SECONDS`` that the parent is gone), and for a module started with
``module_command`` (as the model installer starts pip).
Linux only: the processes are read from /proc.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _process_helpers import command_line, gone_after, kill_left

from limbic.core.processes import ORPHAN_EXIT_CODE, POLL_SECONDS

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
ORPHAN_SECONDS = 3.0  # the child must have ended this long after its parent was killed
# With the kernel's signal the child then computes in C with the GIL held (as the layout worker does in igraph),
# which keeps the fallback's thread from running; without it, it sleeps.
WATCHED = """import re, sys, time
from limbic.core.processes import exit_with_parent
exit_with_parent(int(sys.argv[1]), pdeathsig=sys.argv[2] == "yes")
print("watching", flush=True)
if sys.argv[2] == "yes":
    re.match(r"(a+)+$", "a" * 64 + "b")  # 2**64 steps of backtracking
time.sleep(60)
"""
# The parent starts a child (WATCHED with or without the kernel's signal, or a module with module_command), says
# the child's pid and what the child said once ready, and waits to be killed.
PARENT = f"""import os, subprocess, sys, time
from limbic.core.processes import module_command
kind = sys.argv[1]
if kind == "module":
    command = module_command("sleeper", "--flag", "value")
else:
    command = [sys.executable, "-c", {WATCHED!r}, str(os.getpid()), kind]
child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
print(child.pid, child.stdout.readline().strip(), flush=True)
time.sleep(60)
"""


def _orphaned(kind: str) -> tuple[float, str]:
    """Start a parent and its child of ``kind`` ("yes", "no": WATCHED with or without the kernel's signal;
    "module"), SIGKILL the parent once the child is ready; seconds until the child ended and what it said."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT, kind], stdout=subprocess.PIPE, text=True)
    pids: list[int] = []
    try:
        pid, _, said = parent.stdout.readline().strip().partition(" ")
        pids.append(int(pid))
        parent.kill()
        parent.wait(10)
        gone = gone_after(pids, ORPHAN_SECONDS)
        assert gone is not None, f"still running after its parent was killed: {command_line(pids[0])}"
        return gone, said
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait(10)
        kill_left(pids)


def test_the_child_dies_with_its_killed_parent():
    gone, said = _orphaned("yes")
    assert said == "watching"
    print(f"\nended {gone:.3f} s after its parent (PR_SET_PDEATHSIG, the GIL held)")


def test_the_fallback_alone_notices_the_parent_is_gone():
    gone, said = _orphaned("no")
    assert said == "watching"
    print(f"\nended {gone:.3f} s after its parent (polling every {POLL_SECONDS} s)")


def test_a_module_started_by_module_command_dies_with_its_parent(tmp_path, monkeypatch):
    (tmp_path / "sleeper.py").write_text("import sys, time\nprint(' '.join(sys.argv[1:]), flush=True)\ntime.sleep(60)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    gone, said = _orphaned("module")
    assert said == "--flag value"  # the module sees its own arguments, as with python -m
    print(f"\nended {gone:.3f} s after its parent")


def test_a_child_whose_parent_has_already_ended_exits_at_once():
    ended = subprocess.Popen(["true"])
    ended.wait()
    child = subprocess.run([sys.executable, "-c", WATCHED, str(ended.pid), "yes"], capture_output=True, text=True,
                           timeout=30)  # it would sleep 60 s
    assert child.returncode == ORPHAN_EXIT_CODE and child.stdout == ""
