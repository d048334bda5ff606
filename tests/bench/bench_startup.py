"""Start-up timings of the app, each launch a fresh process on a fresh home (the first run: the sample graph
is imported, with the real model when installed): seconds from the process's start to the window shown,
to the MCP server answering, and to the sample's last vector; and what the app printed on the console during
start-up (Qt's warnings, such as ``QBackingStore::flush() called for QWidgetWindow … which does not have a
handle``, would show there).

    python tests/bench/bench_startup.py [--runs 5] [--models DIR] [--json]
    python tests/bench/bench_startup.py --mapped [--runs 5] [--burners 2] [--db FILE]

``--mapped`` times what a person sees under a real X server (``DISPLAY`` set; Xvfb will do; ``xdotool``
installed): the ``limbic`` program itself (``python -m limbic.gui.launcher --no-mcp``, a fresh home each run),
from the process's start to its first window being mapped (``xdotool search --onlyvisible --pid``, polled every
10 ms), with ``--burners N`` processes spinning on the CPU meanwhile (``python3 -c "while True: pass"``).

Linux only (the process start is read from /proc). Offscreen unless QT_QPA_PLATFORM says otherwise (under a
real X server: ``QT_QPA_PLATFORM=xcb DISPLAY=:N``). The load average at the start is printed with the figures:
the 2-second window is a target for an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import os, sys, time, json

def since_start():
    ticks = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])
    uptime = float(open("/proc/uptime").read().split()[0])
    return uptime - ticks / os.sysconf("SC_CLK_TCK")

import pydantic._internal._validators
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
qt = QApplication(sys.argv[:1])
from limbic.gui.app import LimbicApp
app = LimbicApp(None, mcp_port=0, seed=True)  # the first run's sample, as if the question was answered at once
times = {}
app.ready.connect(lambda: times.setdefault("window", since_start()))
app.mcp_state_changed.connect(lambda text: times.setdefault("mcp", since_start()) if text.startswith("MCP: http") else None)

def poll():
    if app.service is not None and "window" in times and app.service.entities.stats().entities and not app.service.search.pending_vectors():
        times["vectors"] = since_start()
    if set(os.environ.get("BENCH_STAGES", "window,mcp,vectors").split(",")) <= times.keys():
        print(json.dumps(times), flush=True)
        qt.quit()
    else:
        QTimer.singleShot(100, poll)

qt.aboutToQuit.connect(app.shutdown)
app.start()
QTimer.singleShot(100, poll)
qt.exec()
"""


def process_age(pid: int) -> float:
    """Seconds since process ``pid`` started (/proc)."""
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    return float(Path("/proc/uptime").read_text().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")


def mapped(runs: int, burners: int, db: str | None) -> int:
    """``--mapped``: seconds from the process start to the first mapped window of ``limbic``, ``runs`` times."""
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(burners)]
    times: list[float] = []
    try:
        for _ in range(runs):
            with tempfile.TemporaryDirectory(prefix="limbic-mapped-") as home:
                env = {**os.environ, "LIMBIC_HOME": home, "QT_QPA_PLATFORM": "xcb"}
                command = [sys.executable, "-m", "limbic.gui.launcher", "--no-mcp", *(["--db", db] if db else [])]
                app = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                try:
                    while True:
                        found = subprocess.run(["xdotool", "search", "--onlyvisible", "--pid", str(app.pid)],
                                               capture_output=True, text=True).stdout.split()
                        if found:
                            times.append(process_age(app.pid))
                            break
                        if app.poll() is not None:
                            print(app.stderr.read() if app.stderr else "", file=sys.stderr)
                            return 1
                        time.sleep(0.01)
                finally:
                    app.terminate()
                    app.wait(30)
    finally:
        for burner in spinning:
            burner.kill()
            burner.wait()
    print(f"first window mapped: min {min(times):.2f} s, median {statistics.median(times):.2f} s, max "
          f"{max(times):.2f} s ({len(times)} runs; {burners} CPU burners; load average at the end "
          f"{os.getloadavg()[0]:.1f})")
    print("  each: " + " · ".join(f"{t:.2f}" for t in times))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--models", default=str(Path.home() / ".cache" / "limbic" / "models"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--stages", default="window,mcp,vectors",
                        help="what to wait for, of window, mcp, vectors (the sample's vectors take long on a busy machine)")
    parser.add_argument("--mapped", action="store_true", help="time the first window mapped (needs DISPLAY, xdotool)")
    parser.add_argument("--burners", type=int, default=0, help="with --mapped: CPU-spinning processes meanwhile")
    parser.add_argument("--db", help="with --mapped: the memory to open (default: a fresh home's own)")
    args = parser.parse_args()
    if args.mapped:
        return mapped(args.runs, args.burners, args.db)
    stages = args.stages.split(",")
    results: list[dict] = []
    console: list[str] = []
    load = os.getloadavg()[0]
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="limbic-start-") as home:
            models = Path(args.models)
            if models.is_dir():
                (Path(home) / "cache").mkdir()
                (Path(home) / "cache" / "models").symlink_to(models)
                active = Path.home() / ".config" / "limbic" / "active_model.json"
                if active.is_file():
                    (Path(home) / "config").mkdir()
                    (Path(home) / "config" / "active_model.json").write_text(active.read_text())
            env = {**os.environ, "LIMBIC_HOME": home, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
                   "BENCH_STAGES": args.stages}
            done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
            line = next((x for x in done.stdout.splitlines() if x.startswith("{")), None)
            if line is None:
                print(done.stderr[-3000:], file=sys.stderr)
                return 1
            results.append(json.loads(line))
            console.extend(x for x in done.stderr.splitlines() if x.strip())
    summary = {key: {"median": round(statistics.median(r[key] for r in results), 2),
                     "max": round(max(r[key] for r in results), 2)} for key in stages}
    summary["runs"] = len(results)
    summary["load_average"] = round(load, 1)
    summary["console_lines"] = len(console)
    summary["console"] = sorted(set(console))[:10]
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        for key in stages:
            print(f"{key:8} median {summary[key]['median']:6.2f} s   max {summary[key]['max']:6.2f} s")
        print(f"load average {summary['load_average']}; {summary['console_lines']} console lines during start-up")
        for line in summary["console"]:
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
