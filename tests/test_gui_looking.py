"""Looking is not using, and "Why not this one?", on the real window of the app.

- Selecting a result, reading its scoring in the inspector, opening it in the editor, clicking it in the
  graph and pinning another entity add no row to the usage history (accesses, access days,
  co-occurrences) nor to the feedback log; *Mark as useful* adds exactly one use and one label, for the
  shown search.
- A pinned entity outside the top K shows its rank among all candidates and its factors beside the K-th
  result's, and its rank follows a slider move as the results do.
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from _widgets_helpers import build_small_graph
from PySide6.QtCore import Qt

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.search.scoring import explain
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.app import LimbicApp
from limbic.gui.search.pin import compare

pytestmark = pytest.mark.gui


def usage_rows(service: MemoryService) -> dict[str, int]:
    """What the usage history and the feedback log hold, after pending signal writes."""
    service.usage.wait_for_signals()
    conn = service.database.read()
    one = lambda sql: int(conn.execute(sql).fetchone()[0])  # noqa: E731
    return {"accesses": one("SELECT coalesce(sum(access_count), 0) FROM entity_access"),
            "access days": one("SELECT count(*) FROM entity_access_days"),
            "co-occurrences": one("SELECT coalesce(sum(co_count), 0) FROM co_occurrences"),
            "feedback": one("SELECT count(*) FROM implicit_feedback")}


@pytest.fixture
def app(qtbot, tmp_path):
    path = tmp_path / "memory.db"
    service = MemoryService(open_database(path), HashingEmbedder(), origin="cli")
    build_small_graph(service)
    service.entities.create_entities([EntityInput(f"Harbor note {i}", "Note", (ObservationInput(f"Harbor buoy reading {i}"),))
                             for i in range(12)])
    for day in range(6):  # three notes were used often: β salience lifts them
        service.usage.record_access(["Harbor note 6", "Harbor note 7", "Harbor note 8"], at=time.time() - day * 86_400)
    service.close()
    limbic = LimbicApp(path, embedder=HashingEmbedder(), mcp=False, seed=False)
    with qtbot.waitSignal(limbic.ready, timeout=20_000):
        limbic.start()
    qtbot.waitUntil(lambda: len(limbic.graph_view.shown_names()) > 0, timeout=10_000)
    yield limbic
    limbic.window.close()
    limbic.shutdown()


def search(qtbot, app, query: str, limit: int = 10):
    panel = app.window.search_panel
    panel.limit.setValue(limit)
    panel.query.setText(query)
    with qtbot.waitSignal(app.controller.search_finished, timeout=10_000) as done:
        panel.search_now()
    return done.args[0]


def test_inspecting_records_nothing_and_mark_as_useful_records_one_use_and_one_label(qtbot, app):
    service, panel = app.service, app.window.search_panel
    outcome = search(qtbot, app, "Harbor buoy data")
    assert outcome.search_id is not None  # the search itself is logged (its top-K as impressions)
    before = usage_rows(service)
    panel.table.selectRow(1)  # select a result: the inspector, the editor and the graph follow
    chosen = panel.model.result(1).name
    qtbot.waitUntil(lambda: app.window.inspector.explanation is not None, timeout=3000)
    qtbot.waitUntil(lambda: app.editor.detail is not None and app.editor.detail.entity.name == chosen, timeout=3000)
    app.window.docks["editorDock"].raise_()
    panel.table.selectRow(0)
    qtbot.waitUntil(lambda: app.editor.detail is not None and app.editor.detail.entity.name != chosen, timeout=3000)
    app.graph_view.canvas.node_clicked.emit(0, False, False)  # a click on a node of the graph
    panel.pin.pin("Lonely")
    qtbot.wait(200)
    assert usage_rows(service) == before  # looking is not using
    panel.table.selectRow(1)
    assert panel.useful_button.isEnabled()
    with qtbot.waitSignal(app.controller.feedback_recorded, timeout=5000) as marked:
        qtbot.mouseClick(panel.useful_button, Qt.MouseButton.LeftButton)
    assert marked.args[0] == [chosen]
    after = usage_rows(service)
    assert after["accesses"] == before["accesses"] + 1 and after["feedback"] == before["feedback"] + 1
    assert after["access days"] - before["access days"] <= 1 and after["co-occurrences"] == before["co-occurrences"]
    conn = service.database.read()
    label = conn.execute("SELECT e.name, f.event_id, f.source FROM implicit_feedback f JOIN entities e "
                         "ON e.id = f.entity_id ORDER BY f.id DESC LIMIT 1").fetchone()
    assert label == (chosen, outcome.search_id, "mark_used")  # a label for the shown search
    assert "marked as useful" in app.window.statusBar().currentMessage()
    quality = app.window.tuning_panel.quality
    qtbot.waitUntil(lambda: quality.history is not None and len(quality.history) == 1, timeout=5000)
    assert "1 search with feedback" in quality.status.text()  # the figures say what they rest on


def test_a_pinned_entity_outside_the_top_k_shows_its_rank_and_follows_the_sliders(qtbot, app):
    outcome = search(qtbot, app, "Harbor buoy reading", limit=3)
    candidates = outcome.candidate_set
    assert len(candidates) > 3
    results = app.controller.results
    params = app.controller.params.replace(beta_sal=0.0)  # salience off: the often used notes lose their lead
    rank = lambda name, p: explain(candidates, p, list(candidates.names).index(name))["rank"]  # noqa: E731
    outside = next(name for name in candidates.names if name not in {r.name for r in results}
                   and rank(name, params) != rank(name, app.controller.params))
    pin = app.window.search_panel.pin
    pin.pin(outside)
    shown = pin.comparison
    assert shown is not None and shown.rank is not None and shown.rank > 3
    assert shown.kth_name == results[-1].name and shown.candidates == len(candidates)
    index = list(candidates.names).index(outside)
    expected = explain(candidates, app.controller.params, index)
    assert shown.rank == expected["rank"]  # its rank among every candidate
    rows = {label: (mine, theirs) for label, mine, theirs in shown.rows}
    assert rows["final"][0] == pytest.approx(expected["final_score"])
    assert rows["temporal ×"][0] == pytest.approx(expected["temporal_factor"])
    assert rows["final"][1] == pytest.approx(results[-1].final_score)  # beside the K-th result's
    text = pin.text.text()
    assert f"ranks <b>{shown.rank}</b> of {len(candidates)}" in text and "pinned" in text
    assert shown.weakest == "salience ×" and "Kept down most by <b>salience</b>" in text  # never used, unlike them
    # the sliders move it like the results
    moved = compare(candidates, params, outside, app.controller.service.search.rerank(candidates, params)[-1].name, 3)
    with qtbot.waitSignal(app.controller.results_reranked, timeout=3000):
        app.controller.set_params(params)
    assert pin.comparison.rank == moved.rank == rank(outside, params) != shown.rank
    pin.pin("Nobody by this name")
    qtbot.waitUntil(lambda: "No entity is named" in pin.text.text(), timeout=3000)
    pin.pin("")
    assert pin.comparison is None and not pin.text.isVisible()
