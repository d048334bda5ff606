"""The first view on a 1600×1000 window with a real corpus file: the results table shows rank, name
and final score without scrolling at the default dock width; the graph fills its canvas on load (with a
margin), stays fitted through resizes until the user zooms; the legend sits beside the canvas (it never
covers the drawing) and collapses, giving its room to the canvas."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.io.importer import import_file
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.app import LimbicApp
from limbic.gui.graph.canvas import GraphCanvas
from limbic.gui.search.results_model import COLUMNS

pytestmark = pytest.mark.gui
CORPUS_FILE = "anmolmanchanda__LifeManager__memory.jsonl"


@pytest.fixture
def app(qtbot, tmp_path, corpus_dir):
    database = tmp_path / "memory.db"
    service = MemoryService(open_database(database), HashingEmbedder(), origin="cli")
    import_file(service, corpus_dir / CORPUS_FILE)
    service.close()
    limbic = LimbicApp(database, embedder=HashingEmbedder(), mcp=False, seed=False)
    with qtbot.waitSignal(limbic.ready, timeout=20_000):
        limbic.start()
    qtbot.waitUntil(lambda: len(limbic.graph_view.shown_names()) > 0, timeout=20_000)
    limbic.window.resize(1600, 1000)
    limbic.window.default_layout()
    yield limbic
    limbic.window.close()
    limbic.shutdown()


def node_pixels(canvas: GraphCanvas) -> np.ndarray:
    """``(N, 2)`` widget pixel positions of the drawn nodes."""
    return np.array([[p.x(), p.y()] for p in (canvas.node_position(n) for n in canvas.names)])


def assert_fitted(canvas: GraphCanvas) -> None:
    pixels = node_pixels(canvas)
    width, height = canvas.width(), canvas.height()
    assert (pixels >= 0).all() and (pixels[:, 0] <= width).all() and (pixels[:, 1] <= height).all()
    extent = pixels.max(axis=0) - pixels.min(axis=0)
    assert extent[0] > 0.7 * width or extent[1] > 0.7 * height  # the drawing fills the canvas one way


def test_results_show_rank_name_and_final_score_without_scrolling(qtbot, app):
    panel = app.window.search_panel
    assert COLUMNS[:3] == ("rank", "name", "final")
    with qtbot.waitSignal(app.controller.search_finished, timeout=20_000):
        panel.query.setText("habit tracking goals")
        panel.search_now()
    qtbot.waitUntil(lambda: panel.model.rowCount() > 0, timeout=5_000)
    table, header = panel.table, panel.table.horizontalHeader()
    qtbot.waitUntil(lambda: header.sectionSize(COLUMNS.index("final")) > 0, timeout=5_000)
    assert table.horizontalScrollBar().value() == 0
    final = COLUMNS.index("final")
    assert header.sectionViewportPosition(final) + header.sectionSize(final) <= table.viewport().width()


def test_graph_fits_the_canvas_on_load_and_through_resizes(qtbot, app):
    canvas = app.graph_view.canvas
    qtbot.waitUntil(lambda: canvas.fitted and canvas.width() > 500, timeout=5_000)
    qtbot.wait(50)  # the deferred refit after the window's resize
    assert_fitted(canvas)
    app.window.resize(1200, 800)
    qtbot.wait(50)
    assert_fitted(canvas)


def test_legend_collapses_and_a_user_zoom_is_kept(qtbot, app):
    view = app.graph_view
    canvas = view.canvas
    qtbot.waitUntil(lambda: canvas.fitted, timeout=5_000)
    legend = view.legend
    assert legend.isVisible() and legend.title.startswith("Colour = ")
    assert legend.geometry().left() >= canvas.geometry().right()  # beside the canvas, never over it
    width = canvas.width()
    view.legend_button.setChecked(False)
    qtbot.waitUntil(lambda: canvas.width() > width, timeout=3000)  # collapsed: the canvas takes its room
    view.zoom_to_fit()
    assert_fitted(canvas)
    view.legend_button.setChecked(True)
    qtbot.waitUntil(lambda: canvas.width() == width, timeout=3000)
    view.zoom_to_fit()
    assert_fitted(canvas)
    centre = QPointF(canvas.width() / 2, canvas.height() / 2)
    wheel = QWheelEvent(centre, canvas.mapToGlobal(centre), QPoint(0, 0), QPoint(0, 240), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(canvas.viewport(), wheel)  # the user zooms in
    assert not canvas.fitted
    app.window.resize(1300, 900)
    qtbot.wait(50)
    assert not canvas.fitted  # the resize kept the user's zoom
    zoomed = canvas.view.viewRange()
    view.zoom_to_fit()
    assert canvas.fitted and canvas.view.viewRange() != zoomed
