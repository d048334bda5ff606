"""The UI thread's longest stall during what a person does first on a large memory: the app (real model, MCP on)
is started on a copy of ``--db`` with a fresh home, and a 10 ms heartbeat timer on the UI thread records how late
each tick comes while the person

1. switches the graph to the global map (its first draw, the layout computed in the worker process);
2. types a query, one key every 120 ms (each pause of the search field's debounce starts a search);
3. opens the Curation window (its merge queue looks for duplicates);
4. shows its Split tab (split candidates, then the first one's proposed split).

    python tests/bench/bench_ui_stalls.py --db DB10K [--launches 3] [--trace] [--json]

``--db``: e.g. Debian's first 10,000 packages (``debian_kg.py --limit 10000``) imported with ``limbic import``.
Each launch is a fresh process. Per action: ``stall_ms`` the longest gap between two heartbeats less the 10 ms
period (the longest the UI could not answer), ``stall_cpu_ms`` the most CPU time the UI thread spent between two
heartbeats (its own work, whatever the other threads and processes on the machine do: on a busy machine the wall
gap grows while the thread waits for a core or for the interpreter lock), ``late_ticks`` how many came over 50 ms
late, and the process's
``VmRSS`` / ``VmHWM`` (/proc/self/status) once the action settled. ``--trace`` prints, for every gap over 50 ms,
where the UI thread was (a watchdog thread samples its stack). Offscreen unless ``QT_QPA_PLATFORM`` says
otherwise; the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

PERIOD_MS = 10
LATE_MS = 50
QUERY = "python library for parsing yaml"
KEY_MS = 120
ACTIONS = ("global_map", "typing", "curation_open", "split_tab")


def run_until(condition, timeout: float) -> None:
    """Run the Qt event loop (as the app does: the UI thread waits in Qt, not in Python) until ``condition()``.

    Raises:
        TimeoutError: not true within ``timeout`` seconds.
    """
    from PySide6.QtCore import QEventLoop, QTimer

    deadline = time.perf_counter() + timeout
    loop = QEventLoop()
    check = QTimer()
    check.setInterval(20)
    failed: list[bool] = []

    def look() -> None:
        if condition():
            loop.quit()
        elif time.perf_counter() > deadline:
            failed.append(True)
            loop.quit()

    check.timeout.connect(look)
    check.start()
    if not condition():
        loop.exec()
    check.stop()
    if failed:
        raise TimeoutError("the app did not get there in time")


def settle(seconds: float) -> None:
    """Run the Qt event loop for ``seconds``."""
    end = time.perf_counter() + seconds
    run_until(lambda: time.perf_counter() >= end, seconds + 60)


def memory_mb() -> dict[str, float]:
    """``VmRSS`` and ``VmHWM`` of this process, in MB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {key: round(int(fields[key].split()[0]) / 1024, 1) for key in ("VmRSS", "VmHWM")}


class Heartbeat:
    """A timer on the UI thread every :data:`PERIOD_MS`; the gaps between its ticks, and (``trace``) the UI
    thread's stack whenever a tick is over :data:`LATE_MS` late."""

    def __init__(self, trace: bool) -> None:
        from PySide6.QtCore import QTimer

        self.ticks: list[float] = []
        self.cpu: list[float] = []  # the UI thread's CPU time at each tick
        self.stacks: list[tuple[float, str]] = []
        self._timer = QTimer()
        self._timer.setInterval(PERIOD_MS)
        self._timer.timeout.connect(self._tick)
        self._main = threading.main_thread().ident
        self._trace = trace
        self._stop = threading.Event()

    def _tick(self) -> None:
        self.ticks.append(time.perf_counter())
        self.cpu.append(time.thread_time())

    def start(self) -> None:
        self._tick()
        self._timer.start()
        if self._trace:
            threading.Thread(target=self._watch, daemon=True).start()

    def stop(self) -> None:
        self._timer.stop()
        self._stop.set()

    def _watch(self) -> None:
        sampled_for = 0.0
        while not self._stop.wait(0.005):
            last = self.ticks[-1]
            if (time.perf_counter() - last) * 1000 > LATE_MS + PERIOD_MS and last != sampled_for:
                sampled_for = last
                frames = sys._current_frames()
                frame = frames.get(self._main)
                if frame is not None and frame.f_code.co_name != "run_until":  # the UI thread's own work
                    self.stacks.append((last, "".join(traceback.format_stack(frame)[-14:])))
                else:  # waiting in Qt's event loop for a core or the interpreter lock: who else runs Python
                    others = [traceback.format_stack(f)[-3:] for ident, f in frames.items()
                              if ident not in (self._main, threading.get_ident())]
                    self.stacks.append((last, "(UI thread waiting) the other threads:\n"
                                        + "\n".join("".join(o) for o in others)))

    def between(self, start: float, end: float) -> dict:
        """The longest gap ending within ``[start, end]`` (ms, less the period) and the ticks late by over 50 ms."""
        pairs = [((b - a) * 1000, (d - c) * 1000) for a, b, c, d in
                 zip(self.ticks, self.ticks[1:], self.cpu, self.cpu[1:], strict=False) if start <= b <= end]
        if not pairs:
            return {"stall_ms": None, "stall_cpu_ms": None, "late_ticks": 0}
        return {"stall_ms": round(max(gap for gap, _ in pairs) - PERIOD_MS, 1),
                "stall_cpu_ms": round(max(cpu for _, cpu in pairs), 1),
                "late_ticks": sum(1 for gap, _ in pairs if gap > LATE_MS + PERIOD_MS)}


def launch(db: Path, trace: bool) -> dict:
    """Child process: the app on ``db``, the four actions, one JSON object of figures."""
    import pydantic._internal._validators  # noqa: F401 - before the app's modules, as the launcher does
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from limbic.gui.app import LimbicApp

    qt = QApplication.instance() or QApplication([])
    limbic = LimbicApp(db, mcp_port=0, seed=False)
    limbic.start()
    run_until(lambda: limbic.window is not None and limbic.graph_view is not None, 300)
    window, view, controller = limbic.window, limbic.graph_view, limbic.controller
    window.resize(1500, 920)
    run_until(lambda: view.shown_names() and limbic.mcp_server is not None, 300)
    run_until(lambda: controller.service.search._warm_up_thread is None
             or not controller.service.search._warm_up_thread.is_alive(), 600)
    run_until(lambda: controller.runner.pending() == 0, 300)
    settle(2.0)
    beat = Heartbeat(trace)
    beat.start()
    figures: dict = {"after_start": memory_mb()}

    def measure(name: str, act, done, timeout: float = 600, quiet: float = 1.5) -> None:
        start = time.perf_counter()
        act()
        run_until(done, timeout)
        run_until(lambda: controller.runner.pending() == 0, timeout)
        settle(quiet)
        figures[name] = {**beat.between(start, time.perf_counter()), "seconds": round(time.perf_counter() - start, 2),
                         **memory_mb()}

    measure("global_map", lambda: view.set_mode("global"),
            lambda: view.mode == "global" and len(view.shown_names()) == len(view.arrays or ()) > 0)
    query = window.search_panel.query

    def type_query() -> None:
        query.setFocus()
        for char in QUERY:
            QTest.keyClick(query, char)
            settle(KEY_MS / 1000)

    measure("typing", type_query, lambda: controller.last_outcome is not None
            and controller.last_outcome.candidate_set.query == QUERY, quiet=2.0)
    curation: list = []
    measure("curation_open", lambda: curation.append(limbic.show_curation()), lambda: bool(curation))
    measure("split_tab", lambda: curation[0].show_split(), lambda: curation[0].split_panel.proposal is not None)
    beat.stop()
    figures["peak"] = memory_mb()
    figures["load_average"] = round(os.getloadavg()[0], 1)
    if trace:
        start = beat.ticks[0]
        figures["stacks"] = [f"+{(at - start):.2f} s\n{stack}" for at, stack in beat.stacks]
    curation[0].close()
    qt.processEvents()
    limbic.shutdown()
    return figures


def child_home(models: Path) -> Path:
    """A fresh home with the installed model linked in (as ``bench_startup.py`` makes it)."""
    home = Path(tempfile.mkdtemp(prefix="limbic-stalls-"))
    if models.is_dir():
        (home / "cache").mkdir()
        (home / "cache" / "models").symlink_to(models)
        active = Path.home() / ".config" / "limbic" / "active_model.json"
        if active.is_file():
            (home / "config").mkdir()
            (home / "config" / "active_model.json").write_text(active.read_text())
    return home


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--models", type=Path, default=Path.home() / ".cache" / "limbic" / "models")
    parser.add_argument("--trace", action="store_true", help="print where the UI thread was in each long gap")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print("FIGURES " + json.dumps(launch(args.db, args.trace)), flush=True)
        os._exit(0)
    runs = []
    for _ in range(args.launches):
        home = child_home(args.models)
        copy = home / "memory.db"
        shutil.copyfile(args.db, copy)
        env = {**os.environ, "LIMBIC_HOME": str(home)}
        command = [sys.executable, __file__, "--db", str(copy), "--child"] + (["--trace"] if args.trace else [])
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
        shutil.rmtree(home, ignore_errors=True)
        line = next((x for x in done.stdout.splitlines() if x.startswith("FIGURES ")), None)
        if line is None:
            print(done.stderr[-4000:], file=sys.stderr)
            return 1
        runs.append(json.loads(line[len("FIGURES "):]))
        for stack in runs[-1].pop("stacks", []):
            print(stack, file=sys.stderr)
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    for name in ACTIONS:
        stalls = [r[name]["stall_ms"] for r in runs]
        cpu = [r[name]["stall_cpu_ms"] for r in runs]
        print(f"{name:14} longest stall ms: {' · '.join(str(s) for s in stalls)} (median {statistics.median(stalls)})"
              f"   its UI-thread CPU ms: {' · '.join(str(c) for c in cpu)}"
              f"   late ticks: {' · '.join(str(r[name]['late_ticks']) for r in runs)}"
              f"   RSS MB: {' · '.join(str(r[name]['VmRSS']) for r in runs)}")
    print(f"after start RSS MB: {' · '.join(str(r['after_start']['VmRSS']) for r in runs)};  peak (VmHWM) MB: "
          f"{' · '.join(str(r['peak']['VmHWM']) for r in runs)};  load average: "
          f"{' · '.join(str(r['load_average']) for r in runs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
