"""Slider-move shortcuts of the GUI: what does not change is not redrawn, and the fast paths agree
with a plain reference (rings for many hits, table rows repainted only where a shown value changed)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from _widgets_helpers import SMALL_GRAPH, build_small_graph

from limbic.gui.graph.canvas import RING_GAP, GraphCanvas
from limbic.gui.graph.view import GraphView

pytestmark = pytest.mark.gui


def test_only_decay_parameters_restyle_the_nodes(qtbot, controller, service, monkeypatch):
    build_small_graph(service)
    view = GraphView(controller)
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    qtbot.waitUntil(lambda: len(view.shown_names()) == len(SMALL_GRAPH), timeout=5000)
    calls = []
    restyle = view.canvas.restyle
    monkeypatch.setattr(view.canvas, "restyle", lambda *args: calls.append(args) or restyle(*args))
    controller.set_params(controller.params.replace(beta_sal=1.5, gamma=0.3, rrf_k=90))
    assert calls == []  # salience, co-occurrence, fusion: no opacity changes
    controller.set_params(controller.params.replace(lambda_hourly=5e-3))
    controller.set_params(controller.params.replace(temporal_floor=0.4))
    assert len(calls) == 2
    view.shutdown()


def test_rings_for_many_hits_match_a_reference(qtbot):
    canvas = GraphCanvas()
    qtbot.addWidget(canvas)
    rng = np.random.default_rng(7)
    n = 1000
    names = [f"entity {i}" for i in range(n)]
    pos, sizes = rng.normal(size=(n, 2)), rng.integers(7, 25, n).astype(np.float64)
    zeros = np.zeros(n, dtype=np.int64)
    canvas.draw(names, pos, np.zeros((0, 2), dtype=np.int64), sizes, zeros, zeros, np.zeros(n))
    hits = [f"entity {i}" for i in rng.choice(1300, 700, replace=False)]  # some are not drawn
    hits += hits[:3]  # repeats are ringed once
    selection = ["entity 5", "not drawn"]
    assert canvas.set_rings(hits, selection)

    drawn = set(names)
    expected_hits = list(dict.fromkeys(h for h in hits if h in drawn))
    assert canvas.ringed == [*expected_hits, "entity 5"]
    rows = [names.index(h) for h in expected_hits]
    x, y = canvas._rings["hit"].getData()
    assert np.allclose(np.column_stack([x, y]), pos[rows])
    assert np.allclose(canvas._rings["hit"].data["size"], sizes[rows] + RING_GAP)
    x, y = canvas._rings["selection"].getData()
    assert np.allclose(np.column_stack([x, y]), pos[[5]])

    assert not canvas.set_rings(list(reversed(hits)), selection)  # the same sets: nothing redrawn
    assert canvas.set_rings(hits[:10], selection)
    assert len(canvas._rings["hit"].getData()[0]) == len([h for h in hits[:10] if h in drawn])
