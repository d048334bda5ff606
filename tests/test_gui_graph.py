"""Graph view and graph arrays: a real database drawn, click selects, double-click expands, filters,
global map, search hits, live updates; the arrays, salience and temporal factor against their formulas."""

from __future__ import annotations

import json
import math
import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from _widgets_helpers import SMALL_GRAPH, SMALL_RELATIONS, build_small_graph
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from limbic.core.models import EntityInput, RelationInput
from limbic.core.search.params import ScoringParams
from limbic.core.service.graph_arrays import neighbours, salience, subgraph_edges, temporal_factor
from limbic.gui.graph import focus
from limbic.gui.graph import style as graph_style
from limbic.gui.graph.layout import LayoutEngine, ego_layout, extend_layout, global_layout
from limbic.gui.graph.view import GraphView

pytestmark = pytest.mark.gui
ALL_NAMES = {name for name, _, _ in SMALL_GRAPH}


def double_click(qtbot, widget, where: QPointF) -> None:
    """What a mouse sends on a double click: press, release, double-click, release."""
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=where.toPoint())
    event = QMouseEvent(QEvent.Type.MouseButtonDblClick, where, widget.mapToGlobal(where),
                        Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)
    qtbot.mouseRelease(widget, Qt.MouseButton.LeftButton, pos=where.toPoint())


@pytest.fixture
def view(qtbot, controller, service):
    build_small_graph(service)
    widget = GraphView(controller)
    widget.resize(900, 650)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitUntil(lambda: set(widget.shown_names()) == ALL_NAMES, timeout=5000)
    yield widget
    widget.shutdown()


def test_arrays_match_the_database(service):
    build_small_graph(service)
    arrays = service.entities.graph_arrays()
    assert set(arrays.names) == ALL_NAMES
    index = arrays.index_of()
    pairs = {(arrays.names[a], arrays.names[b]) for a, b in arrays.edges.tolist()}
    assert pairs == {(a, b) for a, b, _ in SMALL_RELATIONS}
    assert arrays.degree[index["Harbor"]] == 5 and arrays.degree[index["Lonely"]] == 0
    assert arrays.statuses[index["Legacy ETL"]] == "archived"
    assert arrays.type_names[0] in ("Person", "Project", "Tool")  # the most frequent types come first
    assert arrays.access_count[index["Harbor"]] == 5 and arrays.access_count[index["Bob"]] == 0
    assert math.isnan(arrays.last_access[index["Bob"]])
    sal = salience(arrays)
    assert sal[index["Harbor"]] == pytest.approx(1.0)
    assert sal[index["Python"]] == pytest.approx(math.log(2) / math.log(6))
    assert sal[index["Bob"]] == 0.0


def test_temporal_factor_follows_the_seed_formula(service):
    build_small_graph(service)
    arrays = service.entities.graph_arrays()
    index = arrays.index_of()
    params = ScoringParams().replace(lambda_hourly=1e-3, temporal_floor=0.2)
    now = time.time()
    factor = temporal_factor(arrays, params, now=now)
    hours_python = (now - arrays.last_access[index["Python"]]) / 3600
    assert factor[index["Python"]] == pytest.approx(math.exp(-1e-3 * hours_python))
    hours_bob = (now - arrays.created_at[index["Bob"]]) / 3600  # never accessed: age since creation
    assert factor[index["Bob"]] == pytest.approx(max(0.2, math.exp(-1e-3 * hours_bob)))
    assert factor[index["Bob"]] == pytest.approx(0.49, abs=0.01)  # 30 days at λ = 1e-3
    levels = graph_style.alpha_levels(factor, params.temporal_floor)
    assert levels[index["Harbor"]] == graph_style.ALPHA_LEVELS - 1 and levels[index["Bob"]] < levels[index["Python"]]


def test_the_nodes_fade_with_every_parameter_of_the_temporal_factor(view, controller):
    """The view's cache of temporal factors is keyed on what the factor reads (``terms.temporal_key``): the decay
    model with every parameter of every registered model, and the never-used share."""
    arrays = controller.service.entities.graph_arrays()
    base = controller.params.replace(decay_model="two_component", lambda_hourly=1e-3)
    for params in (base, base.replace(decay_fast_share=0.9), base.replace(decay_fast_hours=2.0),
                   base.replace(created_decay=0.5), base.replace(decay_model="power_law", decay_alpha=4.0)):
        controller.set_params(params)
        assert view._temporal == pytest.approx(temporal_factor(arrays, params), rel=1e-6)


def test_neighbourhoods_and_subgraphs(service):
    build_small_graph(service)
    arrays = service.entities.graph_arrays()
    index = arrays.index_of()
    near = {arrays.names[i] for i in neighbours(arrays, np.array([index["Python"]]))}
    assert near == {"Python", "Harbor"}
    two = {arrays.names[i] for i in neighbours(arrays, np.array([index["Python"]]), depth=2)}
    assert two == ALL_NAMES - {"Lonely"}
    rows = np.array(sorted([index["Harbor"], index["Python"], index["Lonely"]]))
    sub = subgraph_edges(arrays, rows)
    assert {(arrays.names[rows[a]], arrays.names[rows[b]]) for a, b in sub.tolist()} == {("Harbor", "Python")}


def test_layouts_shapes_and_stability():
    rng = np.random.default_rng(3)
    edges = rng.integers(0, 400, size=(900, 2))
    pos = global_layout(400, edges)
    assert pos.shape == (400, 2) and np.isfinite(pos).all()
    lengths = np.linalg.norm(pos[edges[:, 0]] - pos[edges[:, 1]], axis=1)
    assert np.median(lengths[lengths > 0]) == pytest.approx(1.0)
    small = ego_layout(12, edges[(edges < 12).all(axis=1)])
    assert small.shape == (12, 2) and np.isfinite(small).all()
    ids = np.arange(400, dtype=np.int64) * 2
    grown_ids = np.concatenate([ids, [10_001]])
    grown = extend_layout(ids, pos, grown_ids, np.array([[400, 0]]))
    assert np.array_equal(grown[:400], pos)  # known nodes keep their place
    assert np.linalg.norm(grown[400] - pos[0]) < 3.0  # the new node lands next to its neighbour


def _boxes(pixels, widths, chosen, height=18.0):
    return [(pixels[i, 0] + dx, pixels[i, 1] + dy, pixels[i, 0] + dx + widths[i], pixels[i, 1] + dy + height)
            for i, (dx, dy) in chosen]


def test_label_placement_avoids_overlaps():
    pixels = np.array([[100.0, 100.0], [105.0, 102.0], [400.0, 100.0]])
    widths = np.full(3, 80.0)
    chosen = graph_style.place_labels(pixels, widths, [1, 0, 2])
    assert [i for i, _ in chosen] == [1, 0, 2]  # node 0's label goes above, where node 1's (below) is not
    assert chosen[0][1][1] > 0 and chosen[1][1][1] < 0
    boxes = _boxes(pixels, widths, chosen)
    assert not any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
                   for k, a in enumerate(boxes) for b in boxes[k + 1:])  # no two labels overlap
    crowd = np.array([[100.0, 100.0]] * 6)  # six nodes at one spot: one label below it, one above
    assert len(graph_style.place_labels(crowd, np.full(6, 80.0), list(range(6)))) == 2
    marked = graph_style.place_labels(crowd, np.full(6, 80.0), list(range(6)), first=6)
    assert len(marked) == 6  # the selection and hits also try further out: all labelled, none overlapping
    boxes = _boxes(crowd, np.full(6, 80.0), marked)
    assert not any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
                   for k, a in enumerate(boxes) for b in boxes[k + 1:])
    disc = (360.0, 80.0, 440.0, 140.0)  # a big node covering every spot round node 2
    assert graph_style.place_labels(pixels, widths, [2, 0], obstacles=[disc]) == [(0, (-40.0, 7.0))]
    assert [i for i, _ in graph_style.place_labels(pixels, widths, [2, 0], obstacles=[disc], first=1)] == [2, 0]
    edge = graph_style.place_labels(np.array([[10.0, 50.0]]), np.array([80.0]), [0], bounds=(0, 0, 500, 500))
    assert edge[0][1][0] >= -10.0  # not below it (that would reach out of the canvas): to its right


def test_labels_go_next_to_their_node_or_get_a_leader_line():
    from limbic.gui.graph.labels import LABEL_REACH, leader

    for dx, dy in graph_style.label_spots(80.0, 18.0, 6.0):  # every near spot touches the node's reach
        x, y = min(max(0.0, dx), dx + 80.0), min(max(0.0, dy), dy + 18.0)
        assert math.hypot(x, y) == pytest.approx(6.0 + graph_style.NEAR_GAP)
        assert leader(dx, dy, 80.0, 18.0, 6.0) is None
    line = leader(-40.0, 6.0 + LABEL_REACH + 10.0, 80.0, 18.0, 6.0)  # below, 10 px beyond reach
    assert line is not None and (line.x1(), line.y1()) == (0.0, 6.0) and (line.x2(), line.y2()) == (0.0, 22.0)
    ring = np.array([[100.0 + 14 * math.cos(a), 100.0 + 14 * math.sin(a)] for a in np.radians(np.arange(0, 360, 45))])
    pixels = np.vstack([[[100.0, 100.0]], ring])  # a hub ringed by eight small nodes: no room beside it
    discs = graph_style.DiscIndex(pixels, np.r_[6.0, np.full(8, 4.0)])
    assert graph_style.place_labels(pixels, np.full(9, 80.0), [0], offset=6.0, discs=discs) == []
    (_, (dx, dy)), = graph_style.place_labels(pixels, np.full(9, 80.0), [0], offset=6.0, discs=discs, first=1)
    box = np.array([[100 + dx, 100 + dy, 180 + dx, 118 + dy]])
    assert discs.free(box)[0] and leader(dx, dy, 80.0, 18.0, 6.0) is not None  # a hit: further out, with a leader
    nearest = np.array([[np.clip(100.0, box[0, 0], box[0, 2]), np.clip(100.0, box[0, 1], box[0, 3])]])
    direction = (nearest - 100.0) / np.linalg.norm(nearest - 100.0)
    assert discs.clear(100.0 + direction * 6.5, nearest)[0]  # its leader crosses none of the small nodes


def test_view_draws_the_database(qtbot, view):
    arrays = view.arrays
    assert len(arrays) == len(SMALL_GRAPH)
    assert "7 of 7 entities · 6 relations" in view.info.full_text()
    qtbot.waitUntil(lambda: "Harbor" in view.shown_labels(), timeout=3000)  # labels follow the drawing
    assert set(view.shown_labels()) <= ALL_NAMES
    assert view.colouring == "type" and view.legend.title == "Colour = entity type"  # four types: colour by type
    legend_texts = [text for _, text in view.legend.entries]  # one entry per type drawn
    assert any(t.startswith("Person (2)") for t in legend_texts)


def test_click_selects_and_ctrl_click_adds(qtbot, view, controller):
    viewport = view.canvas.viewport()
    where = view.node_position("Redis")
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=where.toPoint())
    qtbot.waitUntil(lambda: controller.selection == ["Redis"], timeout=3000)
    # the focus view now shows Redis and its neighbours; Ctrl+click adds another entity
    qtbot.waitUntil(lambda: set(view.shown_names()) == {"Redis", "Harbor"}, timeout=3000)
    where = view.node_position("Harbor")
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, where.toPoint())
    qtbot.waitUntil(lambda: controller.selection == ["Redis", "Harbor"], timeout=3000)
    qtbot.waitUntil(lambda: set(view.highlighted_names()) == {"Redis", "Harbor"}, timeout=3000)


def test_double_click_expands_neighbours(qtbot, view, controller):
    controller.select(["Python"])
    qtbot.waitUntil(lambda: set(view.shown_names()) == {"Python", "Harbor"}, timeout=3000)
    double_click(qtbot, view.canvas.viewport(), view.node_position("Harbor"))
    qtbot.waitUntil(lambda: set(view.shown_names()) == ALL_NAMES - {"Lonely"}, timeout=3000)
    assert controller.selection == ["Harbor"]  # the first click of the two selected it
    view.clear_expanded()
    controller.select(["Python"])
    qtbot.waitUntil(lambda: set(view.shown_names()) == {"Python", "Harbor"}, timeout=3000)


def test_filters_by_type_and_status(qtbot, view, controller):
    view.set_type_visible("Tool", False)
    qtbot.waitUntil(lambda: set(view.shown_names()) == ALL_NAMES - {"Python", "Redis"}, timeout=3000)
    view.set_status_visible("archived", False)
    qtbot.waitUntil(lambda: set(view.shown_names()) == ALL_NAMES - {"Python", "Redis", "Legacy ETL"}, timeout=3000)
    view.set_type_visible("Tool", True)
    view.set_status_visible("archived", True)
    qtbot.waitUntil(lambda: set(view.shown_names()) == ALL_NAMES, timeout=3000)
    # the menus drive the same filters
    tool_action = next(a for a in view.type_button.menu().actions() if a.text() == "Tool")
    tool_action.setChecked(False)
    qtbot.waitUntil(lambda: "Redis" not in view.shown_names(), timeout=3000)


def test_global_map_and_search_hits(qtbot, view, controller):
    controller.select(["Python"])
    qtbot.waitUntil(lambda: set(view.shown_names()) == {"Python", "Harbor"}, timeout=3000)
    with qtbot.waitSignal(view.global_ready, timeout=5000):
        view.set_mode("global")
    qtbot.waitUntil(lambda: set(view.shown_names()) == ALL_NAMES, timeout=3000)
    controller.search("buoy data")
    qtbot.waitUntil(lambda: "Harbor" in view.highlighted_names(), timeout=5000)
    view.view.setRange(xRange=(1000, 1010), yRange=(1000, 1010), padding=0)  # look far away
    assert not view.canvas.rect().contains(view.node_position("Lonely").toPoint())
    controller.select(["Lonely"])  # the global map pans to the selection
    qtbot.waitUntil(lambda: view.canvas.rect().contains(view.node_position("Lonely").toPoint()), timeout=3000)


def test_global_map_through_the_worker_process(qtbot, view):
    view.layout_engine.in_process_limit = 3  # as a 10k graph would: the layout runs in the worker process
    with qtbot.waitSignal(view.global_ready, timeout=60_000):
        view.set_mode("global")
    qtbot.waitUntil(lambda: set(view.shown_names()) == ALL_NAMES, timeout=3000)


def test_live_update_keeps_known_positions(qtbot, view, service, controller):
    view.set_mode("global")
    qtbot.waitUntil(lambda: view.mode == "global" and set(view.shown_names()) == ALL_NAMES, timeout=5000)
    before = view.node_position("Harbor")
    service.entities.create_entities([EntityInput("Kafka", "Tool")])
    service.relations.create_relations([RelationInput("Harbor", "Kafka", "uses")])
    qtbot.waitUntil(lambda: "Kafka" in view.shown_names(), timeout=3000)
    view.zoom_to_fit()
    arrays = view.arrays
    harbor = arrays.index_of()["Harbor"]
    assert arrays.degree[harbor] == 6
    assert before is not None and view.node_position("Kafka") is not None


def test_layout_engine_worker_process_gives_the_same_layout():
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [3, 4]])
    engine = LayoutEngine(in_process_limit=1)  # force the worker process even for 5 nodes
    try:
        pos = engine.global_layout(5, edges)
    finally:
        engine.close()
    assert pos.shape == (5, 2) and np.isfinite(pos).all()
    lengths = np.linalg.norm(pos[edges[:, 0]] - pos[edges[:, 1]], axis=1)
    assert np.median(lengths) == pytest.approx(1.0)
    assert engine._executor is None  # closed: no process left


def test_the_apps_split_clustering_runs_in_the_worker_process(qtbot, tmp_path, monkeypatch):
    """The app hands the service's CPU-heavy pure steps (a split's clustering, scikit-learn) to the layout's worker
    process: the same proposal as in-process, computed in another process, and nothing runs once it stopped."""
    from limbic.core.curation import splitting
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.models import ObservationInput
    from limbic.gui.app import LimbicApp

    monkeypatch.setenv("LIMBIC_HOME", str(tmp_path / "home"))
    app = LimbicApp(tmp_path / "memory.db", embedder=HashingEmbedder(), mcp=False)
    with qtbot.waitSignal(app.ready, timeout=20_000):
        app.start()
    try:
        service, engine = app.controller.service, app.graph_view.layout_engine
        assert service.offload == engine.run
        assert engine.run(os.getpid) != os.getpid()  # a real process of its own
        texts = [f"deploys the {w} service to production on fridays" for w in ("billing", "search", "auth")] + \
                [f"the {w} team prefers tea over coffee in meetings" for w in ("design", "sales", "legal")]
        service.entities.create_entities([EntityInput("Mixed", "Note", tuple(ObservationInput(t) for t in texts))])
        remote = service.splits.propose_entity_split("Mixed", "tfidf").to_dict()
        service.offload = lambda fn, *args: fn(*args)
        assert service.splits.propose_entity_split("Mixed", "tfidf").to_dict() == remote
        labels, terms, quality, used = engine.run(splitting.topics, texts[1:], None, "tfidf", "Mixed")
        assert np.array_equal(labels, splitting.topics(texts[1:], None, "tfidf", "Mixed")[0]) and used == "tfidf"
    finally:
        app.shutdown()
        app.window.close()
    with pytest.raises(RuntimeError):
        engine.run(os.getpid)  # stopped with the app: no new worker


def test_the_count_sits_on_the_canvas_and_is_elided_only_when_it_does_not_fit(qtbot, view):
    full = view.info.full_text()
    assert full.startswith("7 of 7 entities")
    view.resize(900, 500)
    qtbot.waitUntil(lambda: view.info.text() == full, timeout=3000)
    corner = view.info.geometry()
    assert corner.left() < 20 and view.canvas.height() - corner.bottom() < 20  # bottom-left of the canvas
    long = "entities shown " * 100
    view.info.set_full_text(long)
    assert "…" in view.info.text() and view.info.toolTip() == long
    assert view.info.geometry().right() <= view.canvas.width()


def test_global_maps_are_the_same_on_every_launch_and_kept_per_database(tmp_path):
    from limbic.gui.graph.global_map import save_layout, saved_layout
    from limbic.gui.graph.layout import REGION_LAYOUT, TAIL_COMPONENT

    rng = np.random.default_rng(11)
    groups, size = 6, 400  # six planted communities, sparse links between them, and a tail of lone nodes
    inner = [(g * size + rng.integers(0, size, 3000), g * size + rng.integers(0, size, 3000)) for g in range(groups)]
    edges = np.concatenate([np.stack(pair, axis=1) for pair in inner] + [rng.integers(0, groups * size, (60, 2))])
    edges = edges[edges[:, 0] != edges[:, 1]]
    n = groups * size + 150
    assert n > REGION_LAYOUT
    first = global_layout(n, edges)
    engine = LayoutEngine(in_process_limit=1)  # a fresh process, as at the next launch
    try:
        again = engine.global_layout(n, edges)
    finally:
        engine.close()
    assert np.array_equal(first, again)
    lone = first[groups * size:]
    assert (lone[:, 1] < first[: groups * size, 1].min()).all()  # the long tail packed below the map
    assert len(np.unique(lone.round(6), axis=0)) == len(lone) and TAIL_COMPONENT > 1
    import random

    import igraph

    small = edges[(edges < 300).all(axis=1)]
    focus_map = ego_layout(300, small)
    igraph.set_random_number_generator(random.Random(99))  # whatever ran before: the focus map is the same
    assert np.array_equal(ego_layout(300, small), focus_map)
    address = str(tmp_path / "memory.db")
    ids = np.arange(n, dtype=np.int64) * 3
    save_layout(address, ids, first)
    kept = saved_layout(address)
    assert kept is not None and np.array_equal(kept[0], ids) and np.array_equal(kept[1], first)
    assert saved_layout(str(tmp_path / "other.db")) is None


def test_a_region_wraps_its_points_counter_clockwise():
    from limbic.gui.graph.overlays import hull

    square = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0], [1.0, 1.0], [0.0, 0.0]])
    outline = hull(square)
    x, y = outline[:, 0], outline[:, 1]
    assert sorted(map(tuple, outline)) == [(0.0, 0.0), (0.0, 2.0), (2.0, 0.0), (2.0, 2.0)]
    assert 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) == 4.0  # counter-clockwise: positive area
    assert hull(np.array([[0.0, 0.0], [1.0, 1.0], [3.0, 3.0]])).tolist() == [[0.0, 0.0], [3.0, 3.0]]
    assert len(hull(np.array([[1.0, 1.0], [1.0, 1.0]]))) == 1


def test_a_large_maps_edges_keep_to_a_budget_of_length_the_heaviest_first():
    from limbic.gui.graph.overlays import INK_BUDGET, LONG_EDGE, visible_edges

    rng = np.random.default_rng(7)
    pos = rng.random((4_000, 2)) * 100.0
    edges = rng.integers(0, 4_000, (20_000, 2))
    priority = rng.random(4_000)
    rect = (0.0, 0.0, 100.0, 100.0)
    diagonal = float(np.hypot(100.0, 100.0))
    rows, share = visible_edges(pos, edges, rect, priority)
    length = np.hypot(*(pos[edges[rows, 0]] - pos[edges[rows, 1]]).T)
    assert 0 < len(rows) and length.sum() <= INK_BUDGET * diagonal and length.max() <= LONG_EDGE * diagonal
    assert 0.35 <= share < 1.0
    weight = priority[edges[:, 0]] + priority[edges[:, 1]]
    candidates = np.flatnonzero(np.hypot(*(pos[edges[:, 0]] - pos[edges[:, 1]]).T) <= LONG_EDGE * diagonal)
    left_out = np.setdiff1d(candidates, rows)
    assert weight[rows].min() >= weight[left_out].max()  # the heaviest ends first
    few = edges[:50]  # well within both budgets: every short edge is drawn
    rows, share = visible_edges(pos, few, rect, priority)
    assert rows.tolist() == [i for i in range(50) if np.hypot(*(pos[few[i, 0]] - pos[few[i, 1]])) <= LONG_EDGE * diagonal]
    assert share == 1.0


def _memory_file(path, prefix: str, count: int):
    """An agent's memory file (the MCP memory server's JSONL) of ``count`` entities in a chain of components
    that never were used: none outweighs a sample entity. Returns the path and the entities' names."""
    names = [f"{prefix}Component{i:02d}.tsx" for i in range(count)]
    lines = [json.dumps({"type": "entity", "name": n, "entityType": "react_component",
                         "observations": [f"renders step {i} of the {prefix} workout flow"]}) for i, n in enumerate(names)]
    lines += [json.dumps({"type": "relation", "from": a, "to": b, "relationType": "renders"})
              for a, b in zip(names, names[1:], strict=False)]
    path.write_text("\n".join(lines) + "\n")
    return path, names


@pytest.fixture
def sample_service(tmp_path):
    """The sample memory in a new SQLite file (hashing embedder)."""
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.io.sample import seed_sample_graph
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    svc = MemoryService(open_database(tmp_path / "memory.db"), HashingEmbedder(), origin="cli")
    seed_sample_graph(svc)
    yield svc
    svc.close()


def test_the_focus_view_draws_a_file_imported_beside_the_sample_whole(qtbot, tmp_path, sample_service):
    from _widgets_helpers import open_controller

    from limbic.core.io.importer import import_files

    first, first_names = _memory_file(tmp_path / "stratos.jsonl", "Stratos", 57)
    import_files(sample_service, [first])
    controllers = open_controller(sample_service)
    controller = next(controllers)
    widget = GraphView(controller)
    widget.resize(1000, 700)
    qtbot.addWidget(widget)
    widget.show()
    try:
        total = len(sample_service.entities.entity_names())
        qtbot.waitUntil(lambda: len(widget.shown_names()) == total, timeout=15000)  # 229 + 57: every one drawn
        assert set(first_names) <= set(widget.shown_names())
        assert widget.info.full_text().startswith(f"{total} of {total} entities")
        second, second_names = _memory_file(tmp_path / "other.jsonl", "Other", 57)  # past the focus view's 300
        import_files(sample_service, [second])
        widget.reload(full=True)
        left_out = total + 57 - focus.OVERVIEW_SIZE
        qtbot.waitUntil(lambda: f"{left_out} more on the global map" in widget.info.full_text(), timeout=15000)
        assert len(widget.shown_names()) == focus.OVERVIEW_SIZE
        controller.select([first_names[0]])  # something chosen: its neighbourhood, and no "more" to offer
        qtbot.waitUntil(lambda: set(widget.shown_names()) == set(first_names[:2]), timeout=5000)
        assert "more on the global map" not in widget.info.full_text()
    finally:
        widget.shutdown()
        next(controllers, None)


def test_the_hover_card_reads_an_entity_whose_name_two_projects_hold(qtbot, controller, service):
    from limbic.core.errors import ConflictError, NotFoundError
    from limbic.core.models import ObservationInput

    for project in ("a", "b"):
        service.entities.create_entities([EntityInput("Backend", "service", (ObservationInput(f"the {project} API"),),
                                                      project=project)])
    with pytest.raises(ConflictError):
        service.entities.get_entity("Backend")  # unbound, the name is ambiguous
    widget = GraphView(controller)
    widget.resize(900, 650)
    qtbot.addWidget(widget)
    widget.show()
    try:
        qtbot.waitUntil(lambda: widget.shown_names() == ["Backend", "Backend"], timeout=5000)
        projects = []
        for index in range(2):  # each card reads its own entity (by id): its project and observation
            widget.canvas.node_hovered.emit(index, widget.canvas.rect().center())
            qtbot.waitUntil(lambda: "project:" in widget.card.text(), timeout=5000)
            shown = widget.card.text()
            project = shown.split("project: ")[1][0]
            assert f"the {project} API" in shown, shown
            projects.append(project)
            widget.canvas.node_hovered.emit(-1, widget.canvas.rect().center())
        assert sorted(projects) == ["a", "b"]
        ids = [int(i) for i in widget.arrays.ids]
        with service.scoped("a"):  # bound to a project, another project's entity is not seen by id either
            seen = []
            for entity_id in ids:
                try:
                    seen.append(service.entities.get_entity_by_id(entity_id).entity.project)
                except NotFoundError:
                    seen.append(None)
        assert seen.count("a") == 1 and seen.count(None) == 1
    finally:
        widget.shutdown()
