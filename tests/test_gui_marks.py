"""The graph's marks and legend in a real window: a search's rings, halos and outlined labels go with the search
when it is cleared (focus view and global map); the legend's colour rows, at 1366×768 and 1600×1000 on the
real corpus coloured by community, show each name whole or elided with its count kept — never cut — and the
whole text in the tooltip."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from limbic.core.embedding.base import HashingEmbedder
from limbic.gui.app import LimbicApp
from limbic.gui.graph.legend import COUNT

pytestmark = pytest.mark.gui
SIZES = [(1366, 768), (1600, 1000)]


@pytest.fixture(params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def limbic(request, qtbot, tmp_path, corpus_db):
    path = tmp_path / "memory.db"
    path.write_bytes(corpus_db.read_bytes())
    app = LimbicApp(path, embedder=HashingEmbedder(), mcp=False, seed=False)
    with qtbot.waitSignal(app.ready, timeout=20_000):
        app.start()
    qtbot.waitUntil(lambda: app.graph_view.arrays is not None, timeout=20_000)
    app.window.resize(*request.param)
    app.window.default_layout()
    app.graph_view.set_colouring("community")
    yield app
    app.window.close()
    app.shutdown()


def marks(app: LimbicApp) -> tuple[int, int, int]:
    """How many red rings, halos and red-outlined labels the canvas draws."""
    canvas = app.graph_view.canvas
    return (len(canvas._rings["hit"].data), len(canvas._halos.data),
            sum(1 for item in canvas._labels if item.isVisible() and item.accent is not None))


@pytest.mark.parametrize("mode", ["focus", "global"])
def test_a_cleared_search_takes_its_rings_halos_and_labels_with_it(qtbot, limbic, mode):
    view, controller = limbic.graph_view, limbic.controller
    view.set_mode(mode)
    with qtbot.waitSignal(controller.search_finished, timeout=20_000):
        controller.search("render pipeline", 10)
    qtbot.waitUntil(lambda: all(marks(limbic)), timeout=20_000)
    with qtbot.waitSignal(controller.search_finished, timeout=20_000):
        controller.search("", 10)
    qtbot.waitUntil(lambda: marks(limbic) == (0, 0, 0), timeout=20_000)
    qtbot.wait(300)  # nothing brings them back
    assert marks(limbic) == (0, 0, 0) and not view.highlighted_names()


@pytest.mark.parametrize("mode", ["focus", "global"])
def test_legend_rows_are_elided_with_their_count_never_cut(qtbot, limbic, mode):
    view = limbic.graph_view
    view.set_mode(mode)
    qtbot.waitUntil(lambda: view.colouring == "community" and len(view.legend.entries) > 5, timeout=20_000)
    qtbot.wait(200)
    legend = view.legend
    metrics, width = legend.list.fontMetrics(), legend.text_width()
    full = [legend.list.item(i).toolTip() for i in range(legend.list.count())]
    shown = legend.shown_texts()
    assert full[: len(legend.entries)] == [text for _, text in legend.entries][: len(full)]  # the whole text
    assert any(a != b for a, b in zip(full, shown, strict=True))  # the corpus has names too long for the row
    for whole, text in zip(full, shown, strict=True):
        assert metrics.horizontalAdvance(text) <= width, text  # fits: Qt has nothing left to cut
        count = COUNT.match(whole)
        if text != whole:
            assert "…" in text and (count is None or text.endswith(count.group(2))), (whole, text)
            assert text.replace("…", "").rstrip() and whole.startswith(text.split("…")[0])
