"""Live quality in the tuning panel: the metric follows the sliders, matches `limbic tune --analyze`,
Suggest runs the grid search with a progress bar, Apply saves the EMA step (pytest-qt, real database)."""

from __future__ import annotations

import json
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from _learning_helpers import build_usage_log

from limbic.core.cli.main import main as cli_main
from limbic.core.search.presets import SEED
from limbic.gui.search.tuning import SLIDER_STEPS, TuningPanel
from limbic.gui.widgets import plural

pytestmark = pytest.mark.gui


@pytest.fixture
def tuning(qtbot, controller, service):
    service.search.save_scoring_params(SEED)
    controller.set_params(SEED)
    panel = TuningPanel(controller)
    qtbot.addWidget(panel)
    return panel


def test_the_metric_follows_the_sliders_and_matches_the_cli(qtbot, service, controller, tuning, capsys):
    build_usage_log(service)
    quality = tuning.quality
    quality.reload()
    qtbot.waitUntil(lambda: quality.history is not None and len(quality.history) == 60, timeout=5000)
    # measured on this log, not on the empty one the panel read as it was made (its answer may come first)
    qtbot.waitUntil(lambda: "sliders" in quality.quality
                    and quality.quality["sliders"].searches == quality.quality["saved"].searches, timeout=5000)
    before = quality.quality["sliders"].ndcg
    assert before == pytest.approx(quality.quality["saved"].ndcg)  # the sliders start at the saved values
    searches = quality.quality["sliders"].searches
    assert quality.cells["sliders"][0].text() == f"{before:.2f} · {searches} searches"  # 2 decimals and the count
    tuning.controls["beta_sal"].slider.setValue(SLIDER_STEPS)  # β_sal to its maximum, 2.0
    assert controller.params.beta_sal == 2.0
    qtbot.waitUntil(lambda: quality.quality["sliders"].ndcg != before, timeout=5000)
    moved = quality.quality["sliders"]
    assert moved.ndcg > before
    service.search.save_scoring_params(controller.params)
    assert cli_main(["--db", str(service.database.path), "tune", "--analyze", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["saved"]["ndcg"] == pytest.approx(moved.ndcg, abs=1e-6)
    assert report["saved"]["lift"] == pytest.approx(moved.lift, abs=1e-6)
    assert report["cosine"]["ndcg"] == pytest.approx(quality.quality["cosine"].ndcg, abs=1e-6)


def test_suggest_shows_progress_and_apply_moves_ten_percent(qtbot, service, controller, tuning):
    build_usage_log(service)
    quality = tuning.quality
    quality.reload()
    qtbot.waitUntil(lambda: quality.suggest_button.isEnabled(), timeout=5000)
    quality.suggest_button.click()
    qtbot.waitUntil(lambda: quality.suggestion is not None, timeout=10_000)
    assert quality.bar.maximum() == 12 and quality.bar.value() == 12  # 4 γ × 3 β_sal points
    assert quality.suggestion.best_values == {"gamma": 0.001, "beta_sal": 1.0}
    assert "gain +" in quality.status.text() and quality.apply_button.isEnabled()
    quality.apply_button.click()
    qtbot.waitUntil(lambda: controller.params.beta_sal != SEED.beta_sal, timeout=5000)
    assert controller.params.beta_sal == pytest.approx(0.55) and service.search.scoring_params() == controller.params
    assert service.learning.applications(1)[0].origin == "gui"


def test_says_how_much_more_feedback_is_needed(qtbot, service, tuning):
    build_usage_log(service, topics=12)
    quality = tuning.quality
    quality.reload()
    qtbot.waitUntil(lambda: "more needed" in quality.status.text(), timeout=5000)
    assert "12 searches with feedback; 38 more needed" in quality.status.text()
    assert plural(1, "search") == "1 search" and plural(2, "search") == "2 searches"
    assert plural(1, "entity") == "1 entity" and plural(1681, "entity") == "1,681 entities"
    assert not quality.suggest_button.isEnabled()
