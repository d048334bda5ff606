"""Stable layout: on the real corpus, the nodes that stay drawn keep exactly their positions across a slider
move, a selection, an expansion and an agent write; new nodes land next to their neighbours; only
*Re-layout* (and a new focus that shares little with the drawn one) moves placed nodes, animated."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from _explorer_helpers import graph_view_on_copy

from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.gui.graph.positions import NEAR_SHARE, PositionStore, arrange, relax_new
from limbic.gui.graph.view import GraphView

pytestmark = pytest.mark.gui
QUERY = "memory graph architecture"


@pytest.fixture
def view(qtbot, tmp_path, corpus_db):
    yield from graph_view_on_copy(qtbot, tmp_path / "memory.db", corpus_db)


def settle(qtbot, view: GraphView, change) -> dict[str, tuple[float, float]]:
    """Run ``change`` and wait for the redraw (and a glide, if any, to end); returns the layout positions."""
    with qtbot.waitSignal(view.drawn, timeout=10_000):
        change()
    qtbot.waitUntil(lambda: not view.canvas.animating, timeout=3000)
    return view.layout_positions()


def assert_kept(before: dict, after: dict, least: int) -> None:
    shared = before.keys() & after.keys()
    assert len(shared) >= least
    assert all(before[name] == after[name] for name in shared)  # identical, not just close


def test_positions_stay_through_a_slider_move_a_selection_an_expansion_and_an_agent_write(qtbot, view):
    controller = view.controller
    first = settle(qtbot, view, lambda: controller.search(QUERY, 10))
    hits = [r.name for r in controller.results]
    # a slider move that swaps some of the top 10, not all of them
    candidates = controller.last_outcome.candidate_set
    params = next(p for p in (controller.params.replace(bm25_weight=w) for w in (0.8, 0.2, 1.0, 0.0))
                  if 0 < len({r.name for r in controller.service.search.rerank(candidates, p)} - set(hits)) < 5)
    moved = settle(qtbot, view, lambda: controller.set_params(params))
    assert {r.name for r in controller.results} != set(hits)
    assert_kept(first, moved, least=len(first) // 2)
    selected = settle(qtbot, view, lambda: controller.select([controller.results[0].name]))
    assert_kept(moved, selected, least=len(moved) // 2)
    hub = max(view.shown_names(), key=lambda n: view.arrays.degree[view.arrays.index_of()[n]])
    expanded = settle(qtbot, view, lambda: view.expand(hub))
    assert_kept(selected, expanded, least=len(selected) // 2)
    anchor = controller.results[0].name

    def agent_write() -> None:
        controller.service.entities.create_entities([EntityInput("Agent finding", "note", (ObservationInput("found by an agent"),))])
        controller.service.relations.create_relations([RelationInput("Agent finding", anchor, "about")])

    with qtbot.waitSignal(view.drawn, timeout=10_000):
        agent_write()
    qtbot.waitUntil(lambda: "Agent finding" in view.shown_names(), timeout=5000)
    written = view.layout_positions()
    assert_kept(expanded, written, least=len(expanded) - 1)
    new, near = np.array(written["Agent finding"]), np.array(written[anchor])
    spread = np.ptp(np.array(list(written.values())), axis=0).max()
    assert np.linalg.norm(new - near) < 0.25 * spread  # placed next to its neighbour


def test_only_relayout_moves_placed_nodes_and_they_glide(qtbot, view):
    controller = view.controller
    before = settle(qtbot, view, lambda: controller.search(QUERY, 10))
    with qtbot.waitSignal(view.drawn, timeout=10_000):
        view.relayout()
    assert view.canvas.animating  # the nodes glide to their new places
    qtbot.waitUntil(lambda: not view.canvas.animating, timeout=3000)
    after = view.layout_positions()
    assert after.keys() == before.keys() and any(after[n] != before[n] for n in before)
    view.set_mode("global")
    qtbot.waitUntil(lambda: len(view.shown_names()) == len(view.arrays), timeout=20_000)
    mapped = view.layout_positions()
    settle(qtbot, view, view.relayout)
    assert view.layout_positions().keys() == mapped.keys()


def test_the_position_store_and_its_placement():
    store = PositionStore()
    store.update(np.array([5, 1, 9]), np.array([[5.0, 0.0], [1.0, 0.0], [9.0, 0.0]]))
    store.update(np.array([1, 7]), np.array([[1.5, 1.0], [7.0, 0.0]]))
    pos, known = store.lookup(np.array([7, 1, 3]))
    assert known.tolist() == [True, True, False] and pos[:2].tolist() == [[7.0, 0.0], [1.5, 1.0]]
    ids = np.arange(10, dtype=np.int64)
    edges = np.array([[i, i + 1] for i in range(9)] + [[9, 10]])
    placed = arrange(ids, np.stack([np.arange(10.0), np.zeros(10)], axis=1), ids, np.arange(11), edges)
    assert not placed.fresh and np.array_equal(placed.pos[:10], np.stack([np.arange(10.0), np.zeros(10)], axis=1))
    assert np.linalg.norm(placed.pos[10] - [9.0, 0.0]) < 2.5  # the new node sits by its neighbour
    grown = arrange(ids[:2], np.zeros((2, 2)), ids[:2], np.arange(10), edges[:9])
    assert not grown.fresh and np.array_equal(grown.pos[:2], np.zeros((2, 2)))  # growing keeps what is drawn
    far = arrange(ids[:2], np.zeros((2, 2)), ids[:2], np.arange(10), edges[:9], how="focus")
    assert 2 / 10 < NEAR_SHARE and far.fresh  # a new focus sharing little with the drawn one is laid out afresh
    assert arrange(ids, np.zeros((10, 2)), np.array([99]), np.arange(10), edges[:9]).fresh  # nothing stays
    crowded = np.zeros((4, 2))
    relaxed = relax_new(crowded, np.array([False, False, True, True]), np.zeros((0, 2)))
    assert np.array_equal(relaxed[:2], crowded[:2]) and np.linalg.norm(relaxed[2] - relaxed[3]) > 0.1
