"""The smaller parts of the explorer, on real widgets:

- colour that informs: on the real corpus (150 entity types) "auto" colours by community (Leiden on the
  drawn graph) and the legend says so; colour by type on request; communities keep their colours;
- the legend's text follows a live switch to dark mode;
- the decay plot's names never overlap, however close the ages;
- the Δrank tint means what the Δrank number means (against the default parameters);
- a failed MCP start is shown in the MCP panel, wrapped, with the whole text behind *Show details* and
  a *Retry* that starts the server; the status bar says only "MCP: failed".
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from _explorer_helpers import graph_view_on_copy
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.search.params import ScoringParams
from limbic.gui.app import LimbicApp
from limbic.gui.graph import colouring, style
from limbic.gui.search.decay_plot import DecayPlot
from limbic.gui.search.results_model import MOVED_DOWN, MOVED_UP, ResultsModel
from limbic.gui.theme import apply_theme

pytestmark = pytest.mark.gui


@pytest.fixture
def corpus_view(qtbot, tmp_path, corpus_db):
    yield from graph_view_on_copy(qtbot, tmp_path / "memory.db", corpus_db)


def test_real_files_with_hundreds_of_types_are_coloured_by_community(qtbot, corpus_view):
    view = corpus_view
    assert len(view.arrays.type_names) > 100
    with qtbot.waitSignal(view.drawn, timeout=20_000):
        view.set_mode("global")
    qtbot.waitUntil(lambda: len(view.shown_names()) == len(view.arrays), timeout=20_000)
    assert view.colouring == "community" and view.legend.title.startswith("Colour = community")
    codes = view._codes
    assert (codes < colouring.GREY).mean() > 0.4  # most nodes get a colour, not grey
    assert len(set(codes[codes < colouring.GREY].tolist())) == len(style.PALETTE)
    assert view.legend.entries[0][1].startswith("around ")  # a group is named by its most salient member
    before = {name: view.colour_of(name) for name in view.shown_names()}
    with qtbot.waitSignal(view.drawn, timeout=10_000):
        view.set_colouring("type")
    assert view.colouring == "type" and view.legend.title == "Colour = entity type"
    assert view.legend.entries[-1][1].endswith(")") and "other types" in view.legend.entries[-1][1]
    with qtbot.waitSignal(view.drawn, timeout=10_000):
        view.set_colouring("community")
    assert {name: view.colour_of(name) for name in view.shown_names()} == before  # the same groups, the same colours


def test_community_colours_follow_their_members():
    ids = np.arange(12, dtype=np.int64)
    membership = np.array([0] * 5 + [1] * 4 + [2] * 3)
    first = colouring.community_colours(membership, ids)
    assert first.tolist() == [0] * 5 + [1] * 4 + [2] * 3  # largest group first
    before = colouring.Communities(ids, membership, first)
    renumbered = np.array([2] * 5 + [0] * 4 + [1] * 3)  # the same groups found under other numbers
    assert colouring.community_colours(renumbered, ids, before).tolist() == first.tolist()
    assert colouring.community_colours(np.arange(4), ids[:4]).tolist() == [colouring.GREY] * 4  # lone nodes
    # Entities 12..17 written: they join the second group, which is now the largest; a new group of three
    # appears; the first group loses one member to the third. Every group keeps its colour, the new one
    # takes a colour no group had.
    grown = np.arange(18, dtype=np.int64)
    membership = np.array([7] * 4 + [8] + [5] * 4 + [8] * 2 + [8] + [5] * 3 + [9] * 3)
    codes = colouring.community_colours(membership, grown, before)
    assert codes[:4].tolist() == [0] * 4 and codes[5:9].tolist() == [1] * 4 and codes[12:15].tolist() == [1] * 3
    assert codes[4] == codes[9] == 2 and codes[15:].tolist() == [3] * 3
    # A group split in two: the larger part keeps the colour (higher overlap), the other takes a new one.
    ten = np.arange(14, dtype=np.int64)
    whole = colouring.Communities(ten, np.array([0] * 10 + [1] * 4), np.array([0] * 10 + [1] * 4))
    codes = colouring.community_colours(np.array([4] * 6 + [5] * 4 + [6] * 4), ten, whole)
    assert codes.tolist() == [0] * 6 + [2] * 4 + [1] * 4
    # The palette full, a file imported: its group of 8 new entities takes the colour of the smallest coloured
    # group (3 members, which turns grey); a group of 4 new ones is not large enough and stays grey.
    full = colouring.Communities(np.arange(36), np.repeat(np.arange(12), 3), np.repeat(np.arange(12), 3))
    grown = np.r_[np.arange(36), np.arange(100, 112)]
    codes = colouring.community_colours(np.r_[np.repeat(np.arange(12), 3), [20] * 8, [21] * 4], grown, full)
    assert codes[:33].tolist() == full.codes[:33].tolist() and codes[33:36].tolist() == [colouring.GREY] * 3
    assert codes[36:44].tolist() == [11] * 8 and codes[44:].tolist() == [colouring.GREY] * 4
    # Groups that share too little with any old colour (Jaccard below MIN_JACCARD) are new.
    other = colouring.Communities(np.arange(100, 112), membership[:12] * 0, np.zeros(12, dtype=np.int64))
    assert colouring.community_colours(np.zeros(12, dtype=np.int64), ids, other).tolist() == [1] * 12


def test_the_legend_follows_a_live_switch_to_dark_mode(qtbot, corpus_view):
    app = QApplication.instance()
    legend = corpus_view.legend
    try:
        apply_theme(app, False, corpus_view)
        light = legend.palette().windowText().color().lightness()
        apply_theme(app, True, corpus_view)
        QApplication.processEvents()
        dark = legend.palette().windowText().color().lightness()
        assert dark > 150 > light  # light text on the dark theme's base, dark text on the light one
        assert legend.palette().base().color().lightness() < 60
    finally:
        apply_theme(app, False, corpus_view)


def test_decay_plot_names_never_overlap(qtbot):
    plot = DecayPlot(ScoringParams())
    plot.resize(500, 320)
    qtbot.addWidget(plot)
    plot.show()
    plot.set_entities([(f"entity written {i} hours apart", 24.0 * 30 + i) for i in range(10)])
    qtbot.waitUntil(lambda: len(plot.shown_labels()) > 0, timeout=3000)
    boxes = plot.label_boxes()
    assert 0 < len(boxes) < 10  # ten markers on one spot: a few names, the rest on hover
    assert not any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
                   for k, a in enumerate(boxes) for b in boxes[k + 1:])
    assert plot.shown_labels()[0] == "entity written 0 hours apart"  # the first marked (the selection) first
    assert "days" in plot.markers.opts["tip"](30.0, 0.5, "x")


class _Result:
    def __init__(self, name: str, rank: int) -> None:
        self.name, self.rank, self.entity_type, self.routing_strategy = name, rank, "t", "hybrid_balanced"
        self.final_score = self.limbic_score = self.base_relevance = 1.0 / rank
        self.rrf_score, self.distance, self.observations = None, 0.1, ()


def test_the_delta_rank_tint_means_what_the_number_means(qtbot):
    model = ResultsModel()
    model.set_results([_Result("a", 1), _Result("b", 2), _Result("c", 3)], {"a": 3, "b": 2, "c": 1})
    shown = [(model.data(model.index(row, 3)), model.data(model.index(row, 0), Qt.ItemDataRole.BackgroundRole))
             for row in range(3)]
    assert shown[0][0] == "▲2" and shown[0][1].color() == MOVED_UP
    assert shown[1][0] == "=" and shown[1][1] is None
    assert shown[2][0] == "▼2" and shown[2][1].color() == MOVED_DOWN
    model.set_results([_Result("a", 1), _Result("b", 2), _Result("c", 3)])  # a re-rank: same meaning kept
    assert model.data(model.index(0, 0), Qt.ItemDataRole.BackgroundRole).color() == MOVED_UP


def test_a_failed_mcp_start_is_shown_in_the_panel_with_details_and_retry(qtbot, tmp_path):
    app = LimbicApp(tmp_path / "memory.db", embedder=HashingEmbedder(), seed=False, mcp_port=0)
    with qtbot.waitSignal(app.ready, timeout=20_000):
        app.start()
    try:
        qtbot.waitUntil(lambda: app.mcp_server is not None, timeout=30_000)
        app.mcp_host.stop()
        long = "cannot import name 'import_string' from partially initialized module " + "x" * 600
        app._mcp_failed(long, "Traceback (most recent call last):\n  ...\nImportError: " + long)
        panel, window = app.mcp_panel, app.window
        assert window.mcp_label.full_text() == "MCP: failed (see the MCP panel)"
        assert window.width() <= window.screen().availableGeometry().width() or window.width() == \
            window.minimumSizeHint().width()
        assert panel.state.wordWrap() and long in panel.state.text()
        assert panel.details_button.isVisibleTo(panel) and panel.retry_button.isVisibleTo(panel)
        box = panel.show_details()
        assert isinstance(box, QMessageBox) and box.detailedText().startswith("Traceback")
        box.close()
        with qtbot.waitSignal(app.mcp_host.started, timeout=30_000):
            qtbot.mouseClick(panel.retry_button, Qt.MouseButton.LeftButton)
        assert app.mcp_server is not None and app.mcp_server.running
        assert panel.state.text().startswith("MCP server: listening") and not panel.retry_button.isVisibleTo(panel)
        assert window.mcp_label.full_text() == f"MCP: {app.mcp_server.url}"
    finally:
        app.window.close()
        app.shutdown()


def test_a_large_map_opens_coloured_by_community_whatever_its_types():
    """From the size the map is laid out one region per community, "auto" colours by community even when a
    dozen types cover every node (Debian's 10,000 packages: 20 sections in the palette's colours)."""
    def auto(n: int) -> str:
        membership = np.arange(n) % 5
        return colouring.colour_nodes("auto", np.arange(n) % 10, [f"type {i}" for i in range(10)],
                                      (membership, membership), {}).mode
    assert auto(colouring.COMMUNITY_NODES - 1) == "type" and auto(colouring.COMMUNITY_NODES) == "community"


def test_region_names_never_overlap_and_wait_for_a_closer_zoom(qtbot):
    """Three regions side by side, close at the first view: the largest's name shows above it, the next ones
    find another spot (centre, below) or wait; zoomed in, every name shows, none overlapping another."""
    import pyqtgraph as pg

    from limbic.gui.graph.canvas import GraphCanvas

    canvas = GraphCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(900, 400)
    canvas.show()
    rng = np.random.default_rng(1)
    regions = [(rng.normal(size=(40, 2)) + (3.0 * k, 0.0), style.type_colour(k), f"community leader {k} (40)")
               for k in range(3)]
    points = np.concatenate([r[0] for r in regions])
    canvas.draw([f"n{i}" for i in range(len(points))], points, np.zeros((0, 2), dtype=np.int64),
                np.full(len(points), 7.0), np.zeros(len(points), dtype=np.int64), np.full(len(points), 7),
                np.zeros(len(points)))
    canvas.set_regions(regions)

    def shown() -> list[tuple[float, float, float, float]]:
        canvas.update_labels()
        QApplication.processEvents()  # the names' transforms follow the view's
        transform = canvas.viewportTransform()
        return [(r.left(), r.top(), r.right(), r.bottom()) for text, _ in canvas.regions.names if text.isVisible()
                for r in [text.deviceTransform(transform).mapRect(text.boundingRect())]]

    for scale in (60.0, 10.0):  # layout units across the view: far, then close
        canvas.view.setRange(xRange=(3.0 - scale / 2, 3.0 + scale / 2), yRange=(-scale / 3, scale / 3), padding=0)
        QApplication.processEvents()
        boxes = shown()
        assert boxes and not any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
                                 for i, a in enumerate(boxes) for b in boxes[i + 1:]), boxes
    assert len(boxes) == 3
    assert isinstance(canvas.regions.names[0][0], pg.TextItem)
