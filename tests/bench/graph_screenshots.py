"""Screenshots of the graph view for the README, from real data (offscreen), written to docs/screenshots/.

    python tests/bench/graph_screenshots.py [--out docs/screenshots] [--debian PATH.db]

- ``graph_sample_focus.png``: the sample graph (``resources/sample/``, with its year of usage history)
  after a search — hits ringed red, the selection gold, their neighbours around them;
- ``graph_sample_global.png``: the whole sample graph as a global map;
- ``graph_corpus.png``: a real memory file from ``../shared/corpus`` imported through the importer;
- ``graph_debian.png`` (with ``--debian``, a database of ``debian_kg.py --limit 10000``): the 10,000-node
  global map.
Search runs with the deterministic HashingEmbedder (no model download), so hits are lexical.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from _qt_wait import settle, wait_for

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "HankofallTrades__STRATOS__.cursor_memory.jsonl"



def shoot(app, db: Path, out: Path, steps) -> None:
    """Open ``db`` in a GraphView, run ``steps(view, controller)``, save the grab to ``out``."""
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database
    from limbic.gui.controller import AppController
    from limbic.gui.graph.view import GraphView

    service = MemoryService(open_database(db), HashingEmbedder(), origin="gui")
    controller = AppController(service)
    view = GraphView(controller)
    view.resize(1200, 800)
    view.show()
    try:
        wait_for(app, lambda: view.arrays is not None and view.shown_names())
        steps(app, view, controller)
        settle(app, 0.6)
        view.grab().save(str(out))
        print(f"wrote {out} ({len(view.shown_names())} entities shown)")
    finally:
        controller.shutdown()
        view.shutdown()
        service.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--debian", type=Path, help="database of the 10k Debian graph (optional)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtWidgets import QApplication

    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.io.importer import import_file
    from limbic.core.io.sample import seed_if_empty
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    app = QApplication.instance() or QApplication([])
    import pyqtgraph as pg

    pg.setConfigOptions(background="#ffffff", foreground="#303030", antialias=True)  # the app's light theme
    with tempfile.TemporaryDirectory() as folder:
        os.environ["LIMBIC_HOME"] = folder
        sample = Path(folder) / "sample.db"
        service = MemoryService(open_database(sample), HashingEmbedder())
        seed_if_empty(service)
        service.close()

        def focus(app, view, controller):
            controller.search("ingestion pipeline for buoy sensor data")
            wait_for(app, lambda: controller.last_outcome is not None and view.highlighted_names())
            controller.select([controller.last_outcome.results[0].name])
            wait_for(app, lambda: controller.selection[0] in view.highlighted_names())

        def global_map(app, view, controller):
            view.set_mode("global")
            wait_for(app, lambda: view.mode == "global" and len(view.shown_names()) == len(view.arrays))

        shoot(app, sample, args.out / "graph_sample_focus.png", focus)
        shoot(app, sample, args.out / "graph_sample_global.png", global_map)

        if CORPUS.is_file():
            corpus_db = Path(folder) / "corpus.db"
            service = MemoryService(open_database(corpus_db), HashingEmbedder())
            import_file(service, CORPUS)
            service.close()
            shoot(app, corpus_db, args.out / "graph_corpus.png", global_map)
        if args.debian:
            shoot(app, args.debian, args.out / "graph_debian.png", global_map)


if __name__ == "__main__":
    main()
