"""Screenshots for the README, from a real run of the app (offscreen), on the sample graph and a corpus file.

    python tests/bench/gui_screenshots.py [--out docs/screenshots] [--models DIR] [--corpus FILE]

A fresh ``LIMBIC_HOME`` is used, so the first run imports ``resources/sample/``. ``--models`` points
at an installed models folder (default: the user's ``cache_dir()/models``) so that the real embedding
model is used when there is one; without it search runs full-text only and the banner shows.
Writes ``main.png`` (search, inspector, tuning, decay), ``tuning.png`` (after a slider move: who
moved), ``dark.png`` (dark mode) and ``corpus.png`` (a ``../shared/corpus`` file imported and searched).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from _qt_wait import settle, wait_for

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "anmolmanchanda__LifeManager__memory.jsonl"




def open_app(qt, db: Path):
    from limbic.gui.app import LimbicApp

    limbic = LimbicApp(db, mcp_port=0, seed=True)  # the sample, as if the first run's question was answered
    limbic.start()
    wait_for(qt, lambda: limbic.window is not None and limbic.graph_view.arrays is not None)
    wait_for(qt, lambda: limbic.mcp_server is not None)
    # the window comes first: wait for the first run's import and its vectors, and the graph to show them
    wait_for(qt, lambda: not limbic.window.progress_banner.isVisible() and limbic.service.search.pending_vectors() == 0
             and len(limbic.graph_view.arrays) == limbic.service.entities.stats().entities)
    limbic.window.resize(1600, 1000)  # the size the first view is judged at
    settle(qt, 0.3)
    limbic.window.default_layout()
    settle(qt, 1.0)
    return limbic


def search(qt, limbic, query: str, pick: int) -> None:
    panel = limbic.window.search_panel
    panel.query.setText(query)
    done: list = []
    limbic.controller.search_finished.connect(done.append)
    panel.search_now()
    wait_for(qt, lambda: bool(done))
    panel.table.selectRow(min(pick, panel.model.rowCount() - 1))
    settle(qt, 1.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--models", type=Path, help="installed models folder to use")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    from limbic.core.paths import models_dir

    models = args.models or models_dir()
    home = Path(tempfile.mkdtemp(prefix="limbic-shots-"))
    os.environ["LIMBIC_HOME"] = str(home)
    (home / "cache").mkdir(parents=True)
    if models.is_dir():
        (home / "cache" / "models").symlink_to(models)
    args.out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtWidgets import QApplication

    from limbic.gui.search.tuning import SLIDER_STEPS

    qt = QApplication.instance() or QApplication([])
    limbic = open_app(qt, home / "sample.db")
    search(qt, limbic, "why did we stop using Airflow", 1)
    limbic.window.grab().save(str(args.out / "main.png"))
    limbic.window.tuning_panel.controls["beta_sal"].slider.setValue(SLIDER_STEPS)  # β salience → 2.0
    limbic.window.tuning_panel.controls["lambda_hourly"].slider.setValue(SLIDER_STEPS // 5)
    limbic.window.docks["tuningDock"].raise_()  # the tools are tabs of one dock group
    settle(qt, 1.5)
    limbic.window.grab().save(str(args.out / "tuning.png"))
    limbic.window.tuning_panel.reset()
    limbic.window.docks["inspectorDock"].raise_()
    limbic.set_dark(True)
    search(qt, limbic, "timestamp bugs in the buoy data", 0)
    limbic.window.grab().save(str(args.out / "dark.png"))
    limbic.set_dark(False)
    limbic.window.close()
    limbic.shutdown()

    from limbic.core.io.importer import import_file
    from limbic.core.service import MemoryService

    service = MemoryService.open(home / "corpus.db")
    import_file(service, args.corpus)
    service.close()
    limbic = open_app(qt, home / "corpus.db")
    search(qt, limbic, "habit tracking goals", 0)
    limbic.window.grab().save(str(args.out / "corpus.png"))
    limbic.window.close()
    limbic.shutdown()
    print(f"screenshots written to {args.out}")


if __name__ == "__main__":
    main()
