"""Live writes on the real corpus: four entities written by agents land in place (apart, next to their
neighbours, nothing else moving, the view's zoom kept, every label on its node), community colours stay;
the hover card, double-click, the legend's entries, *Who wrote it* and *What fades next*."""

from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from _explorer_helpers import graph_view_on_copy
from PySide6.QtCore import QPointF

from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.gui.graph import style
from limbic.gui.graph.canvas import GraphCanvas
from limbic.gui.graph.view import GraphView

pytestmark = pytest.mark.gui
DAY = 86_400.0


@pytest.fixture
def view(qtbot, tmp_path, corpus_db):
    yield from graph_view_on_copy(qtbot, tmp_path / "memory.db", corpus_db)


def settled(qtbot, view: GraphView) -> None:
    qtbot.waitUntil(lambda: not view.canvas.animating, timeout=3000)
    qtbot.wait(150)  # the label timer


def pixels_apart(view: GraphView, a: str, b: str) -> float:
    pa, pb = view.node_position(a), view.node_position(b)
    return float(np.hypot(pa.x() - pb.x(), pa.y() - pb.y()))


def agent_writes(qtbot, view: GraphView, anchors: tuple[str, str]) -> list[str]:
    """Four agents' ``create_entities`` (two then linked to drawn entities, two left alone); returns the names."""
    service = view.controller.service
    written = [("Agent finding on " + anchors[0], "alice"), ("Agent finding on " + anchors[1], "bob"),
               ("Loose agent note one", "alice"), ("Loose agent note two", "bob")]
    for (name, token), anchor in zip(written, [*anchors, None, None], strict=True):
        service.entities.create_entities([EntityInput(name, "note", (ObservationInput(f"written by {token}"),))],
                                origin=f"mcp:{token}")
        if anchor is not None:
            service.relations.create_relations([RelationInput(name, anchor, "about")], origin=f"mcp:{token}")
        qtbot.wait(60)
    names = [n for n, _ in written]
    qtbot.waitUntil(lambda: set(names) <= set(view.shown_names()), timeout=10_000)
    settled(qtbot, view)
    return names


def test_agent_writes_land_in_place_and_the_view_stays(qtbot, view):
    view.set_colouring("community")
    qtbot.waitUntil(lambda: view.colouring == "community", timeout=10_000)
    settled(qtbot, view)
    before = view.layout_positions()
    colours = {n: view.colour_of(n) for n in before}
    scale = view.view.viewRange()
    arrays = view.arrays
    index = arrays.index_of()
    anchors = tuple(sorted(before, key=lambda n: -arrays.degree[index[n]])[:2])
    names = agent_writes(qtbot, view, anchors)
    after = view.layout_positions()
    assert all(after[n] == before[n] for n in before)  # unchanged nodes did not move (identical)
    assert view.view.viewRange() == scale  # the view kept its zoom and centre
    sizes = dict(zip(view.canvas.names, view.canvas._sizes.tolist(), strict=True))
    for name in names:  # never on another node: at least a node's diameter from every other node
        for other in after:
            if other != name:
                assert pixels_apart(view, name, other) >= max(sizes[name], sizes[other]) - 0.5, (name, other)
    edges = view.canvas._edge_rows
    pos = view.canvas.pos
    median_edge = float(np.median(np.linalg.norm(pos[edges[:, 0]] - pos[edges[:, 1]], axis=1)))
    for name, anchor in zip(names[:2], anchors, strict=True):  # next to its neighbour
        assert np.linalg.norm(np.subtract(after[name], after[anchor])) <= median_edge
    rect = view.view.viewRect()
    for name in names[2:]:  # an unconnected one: in free space near the centre of the view
        x, y = after[name]
        assert abs(x - rect.center().x()) < rect.width() / 3 and abs(y - rect.center().y()) < rect.height() / 3
    anchors_of_labels = view.canvas.label_anchors()
    assert anchors_of_labels and all(anchors_of_labels[n] == after[n] for n in anchors_of_labels)
    changed = [n for n in before if view.colour_of(n) != colours[n]]
    assert not changed, changed  # community colours kept across the writes


def test_labels_and_fit_follow_every_change(qtbot, view):
    settled(qtbot, view)
    view.view.setRange(xRange=(-3, 3), yRange=(-3, 3), padding=0)  # the user zooms in
    settled(qtbot, view)
    service = view.controller.service
    service.entities.create_entities([EntityInput("Far away note", "note")], origin="mcp:alice")
    qtbot.waitUntil(lambda: "Far away note" in view.shown_names(), timeout=10_000)
    settled(qtbot, view)
    positions = view.layout_positions()
    assert all(positions[n] == xy for n, xy in view.canvas.label_anchors().items())
    rect = view.view.viewRect()
    far = max((n for n in positions if not rect.contains(QPointF(*positions[n]))),
              key=lambda n: np.hypot(*positions[n]))
    service.entities.create_entities([EntityInput("Note on a far entity", "note")], origin="mcp:bob")
    service.relations.create_relations([RelationInput("Note on a far entity", far, "about")], origin="mcp:bob")
    qtbot.waitUntil(lambda: "Note on a far entity" in view.canvas.markers.shown, timeout=10_000)  # out of view
    assert view.view.viewRect() == rect  # the view did not jump to it
    view.canvas.markers.buttons[0].click()  # the marker takes you there
    assert view.view.viewRect().contains(QPointF(*view.layout_positions()["Note on a far entity"]))
    settled(qtbot, view)
    positions = view.layout_positions()
    view.zoom_to_fit()
    settled(qtbot, view)
    assert view.canvas.all_in_view()
    assert all(positions[n] == xy for n, xy in view.canvas.label_anchors().items())


def test_hover_card_double_click_and_legend(qtbot, view):
    settled(qtbot, view)
    index = view.arrays.index_of()  # the largest node with a neighbour: a double-click keeps its neighbours
    name = max((n for n in view.canvas.names if view.arrays.degree[index[n]] > 0),
               key=lambda n: view.canvas._sizes[view.canvas.names.index(n)])
    where = view.node_position(name)
    view.canvas._mouse_moved(view.canvas.mapToScene(where.toPoint()))
    assert view.card.isVisible() and view.card.name == name
    qtbot.waitUntil(lambda: "reading…" not in view.card.text(), timeout=5000)
    assert name in view.card.text() and "relation" in view.card.text()
    with qtbot.waitSignal(view.edit_requested, timeout=3000) as opened:
        view._on_node_clicked(view.canvas.names.index(name), True, False)
    assert opened.args == [name]
    view.canvas._mouse_moved(view.canvas.mapToScene(QPointF(2, 2).toPoint()))
    assert not view.card.isVisible()
    other = next(n for n in view.shown_names() if n != name)
    view.set_pinned(other)  # the entity pinned in "Why not this one?" is marked in the graph
    qtbot.waitUntil(lambda: other in view.highlighted_names(), timeout=5000)
    assert len(view.canvas._rings["pinned"].data) == 1
    view.set_pinned(None)
    qtbot.waitUntil(lambda: other not in view.highlighted_names(), timeout=5000)
    view.set_colouring("type")
    qtbot.waitUntil(lambda: view.colouring == "type", timeout=5000)
    everyone = view.emphasised_names()
    view.legend.list.itemClicked.emit(view.legend.list.item(0))  # a click on the first entry
    chosen = view.emphasised_names()
    assert 0 < len(chosen) < len(everyone)
    assert view.canvas._style[1][[view.canvas.names.index(n) for n in chosen]].min() == style.ALPHA_LEVELS - 1
    view.legend.list.itemClicked.emit(view.legend.list.item(0))  # again: everything shows
    assert view.emphasised_names() == everyone


def test_who_wrote_it_and_what_fades_next(qtbot, view):
    service = view.controller.service
    service.entities.create_entities([EntityInput("Written by alice", "note", (ObservationInput("alice was here"),))],
                            origin="mcp:alice")
    service.entities.create_entities([EntityInput("Written by bob", "note", (ObservationInput("bob was here"),))],
                            origin="mcp:bob")
    qtbot.waitUntil(lambda: {"Written by alice", "Written by bob"} <= set(view.shown_names()), timeout=10_000)
    view.set_colouring("origin")
    qtbot.waitUntil(lambda: view.colouring == "origin" and view.colour_of("Written by alice") is not None
                    and view.colour_of("Written by alice") != style.OTHER_COLOUR, timeout=10_000)
    assert view.colour_of("Written by alice") != view.colour_of("Written by bob")
    texts = [t for _, t in view.legend.entries]
    row = next(i for i, t in enumerate(texts) if t.startswith("alice (token)"))
    view.legend.choose(row)
    qtbot.waitUntil(lambda: any("Written by alice" in t for t in view.legend.detail_texts()), timeout=5000)
    assert view.emphasised_names() == ["Written by alice"] or "Written by alice" in view.emphasised_names()

    ten_days = time.time() + 10 * DAY
    service.entities.add_observations([("Written by bob", [ObservationInput("temporary access key", expires_at=ten_days)])])
    view.show_fading(30)
    qtbot.waitUntil(lambda: view.colouring == "fades" and any("temporary access key" in t
                                                              for t in view.legend.detail_texts()), timeout=10_000)
    assert "Written by bob" in view.shown_names()
    line = next(t for t in view.legend.detail_texts() if "temporary access key" in t)
    assert line.startswith(time.strftime("%Y-%m-%d", time.gmtime(ten_days)))
    view.show_fading(7)
    qtbot.waitUntil(lambda: view.lenses.days == 7 and view.lenses.fades is not None
                    and "within 7 days" in view.legend.detail_title.text(), timeout=10_000)
    assert not any("temporary access key" in t for t in view.legend.detail_texts())
    view.show_fading(None)
    qtbot.waitUntil(lambda: view.colouring == "origin", timeout=10_000)  # back to the colouring chosen before


def test_fit_to_hits_shows_every_hit(qtbot, view):
    settled(qtbot, view)
    with qtbot.waitSignal(view.drawn, timeout=10_000):
        view.controller.search("memory graph architecture", 10)
    settled(qtbot, view)
    view.view.setRange(xRange=(1000, 1001), yRange=(1000, 1001), padding=0)  # far from everything
    view.fit_to_hits()
    rect = view.view.viewRect()
    positions = view.layout_positions()
    hits = [positions[r.name] for r in view.controller.results if r.name in positions]
    assert hits and all(rect.contains(QPointF(x, y)) for x, y in hits)


def test_a_canvas_is_safe_to_use_before_its_first_draw(qtbot):
    canvas = GraphCanvas()
    qtbot.addWidget(canvas)
    canvas.show()
    assert canvas.set_rings(["not drawn"], [], ["pinned"], ["replayed"]) is True
    canvas.update_labels()
    canvas.zoom_to_fit()
    canvas.view.setRange(xRange=(0, 1), yRange=(0, 1))
    assert canvas.node_at(QPointF(5, 5)) == -1 and canvas.fit_to(["nothing"]) is False
