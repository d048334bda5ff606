"""Graph layout benchmark on a large real graph (target: layout of a 10k-node graph ≤ 2 s, docs/performance.md).

    python tests/bench/bench_layout.py [--limit 10000] [--jsonl PATH] [--repeat 3] [--db PATH]

The graph is Debian's packages and their dependencies (``../shared/tools/debian_kg.py --limit N``,
written to ``tests/bench/out/debian-N.jsonl`` once and reused). Figures (one JSON object on stdout):

- ``global_layout_s``: :func:`global_layout` in this process (above 2,000 nodes one region per Leiden
  community, each by python-igraph Fruchterman–Reingold, 300 iterations, the regions packed), every run,
  wall clock and CPU time, with medians; this is the target;
- ``worker_process_s``: the same through :class:`LayoutEngine` (what the graph view does for large
  graphs, so the UI thread keeps painting): ``cold`` includes spawning the process and importing
  igraph there, ``warm`` is a later call;
- ``ego_layout_ms``: the focus view's layout of a 300-node neighbourhood;
- ``extend_layout_ms``: placing 1% new nodes into an existing layout (live updates);
- with ``--db`` (built from the JSONL without a model when the file does not exist):
  ``load_arrays_ms`` — ``MemoryService.graph_arrays()`` over SQLite —, ``patch_arrays_ms`` — the same
  after one entity was edited (an observation added to the database), given the previous arrays, so
  only that entity is read again and patched in —, and ``view`` — a ``GraphView`` in
  global mode, seconds from creation to the first drawing of all N nodes, and milliseconds of one
  full offscreen repaint (``grab()``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np

from limbic.core.service.graph_arrays import build_graph_arrays, neighbours, subgraph_edges
from limbic.gui.graph.layout import LayoutEngine, ego_layout, extend_layout, global_layout

HERE = Path(__file__).resolve().parent
TOOL = HERE.parents[2] / "shared" / "tools" / "debian_kg.py"


def debian_jsonl(limit: int) -> Path:
    out = HERE / "out" / f"debian-{limit}.jsonl"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            subprocess.run([sys.executable, str(TOOL), "--limit", str(limit)], stdout=handle, check=True)
    return out


def arrays_from_jsonl(path: Path):
    """GraphArrays straight from the file (the same builder the database read uses)."""
    entities, relations = [], []
    now = time.time()
    for line in path.open(encoding="utf-8"):
        record = json.loads(line)
        if record.get("type") == "entity":
            entities.append(record)
        elif record.get("type") == "relation":
            relations.append(record)
    ids = {e["name"]: i + 1 for i, e in enumerate(entities)}
    entity_rows = [(ids[e["name"]], e["name"], e.get("entityType", "Unknown"), "active", now, 0, None)
                   for e in entities]
    relation_rows = [(ids[r["from"]], ids[r["to"]], r["relationType"]) for r in relations
                     if r["from"] in ids and r["to"] in ids]
    return build_graph_arrays(entity_rows, relation_rows)


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def timed_cpu(fn, *args):
    """(wall seconds, CPU seconds of this process) — on a shared machine the CPU time of a
    single-threaded layout is what it would take on an idle core."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu


def view_figures(db: Path, jsonl: Path) -> dict:
    from PySide6.QtWidgets import QApplication

    from limbic.core.models import ObservationInput
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database
    from limbic.gui.controller import AppController
    from limbic.gui.graph.view import GraphView

    if not db.exists():
        from limbic.core.io.importer import import_file

        building = MemoryService(open_database(db), None)
        import_file(building, jsonl)
        building.close()
    app = QApplication.instance() or QApplication([])
    service = MemoryService(open_database(db), None, origin="gui")
    load_s, arrays = timed(service.entities.graph_arrays)
    service.entities.add_observations([(arrays.names[0], [ObservationInput(f"benchmark edit at {time.time()}")])])
    patch_s, _ = timed(service.entities.graph_arrays, arrays)
    controller = AppController(service)
    started = time.perf_counter()
    view = GraphView(controller)
    view.resize(1400, 900)
    view.show()
    drawn: list[float] = []
    view.drawn.connect(lambda: drawn.append(time.perf_counter()))
    view.set_mode("global")
    deadline = time.perf_counter() + 120
    while time.perf_counter() < deadline and len(view.shown_names()) < len(arrays):
        app.processEvents()
        time.sleep(0.005)
    first_full = time.perf_counter() - started
    repaints = []
    for _ in range(3):
        start = time.perf_counter()
        view.canvas.grab()
        repaints.append((time.perf_counter() - start) * 1000)
    controller.shutdown()
    view.shutdown()
    service.close()
    return {"load_arrays_ms": round(load_s * 1000, 1), "patch_arrays_ms": round(patch_s * 1000, 1),
            "view": {"nodes": len(view.shown_names()), "create_to_global_drawn_s": round(first_full, 2),
                     "repaint_ms": [round(r, 1) for r in repaints]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=10_000)
    parser.add_argument("--jsonl", type=Path, help="graph file (default: built with debian_kg.py)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--db", type=Path, help="also measure reading the arrays and drawing the view")
    args = parser.parse_args()
    jsonl = args.jsonl or debian_jsonl(args.limit)
    arrays = arrays_from_jsonl(jsonl)
    n, edges = len(arrays), arrays.edges
    result: dict = {"nodes": n, "relations": int(len(edges)), "cpu_count": os.cpu_count(),
                    "load_average": [round(x, 2) for x in os.getloadavg()]}

    runs = [timed_cpu(global_layout, n, edges) for _ in range(args.repeat)]
    result["global_layout_s"] = {
        "wall": [round(w, 3) for w, _ in runs], "wall_median": round(statistics.median(w for w, _ in runs), 3),
        "cpu": [round(c, 3) for _, c in runs], "cpu_median": round(statistics.median(c for _, c in runs), 3),
    }

    engine = LayoutEngine()
    try:
        cold, pos = timed(engine.global_layout, n, edges)
        warm, _ = timed(engine.global_layout, n, edges)
    finally:
        engine.close()
    result["worker_process_s"] = {"cold": round(cold, 3), "warm": round(warm, 3)}

    hub = int(np.argmax(arrays.degree))
    rows = neighbours(arrays, np.array([hub]))[:300]
    sub = subgraph_edges(arrays, rows)
    ego = [timed(ego_layout, len(rows), sub, pos[rows])[0] * 1000 for _ in range(args.repeat)]
    result["ego_layout_ms"] = {"nodes": int(len(rows)), "median": round(statistics.median(ego), 1)}

    keep = np.sort(np.random.default_rng(1).permutation(n)[: n - n // 100])
    extend_s, _ = timed(extend_layout, arrays.ids[keep], pos[keep], arrays.ids, edges)
    result["extend_layout_ms"] = round(extend_s * 1000, 1)

    if args.db:
        result.update(view_figures(args.db, jsonl))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
