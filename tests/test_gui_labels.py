"""Every label on its node, measured on screen: in a real window of 1366×768 and of 1600×1000, on the sample
memory (the search "why did we stop using Airflow", the real model) and on a real agent's memory file, each
visible label's box is within its node's radius + 6 px of the node's centre, or a leader line joins the two;
labels never overlap; and a zoom, a fit or agents' writes never leave a label away from its node, not even
for the moment before the labels are placed again (they may overlap for that moment)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import math

import pytest
from _embedder_helpers import real_model_dir
from PySide6.QtCore import QLineF, QPointF, QRectF

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.embedding.onnx_embedder import OnnxEmbedder
from limbic.core.io.importer import import_file
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.app import LimbicApp
from limbic.gui.graph.canvas import GraphCanvas
from limbic.gui.graph.labels import LABEL_REACH

pytestmark = pytest.mark.gui
SIZES = [(1366, 768), (1600, 1000)]
CORPUS_FILE = "HankofallTrades__STRATOS__.cursor_memory.jsonl"  # the corpus file with the most relations
ON_LINE = 0.5  # pixels: a leader's end counts as on the disc's edge or the box within this


def box_distance(box: QRectF, point: QPointF) -> float:
    """Pixels from ``point`` to the nearest point of ``box`` (0 inside)."""
    dx = max(box.left() - point.x(), 0.0, point.x() - box.right())
    dy = max(box.top() - point.y(), 0.0, point.y() - box.bottom())
    return math.hypot(dx, dy)


def label_faults(canvas: GraphCanvas, overlaps: bool = True) -> list[str]:
    """Every shown label that is not at its node nor joined to it, reads another name, or (``overlaps``)
    overlaps another label — as drawn in the widget's pixels. Empty when all is well."""
    faults = []
    geometry = canvas.label_geometry()
    for entity, text, box, leader in geometry:
        node = canvas.node_position(entity)
        radius = float(canvas._sizes[canvas.index_of(entity)]) / 2
        if not (text == entity or (text.endswith("…") and entity.startswith(text[:-1]))):
            faults.append(f"{entity!r} labelled {text!r}")
        reach = box_distance(box, node)
        if leader is None:
            if reach > radius + LABEL_REACH + 1e-6:
                faults.append(f"{entity!r}: box {reach - radius:.1f} px from its disc, no leader")
            continue
        start = QLineF(node, leader.p1()).length()
        if abs(start - radius) > ON_LINE or box_distance(box, leader.p2()) > ON_LINE \
                or abs(QLineF(node, leader.p2()).length() - reach) > ON_LINE:
            faults.append(f"{entity!r}: leader from {start:.1f} px to {leader.p2()} does not join disc and box {box}")
    if not overlaps:
        return faults
    boxes = [box.adjusted(0.5, 0.5, -0.5, -0.5) for _, _, box, _ in geometry]
    faults += [f"{geometry[i][0]!r} and {geometry[j][0]!r} overlap" for i in range(len(boxes))
               for j in range(i + 1, len(boxes)) if boxes[i].intersects(boxes[j])]
    return faults


def placed(qtbot, canvas: GraphCanvas) -> None:
    """Wait until the nodes stopped gliding and the labels were placed again (a range change may reach the
    canvas at the next paint: twice, a paint apart)."""
    for _ in range(2):
        qtbot.waitUntil(lambda: not canvas.animating and not canvas._label_timer.isActive(), timeout=5000)
        qtbot.wait(150)


def open_app(qtbot, database, embedder, size: tuple[int, int], *, seed: bool) -> LimbicApp:
    limbic = LimbicApp(database, embedder=embedder, mcp=False, seed=seed)
    with qtbot.waitSignal(limbic.ready, timeout=20_000):
        limbic.start()
    qtbot.waitUntil(lambda: limbic.graph_view.arrays is not None and len(limbic.graph_view.arrays) > 20,
                    timeout=60_000)
    qtbot.waitUntil(lambda: limbic.controller.service.search.pending_vectors() == 0, timeout=120_000)
    limbic.window.resize(*size)
    limbic.window.default_layout()
    qtbot.wait(200)
    return limbic


def search(qtbot, limbic: LimbicApp, query: str) -> list[str]:
    with qtbot.waitSignal(limbic.controller.search_finished, timeout=30_000) as done:
        limbic.controller.search(query, 10)
    hits = [r.name for r in done.args[0].results]
    qtbot.waitUntil(lambda: set(limbic.graph_view.highlighted_names()) >= set(hits[:3]), timeout=10_000)
    placed(qtbot, limbic.graph_view.canvas)
    return hits


def zoom_fit_and_write(qtbot, limbic: LimbicApp, hits: list[str]) -> None:
    """Labels hold through a zoom, a fit and five agents' writes: checked at once and once placed again."""
    canvas = limbic.graph_view.canvas
    canvas.view.scaleBy((0.7, 0.7))  # the user zooms in; until they are placed again, labels move with their nodes
    assert not label_faults(canvas, overlaps=False), label_faults(canvas, overlaps=False)
    placed(qtbot, canvas)
    assert not label_faults(canvas), label_faults(canvas)
    limbic.graph_view.zoom_to_fit()
    assert not label_faults(canvas, overlaps=False), label_faults(canvas, overlaps=False)
    placed(qtbot, canvas)
    assert not label_faults(canvas), label_faults(canvas)
    agent = MemoryService(open_database(limbic.db_path), HashingEmbedder(), origin="mcp:alice")  # as an MCP server
    names = [f"Agent note {k} on {hits[k % 3]}" for k in range(5)]
    try:
        for k, name in enumerate(names):
            agent.entities.create_entities([EntityInput(name, "note", (ObservationInput("written by alice"),))],
                                  origin="mcp:alice")
            agent.relations.create_relations([RelationInput(name, hits[k % 3], "about")], origin="mcp:alice")
    finally:
        agent.close()
    faults: list[str] = []
    limbic.graph_view.drawn.connect(lambda: faults.extend(label_faults(canvas, overlaps=False)))  # at each redraw
    qtbot.waitUntil(lambda: set(names) <= set(limbic.graph_view.shown_names()), timeout=15_000)
    placed(qtbot, canvas)
    assert not faults, faults
    assert not label_faults(canvas), label_faults(canvas)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_sample_labels_stay_on_their_nodes(qtbot, tmp_path, size):
    limbic = open_app(qtbot, tmp_path / "memory.db", OnnxEmbedder(real_model_dir()), size, seed=True)
    try:
        hits = search(qtbot, limbic, "why did we stop using Airflow")
        canvas = limbic.graph_view.canvas
        assert "Harbor Ingest Service" in hits and "Harbor Ingest Service" in canvas.ringed
        labelled = {entity for entity, *_ in canvas.label_geometry()}
        assert "Harbor Ingest Service" in labelled  # the biggest ringed node carries its own name
        assert len(labelled & set(canvas.ringed)) >= 7  # most hits are named
        assert not label_faults(canvas), label_faults(canvas)
        zoom_fit_and_write(qtbot, limbic, hits)
    finally:
        limbic.window.close()
        limbic.shutdown()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_corpus_file_labels_stay_on_their_nodes(qtbot, tmp_path, corpus_dir, size):
    database = tmp_path / "memory.db"
    service = MemoryService(open_database(database), HashingEmbedder(), origin="cli")
    import_file(service, corpus_dir / CORPUS_FILE)
    service.close()
    limbic = open_app(qtbot, database, HashingEmbedder(), size, seed=False)
    try:
        canvas = limbic.graph_view.canvas
        placed(qtbot, canvas)
        assert canvas.label_geometry() and not label_faults(canvas), label_faults(canvas)
        limbic.graph_view.set_mode("global")
        qtbot.waitUntil(lambda: len(canvas.names) == len(limbic.graph_view.arrays), timeout=20_000)
        placed(qtbot, canvas)
        assert not label_faults(canvas), label_faults(canvas)
        limbic.graph_view.set_mode("focus")
        hits = search(qtbot, limbic, "exercise muscle groups")
        assert not label_faults(canvas), label_faults(canvas)
        zoom_fit_and_write(qtbot, limbic, hits)
    finally:
        limbic.window.close()
        limbic.shutdown()
