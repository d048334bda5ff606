"""The time slider over the graph view: replays how the memory grew and changed (docs/lifecycle.md "The graph as
of a date"), and the bar that holds it with the project filter.

At a moment ``T`` the graph shows the entities created by then with the relations active then
(``MemoryService.lifecycle.graph_arrays_as_of``; the live layout stays, later entities are hidden) and marks the entities
written in the window before ``T`` (a small teal dot; the label counts them). Moving the slider (or *▶*)
starts the replay by itself; unticking *Replay* comes back to now, the slider at its right end. The *Ahead* box carries the slider
past today: 7, 30 or 90 days ahead, each entry labelled with its date, the graph shows *What fades next* (what
expires or would be proposed for forgetting by then if nothing is used or written meanwhile — the forecast
``limbic gc --at`` answers with — with the date each crosses; ``GraphView.show_fading``). Everything is read off
the UI thread; moving the slider records nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QWidget

from limbic.core.models import iso
from limbic.core.service.graph_arrays import GraphArrays
from limbic.gui.controller import AppController
from limbic.gui.review.scope import ProjectFilter
from limbic.gui.widgets import single_shot_timer

STEPS = 1000
WINDOWS = (("1 hour", 3600.0), ("1 day", 86_400.0), ("1 week", 7 * 86_400.0), ("1 month", 30 * 86_400.0))
AHEAD = (("Now", None), ("+7 days", 7), ("+30 days", 30), ("+90 days", 90))
Keep = Callable[[GraphArrays], np.ndarray]


def ahead_label(label: str, days: int | None, now: float) -> str:
    """An *Ahead* entry with its date: ``"+30 days · 2027-01-15"`` (``"Now"`` stays as it is)."""
    return label if days is None else f"{label} · {(iso(now + days * 86_400.0) or '')[:10]}"


class AheadBox(QComboBox):
    """The *Ahead* choices (:data:`AHEAD`), each labelled with its date, relabelled whenever the list opens."""

    def __init__(self) -> None:
        super().__init__()
        for label, days in AHEAD:
            self.addItem(ahead_label(label, days, time.time()), days)

    def relabel(self) -> None:
        now = time.time()
        for index, (label, days) in enumerate(AHEAD):
            self.setItemText(index, ahead_label(label, days, now))

    def showPopup(self) -> None:  # noqa: N802 - Qt override
        self.relabel()
        super().showPopup()


class TimelineBar(QWidget):
    """Project filter, *Replay* switch, time slider, window and play button above (or below) ``graph_view``
    (anything with ``set_filter`` and ``show_replay``: :class:`~limbic.gui.graph.view.GraphView`)."""

    def __init__(self, controller: AppController, graph_view: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.graph_view = graph_view
        self.projects = ProjectFilter(controller)
        self.replay = QCheckBox("Replay")
        self.replay.setToolTip("Show the memory as it was at the slider's date (moving the slider ticks it); "
                               "untick to come back to now")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, STEPS)
        self.slider.setValue(STEPS)
        self.slider.setToolTip("Drag to see the memory as it was at that date, from its first write (left) to its "
                               "last (right); Replay starts by itself")
        self.window_box = QComboBox()
        for label, seconds in WINDOWS:
            self.window_box.addItem(label, seconds)
        self.window_box.setCurrentIndex(1)
        self.window_box.setToolTip("Entities written within this time before the slider's date are ringed")
        self.play = QPushButton("▶")
        self.play.setCheckable(True)
        self.play.setToolTip("Replay the memory's history from its first write")
        self.label = QLabel()
        self.label.setToolTip("Entities created or given an observation within the window before the slider's date "
                              "(marked with teal squares)")
        self.ahead_box = AheadBox()
        self.ahead_box.setToolTip("Look ahead: what expires or would be proposed for forgetting within 7, 30 or 90 "
                                  "days if nothing is used or written meanwhile (What fades next)")
        self.ahead_box.activated.connect(lambda _i: self.look_ahead(self.ahead_box.currentData()))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        for widget, stretch in ((self.projects, 0), (self.replay, 0), (self.slider, 1), (self.window_box, 0),
                                (self.play, 0), (self.label, 0), (self.ahead_box, 0)):
            layout.addWidget(widget, stretch)
        self._span: tuple[float, float] | None = None
        self._project_keep: Keep | None = None
        self._time_keep: Keep | None = None
        self.moment: float | None = None
        self.written: list[str] = []
        self._timer = QTimer(self)
        self._timer.setInterval(120)
        self._timer.timeout.connect(self._step)
        self._debounce = single_shot_timer(self, 60, self._load)
        self.projects.filter_changed.connect(self._project_filter)
        self.replay.toggled.connect(self.set_replay)
        self.slider.actionTriggered.connect(self._slider_moved)  # the user's moves only (drag, click, keys, wheel)
        self.slider.valueChanged.connect(lambda _v: self._debounce.start() if self.replay.isChecked() else None)
        self.window_box.activated.connect(lambda _i: self._debounce.start() if self.replay.isChecked() else None)
        self.play.toggled.connect(self._play)

    def _slider_moved(self, _action: int) -> None:
        if not self.replay.isChecked():
            self.set_replay(True)

    def set_replay(self, on: bool) -> None:
        """Start (reading the memory's first and last write) or stop replaying; stopping shows the live graph."""
        self.replay.blockSignals(True)
        self.replay.setChecked(on)
        self.replay.blockSignals(False)
        if on:
            if self.ahead_box.currentData() is not None:
                self.look_ahead(None)
            self.controller.run(self.controller.service.lifecycle.history_span, on_success=self._spanned,
                                channel=f"timeline-{id(self)}")
            return
        self.play.setChecked(False)
        self.slider.blockSignals(True)
        self.slider.setValue(STEPS)  # now
        self.slider.blockSignals(False)
        self.moment, self.written, self._time_keep = None, [], None
        self.label.clear()
        self.label.setToolTip("")
        self._apply_filter()
        self.graph_view.show_replay(None)

    def look_ahead(self, days: int | None) -> None:
        """Show *What fades next* within ``days`` (``None``: back to now); ends a replay (the past and the future
        are not shown at once)."""
        self.ahead_box.relabel()
        self.ahead_box.setCurrentIndex([d for _, d in AHEAD].index(days))
        if days is not None and self.replay.isChecked():
            self.set_replay(False)
        self.graph_view.show_fading(days)

    def at(self, moment: float) -> None:
        """Move the slider to ``moment`` (UTC seconds) and show the memory as it was then."""
        if self._span is None:
            return
        first, last = self._span
        share = 0.0 if last <= first else (moment - first) / (last - first)
        self.slider.setValue(round(min(1.0, max(0.0, share)) * STEPS))
        self._load()

    def _spanned(self, span: tuple[float, float] | None) -> None:
        self._span = span if span is not None else (time.time(), time.time())
        self._load()

    def _moment(self) -> float:
        first, last = self._span or (time.time(), time.time())
        return first + (last - first) * self.slider.value() / STEPS

    def _load(self) -> None:
        if not self.replay.isChecked() or self._span is None:
            return
        moment, window = self._moment(), float(self.window_box.currentData())
        service = self.controller.service

        def read() -> tuple[float, GraphArrays, list[str]]:
            return moment, service.lifecycle.graph_arrays_as_of(moment), service.lifecycle.written_between(moment - window, moment)

        self.controller.run(read, on_success=self._loaded, channel=f"timeline-{id(self)}")

    def _loaded(self, answer: tuple[float, GraphArrays, list[str]]) -> None:
        if not self.replay.isChecked():
            return
        self.moment, arrays, self.written = answer
        self._time_keep = lambda shown, at=self.moment: np.asarray(shown.created_at) <= at
        when = (iso(self.moment) or "")[:16].replace("T", " ")
        self.label.setText(f"{when} · {len(self.written):,} written")
        self.label.setToolTip(f"The memory as it was at {when} UTC; {len(self.written):,} entities created or given "
                              f"an observation in the {self.window_box.currentText()} before (a small teal dot)")
        self._apply_filter()
        self.graph_view.show_replay(arrays, self.written)

    def _project_filter(self, keep: Keep | None) -> None:
        self._project_keep = keep
        self._apply_filter()

    def _apply_filter(self) -> None:
        parts = [k for k in (self._project_keep, self._time_keep) if k is not None]
        if not parts:
            self.graph_view.set_filter(None)
            return
        self.graph_view.set_filter(lambda arrays: np.logical_and.reduce([k(arrays) for k in parts]))

    def _play(self, on: bool) -> None:
        if on and self.slider.value() >= STEPS:
            self.slider.setValue(0)
        if on and not self.replay.isChecked():
            self.set_replay(True)
        (self._timer.start if on else self._timer.stop)()

    def _step(self) -> None:
        if self.slider.value() >= STEPS:
            self.play.setChecked(False)
            return
        self.slider.setValue(min(STEPS, self.slider.value() + STEPS // 100))
