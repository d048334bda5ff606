"""Scoring inspector: the selected result's factors as bars and the limbic formula with its numbers.

Formula (seed 000 "Scoring Formula", "importance(e)", "temporal_factor(e)", "cooc_boost(e, R)",
"Status Deboosts", "Metadata Penalty", "Blending Formula"; seed 003 for the FTS-only base):

    limbic = base × (1 + β_sal·importance) × temporal × (1 + γ·cooc_boost) × status × metadata
    final  = w_c·base + (1 − w_c)·limbic_norm

The factors come from the ``SearchResult`` (computed by the core's scorer); the raw signals behind
importance and the temporal factor (access count, degree, access days, age) are read from the cached
``CandidateSet`` arrays, so the inspector never touches the database.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsItem, QLabel, QSplitter, QTextBrowser, QVBoxLayout, QWidget

from limbic.core.search.params import ScoringParams

SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True, slots=True)
class Factor:
    """One bar of the inspector: ``label``, ``value`` and the neutral value (1 for multipliers)."""

    label: str
    value: float
    neutral: float


@dataclass(frozen=True, slots=True)
class Explanation:
    """A result's score written out: ``factors`` for the bars, ``lines`` (HTML) for the formula."""

    name: str
    factors: tuple[Factor, ...]
    lines: tuple[str, ...]


def _signals(candidates: Any, entity_id: int) -> dict[str, float] | None:
    """Raw signals of one candidate and the set maxima, or ``None`` when it is not in the set."""
    if candidates is None:
        return None
    hits = np.flatnonzero(candidates.entity_ids == entity_id)
    if hits.size == 0:
        return None
    i = int(hits[0])
    last = float(candidates.last_access[i])
    reference = float(candidates.created_at[i]) if math.isnan(last) else last
    return {
        "access_count": float(candidates.access_count[i]),
        "max_access": float(candidates.access_count.max()),
        "access_days": float(candidates.access_days[i]),
        "max_days": float(candidates.access_days.max()),
        "degree": float(candidates.degree[i]),
        "age_hours": max(0.0, (candidates.now - reference) / SECONDS_PER_HOUR),
        "never_accessed": math.isnan(last),
    }


def _log_ratio(value: float, maximum: float) -> float:
    return math.log2(1 + value) / math.log2(1 + maximum) if maximum > 0 else 0.0


def explain(result: Any, params: ScoringParams, candidates: Any = None) -> Explanation:
    """Write out ``result``'s score with ``params`` (the params the result was ranked with).

    ``candidates`` (the ``CandidateSet`` the result came from) adds the raw signals behind
    importance and the temporal factor; without it those lines show the factor values only.
    """
    r = result
    cooc_factor = 1 + params.gamma * r.cooc_boost
    w = params.strategy_cosine_weight(r.routing_strategy)
    limbic_norm = (r.final_score - w * r.base_relevance) / (1 - w) if w < 1 else float("nan")
    factors = (
        Factor("base", r.base_relevance, 0.0),
        Factor("importance", r.importance, 0.0),
        Factor("salience ×", r.salience_boost, 1.0),
        Factor("temporal ×", r.temporal_factor, 1.0),
        Factor("co-occ ×", cooc_factor, 1.0),
        Factor("status ×", r.status_multiplier, 1.0),
        Factor("metadata ×", r.metadata_penalty, 1.0),
        Factor("limbic", r.limbic_score, 0.0),
        Factor("final", r.final_score, 0.0),
    )
    lines: list[str] = []
    if r.distance is not None:
        lines.append(f"base = cosine = max(0, 1 − {r.distance:.4f}) = <b>{r.base_relevance:.4f}</b>")
    else:
        lines.append(f"base = 0.2 + 0.6 × norm_rrf = <b>{r.base_relevance:.4f}</b> (found by full text only)")
    s = _signals(candidates, r.entity_id)
    if s is not None:
        access = _log_ratio(s["access_count"], s["max_access"])
        degree = min(s["degree"], params.d_max) / params.d_max
        consolidation = _log_ratio(s["access_days"], s["max_days"])
        if s["max_access"] > 0:
            lines.append(
                f"access = log₂(1+{s['access_count']:.0f}) / log₂(1+{s['max_access']:.0f}) = {access:.4f}; "
                f"degree = min({s['degree']:.0f}, {params.d_max:.0f}) / {params.d_max:.0f} = {degree:.4f}; "
                f"consolidation = log₂(1+{s['access_days']:.0f}) / log₂(1+{s['max_days']:.0f}) = {consolidation:.4f}"
            )
        else:
            lines.append("access = 0: no candidate of this search has been accessed yet, so importance is 0")
        lines.append(
            f"importance = {access:.4f} × (1 + {params.beta_deg:g}×{degree:.4f}) × "
            f"(1 + {params.alpha_cons:g}×{consolidation:.4f}) = <b>{r.importance:.4f}</b>"
        )
        since = "creation (never accessed)" if s["never_accessed"] else "last access"
        lines.append(
            f"temporal = max({params.temporal_floor:g}, exp(−{params.lambda_hourly:g} × {s['age_hours']:,.0f} h)) "
            f"= <b>{r.temporal_factor:.4f}</b> &nbsp;(age since {since}: {s['age_hours'] / 24:,.1f} days)"
        )
    else:
        lines.append(f"importance = <b>{r.importance:.4f}</b>; temporal = <b>{r.temporal_factor:.4f}</b>")
    lines.append(f"salience = 1 + {params.beta_sal:g} × {r.importance:.4f} = <b>{r.salience_boost:.4f}</b>")
    lines.append(f"co-occurrence = 1 + {params.gamma:g} × {r.cooc_boost:.4f} = <b>{cooc_factor:.4f}</b>")
    lines.append(f"status ({escape(r.status)}) × <b>{r.status_multiplier:g}</b>; "
                 f"metadata × <b>{r.metadata_penalty:g}</b>")
    lines.append(
        f"limbic = {r.base_relevance:.4f} × {r.salience_boost:.4f} × {r.temporal_factor:.4f} × {cooc_factor:.4f}"
        f" × {r.status_multiplier:g} × {r.metadata_penalty:g} = <b>{r.limbic_score:.4f}</b>"
    )
    norm = "" if math.isnan(limbic_norm) else f"{limbic_norm:.4f}"
    lines.append(
        f"final ({r.routing_strategy.replace('_', ' ')}) = {w:g} × {r.base_relevance:.4f} + "
        f"{1 - w:g} × limbic_norm {norm} = <b>{r.final_score:.4f}</b>"
    )
    return Explanation(r.name, factors, tuple(lines))


class ScoringInspector(QWidget):
    """Horizontal bars (pyqtgraph ``BarGraphItem``, one call with whole arrays) above the written formula.

    Multipliers are green above their neutral value 1, red below it, grey at it (dashed line at 1).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("Select a result to see how it was scored")
        self.title.setWordWrap(True)
        self.plot = pg.PlotWidget()
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.showGrid(x=True, alpha=0.2)
        for side in ("bottom", "left"):  # axes and grid drawn once into a pixmap, not again per bar change
            self.plot.getAxis(side).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.plot.getViewBox().invertY(True)
        self.bars = pg.BarGraphItem(x0=[], y=[], width=[], height=0.65)
        self.neutral = pg.InfiniteLine(pos=1.0, angle=90, pen=pg.mkPen("#888888", style=Qt.PenStyle.DashLine))
        self.plot.addItem(self.bars)
        self.plot.addItem(self.neutral)
        self.value_labels: list[pg.TextItem] = []
        self._ticks: list = []
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.plot)
        splitter.addWidget(self.text)
        splitter.setSizes([230, 200])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(splitter, 1)
        self.explanation: Explanation | None = None

    def show_result(self, result: Any, params: ScoringParams, candidates: Any = None) -> None:
        """Show ``result`` (a ``SearchResult``) ranked with ``params``; ``candidates`` adds raw signals."""
        previous = self.explanation
        self.explanation = explain(result, params, candidates)
        factors = self.explanation.factors
        y = np.arange(len(factors), dtype=np.float64)
        widths = np.array([f.value for f in factors], dtype=np.float64)
        if previous is None or previous.factors != factors:  # bars and labels only when a value moved
            self._draw_bars(factors, y, widths)
        ticks = [(i, f.label) for i, f in enumerate(factors)]
        if ticks != self._ticks:
            self._ticks = ticks
            self.plot.getAxis("left").setTicks([ticks])
            self.plot.setYRange(-0.6, len(factors) - 0.4, padding=0)
        x_max = max(1.6, float(widths.max()) * 1.25)
        if abs(self.plot.viewRange()[0][1] - x_max) > 0.05 * x_max:
            self.plot.setXRange(0, x_max, padding=0)
        title = f"<b>{escape(result.name)}</b> — {escape(result.entity_type)}, rank {result.rank}"
        if title != self.title.text():
            self.title.setText(title)
        if previous is None or previous.lines != self.explanation.lines:
            self._set_text("<div style='font-family: monospace'>" + "<br>".join(self.explanation.lines) + "</div>")

    def _draw_bars(self, factors: tuple[Factor, ...], y: np.ndarray, widths: np.ndarray) -> None:
        self.bars.setOpts(x0=np.zeros_like(y), y=y, width=widths, height=0.65,
                          brushes=[self._colour(f) for f in factors], pens=[None] * len(factors))
        while len(self.value_labels) < len(factors):  # a pool of text items, created once
            label = pg.TextItem("", anchor=(0, 0.5), color="#888888")
            self.plot.addItem(label)
            self.value_labels.append(label)
        for i, label in enumerate(self.value_labels):
            label.setVisible(i < len(factors))
            if i < len(factors):
                text = f"{factors[i].value:.3f}"
                if label.toPlainText() != text:
                    label.setText(text)
                label.setPos(factors[i].value, i)

    def _set_text(self, html: str) -> None:
        """New formula text, keeping where the reader has scrolled to."""
        bar = self.text.verticalScrollBar()
        position = bar.value()
        self.text.setHtml(html)
        bar.setValue(min(position, bar.maximum()))

    def clear(self) -> None:
        self.explanation = None
        self.bars.setOpts(x0=[], y=[], width=[])
        for label in self.value_labels:
            label.hide()
        self.title.setText("Select a result to see how it was scored")
        self.text.clear()

    @staticmethod
    def _colour(factor: Factor) -> Any:
        if factor.neutral == 1.0:
            if factor.value > 1.0005:
                return pg.mkBrush("#59a14f")
            if factor.value < 0.9995:
                return pg.mkBrush("#e15759")
            return pg.mkBrush("#9c9c9c")
        return pg.mkBrush("#4c9be8")
