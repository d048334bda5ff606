"""Resident memory of a search session: RSS after opening a database, after the first
search (model and vector copy loaded) and every 1,000 searches up to ``--searches``, to show it does
not grow (no leak); searches are recorded (impressions, search log), as the app and MCP server do.

    python tests/bench/bench_memory.py --db /path/to/debian-10k.db [--searches 10000]
    python tests/bench/bench_memory.py --app --db /path/to/memory.db

``--app`` measures the desktop app instead (offscreen, 1366×768, the MCP server on): RSS once the Python
modules are imported, when the window shows, after the warm-up (the model and the vector copy, and start-up's
other reads off the UI thread done, the review queue among them), after a search drawn in the graph, after the
global map, with the Curation window open (its duplicates listed), with its Split tab shown (split candidates and
the first one's proposal) and once it is closed — what the app really uses after start, stage
by stage, so the growth of each part can be read off. ``anon_mb_*`` is the anonymous part of each (heap, arrays,
page caches; the rest is mapped files: libraries and the model file); ``LIMBIC_HOME``, when set, says whose
installed model and active variant are used.

``--db`` is copied first. RSS is read from ``/proc/self/status`` (Linux): ``VmRSS`` now, ``VmHWM`` the
peak. Prints one JSON object; ``growth_mb_after_warmup`` compares the last sample with the one after
1,000 searches (SQLite's page cache and the allocator settle during the first ones).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

QUERIES = [
    "web server", "python library for parsing xml", "font for programming", "audio player for the desktop",
    "kernel module tools", "documentation for gtk", "database client", "compression utility",
    "tool to convert images", "spell checker dictionary", "version control system", "network monitoring",
]


def rss_mb(field: str = "VmRSS") -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"{field} not in /proc/self/status")


def anonymous_mb() -> float:
    """Anonymous resident memory (heap, arenas, arrays; the rest of RSS is mapped files: libraries, the
    model file) from ``/proc/self/smaps_rollup``."""
    with open("/proc/self/smaps_rollup", encoding="ascii") as rollup:
        for line in rollup:
            if line.startswith("Anonymous:"):
                return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("Anonymous not in /proc/self/smaps_rollup")


def app_figures(db: Path) -> dict:
    """The app's RSS stage by stage on a copy of ``db`` (see the module docstring)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import pydantic._internal._validators  # noqa: F401 - before Qt, as the launcher does
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from limbic.gui.app import LimbicApp

    figures: dict = {"rss_mb_modules": rss_mb(), "anon_mb_modules": anonymous_mb()}
    qt = QApplication(sys.argv[:1])
    from limbic.core import paths

    # the installed model and the active variant of the caller's home (LIMBIC_HOME or the default one)
    models, active = paths.models_dir(), paths.config_dir() / "active_model.json"
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LIMBIC_HOME"] = tmp
        if models.is_dir():  # the installed model, in the fresh home (as tests/bench/bench_startup.py does)
            (Path(tmp) / "cache").mkdir()
            (Path(tmp) / "cache" / "models").symlink_to(models)
            if active.is_file():
                (Path(tmp) / "config").mkdir()
                (Path(tmp) / "config" / "active_model.json").write_text(active.read_text())
        copy = Path(tmp) / "memory.db"
        shutil.copyfile(db, copy)
        app = LimbicApp(copy, mcp_port=0, seed=False)

        def wait(condition, timeout: float = 120.0) -> None:
            deadline = time.perf_counter() + timeout
            while not condition():
                if time.perf_counter() > deadline:
                    raise TimeoutError("the app did not get there in time")
                loop = QEventLoop()
                QTimer.singleShot(50, loop.quit)
                loop.exec()

        app.start()
        wait(lambda: app.window is not None and app.window.isVisible())
        figures["rss_mb_window"], figures["anon_mb_window"] = rss_mb(), anonymous_mb()
        wait(lambda: app.service is not None and app.service.search._warm_up_thread is not None
             and not app.service.search._warm_up_thread.is_alive() and app.mcp_server is not None
             and app.controller.runner.pending() == 0)  # and what start-up reads off the UI thread (the review queue)
        figures["rss_mb_warmed_up"], figures["anon_mb_warmed_up"] = rss_mb(), anonymous_mb()
        import apsw

        figures["sqlite_mb_warmed_up"] = round(apsw.memory_used() / 2**20, 1)  # page caches of every connection
        blocks = app.service.index._blocks
        figures["vector_copy_mb"] = round(sum(b.vectors.unit.nbytes for b in blocks) / 2**20, 1)
        view = app.graph_view
        with_hits = app.controller.search_finished
        done = []
        with_hits.connect(lambda _o: done.append(1))
        app.controller.search(QUERIES[0], 10)
        wait(lambda: bool(done) and len(view.shown_names()) > 0 and not view.canvas.animating)
        figures["rss_mb_search"], figures["anon_mb_search"] = rss_mb(), anonymous_mb()
        view.set_mode("global")
        wait(lambda: len(view.shown_names()) == len(view.arrays) and not view.canvas.animating)
        figures["rss_mb_global_map"], figures["anon_mb_global_map"] = rss_mb(), anonymous_mb()
        curation = app.show_curation()
        wait(lambda: curation.isVisible())
        # the merge queue's duplicates are looked for off the UI thread: measured once they are listed
        wait(lambda: "duplicate clusters" in curation.merge_queue.summary.text()
             and app.controller.runner.pending() == 0)
        figures["rss_mb_curation"], figures["anon_mb_curation"] = rss_mb(), anonymous_mb()
        curation.show_split()  # split candidates, and the first one's proposal (scikit-learn's clustering)
        split = curation.split_panel
        wait(lambda: app.controller.runner.pending() == 0 and (split.proposal is not None or not split.candidates))
        figures["rss_mb_curation_split"], figures["anon_mb_curation_split"] = rss_mb(), anonymous_mb()
        figures["sqlite_mb_end"] = round(apsw.memory_used() / 2**20, 1)
        figures["entities"] = app.service.entities.stats().entities
        figures["model"] = getattr(app.service.embedder, "name", None)
        curation.close()  # its panels' answers dropped, the free heap given back
        wait(lambda: app.controller.runner.pending() == 0)
        figures["rss_mb_curation_closed"], figures["anon_mb_curation_closed"] = rss_mb(), anonymous_mb()
        app.shutdown()
    qt.quit()
    figures["peak_rss_mb"] = rss_mb("VmHWM")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--app", action="store_true", help="measure the desktop app, stage by stage")
    parser.add_argument("--searches", type=int, default=10_000)
    parser.add_argument("--no-record", action="store_true",
                        help="searches not logged (no impressions, no search log): separates the log's growth")
    args = parser.parse_args()
    if not Path("/proc/self/status").exists():
        print("RSS is read from /proc (Linux only)", file=sys.stderr)
        return 2
    if args.app:
        print(json.dumps(app_figures(args.db), indent=2))
        return 0
    from limbic.core.embedding.onnx_embedder import load_active_embedder
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    figures: dict = {"rss_mb_at_start": rss_mb(), "recorded": not args.no_record}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        shutil.copyfile(args.db, db)
        service = MemoryService(open_database(db), load_active_embedder(), origin="mcp", background_vectors=True)
        figures["rss_mb_after_open"] = rss_mb()
        service.search.query(QUERIES[0], 10)
        figures["rss_mb_after_first_search"] = rss_mb()
        samples, started = [], time.perf_counter()
        for i in range(1, args.searches + 1):
            service.search.query(f"{QUERIES[i % len(QUERIES)]} {i % 97}", 10, record=not args.no_record)
            if i % 1000 == 0:
                service.usage.wait_for_signals()
                samples.append((i, rss_mb()))
        figures["seconds"] = round(time.perf_counter() - started, 1)
        service.close()
    figures["rss_mb_every_1000_searches"] = [mb for _, mb in samples]
    if len(samples) >= 2:
        figures["growth_mb_after_warmup"] = round(samples[-1][1] - samples[0][1], 1)
    figures["peak_rss_mb"] = rss_mb("VmHWM")
    figures["cpu_count"] = os.cpu_count()
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
