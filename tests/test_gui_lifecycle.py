"""The lifecycle in the app (a real window, offscreen): the Review view lists contradictions side by side,
forget/promote candidates and expired observations, applies one option or a bulk one, and every action is undone
through the editor's undo stack; the editor shows expired observations and pins; the project filter and the
time slider limit the graph view; *Ahead* shows the forecast of its date; the decay plot draws the chosen model."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import time

import pytest
from _lifecycle_helpers import written_ago
from _widgets_helpers import DAY, shown_review

from limbic.core.lifecycle.retention import RetentionParams
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.models import RelationInput as R
from limbic.core.models import iso
from limbic.gui.edit.editor import EntityEditor
from limbic.gui.graph.view import GraphView
from limbic.gui.review.timeline import TimelineBar

pytestmark = pytest.mark.gui


@pytest.fixture
def memory(service):
    old = time.time() - 60 * DAY
    service.entities.create_entities([E("stale one", "Note", (O("an old note"),), created_at=old),
                             E("stale two", "Note", (O("another old note"),), created_at=old)])
    written_ago(service, 60)
    service.entities.create_entities([
        E("billing", "Service", (O("the billing service listens on port 8080"),)),
        E("ticket", "Task", (O("due last week", expires_at=time.time() - DAY), O("open"))),
    ])
    service.entities.add_observations([("billing", [O("the billing service listens on port 9090")])])
    assert service.lifecycle.open_conflicts()[0] == 1
    service.lifecycle.save_retention_params(RetentionParams(grace_days=0))  # the old notes count as written long ago
    return service


@pytest.fixture
def review(qtbot, controller, memory):
    return shown_review(qtbot, controller)


def _settle(qtbot, view, editor, done):
    qtbot.waitUntil(lambda: not editor.queue.busy and done(), timeout=5000)
    before = id(view.sections)
    view.reload()
    qtbot.waitUntil(lambda: id(view.sections) != before, timeout=5000)


def test_a_contradiction_side_by_side_settled_in_one_click_and_undone(qtbot, review, memory):
    view, editor = review
    totals = {s.kind: s.total for s in view.sections}
    assert totals["contradiction"] == 1 and totals["forget"] == 2 and totals["expired"] == 1
    [conflict] = view.decisions("contradiction")
    view.select([conflict.key])
    assert "8080" in view.older.toPlainText() and "9090" in view.newer.toPlainText()
    assert "port: 8080 → 9090" in view.reason.text() and "Suggested: nothing says which is current" in view.reason.text()
    buttons = {b.objectName(): b for b in view.option_buttons()}  # nothing says which is current: keep both first
    assert list(buttons) == ["option-keep_both", "option-update_old", "option-supersede", "option-delete_old"]
    before = memory.entities.get_entity("billing").entity
    buttons["option-supersede"].click()
    _settle(qtbot, view, editor, lambda: memory.lifecycle.open_conflicts()[0] == 0)
    assert view.decisions("contradiction") == []
    assert [o.content for o in memory.entities.get_entity("billing").entity.live_observations] == [
        "the billing service listens on port 9090"]
    editor.stack.undo()
    _settle(qtbot, view, editor, lambda: memory.lifecycle.open_conflicts()[0] == 1)
    assert memory.entities.get_entity("billing").entity == before  # (the editor's selecting it afterwards is a use)
    assert [d.key for d in view.decisions("contradiction")] == [conflict.key]


def test_bulk_archive_of_forget_candidates_is_one_undo(qtbot, review, memory):
    view, editor = review
    keys = [d.key for d in view.decisions("forget")]
    view.select(keys)
    assert [b.text() for b in view.option_buttons()] == ["archive (2)", "delete (2)", "pin (2)"]
    view.option_buttons()[0].click()
    _settle(qtbot, view, editor, lambda: memory.entities.get_entity("stale two").entity.status == "archived")
    assert {memory.entities.get_entity(n).entity.status for n in ("stale one", "stale two")} == {"archived"}
    assert editor.stack.count() == 1
    editor.stack.undo()
    _settle(qtbot, view, editor, lambda: memory.entities.get_entity("stale two").entity.status == "active")
    assert {memory.entities.get_entity(n).entity.status for n in ("stale one", "stale two")} == {"active"}


def test_expired_observations_and_pins_in_the_editor(qtbot, controller, memory):
    editor = EntityEditor(controller)
    qtbot.addWidget(editor)
    controller.select(["ticket"])
    qtbot.waitUntil(lambda: editor.detail is not None and editor.detail.entity.name == "ticket", timeout=5000)
    states = {editor.observations.item(r, 0).text(): editor.observations.item(r, 4).text()
              for r in range(editor.observations.rowCount())}
    assert states == {"open": "live", "due last week": "expired"}
    memory.lifecycle.set_pinned(["ticket"], True)
    editor.reload()
    qtbot.waitUntil(lambda: "pinned" in editor.title.text(), timeout=5000)


def test_the_project_filter_limits_search_graph_and_review(qtbot, controller, service):
    due = time.time() - DAY
    service.entities.create_entities([E("alpha note", "Note", (O("tabs or spaces"), O("alpha's due", expires_at=due)),
                               project="alpha"),
                             E("beta note", "Note", (O("tabs or spaces"), O("beta's due", expires_at=due)),
                               project="beta"),
                             E("global note", "Note", (O("tabs or spaces"),)),
                             E("global aside", "Note", (O("tabs or spaces"),))])
    service.relations.create_relations([R("alpha note", "global note", "uses")])
    view = GraphView(controller)
    bar = TimelineBar(controller, view)
    for widget in (view, bar):
        qtbot.addWidget(widget)
    review, _editor = shown_review(qtbot, controller)
    assert any("beta" in d.title for d in review.decisions("expired"))  # every project's decisions, unfiltered
    qtbot.waitUntil(lambda: view.arrays is not None and bar.projects.count() == 3, timeout=5000)
    bar.projects.choose("alpha")
    assert controller.project == "alpha"
    # the graph: alpha's memories and the global ones linked to them, not every global memory beside them
    qtbot.waitUntil(lambda: set(view.shown_names()) == {"alpha note", "global note"}, timeout=5000)
    view.set_mode("global")
    qtbot.waitUntil(lambda: set(view.shown_names()) == {"alpha note", "global note"}, timeout=5000)
    with qtbot.waitSignal(controller.search_finished, timeout=5000) as found:  # search: alpha's and the global ones
        controller.search("tabs spaces")
    assert {r.name for r in found.args[0].results} == {"alpha note", "global note", "global aside"}
    qtbot.waitUntil(lambda: "project alpha" in review.summary.text(), timeout=5000)  # Review: alpha's decisions
    titles = [d.title for d in review.decisions("expired")]
    assert any("alpha" in t for t in titles) and not any("beta" in t for t in titles)
    bar.projects.choose(None)
    qtbot.waitUntil(lambda: {"beta note", "global aside"} <= set(view.shown_names()), timeout=5000)
    qtbot.waitUntil(lambda: any("beta" in d.title for d in review.decisions("expired")), timeout=5000)


def test_the_time_slider_replays_the_graph(qtbot, controller, service):
    t0 = time.time() - 10 * DAY
    service.entities.create_entities([E("first", "Note", (O("one"),), created_at=t0),
                             E("second", "Note", (O("two"),), created_at=t0 + 2 * DAY),
                             E("third", "Note", (O("three"),), created_at=t0 + 5 * DAY)])
    service.relations.create_relations([R("first", "second", "links", created_at=t0 + 3 * DAY)])
    service.relations.end_relation(R("first", "second", "links"), at=t0 + 4 * DAY)
    view = GraphView(controller)
    bar = TimelineBar(controller, view)
    for widget in (view, bar):
        qtbot.addWidget(widget)
    qtbot.waitUntil(lambda: view.arrays is not None, timeout=5000)
    view.set_mode("global")  # every entity the filter keeps
    assert bar.slider.isEnabled() and not bar.replay.isChecked()
    bar.slider.triggerAction(bar.slider.SliderAction.SliderPageStepSub)  # a move of the slider starts the replay
    qtbot.waitUntil(lambda: bar.replay.isChecked() and bar.moment is not None, timeout=5000)
    bar.window_box.setCurrentIndex(1)  # mark what was written in the day before
    bar.at(t0 + 2.5 * DAY)
    qtbot.waitUntil(lambda: set(view.shown_names()) == {"first", "second"} and bar.written == ["second"], timeout=5000)
    assert len(view.arrays.edges) == 0 and view.canvas.replay_marked == ["second"]  # its own mark, not a hit's
    assert "second" not in view.highlighted_names() and "1 written" in bar.label.text()
    assert "in the 1 day before" in bar.label.toolTip()
    bar.at(t0 + 3.5 * DAY)
    qtbot.waitUntil(lambda: view.arrays is not None and len(view.arrays.edges) == 1, timeout=5000)  # as it stood
    bar.at(t0 + 4.5 * DAY)
    qtbot.waitUntil(lambda: view.arrays is not None and len(view.arrays.edges) == 0, timeout=5000)
    bar.set_replay(False)
    qtbot.waitUntil(lambda: set(view.shown_names()) == {"first", "second", "third"}, timeout=5000)
    assert bar.slider.value() == bar.slider.maximum()  # back to now


def test_ahead_shows_the_forecast_of_its_date(qtbot, controller, memory):
    memory.entities.create_entities([E("passing thought", "Note", (O("maybe try the new linter some day"),)),
                            E("key", "Secret", (O("rotates soon", expires_at=time.time() + 20 * DAY),))])
    view = GraphView(controller)
    bar = TimelineBar(controller, view)
    for widget in (view, bar):
        qtbot.addWidget(widget)
    qtbot.waitUntil(lambda: view.arrays is not None, timeout=5000)
    now = time.time()
    labels = [bar.ahead_box.itemText(i) for i in range(bar.ahead_box.count())]
    assert labels == ["Now"] + [f"+{d} days · {(iso(now + d * DAY) or '')[:10]}" for d in (7, 30, 90)]
    bar.look_ahead(90)
    qtbot.waitUntil(lambda: view.colouring == "fades" and view.lenses.fades is not None
                    and "(by " in view.legend.detail_title.text(), timeout=10_000)
    until = view.lenses.until
    day = (iso(until) or "")[:10]
    assert view.legend.title == f"What fades by {day} (within 90 days)" and f"(by {day})" in \
        view.legend.detail_title.text()
    # the same forecast `limbic gc --at` and consolidation_report answer with: each from the day it is first proposed
    forecast = memory.lifecycle.forecast(until, now=until - 90 * DAY)
    assert [(f.name, round(f.at)) for f in view.lenses.fades if f.kind == "forgotten"] == [
        (p.retention.name, round(p.due)) for p in forecast.proposed if p.due > forecast.now] == [
        ("passing thought", round(forecast.proposed[-1].due))]
    assert [f.name for f in view.lenses.fades if f.kind == "expires"] == ["key"]
    assert any(t.endswith("proposed for forgetting: never used since it was written 2 months ago")
               for t in view.legend.detail_texts())
    bar.look_ahead(None)
    qtbot.waitUntil(lambda: view.colouring != "fades", timeout=10_000)


def test_the_decay_plot_draws_the_chosen_model(qtbot):
    from limbic.core.search.presets import DEFAULT
    from limbic.gui.search.decay_plot import DecayPlot

    plot = DecayPlot(DEFAULT)
    qtbot.addWidget(plot)
    plot.set_params(DEFAULT.replace(decay_model="power_law", lambda_hourly=0.005))
    days, values = plot.curve.getData()
    half = DEFAULT.replace(decay_model="power_law", lambda_hourly=0.005).half_life_hours / 24
    at_half = values[abs(days - half).argmin()]
    assert abs(at_half - 0.5) < 0.02 and "power law" in plot.plot.getPlotItem().titleLabel.text


@pytest.mark.parametrize("model, written", [("exponential", "exp(−0.005 × 240 h)"),
                                            ("power_law", "(1 + 240 h / "),
                                            ("two_component", "0.5 × exp(−0.0289 × 240 h) + 0.5 × exp(−0.005 × 240 h)")])
def test_the_inspector_writes_the_chosen_decay_model_out(model, written):
    from _scoring_helpers import HOUR, candidate_set

    from limbic.core.search.presets import SEED
    from limbic.gui.search.inspector import describe

    now = 1_780_000_000.0
    candidates = candidate_set([{"distance": 0.2, "last_access": now - 240 * HOUR, "access_count": 1}], now=now)
    params = SEED.replace(decay_model=model, lambda_hourly=0.005)
    [line] = [line for line in describe(candidates, params, 0).lines if line.startswith("temporal = ")]
    temporal = max(params.temporal_floor, float(params.decay.curve(240.0, 0.005)))
    assert written in line and f"<b>{temporal:.4f}</b>" in line
