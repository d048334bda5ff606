"""Live ranking quality in the tuning panel: NDCG@10 and Lift@10 over the logged searches with feedback.

Figures have two decimals and say how many searches they rest on ("0.63 · 1 search"): a figure from one
or two labelled searches is an anecdote, not a measurement. Feedback is what agents' uses and a person's
*Mark as useful* recorded; inspecting a result in the app records none.
Shows three rows — the current slider values, the saved parameters, the cosine-only baseline — and
updates the first on every slider move by replaying the logged candidate sets
(:class:`~limbic.core.learning.replay.ReplayHistory`: pure numpy, no SQL). Reading the log and every
replay run off the UI thread; at most one replay is in flight, and when it ends the latest slider
values are replayed next (intermediate values are skipped, stale answers never shown). "Suggest"
runs the auto-tuner's grid search off the UI thread with a progress bar and shows the suggested
values and their gain; "Apply" saves them with the same EMA as ``limbic tune --tune`` (10 % new).
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from limbic.core.learning.replay import Quality, ReplayHistory
from limbic.core.learning.tuner import DEFAULT_GRID, MIN_EVENTS, TuneResult
from limbic.core.search.params import ScoringParams
from limbic.gui.controller import AppController
from limbic.gui.widgets import plural
from limbic.gui.workers import TaskRunner

K = 10
ROWS = ("sliders", "saved", "cosine")
ROW_TITLES = {"sliders": "These sliders", "saved": "Saved parameters", "cosine": "Cosine only"}
CHANNELS = ("quality-log", "quality-live", "quality-tune", "quality-apply")


class _Progress(QObject):
    """Carries grid-search progress from the worker thread to the UI thread (queued signal)."""

    advanced = Signal(int, int)


def _cancel(runner: TaskRunner, channels: tuple[str, ...]) -> None:
    for channel in channels:
        runner.cancel_channel(channel)


def _fmt(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.2f}"


class QualityPanel(QWidget):
    """See the module docstring. ``quality[row]`` holds the last :class:`Quality` shown per row."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.history: ReplayHistory | None = None
        self.saved: ScoringParams | None = None
        self.quality: dict[str, Quality] = {}
        self.suggestion: TuneResult | None = None
        self._in_flight = False
        self._pending: ScoringParams | None = None
        self._progress = _Progress(self)
        grid = QGridLayout()
        grid.addWidget(QLabel("<b>Quality on logged searches</b>"), 0, 0)
        grid.addWidget(QLabel(f"NDCG@{K}"), 0, 1)
        grid.addWidget(QLabel(f"Lift@{K}"), 0, 2)
        self.cells: dict[str, tuple[QLabel, QLabel]] = {}
        for row, name in enumerate(ROWS, start=1):
            ndcg, lift = QLabel("—"), QLabel("—")
            grid.addWidget(QLabel(ROW_TITLES[name]), row, 0)
            grid.addWidget(ndcg, row, 1)
            grid.addWidget(lift, row, 2)
            self.cells[name] = (ndcg, lift)
        self.status = QLabel("Reading the search log…")
        self.status.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setVisible(False)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Read the search log and its feedback again")
        self.suggest_button = QPushButton("Suggest")
        self.suggest_button.setToolTip(f"Grid search over γ × β_sal on the logged searches (needs {MIN_EVENTS} "
                                       "with feedback)")
        self.apply_button = QPushButton("Apply")
        self.apply_button.setToolTip("Move the saved parameters 10 % towards the suggestion (EMA), recorded "
                                     "and undoable with `limbic tune --undo`")
        self.apply_button.setEnabled(False)
        self.suggest_button.setEnabled(False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.refresh_button)
        buttons.addStretch(1)
        buttons.addWidget(self.suggest_button)
        buttons.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(grid)
        layout.addWidget(self.status)
        layout.addWidget(self.bar)
        layout.addLayout(buttons)
        self.refresh_button.clicked.connect(self.reload)
        self.suggest_button.clicked.connect(self.suggest)
        self.apply_button.clicked.connect(self.apply)
        self._progress.advanced.connect(self._advanced)
        controller.params_changed.connect(self.measure)
        controller.feedback_recorded.connect(lambda _names: self.reload())
        # Answers still due when the panel goes away are dropped (the lambda holds no reference to self).
        runner = controller.runner
        self.destroyed.connect(lambda: _cancel(runner, CHANNELS))
        self.reload()

    # --- the log --------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the log, its feedback and the saved parameters again (off the UI thread), then measure."""
        service = self.controller.service

        def load() -> tuple[ReplayHistory, ScoringParams, dict[str, Quality]]:
            history = service.learning.history()
            saved = service.search.scoring_params()
            return history, saved, {"saved": history.evaluate(saved, K), "cosine": history.evaluate(k=K, branch="knn")}

        self.controller.run(load, on_success=self._loaded, channel="quality-log")

    def _loaded(self, loaded: tuple[ReplayHistory, ScoringParams, dict[str, Quality]]) -> None:
        self.history, self.saved, fixed = loaded
        for name, quality in fixed.items():
            self._show(name, quality)
        events = len(self.history)
        self.suggest_button.setEnabled(events >= MIN_EVENTS)
        if events == 0:
            self.status.setText(f"No feedback yet: the figures need searches whose results were then used (an agent "
                                f"opened them or called mark_used, or you pressed Mark as useful). Suggest needs "
                                f"{MIN_EVENTS}.")
        elif events < MIN_EVENTS:
            self.status.setText(f"Figures rest on {plural(events, 'search')} with feedback; "
                                f"{MIN_EVENTS - events} more needed to Suggest.")
        else:
            self.status.setText(f"Figures rest on {plural(events, 'search')} with feedback.")
        self.measure(self.controller.params)

    # --- live metric ----------------------------------------------------------------------------

    def measure(self, params: ScoringParams) -> None:
        """Replay the log with ``params`` off the UI thread; while one replay runs, only the latest waits."""
        if self.history is None:
            return
        if self._in_flight:
            self._pending = params
            return
        self._in_flight = True
        history = self.history
        self.controller.run(history.evaluate, params, K, on_success=lambda q: self._measured(history, params, q),
                            on_failure=self._measure_failed, channel="quality-live")

    def _measured(self, history: ReplayHistory, params: ScoringParams, quality: Quality) -> None:
        self._in_flight = False
        pending, self._pending = self._pending, None
        if pending is not None:  # newer slider values (or a newer log) arrived meanwhile
            self.measure(pending)
            return
        if history is self.history and params == self.controller.params:
            self._show("sliders", quality)

    def _measure_failed(self, error: BaseException) -> None:
        self._in_flight = False
        self._pending = None
        self.controller.status_message.emit(f"Quality could not be measured: {error}")

    def _show(self, row: str, quality: Quality) -> None:
        self.quality[row] = quality
        ndcg, lift = self.cells[row]
        count = "" if math.isnan(quality.ndcg) else f" · {plural(quality.searches, 'search')}"
        ndcg.setText(_fmt(quality.ndcg) + count)
        lift.setText(_fmt(quality.lift))
        ndcg.setToolTip(f"NDCG@{K} averaged over {plural(quality.searches, 'logged search')} with feedback")

    # --- suggest and apply ----------------------------------------------------------------------

    def suggest(self) -> None:
        """Grid search (the tuner's default γ × β_sal grid) from the current sliders, off the UI thread."""
        if self.history is None:
            return
        history, current, progress = self.history, self.controller.params, self._progress
        self.bar.setVisible(True)
        self.bar.setValue(0)
        self.suggest_button.setEnabled(False)

        def run() -> TuneResult:
            return self.controller.service.learning.tune(current, DEFAULT_GRID, K, progress.advanced.emit, history)

        self.controller.run(run, on_success=self._suggested, on_failure=self._suggest_failed, channel="quality-tune")

    def _advanced(self, done: int, total: int) -> None:
        self.bar.setMaximum(total)
        self.bar.setValue(done)

    def _suggested(self, result: TuneResult) -> None:
        self.suggestion = result
        self.bar.setVisible(False)
        self.suggest_button.setEnabled(True)
        values = ", ".join(f"{name} {value:g}" for name, value in result.best_values.items())
        self.status.setText(f"Suggested: {values} — NDCG@{K} {_fmt(result.best.ndcg)} "
                            f"(gain {result.gain:+.2f} over these sliders, {plural(result.best.searches, 'search')}). Apply moves the saved parameters "
                            f"10 % towards it.")
        self.apply_button.setEnabled(result.gain > 0)

    def _suggest_failed(self, error: BaseException) -> None:
        self.bar.setVisible(False)
        self.suggest_button.setEnabled(True)
        self.status.setText(str(error))

    def apply(self) -> None:
        """Save the EMA step towards the suggestion (recorded as a tuning application), then use it."""
        result = self.suggestion
        if result is None:
            return
        learning = self.controller.service.learning
        saved = self.saved or self.controller.params
        self.apply_button.setEnabled(False)

        def run() -> Any:
            return learning.apply(saved, result.best_values, kind="tune", gain=result.gain, events=result.best.searches,
                                  origin="gui")

        self.controller.run(run, on_success=self._applied, channel="quality-apply")

    def _applied(self, params: ScoringParams) -> None:
        self.suggestion = None
        self.controller.set_params(params)
        self.controller.status_message.emit("Tuned parameters applied (10 % towards the suggestion) and saved")
        self.reload()
