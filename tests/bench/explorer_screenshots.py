"""Screenshots of the graph explorer's views from a real run of the app, written to docs/screenshots/explorer/.

    python tests/bench/explorer_screenshots.py --size 1366x768 --sample
    python tests/bench/explorer_screenshots.py --size 1600x1000 --debian DEBIAN.db   # the 10k global map

Run it under a real X server (Xvfb with a screen of that size) to see what a person sees; offscreen works too. The real
corpus (every file of ``../shared/corpus``) is imported into a fresh memory, the app opens on it (the
deterministic HashingEmbedder: no model download, search is lexical), and each step saves the window:

- ``focus-SIZE.png``: a search, its hits ringed with halos, the first result selected;
- ``placement-SIZE.png``: after four agents' ``create_entities`` through two tokens (two linked to drawn
  entities, two alone), written by another connection to the same file as an MCP server would; a hover
  card on one of them;
- ``who-wrote-it-SIZE.png``: coloured by who wrote each entity last, one token's writes listed;
- ``fades-SIZE.png``: *What fades next* 30 days ahead (``--dark``: every one of these in dark mode too);
- on the sample memory (``--sample``; the installed model when there is one, so the search is by meaning):
  ``empty-memory-SIZE.png``, the question an empty memory is asked; ``labels-SIZE.png``, the search "why did we
  stop using Airflow" with every hit's label on its node; ``project-SIZE.png``, a corpus file imported into
  project "weather" and that project chosen; ``replay-SIZE.png``, the time slider moved back (a replay);
- ``global-10k-SIZE.png`` (with ``--debian``, a memory of ``debian_kg.py --limit 10000``): the global map.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from _qt_wait import settle, wait_for

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
DAY = 86_400.0




def open_app(qt, db: Path, size: tuple[int, int]):
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.gui.app import LimbicApp

    limbic = LimbicApp(db, embedder=HashingEmbedder(), mcp_port=0, seed=False)
    limbic.start()
    wait_for(qt, lambda: limbic.window is not None and limbic.graph_view.arrays is not None)
    limbic.window.resize(*size)
    settle(qt, 0.3)
    limbic.window.default_layout()
    settle(qt, 1.5)
    return limbic


def save(qt, limbic, out: Path, screen: bool = False) -> None:
    """The window as drawn; ``screen``: as the screen shows it, with the dialogs over it."""
    settle(qt, 1.0)
    window = limbic.window
    shot = qt.primaryScreen().grabWindow(0).copy(window.frameGeometry()) if screen else window.grab()
    shot.save(str(out))
    print(out)


def corpus_memory(folder: Path) -> Path:
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.io.importer import import_files
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    db = folder / "memory.db"
    files = sorted(p for p in CORPUS.iterdir() if p.suffix in (".json", ".jsonl") and p.name != "MANIFEST.json")
    service = MemoryService(open_database(db), HashingEmbedder(), origin="cli")
    import_files(service, files)
    service.search.wait_for_vectors(timeout=120)
    service.close()
    return db


def explorer_views(qt, db: Path, size: tuple[int, int], out: Path, tag: str, dark: bool = False) -> None:
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.models import EntityInput, ObservationInput, RelationInput
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    limbic = open_app(qt, db, size)
    limbic.set_dark(dark)
    view, window = limbic.graph_view, limbic.window
    panel = window.search_panel
    panel.query.setText("render pipeline")
    done: list = []
    limbic.controller.search_finished.connect(done.append)
    panel.search_now()
    wait_for(qt, lambda: bool(done))
    panel.table.selectRow(0)
    settle(qt, 2.0)
    save(qt, limbic, out / f"focus-{tag}.png")

    agent = MemoryService(open_database(db), HashingEmbedder(), origin="mcp:alice")  # another connection, as an MCP server
    drawn = view.shown_names()
    index = view.arrays.index_of()
    anchors = sorted(drawn, key=lambda n: -int(view.arrays.degree[index[n]]))[:2]
    writes = [("Agent note on " + anchors[0], "alice", anchors[0]), ("Agent note on " + anchors[1], "bob", anchors[1]),
              ("Loose finding from alice", "alice", None), ("Loose finding from bob", "bob", None)]
    for name, token, anchor in writes:
        agent.entities.create_entities([EntityInput(name, "note", (ObservationInput(f"written through the token {token}"),))],
                              origin=f"mcp:{token}")
        if anchor is not None:
            agent.relations.create_relations([RelationInput(name, anchor, "about")], origin=f"mcp:{token}")
        settle(qt, 0.4)
    names = [n for n, _, _ in writes]
    wait_for(qt, lambda: set(names) <= set(view.shown_names()))
    settle(qt, 1.5)
    where = view.node_position(names[0])
    view.canvas._mouse_moved(view.canvas.mapToScene(where.toPoint()))  # the pointer rests on the new node
    settle(qt, 1.0)
    save(qt, limbic, out / f"placement-{tag}.png")
    view.card.hide()

    view.set_colouring("origin")
    wait_for(qt, lambda: view.colouring == "origin" and view.legend.entries)
    settle(qt, 0.5)
    texts = [t for _, t in view.legend.entries]
    view.legend.choose(next(i for i, t in enumerate(texts) if t.startswith("alice")))
    wait_for(qt, lambda: bool(view.legend.detail_texts()))
    save(qt, limbic, out / f"who-wrote-it-{tag}.png")

    agent.entities.add_observations([(names[1], [ObservationInput("temporary staging credentials",
                                                        expires_at=time.time() + 10 * DAY)])], origin="mcp:bob")
    agent.close()
    settle(qt, 1.0)
    limbic.timeline.look_ahead(30)
    wait_for(qt, lambda: view.colouring == "fades" and view.lenses.fades is not None)
    settle(qt, 1.0)
    save(qt, limbic, out / f"fades-{tag}.png")
    view.set_colouring("auto")
    window.close()
    limbic.shutdown()


def global_map(qt, debian: Path, size: tuple[int, int], out: Path, tag: str) -> None:
    limbic = open_app(qt, debian, size)
    view = limbic.graph_view
    view.set_colouring("community")
    view.set_mode("global")
    wait_for(qt, lambda: len(view.shown_names()) == len(view.arrays) and view.colouring == "community")
    settle(qt, 2.0)
    save(qt, limbic, out / f"global-10k-{tag}.png")
    limbic.window.close()
    limbic.shutdown()


def sample_views(qt, folder: Path, embedder, size: tuple[int, int], out: Path, tag: str) -> None:
    from PySide6.QtCore import QSettings

    from limbic.core.io.importer import import_files
    from limbic.gui.app import LimbicApp

    settings = QSettings(str(folder / "sample-gui.ini"), QSettings.Format.IniFormat)
    settings.setValue("help/tour_shown", True)
    limbic = LimbicApp(folder / f"sample-{tag}.db", embedder=embedder, mcp_port=0, settings=settings)  # asks
    limbic.start()
    wait_for(qt, lambda: limbic.sample_question is not None and limbic.sample_question.isVisible())
    limbic.window.resize(*size)
    settle(qt, 0.3)
    limbic.window.default_layout()
    limbic.window.move(0, 0)
    save(qt, limbic, out / f"empty-memory-{tag}.png", screen=True)
    limbic.sample_question.sample_button.click()
    wait_for(qt, lambda: limbic.service.entities.stats().entities >= 200 and limbic.service.search.pending_vectors() == 0)
    view, controller = limbic.graph_view, limbic.controller
    done: list = []
    controller.search_finished.connect(done.append)
    limbic.window.search_panel.query.setText("why did we stop using Airflow")
    limbic.window.search_panel.search_now()
    wait_for(qt, lambda: bool(done) and set(view.highlighted_names()) >= {r.name for r in done[-1].results[:3]})
    settle(qt, 2.0)
    save(qt, limbic, out / f"labels-{tag}.png")
    limbic.window.search_panel.query.clear()
    limbic.window.search_panel.search_now()
    import_files(controller.service, [CORPUS / "HankofallTrades__STRATOS__.cursor_memory.jsonl"], project="weather")
    wait_for(qt, lambda: limbic.timeline.projects.findData("weather") > 0)
    limbic.timeline.projects.choose("weather")
    wait_for(qt, lambda: len(view.shown_names()) < 100)
    settle(qt, 2.0)
    save(qt, limbic, out / f"project-{tag}.png")
    limbic.timeline.projects.choose(None)
    limbic.timeline.window_box.setCurrentIndex(3)  # a month
    limbic.timeline.slider.triggerAction(limbic.timeline.slider.SliderAction.SliderPageStepSub)  # starts the replay
    wait_for(qt, lambda: limbic.timeline.moment is not None)
    limbic.timeline.slider.setValue(700)
    wait_for(qt, lambda: len(limbic.timeline.written) >= 5 and len(view.canvas.replay_marked) >= 5, timeout=30)
    settle(qt, 2.0)
    save(qt, limbic, out / f"replay-{tag}.png")
    limbic.window.close()
    limbic.shutdown()


def installed_embedder():
    """The installed model (read before LIMBIC_HOME moves), else the HashingEmbedder."""
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.embedding.onnx_embedder import load_active_embedder

    return load_active_embedder() or HashingEmbedder()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots" / "explorer")
    parser.add_argument("--size", default="1600x1000", help="window size, e.g. 1366x768")
    parser.add_argument("--debian", type=Path, help="a memory of Debian's packages: also shoot the global map")
    parser.add_argument("--only-global", action="store_true", help="only the global map")
    parser.add_argument("--dark", action="store_true", help="in dark mode (the names end in -dark)")
    parser.add_argument("--sample", action="store_true", help="also the sample memory's views")
    args = parser.parse_args()
    embedder = installed_embedder() if args.sample else None
    from PySide6.QtWidgets import QApplication

    width, height = (int(v) for v in args.size.split("x"))
    size = (width, height)
    folder = Path(tempfile.mkdtemp(prefix="limbic-explorer-shots-"))
    os.environ["LIMBIC_HOME"] = str(folder / "home")
    args.out.mkdir(parents=True, exist_ok=True)
    qt = QApplication.instance() or QApplication([])
    if not args.only_global:
        explorer_views(qt, corpus_memory(folder), size, args.out, args.size + ("-dark" if args.dark else ""), args.dark)
    if args.sample:
        sample_views(qt, folder, embedder, size, args.out, args.size)
    if args.debian is not None:
        import apsw

        copy = folder / "debian.db"
        with apsw.Connection(str(copy)) as target, \
                apsw.Connection(str(args.debian), flags=apsw.SQLITE_OPEN_READONLY) as source:
            with target.backup("main", source, "main") as step:
                step.step(-1)
        global_map(qt, copy, size, args.out, args.size)


if __name__ == "__main__":
    main()
