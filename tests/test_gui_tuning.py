"""Tuning panel: sliders bound both ways to the params; a slider move re-ranks without the database."""

from __future__ import annotations

import math
import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.search.pipeline import rerank
from limbic.core.search.presets import PRESETS, preset
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.controller import AppController
from limbic.gui.search.panel import SearchPanel
from limbic.gui.search.results_model import COLUMNS
from limbic.gui.search.tuning import SLIDER_STEPS, TuningPanel

pytestmark = pytest.mark.gui

DAY = 86_400.0


@pytest.fixture
def service(tmp_path):
    svc = MemoryService(open_database(tmp_path / "memory.db"), HashingEmbedder(), origin="gui")
    yield svc
    if not svc.database.closed:
        svc.close()


@pytest.fixture
def controller(qtbot, service):
    ctrl = AppController(service)
    yield ctrl
    ctrl.shutdown()


def test_slider_moves_params(qtbot, controller):
    panel = TuningPanel(controller)
    qtbot.addWidget(panel)
    seen = []
    controller.params_changed.connect(seen.append)
    control = panel.controls["beta_sal"]
    control.slider.setValue(SLIDER_STEPS // 8)  # beta_sal spans [0, 2]: an eighth is 0.25, the default
    control.slider.setValue(SLIDER_STEPS)
    assert controller.params.beta_sal == pytest.approx(2.0)
    assert control.spin.value() == pytest.approx(2.0)
    assert [p.beta_sal for p in seen] == [pytest.approx(2.0)]  # 0.25 was already the value: no change

    integer = panel.controls["d_max"]
    integer.slider.setValue(40)
    assert controller.params.d_max == 40 and integer.spin.value() == 40

    panel.controls["gamma"].spin.setValue(0.25)  # typing into the numeric entry
    assert controller.params.gamma == pytest.approx(0.25)
    assert panel.controls["gamma"].slider.value() == round(0.25 / 0.5 * SLIDER_STEPS)
    # every other field kept its value
    assert controller.params.replace(beta_sal=0.25, d_max=15, gamma=0.0) == preset("default")


def test_params_move_sliders_without_echo(qtbot, controller):
    panel = TuningPanel(controller)
    qtbot.addWidget(panel)
    seen = []
    controller.params_changed.connect(seen.append)
    target = preset("default").replace(lambda_hourly=2.5e-3, temporal_floor=0.3, rrf_k=120)
    controller.set_params(target)
    assert seen == [target]  # exactly one change: updating the controls did not feed back
    assert controller.params is target
    assert panel.controls["lambda_hourly"].slider.value() == SLIDER_STEPS // 2
    assert panel.controls["lambda_hourly"].spin.value() == pytest.approx(2.5e-3)
    assert panel.controls["temporal_floor"].slider.value() == round(0.3 * SLIDER_STEPS)
    assert panel.controls["rrf_k"].slider.value() == 120
    assert "277 h" in panel.half_life.text()  # ln 2 / 2.5e-3 ≈ 277 hours
    assert [n for n, label in panel.labels.items() if label.font().bold()] == \
        ["lambda_hourly", "temporal_floor", "rrf_k"]  # away from the defaults

    assert panel.preset_box.currentIndex() == -1 and panel.preset_box.placeholderText() == "custom"
    qtbot.mouseClick(panel.reset_button, Qt.MouseButton.LeftButton)
    assert controller.params == preset("default")
    assert panel.preset_box.currentText() == "default"
    assert panel.controls["rrf_k"].slider.value() == 60
    assert not any(label.font().bold() for label in panel.labels.values())


def _expected_order(candidates, params):
    """Hand computation of mcp-memory "The Limbic System" for the two crafted candidates (no degree, no co-occurrence)."""
    cosines = [max(0.0, 1.0 - d) for d in candidates.distance]
    max_access = max(candidates.access_count)
    max_days = max(candidates.access_days)
    limbic = []
    for i, cos in enumerate(cosines):
        count, days = candidates.access_count[i], candidates.access_days[i]
        imp = 0.0 if max_access == 0 else (
            math.log2(1 + count) / math.log2(1 + max_access)
            * (1 + params.alpha_cons * math.log2(1 + days) / math.log2(1 + max_days))
        )
        last = candidates.last_access[i]
        ref = candidates.created_at[i] if math.isnan(last) else last
        temporal = max(params.temporal_floor, math.exp(-params.lambda_hourly * (candidates.now - ref) / 3600))
        limbic.append(cos * (1 + params.beta_sal * imp) * temporal)
    low, high = min(limbic), max(limbic)
    norm = [(v - low) / (high - low) if high > low else 1.0 for v in limbic]
    w = params.strategy_cosine_weight(candidates.strategy)
    final = [w * c + (1 - w) * n for c, n in zip(cosines, norm, strict=True)]
    return [candidates.names[i] for i in sorted(range(len(final)), key=lambda i: -final[i])]


def test_slider_reorders_cached_candidates_without_database(qtbot, service, controller):
    now = time.time()
    service.entities.create_entities([
        EntityInput("Quartz clock repair", "Task", (ObservationInput("quartz clock repair steps"),)),
        EntityInput("Wall clock", "Thing", (ObservationInput("an old clock on the wall"),)),
    ])
    for day in range(12):  # the weaker match is used daily: importance 1.2 (max of the set)
        service.usage.record_access(["Wall clock"], at=now - day * DAY, co_occurrence=False)
        service.usage.record_access(["Wall clock"], at=now - day * DAY - 60, co_occurrence=False)
    controller.set_params(preset("seed").replace(beta_sal=0.0))  # the hand computation is the seed's
    panel = TuningPanel(controller)
    search = SearchPanel(controller)
    qtbot.addWidget(panel)
    qtbot.addWidget(search)

    with qtbot.waitSignal(controller.search_finished, timeout=5000):
        controller.search("quartz clock repair", 10)
    candidates = controller.last_outcome.candidate_set
    assert sorted(candidates.names) == ["Quartz clock repair", "Wall clock"]
    assert candidates.mode == "hybrid" and not any(math.isnan(d) for d in candidates.distance)
    low_salience = _expected_order(candidates, controller.params)
    high_salience = _expected_order(candidates, controller.params.replace(beta_sal=2.0))
    assert low_salience == ["Quartz clock repair", "Wall clock"]
    assert high_salience == ["Wall clock", "Quartz clock repair"]  # the crafted set flips with β_sal
    assert [r.name for r in search.model.results()] == low_salience

    service.usage.wait_for_signals()
    service.database.close()  # any SQL from here on raises
    reranked = []
    controller.results_reranked.connect(reranked.append)
    panel.controls["beta_sal"].slider.setValue(SLIDER_STEPS)  # β_sal → 2.0

    assert controller.params.beta_sal == pytest.approx(2.0)
    assert len(reranked) == 1  # synchronous: no worker, no database
    assert [r.name for r in reranked[0]] == high_salience
    assert [r.name for r in search.model.results()] == high_salience
    default = [r.name for r in rerank(candidates, preset("default"))]  # Δrank is measured against this order
    for row, name in enumerate(high_salience):
        assert search.model.delta(row) == default.index(name) - row
    shown = search.model.data(search.model.index(0, COLUMNS.index("Δrank")))
    assert shown == ("=" if default[0] == high_salience[0] else "▲1")


def test_save_as_default_persists_and_expansion_searches_again(qtbot, service, controller):
    service.entities.create_entities([EntityInput(f"Clock {i}", "Thing", (ObservationInput(f"clock number {i}"),))
                             for i in range(40)])
    panel = TuningPanel(controller)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(controller.search_finished, timeout=5000):
        controller.search("clock", 5)
    before = len(controller.last_outcome.candidate_set)
    assert 15 <= before <= 30  # limit 5 × expansion 3 per branch, KNN ∪ FTS
    with qtbot.waitSignal(controller.search_finished, timeout=5000):  # more candidates need a new search
        panel.controls["expansion_factor"].slider.setValue(6)
    after = len(controller.last_outcome.candidate_set)
    assert after > before and 30 <= after <= 40

    panel.controls["gamma"].spin.setValue(0.2)
    panel.save_button.click()
    qtbot.waitUntil(lambda: service.search.scoring_params() == controller.params, timeout=5000)
    assert service.search.scoring_params().gamma == pytest.approx(0.2)
    assert service.search.scoring_params().expansion_factor == 6


def test_preset_selector_sets_every_parameter_and_follows_edits(qtbot, controller):
    panel = TuningPanel(controller)
    qtbot.addWidget(panel)
    assert [panel.preset_box.itemText(i) for i in range(panel.preset_box.count())] == list(PRESETS)
    assert panel.preset_box.currentText() == "default"
    seen = []
    controller.params_changed.connect(seen.append)
    panel.preset_box.activated.emit(panel.preset_box.findText("seed"))  # what a user's pick emits
    assert controller.params == preset("seed") and seen == [preset("seed")]
    assert panel.controls["relevance_fusion"].value() == 0 and panel.controls["created_decay"].value() == 1.0
    bold = {name for name, label in panel.labels.items() if label.font().bold()}
    assert bold == {f for f in preset("seed").to_dict() if preset("seed").value(f) != preset("default").value(f)}
    panel.controls["gamma"].spin.setValue(0.2)
    assert panel.preset_box.currentIndex() == -1  # edited: no longer a named preset
    panel.preset_box.activated.emit(panel.preset_box.findText("default"))
    assert controller.params == preset("default") and panel.controls["gamma"].value() == pytest.approx(0.0)


def test_the_decay_model_is_picked_by_name_from_every_registered_model(qtbot, controller):
    from limbic.core.search.decay import MODELS

    panel = TuningPanel(controller)
    qtbot.addWidget(panel)
    box = panel.controls["decay_model"].box
    assert [box.itemText(i) for i in range(box.count())] == [model.label for model in MODELS.values()]
    assert box.currentData() == "exponential" and "decay_alpha" in panel.controls
    box.activated.emit(box.findData("power_law"))  # what a user's pick emits
    assert controller.params.decay.model == "power_law" and panel.labels["decay_model"].font().bold()
    panel.controls["decay_alpha"].spin.setValue(2.0)
    assert controller.params.value("decay_alpha") == pytest.approx(2.0)
    controller.set_params(preset("default"))
    assert box.currentData() == "exponential" and panel.controls["decay_alpha"].value() == pytest.approx(1.1)
