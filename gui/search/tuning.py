"""Tuning panel: a slider and a numeric entry per ``ScoringParams`` number, a list for the decay model, bound both
ways to one value.

Controls are built from the knobs' metadata (``min``, ``max``, ``label``, ``help``, ``integer``, or ``choices``;
:meth:`limbic.core.search.params.ScoringParams.knobs`), so a new parameter or decay model gets a control without
touching this file.
Binding follows napari's layer controls: the model (``controller.params``) is the truth; when it
changes, every control is updated with its signals blocked (no feedback loop); when a control moves,
a new ``ScoringParams`` is built and handed to ``controller.set_params``, which re-ranks the cached
candidate set (no SQL, no model call).

Sliders that change nothing in the shown search (:mod:`limbic.gui.search.inert`) are greyed, and a line on top
says which and why — on a memory nobody has used yet, salience, co-occurrence and feedback have nothing to weigh.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from limbic.core.errors import LimbicError
from limbic.core.search.decay import MODELS
from limbic.core.search.params import ScoringParams
from limbic.core.search.presets import PRESETS
from limbic.gui.controller import AppController
from limbic.gui.search.inert import NOTHING_HERE, inert_sliders
from limbic.gui.search.quality import QualityPanel
from limbic.gui.widgets import plural, single_shot_timer

SLIDER_STEPS = 1000  # resolution of a float slider over [min, max]
INERT_DELAY_MS = 400  # after the sliders stop moving, which ones change nothing is found again


@contextmanager
def signals_blocked(*objects: QObject) -> Iterator[None]:
    """Block the Qt signals of ``objects`` inside the block (napari's ``qt_signals_blocked``)."""
    previous = [o.blockSignals(True) for o in objects]
    try:
        yield
    finally:
        for obj, was_blocked in zip(objects, previous, strict=True):
            obj.blockSignals(was_blocked)


class ChoiceControl(QWidget):
    """One choice among names (the decay model): a drop-down list showing each name's ``label``.

    ``value_edited(name, value)`` is emitted when the user picks another; :meth:`set_value` shows a value without
    emitting.
    """

    value_edited = Signal(str, str)

    def __init__(self, name: str, meta: dict, value: str, labels: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.help = meta.get("help", "")
        self.box = QComboBox(self)
        for choice in meta["choices"]:
            self.box.addItem(labels.get(choice, choice), choice)
        self.box.setToolTip(self.help)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.box, 1)
        self.set_value(value)
        self.box.activated.connect(lambda index: self.value_edited.emit(self.name, self.box.itemData(index)))

    def value(self) -> str:
        return str(self.box.currentData())

    def set_value(self, value: str) -> None:
        """Show ``value`` without emitting anything."""
        with signals_blocked(self.box):
            self.box.setCurrentIndex(self.box.findData(value))


class ParamControl(QWidget):
    """One parameter: a horizontal slider and a spin box showing the same value.

    ``value_edited(name, value)`` is emitted when the user moves either; :meth:`set_value` updates
    both without emitting. Integer fields step by 1; float fields map ``[min, max]`` onto
    ``SLIDER_STEPS`` slider positions and show enough decimals to see one step.
    """

    value_edited = Signal(str, float)

    def __init__(self, name: str, meta: dict, value: float, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.help = meta.get("help", "")
        self.low = float(meta["min"])
        self.high = float(meta["max"])
        self.integer = bool(meta.get("integer", False))
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.spin = QDoubleSpinBox(self)
        self.spin.setRange(self.low, self.high)
        self.spin.setKeyboardTracking(False)
        self.spin.setAccelerated(True)
        if self.integer:
            self.slider.setRange(int(self.low), int(self.high))
            self.spin.setDecimals(0)
            self.spin.setSingleStep(1)
        else:
            self.slider.setRange(0, SLIDER_STEPS)
            step = (self.high - self.low) / SLIDER_STEPS
            self.spin.setDecimals(max(2, int(math.ceil(-math.log10(step))) + 1))
            self.spin.setSingleStep(step * 10)
        self.slider.setToolTip(meta.get("help", ""))
        self.spin.setToolTip(meta.get("help", ""))
        self.spin.setMinimumWidth(90)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.spin)
        self.set_value(value)
        self.slider.valueChanged.connect(self._slider_moved)
        self.spin.valueChanged.connect(self._spin_changed)

    def _to_position(self, value: float) -> int:
        if self.integer:
            return int(round(value))
        return int(round((value - self.low) / (self.high - self.low) * SLIDER_STEPS))

    def _from_position(self, position: int) -> float:
        if self.integer:
            return float(position)
        value = self.low + (self.high - self.low) * position / SLIDER_STEPS
        return min(self.high, max(self.low, value))

    def value(self) -> float:
        return float(self.spin.value())

    def set_value(self, value: float) -> None:
        """Show ``value`` in both widgets without emitting anything."""
        with signals_blocked(self.slider, self.spin):
            self.slider.setValue(self._to_position(value))
            self.spin.setValue(value)

    def _slider_moved(self, position: int) -> None:
        value = self._from_position(position)
        with signals_blocked(self.spin):
            self.spin.setValue(value)
        self.value_edited.emit(self.name, value)

    def _spin_changed(self, value: float) -> None:
        with signals_blocked(self.slider):
            self.slider.setValue(self._to_position(value))
        self.value_edited.emit(self.name, float(value))


class TuningPanel(QWidget):
    """All scoring parameters as controls, plus Reset and "Save as default", and below them the live
    ranking quality of the sliders on the logged searches (:class:`~limbic.gui.search.quality.QualityPanel`).

    Bound to ``controller.params`` both ways (see the module docstring). "Save as default" persists
    the params with ``service.search.save_scoring_params`` off the UI thread, so MCP ``search_semantic`` and
    the CLI use them too.
    """

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.controls: dict[str, ParamControl | ChoiceControl] = {}
        self.labels: dict[str, QLabel] = {}
        form_host = QWidget()
        form = QFormLayout(form_host)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        params = controller.params
        labels = {name: model.label for name, model in MODELS.items()}
        for spec in ScoringParams.knobs():
            value = params.value(spec.name)
            control = ChoiceControl(spec.name, dict(spec.metadata), str(value), labels, form_host) \
                if "choices" in spec.metadata else ParamControl(spec.name, dict(spec.metadata), float(value), form_host)
            control.value_edited.connect(self._control_edited)
            label = QLabel(spec.metadata["label"])
            label.setToolTip(spec.metadata.get("help", ""))
            form.addRow(label, control)
            self.controls[spec.name] = control
            self.labels[spec.name] = label
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(form_host)
        self.half_life = QLabel()
        # Its text changes with λ on every move: a fixed size keeps Qt from laying the dock and the
        # main window out again each time (a fixed-size widget posts no layout request).
        self.half_life.setFixedSize(self.half_life.fontMetrics().horizontalAdvance("half-life: 0,000,000 h "
                                                                                 "(000,000 days)") + 8,
                                    self.half_life.sizeHint().height())
        self.preset_box = QComboBox()
        self.preset_box.addItems(list(PRESETS))
        self.preset_box.setPlaceholderText("custom")
        self.preset_box.setToolTip("Start from a named preset: default (measured best) or seed (the seeds' formula)")
        self.preset_box.activated.connect(self._preset_chosen)
        self.reset_button = QPushButton("Reset")
        self.reset_button.setToolTip("Back to the default preset")
        self.save_button = QPushButton("Save as default")
        self.save_button.setToolTip("Persist these parameters; MCP search_semantic and the CLI will use them")
        self.reset_button.clicked.connect(self.reset)
        self.save_button.clicked.connect(self.save_as_default)
        buttons = QHBoxLayout()
        buttons.addWidget(self.half_life)
        buttons.addStretch(1)
        buttons.addWidget(self.preset_box)
        buttons.addWidget(self.reset_button)
        buttons.addWidget(self.save_button)
        self.inert_label = QLabel(wordWrap=True)
        self.inert_label.setVisible(False)
        self.inert: dict[str, str] = {}
        self._inert_asked = 0  # how many times the inert sliders were looked for: an older job stops
        self._inert_timer = single_shot_timer(self, INERT_DELAY_MS, self.find_inert)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.inert_label)
        layout.addWidget(scroll, 1)
        layout.addLayout(buttons)
        self.quality = QualityPanel(controller)
        layout.addWidget(self.quality)
        controller.params_changed.connect(self.show_params)
        controller.search_finished.connect(self._search_shown)
        controller.params_changed.connect(lambda _params: self._inert_timer.start())
        self.show_params(params)

    def _search_shown(self, _outcome: object) -> None:
        self._inert_asked += 1  # the job still looking at the previous search stops
        self._inert_timer.start()  # looked for once the typing pauses

    def find_inert(self) -> None:
        """Find the sliders that change nothing in the shown search (off the UI thread), then show them."""
        self._inert_asked += 1
        outcome = self.controller.last_outcome
        if outcome is None:
            self.show_inert({})
            return
        asked = self._inert_asked
        self.controller.run(inert_sliders, outcome.candidate_set, self.controller.params,
                            lambda: self._inert_asked != asked, on_success=self.show_inert, channel="tuning-inert")

    def show_inert(self, inert: dict[str, str] | None) -> None:
        """Grey the labels of ``inert`` sliders (their reason in the tooltip) and say which have no effect and why
        (``None``: a newer search made the answer stale, nothing changes)."""
        if inert is None:
            return
        self.inert = dict(inert)
        for name, label in self.labels.items():
            reason = inert.get(name)
            label.setEnabled(reason is None)
            label.setToolTip(self.controls[name].help if reason is None
                            else f"No effect on this search: {reason}")
        by_reason: dict[str, list[str]] = {}
        for name, reason in inert.items():
            by_reason.setdefault(reason, []).append(self.labels[name].text().rstrip(":"))
        featured = [reason for reason in by_reason if reason != NOTHING_HERE]
        if not featured:
            self.inert_label.setVisible(False)
            return
        lines = [f"<b>{', '.join(by_reason[r])}</b>: no effect yet — {r}." for r in featured]
        others = len(by_reason.get(NOTHING_HERE, []))
        if others:
            lines.append(f"{plural(others, 'other slider')} change nothing in these results (greyed).")
        self.inert_label.setText("<br>".join(lines))
        self.inert_label.setVisible(True)

    def show_params(self, params: ScoringParams) -> None:
        """Model → controls: every control shows ``params`` (signals blocked, nothing emitted)."""
        defaults = self.controller.default_params
        for name, control in self.controls.items():
            value = params.value(name)
            if control.value() != value:
                if isinstance(control, ChoiceControl):
                    control.set_value(str(value))
                else:
                    control.set_value(float(value))
            changed = value != defaults.value(name)  # parameters away from the default preset in bold
            if self.labels[name].font().bold() != changed:
                font = self.labels[name].font()
                font.setBold(changed)
                self.labels[name].setFont(font)
        matching = [name for name, values in PRESETS.items() if values == params]
        with signals_blocked(self.preset_box):
            self.preset_box.setCurrentIndex(self.preset_box.findText(matching[0]) if matching else -1)
        hours = params.half_life_hours
        self.half_life.setText(
            "half-life: ∞" if math.isinf(hours) else f"half-life: {hours:,.0f} h ({hours / 24:,.0f} days)"
        )

    def _control_edited(self, name: str, value: float | str) -> None:
        """Controls → model: build the new params and hand them to the controller."""
        try:
            params = self.controller.params.replace(**{name: value})
        except LimbicError as exc:
            self.controller.status_message.emit(str(exc))
            self.show_params(self.controller.params)
            return
        self.controller.set_params(params)

    def _preset_chosen(self, index: int) -> None:
        """A preset picked in the selector replaces every parameter."""
        self.controller.set_params(PRESETS[self.preset_box.itemText(index)])

    def reset(self) -> None:
        """Back to ``controller.default_params``."""
        self.controller.set_params(self.controller.default_params)

    def save_as_default(self) -> None:
        """Persist the current params (off the UI thread)."""
        self.controller.save_params()
