"""Decay plot: the temporal factor curve for the current decay model, λ and floor, with entities marked on it.

``temporal_factor(Δh) = max(TEMPORAL_FLOOR, f(Δh))`` with ``f`` the chosen decay model (``exp(−λ·Δh)`` by
default; docs/scoring.md "Limbic factors", docs/lifecycle.md "Decay models"), computed by the scorer's own
:func:`limbic.core.search.terms.decay`; Δh = hours since the last access (or since creation when never accessed).
The title names the model (its ``label``) and its half-life.
The x axis is in days. Markers are placed at each entity's age and move along the curve when λ or
the floor change; their ages come from the caller (search results or entity details), so drawing
never touches the database. Names are written beside the markers only where they do not overlap
another name (the selected entity first; :func:`limbic.gui.graph.style.place_labels`); every marker
names itself on hover.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QFontMetricsF, QResizeEvent
from PySide6.QtWidgets import QGraphicsItem, QVBoxLayout, QWidget

from limbic.core.search.params import ScoringParams
from limbic.core.search.terms import decay, temporal_key
from limbic.gui.graph.style import place_labels
from limbic.gui.widgets import single_shot_timer

CURVE_POINTS = 400
MAX_LABELS = 12  # marked entities named on the plot (a fixed pool of text items, reused)
LABEL_PADDING = 8.0  # pixels round a label's text (the text item's margin)
# The x axis spans one of these day counts, so it stays put (no new ticks to lay out and paint)
# while λ or the floor move by small steps.
SPANS_DAYS = (30, 45, 60, 90, 120, 180, 270, 365, 540, 730, 1095, 1460, 2190, 2920, 3650)


def plot_span_days(params: ScoringParams, ages_hours: Sequence[float] = ()) -> float:
    """Days shown on the x axis: until the curve meets its floor (×1.3), at least 30 days, at most
    10 years, and wide enough for the oldest marked entity — rounded up to one of ``SPANS_DAYS``."""
    if params.lambda_hourly > 0 and params.temporal_floor > 0:
        floor_hours = -math.log(params.temporal_floor) / params.lambda_hourly
    elif params.lambda_hourly > 0:
        floor_hours = 5 * math.log(2) / params.lambda_hourly
    else:
        floor_hours = 365 * 24
    span = floor_hours * 1.3 / 24
    if len(ages_hours):
        span = max(span, max(ages_hours) / 24 * 1.05)
    return float(next((days for days in SPANS_DAYS if days >= span), SPANS_DAYS[-1]))


class DecayPlot(QWidget):
    """A ``pyqtgraph.PlotWidget`` with the curve, the half-life line and entity markers.

    :meth:`set_params` redraws the curve; :meth:`set_entities` takes ``(name, age_hours)`` pairs.
    """

    def __init__(self, params: ScoringParams, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget()
        self.plot.setMenuEnabled(False)
        self.plot.setLabel("bottom", "days since last access")
        self.plot.setLabel("left", "temporal factor")
        self.plot.setYRange(0, 1.05, padding=0)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        for side in ("bottom", "left"):  # axes and grid drawn once into a pixmap, not again per curve change
            self.plot.getAxis(side).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.curve = self.plot.plot(pen=pg.mkPen("#4c9be8", width=2))
        self.half_life_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#999999", style=pg.QtCore.Qt.PenStyle.DashLine))
        self.plot.addItem(self.half_life_line)
        self.markers = pg.ScatterPlotItem(size=9, brush=pg.mkBrush("#f28e2b"), pen=pg.mkPen("#ffffff"), hoverable=True,
                                          tip=lambda x, y, data: f"{data}: {x:,.1f} days, temporal factor {y:.3f}")
        self.plot.addItem(self.markers)
        self.labels: list[pg.TextItem] = []
        for _ in range(MAX_LABELS):
            label = pg.TextItem("", anchor=(0, 1), color="#bbbbbb")
            label.hide()
            self.plot.addItem(label)
            self.labels.append(label)
        self._metrics = QFontMetricsF(self.labels[0].textItem.font())
        self._label_timer = single_shot_timer(self, 30, self._place_labels)
        self.plot.getViewBox().sigRangeChanged.connect(lambda *_: self._label_timer.start())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self._params = params
        self._entities: list[tuple[str, float]] = []
        self._span = 0.0  # days on the x axis now
        self._redraw()

    def set_params(self, params: ScoringParams) -> None:
        """Redraw for new params (nothing to do unless the temporal factor's parameters changed:
        :func:`~limbic.core.search.terms.temporal_key`)."""
        old, self._params = self._params, params
        if temporal_key(old) != temporal_key(params):
            self._redraw()

    def set_entities(self, entities: Sequence[tuple[str, float]]) -> None:
        """Mark entities: ``(name, age in hours)`` pairs (ages ≥ 0)."""
        entities = [(name, max(0.0, float(age))) for name, age in entities]
        if entities != self._entities:
            self._entities = entities
            self._redraw()

    def marked(self) -> list[tuple[str, float, float]]:
        """The markers drawn: ``(name, age in days, temporal factor)``."""
        if not self._entities:
            return []
        ages = np.array([a for _, a in self._entities])
        factors = decay(ages, self._params.temporal_floor, self._params)
        return [(n, a / 24, float(f)) for (n, a), f in zip(self._entities, factors, strict=True)]

    def _redraw(self) -> None:
        params = self._params
        span = plot_span_days(params, [a for _, a in self._entities])
        days = np.linspace(0.0, span, CURVE_POINTS)
        self.curve.setData(days, decay(days * 24, params.temporal_floor, params))
        hours = params.half_life_hours
        self.plot.setTitle(f"{params.decay.chosen.label} · half-life "
                           f"{'∞' if not math.isfinite(hours) else f'{hours / 24:.1f} days'}")
        self.half_life_line.setVisible(math.isfinite(hours) and hours / 24 <= span)
        if math.isfinite(hours):
            self.half_life_line.setValue(hours / 24)
        marked = self.marked()
        self.markers.setData([m[1] for m in marked], [m[2] for m in marked], data=[m[0] for m in marked])
        if span != self._span:
            self._span = span
            self.plot.setXRange(0, span, padding=0.02)
        self._label_timer.start()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._label_timer.start()

    def shown_labels(self) -> list[str]:
        """The names written on the plot now."""
        return [label.toPlainText() for label in self.labels if label.isVisible()]

    def label_boxes(self) -> list[tuple[float, float, float, float]]:
        """Scene rectangles ``(left, top, right, bottom)`` of the names written on the plot."""
        boxes = []
        for label in self.labels:
            if label.isVisible():
                rect = label.sceneBoundingRect()
                boxes.append((rect.left(), rect.top(), rect.right(), rect.bottom()))
        return boxes

    def _place_labels(self) -> None:
        """Name the markers where a name overlaps no other (in marking order: the selection first)."""
        for label in self.labels:
            label.hide()
        marked = self.marked()[: len(self.labels)]
        if not marked:
            return
        box = self.plot.getViewBox()
        bounds = box.sceneBoundingRect()
        scene = [box.mapViewToScene(QPointF(x, y)) for _, x, y in marked]
        pixels = np.array([[p.x(), p.y()] for p in scene])
        widths = np.array([self._metrics.horizontalAdvance(name) + LABEL_PADDING for name, _, _ in marked])
        height = self._metrics.height() + LABEL_PADDING
        discs = [(x - 5.0, y - 5.0, x + 5.0, y + 5.0) for x, y in pixels.tolist()]  # no name covers a marker
        chosen = place_labels(pixels, widths, list(range(len(marked))), height=height, offset=5.0, obstacles=discs,
                              bounds=(bounds.left(), bounds.top(), bounds.right(), bounds.bottom()),
                              max_labels=len(self.labels))
        for label, (i, (dx, dy)) in zip(self.labels, chosen, strict=False):
            name, x, y = marked[i]
            label.setText(name)
            label.setAnchor((-dx / widths[i], -dy / height))
            label.setPos(x, y)
            label.show()
