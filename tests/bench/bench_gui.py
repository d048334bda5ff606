"""GUI benchmark on a large real graph: start-up, slider move → table and graph repainted, memory.

    python tests/bench/bench_gui.py [--db PATH] [--limit 10000] [--moves 60]

Without ``--db`` (or when the file does not exist) it builds ``--limit`` entities from Debian's
package descriptions (``../shared/tools/debian_kg.py``) and imports them with the deterministic
``HashingEmbedder`` (no model download); ``--db`` keeps that database for the next run.

Figures (one JSON object on stdout):
- ``startup``: in a fresh process, seconds from process start to the window shown (``ready``) and
  to the first graph drawn (interactive), with the MCP server on;
- ``slider[N]``: for a cached candidate set of about N candidates (a real search whose limit is
  tuned to give N merged candidates), milliseconds per slider move from ``slider.setValue`` until
  the re-rank, the results table, inspector and graph view are repainted (``processEvents`` runs
  the paint events it triggers, offscreen raster), wall p50 / p95 / max and UI-thread CPU p50
  (``thread_time``, less sensitive to other processes on a busy machine); ``rerank_ms`` is
  ``service.search.rerank`` alone; the moves are of the β_sal slider (re-ranks; the graph changes only when
  the top-K set does), and ``lambda_move_*`` of the λ slider (also fades the graph's nodes);
  ``paint_cpu_ms_p50`` is one forced repaint of each part;
- ``memory_mb``: resident set size after start-up and after the slider runs (``/proc/self/status``).
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

from _qt_wait import settle, wait_for

PROCESS_START = time.perf_counter()
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TOOL = Path(__file__).resolve().parents[3] / "shared" / "tools" / "debian_kg.py"
QUERY = "library for parsing and converting data files"


def rss_mb() -> float:
    """Resident set size of this process in MiB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def build_database(limit: int, db: Path) -> float:
    """Debian graph of ``limit`` entities imported into ``db`` with the HashingEmbedder; seconds taken."""
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.io.importer import import_file
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        graph = Path(folder) / "graph.jsonl"
        with graph.open("w", encoding="utf-8") as out:
            subprocess.run([sys.executable, str(TOOL), "--limit", str(limit)], stdout=out, check=True)
        service = MemoryService(open_database(db), HashingEmbedder(), origin="import")
        import_file(service, graph)
        service.close()
    return time.perf_counter() - started



def start_app(db: Path):
    from PySide6.QtWidgets import QApplication

    from limbic.core.embedding.base import HashingEmbedder
    from limbic.gui.app import LimbicApp

    qt = QApplication.instance() or QApplication([])
    limbic = LimbicApp(db, embedder=HashingEmbedder(), mcp_port=0, seed=False)
    drawn: list[float] = []
    limbic.ready.connect(lambda: limbic.graph_view.drawn.connect(lambda: drawn.append(time.perf_counter())))
    limbic.start()
    wait_for(qt, lambda: limbic.window is not None, 120)
    ready = time.perf_counter()
    wait_for(qt, lambda: bool(drawn), 120)
    return qt, limbic, ready, drawn[0]


def startup_only(db: Path) -> None:
    qt, limbic, ready, drawn = start_app(db)
    wait_for(qt, lambda: limbic.mcp_server is not None, 60)
    print(json.dumps({"ready_s": round(ready - PROCESS_START, 3), "interactive_s": round(drawn - PROCESS_START, 3),
                      "rss_mb": round(rss_mb(), 1)}))
    limbic.window.close()
    limbic.shutdown()


def run_search(qt, controller, limit: int):
    """Search ``QUERY`` through the controller (off the UI thread) and wait for the outcome."""
    done: list = []
    controller.search_finished.connect(done.append)
    controller.search(QUERY, limit, record=False)
    wait_for(qt, lambda: bool(done), 120)
    controller.search_finished.disconnect(done.append)
    return done[0]


def search_with_about(qt, controller, target: int) -> object:
    """A real search whose merged candidate set is as close to ``target`` as a few tries get."""
    limit = max(1, target // 4)
    best = None
    for _ in range(6):
        outcome = run_search(qt, controller, min(limit, 1000))
        n = len(outcome.candidate_set)
        if best is None or abs(n - target) < abs(len(best.candidate_set) - target):
            best = outcome
        if abs(n - target) <= target * 0.05 or limit >= 1000:
            break
        limit = max(1, min(1000, round(limit * target / max(n, 1))))
    if best is not outcome:  # show the closest one again
        run_search(qt, controller, best.candidate_set.limit)
    return controller.last_outcome


def move_slider(qt, slider, moves: int) -> tuple[list[float], list[float]]:
    """Move a float parameter's ``slider`` ``moves`` times; milliseconds per move until repainted:
    wall clock and UI-thread CPU."""
    from limbic.gui.search.tuning import SLIDER_STEPS

    timings, cpu = [], []
    for i in range(moves):
        position = (i * 37) % SLIDER_STEPS
        started, started_cpu = time.perf_counter(), time.thread_time()
        slider.setValue(position)
        qt.processEvents()  # queued signals, then the paint events of every dirty widget
        timings.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - started_cpu) * 1000)
    return timings, cpu


def slider_run(qt, limbic, target: int, moves: int) -> dict:
    from limbic.core.search.params import ScoringParams

    window, controller = limbic.window, limbic.controller
    controller.set_params(ScoringParams())
    outcome = search_with_about(qt, controller, target)
    candidates = outcome.candidate_set
    controller.select([outcome.results[0].name])  # the inspector shows a result, as in real use
    settle(qt, 1.0)  # let the graph view finish its deferred redraw of the hits
    memory = rss_mb()
    rerank = []
    for i in range(moves):
        started = time.perf_counter()
        controller.service.search.rerank(candidates, controller.params.replace(beta_sal=2.0 * (i % 10) / 10))
        rerank.append((time.perf_counter() - started) * 1000)
    timings, cpu = move_slider(qt, window.tuning_panel.controls["beta_sal"].slider, moves)
    # λ also fades the graph's nodes (their opacity is the temporal factor): the graph is restyled.
    lambda_timings, lambda_cpu = move_slider(qt, window.tuning_panel.controls["lambda_hourly"].slider, moves)
    controller.set_params(controller.params.replace(lambda_hourly=ScoringParams().lambda_hourly))
    parts = {"table": window.search_panel.table.viewport(), "graph": limbic.graph_view.canvas.viewport(),
             "inspector": window.inspector, "tuning": window.tuning_panel}
    paint_cpu = {name: [] for name in parts}
    for _ in range(20):  # what one repaint of each part costs (UI-thread CPU)
        for name, widget in parts.items():
            started_cpu = time.thread_time()
            widget.repaint()
            paint_cpu[name].append((time.thread_time() - started_cpu) * 1000)
    return {
        "paint_cpu_ms_p50": {name: round(statistics.median(v), 2) for name, v in paint_cpu.items()},
        "candidates": len(candidates), "rows_shown": window.search_panel.model.rowCount(),
        "graph_nodes": len(limbic.graph_view.shown_names()),
        "move_ms_p50": round(statistics.median(timings), 2), "move_ms_p95": round(percentile(timings, 0.95), 2),
        "move_ms_max": round(max(timings), 2), "move_cpu_ms_p50": round(statistics.median(cpu), 2),
        "rerank_ms_p50": round(statistics.median(rerank), 2),
        "lambda_move_ms_p50": round(statistics.median(lambda_timings), 2),
        "lambda_move_ms_p95": round(percentile(lambda_timings, 0.95), 2),
        "lambda_move_cpu_ms_p50": round(statistics.median(lambda_cpu), 2),
        "rss_mb": round(memory, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="database to use (built first when missing)")
    parser.add_argument("--limit", type=int, default=10_000, help="entities of the Debian graph to build")
    parser.add_argument("--moves", type=int, default=60, help="slider moves per candidate-set size")
    parser.add_argument("--startup-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.startup_only:
        startup_only(args.db)
        return
    os.environ.setdefault("LIMBIC_HOME", tempfile.mkdtemp(prefix="limbic-bench-home-"))
    db = args.db or Path(tempfile.mkdtemp(prefix="limbic-bench-")) / "memory.db"
    figures: dict = {"entities": args.limit}
    if not db.exists():
        figures["build_s"] = round(build_database(args.limit, db), 1)
    startup = subprocess.run([sys.executable, __file__, "--startup-only", "--db", str(db)],
                             capture_output=True, text=True, check=True, env=os.environ)
    figures["startup"] = json.loads(startup.stdout.strip().splitlines()[-1])
    qt, limbic, _, _ = start_app(db)
    limbic.window.resize(1500, 920)
    figures["memory_mb_started"] = round(rss_mb(), 1)
    figures["slider"] = {str(n): slider_run(qt, limbic, n, args.moves) for n in (300, 3000)}
    figures["memory_mb_after"] = round(rss_mb(), 1)
    limbic.window.close()
    limbic.shutdown()
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
