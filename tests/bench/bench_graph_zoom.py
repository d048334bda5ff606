"""Graph view benchmark on a large real graph: the global map's layout, and the UI thread's longest stall while a
person zooms and pans it; and whether two launches draw the same map.

    python tests/bench/bench_graph_zoom.py --db PATH [--steps 24] [--shot FILE.png]

``--db`` is a memory with a large graph (e.g. Debian's packages: ``debian_kg.py --limit 10000`` imported with
``limbic import``; the vectors need not be done). The database is copied first with SQLite's backup API (a
consistent copy even while another process writes to it; nothing is written to the original).

Figures (one JSON object on stdout):
- ``layout_s``: from the view shown to the global map drawn (layout in the worker process, communities,
  regions), with no kept layout;
- ``zoom``: a scripted zoom and pan over the global map, coloured by community, in a 1100×700 canvas: ``steps``
  wheel notches in (towards a point off-centre), as many out, then ``steps`` pans, one event every 40 ms
  (a quick wheel). A 2 ms heartbeat timer on the UI thread records its longest gap (``stall_ms_max``: the
  longest the UI could not answer), its p99, and per event the time until the canvas was repainted
  (``event_ms_p50/p95/max``) and the UI thread's CPU time for it (``event_cpu_ms_*``: less sensitive to other
  processes on a busy machine; ``load_average`` says how busy it was); ``edges_drawn_*`` how many edges the
  level of detail drew;
- ``same_map``: two fresh processes (no kept layout) lay the map out; whether the positions are identical.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _qt_wait import wait_for

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]



def open_view(db: Path):
    """A shown GraphView in global mode on ``db``, coloured by community; returns (app, view, service, bridge)."""
    from PySide6.QtWidgets import QApplication

    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database
    from limbic.gui.controller import AppController
    from limbic.gui.graph.view import GraphView

    qt = QApplication.instance() or QApplication([])
    service = MemoryService(open_database(db), HashingEmbedder(), origin="gui", background_vectors=False)
    controller = AppController(service)
    view = GraphView(controller)
    view.resize(1100 + 210, 730)
    view.set_colouring("community")
    view.set_mode("global")
    view.show()
    return qt, view, service, controller


def map_digest(db: Path) -> None:
    """Child process: lay the map out with no kept layout and print a digest of the positions."""
    qt, view, service, controller = open_view(db)
    wait_for(qt, lambda: len(view.shown_names()) == len(view.arrays or ()) > 0 and view.colouring == "community",
             600)
    pos = view.global_map.store.pos
    print(hashlib.sha256(pos.round(9).tobytes()).hexdigest())
    view.shutdown()
    controller.shutdown()
    service.close()


def zoom_and_pan(qt, view, steps: int) -> dict:
    from PySide6.QtCore import QElapsedTimer, QPoint, QPointF, Qt, QTimer
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    canvas = view.canvas
    viewport = canvas.viewport()
    ticks: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    heartbeat = QTimer()
    heartbeat.setInterval(2)
    heartbeat.timeout.connect(lambda: ticks.append(clock.nsecsElapsed() / 1e6))
    painted: list[float] = []
    canvas.view.sigRangeChanged.connect(lambda *_: None)
    events: list[tuple[str, int]] = [("wheel", 120)] * steps + [("wheel", -120)] * steps + [("pan", 1)] * steps
    done: list[float] = []
    edges: list[int] = []
    cpu: list[float] = []
    at = QPointF(canvas.width() * 0.62, canvas.height() * 0.4)

    def fire() -> None:
        if not events:
            return
        kind, amount = events.pop(0)
        started, started_cpu = clock.nsecsElapsed() / 1e6, time.thread_time()
        if kind == "wheel":
            event = QWheelEvent(at, canvas.mapToGlobal(at), QPoint(0, 0), QPoint(0, amount), Qt.MouseButton.NoButton,
                                Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
            QApplication.sendEvent(viewport, event)
        else:
            rect = canvas.view.viewRect()
            canvas.view.translateBy(x=rect.width() * 0.08, y=rect.height() * 0.03)
        viewport.repaint()  # the frame the person sees
        painted.append(clock.nsecsElapsed() / 1e6 - started)
        cpu.append((time.thread_time() - started_cpu) * 1000)
        edges.append(canvas.edges_drawn)
        if not events:
            done.append(clock.nsecsElapsed() / 1e6)

    driver = QTimer()
    driver.setInterval(40)
    driver.timeout.connect(fire)
    heartbeat.start()
    driver.start()
    wait_for(qt, lambda: bool(done), 300)
    end = clock.nsecsElapsed() / 1e6 + 200
    while clock.nsecsElapsed() / 1e6 < end:  # deferred label placement after the last event
        qt.processEvents()
        time.sleep(0.001)
    driver.stop()
    heartbeat.stop()
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    return {"events": len(painted), "stall_ms_max": round(max(gaps), 1), "stall_ms_p99": round(percentile(gaps, 0.99), 1),
            "event_ms_p50": round(statistics.median(painted), 1), "event_ms_p95": round(percentile(painted, 0.95), 1),
            "event_ms_max": round(max(painted), 1), "event_cpu_ms_p50": round(statistics.median(cpu), 1),
            "event_cpu_ms_p95": round(percentile(cpu, 0.95), 1), "event_cpu_ms_max": round(max(cpu), 1),
            "edges_drawn_min": min(edges), "edges_drawn_max": max(edges),
            "load_average": round(os.getloadavg()[0], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="the memory with a large graph (copied first)")
    parser.add_argument("--steps", type=int, default=24, help="wheel notches in (and out, and pans)")
    parser.add_argument("--shot", type=Path, help="also save the fitted global map as a PNG")
    parser.add_argument("--digest", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.digest:
        map_digest(args.db)
        return
    folder = Path(tempfile.mkdtemp(prefix="limbic-bench-zoom-"))
    db = folder / "memory.db"
    import apsw

    with apsw.Connection(str(db)) as target, apsw.Connection(str(args.db), flags=apsw.SQLITE_OPEN_READONLY) as source:
        with target.backup("main", source, "main") as step:
            step.step(-1)
    figures: dict = {}
    digests = []
    for launch in range(2):  # two launches, each with an empty cache: the same map?
        env = dict(os.environ, LIMBIC_HOME=str(folder / f"home-{launch}"))
        out = subprocess.run([sys.executable, __file__, "--digest", "--db", str(db)], capture_output=True, text=True,
                             check=True, env=env)
        digests.append(out.stdout.strip().splitlines()[-1])
    figures["same_map"] = digests[0] == digests[1]
    os.environ["LIMBIC_HOME"] = str(folder / "home")
    started = time.perf_counter()
    qt, view, service, controller = open_view(db)
    wait_for(qt, lambda: len(view.shown_names()) == len(view.arrays or ()) > 0 and view.colouring == "community", 600)
    figures["layout_s"] = round(time.perf_counter() - started, 1)
    figures["entities"], figures["relations"] = len(view.arrays), len(view.arrays.edges)
    figures["regions"] = view.canvas.regions.labels
    end = time.perf_counter() + 0.5
    while time.perf_counter() < end:
        qt.processEvents()
    if args.shot:
        view.grab().save(str(args.shot))
    figures["zoom"] = zoom_and_pan(qt, view, args.steps)
    view.shutdown()
    controller.shutdown()
    service.close()
    shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
