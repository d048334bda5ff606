"""Scoring inspector: the selected result's factors as bars and the formula written out with its numbers.

Every number comes from the core's :func:`limbic.core.search.scoring.explain` (docs/scoring.md states the
formulas of both presets); this module only formats them, and reads nothing from the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsItem, QLabel, QSplitter, QTextBrowser, QVBoxLayout, QWidget

from limbic.core.search import scoring
from limbic.core.search.params import ScoringParams


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
    entity_type: str
    rank: int
    factors: tuple[Factor, ...]
    lines: tuple[str, ...]


def _dated(e: dict[str, Any], params: ScoringParams) -> bool:
    return bool(params.date_weight) and e["date_distance"] is not None


def _base_line(e: dict[str, Any], params: ScoringParams) -> str:
    if params.relevance_fusion:
        cosine = "—" if e["cosine_distance"] is None else f"{1 - e['cosine_distance']:.4f}"
        best_cosine = "—" if e["best_cosine"] is None else f"{e['best_cosine']:.4f}"
        power = "" if params.bm25_exponent == 1 else f"^{params.bm25_exponent:g}"
        bm25 = "0 (not found by full text)" if e["bm25"] is None else \
            f"({e['bm25']:.3f} / {e['bm25_denominator']:.3f}){power}"
        w = params.bm25_weight
        name = "entity" if params.observation_weight else (
            "own" if params.context_weight or _dated(e, params) else "base")
        return (f"{name} = {1 - w:g} × cosine {cosine} / best {best_cosine} + {w:g} × BM25 {bm25}"
                f" = {1 - w:g} × {e['cosine_rel']:.4f} + {w:g} × {e['bm25_rel']:.4f} = <b>{e['entity']:.4f}</b>")
    name = "own" if params.context_weight or _dated(e, params) else "base"
    if e["distance"] is not None:
        return f"{name} = cosine = max(0, 1 − {e['distance']:.4f}) = <b>{e['own']:.4f}</b>"
    return f"{name} = 0.2 + 0.6 × norm_rrf = <b>{e['own']:.4f}</b> (found by full text only)"


def _observation_line(e: dict[str, Any], params: ScoringParams) -> str:
    mu = params.observation_weight
    name = "own" if params.context_weight or _dated(e, params) else "base"
    return (f"{name} = {1 - mu:g} × entity {e['entity']:.4f} + {mu:g} × best observation {e['observation']:.4f}"
            f" = <b>{e['own']:.4f}</b> &nbsp;(best observation: its own cosine and keyword match, fused as above)")


def _context_line(e: dict[str, Any], params: ScoringParams) -> str:
    a = params.context_weight
    name = "in context" if _dated(e, params) else "base"
    return (f"{name} = own + {a:g} × max(0, context {e['context']:.4f} − own) = <b>{e['in_context']:.4f}</b>"
            f" &nbsp;(context: the best relevance among the memories of its type written just before and after it)")


def _date_line(e: dict[str, Any], params: ScoringParams) -> str:
    before = "in context" if params.context_weight else "own"
    days = e["date_distance"]
    when = "within it" if days == 0 else f"{days:.3g} days from it"
    return (f"base = {before} {e['in_context']:.4f} × (1 + {params.date_weight:g} × exp(−{days:.3g} d"
            f" / {params.date_tolerance_days:g} d)) = {e['in_context']:.4f} × (1 + {params.date_weight:g} ×"
            f" {e['date_match']:.4f}) = <b>{e['base']:.4f}</b> &nbsp;(the query names a date; this memory was"
            f" written {when})")


def _feedback_line(e: dict[str, Any], params: ScoringParams) -> str:
    similarity = e["feedback_similarity"]
    if similarity is None:
        return f"feedback = <b>{e['feedback_boost']:g}</b> &nbsp;(never used after an earlier search)"
    floor = params.feedback_floor
    return (f"feedback = 1 + {params.feedback_weight:g} × clip((similarity {similarity:.4f} − {floor:g}) /"
            f" (1 − {floor:g}), 0, 1) = <b>{e['feedback_boost']:.4f}</b> &nbsp;(used after an earlier query"
            f" this close to this one)")


def _temporal_line(e: dict[str, Any], params: ScoringParams) -> str:
    decay = f"max({params.temporal_floor:g}, {params.decay.written(params.lambda_hourly, e['age_hours'])})"
    since = "creation (never accessed)" if e["never_accessed"] else "last access"
    if e["never_accessed"] and params.created_decay != 1.0:
        decay = f"1 − {params.created_decay:g} × (1 − {decay})"
    return f"temporal = {decay} = <b>{e['temporal_factor']:.4f}</b> &nbsp;(age since {since}: {e['age_hours'] / 24:,.1f} days)"


def describe(candidates: Any, params: ScoringParams, index: int) -> Explanation:
    """Write out the score of candidate ``index`` (0-based in the ``CandidateSet``) ranked with ``params``."""
    e = scoring.explain(candidates, params, index)
    cooc_factor = e["cooc_factor"]
    kappa = params.prior_exponent
    factors = (
        Factor("base", e["base"], 0.0),
        Factor("importance", e["importance"], 0.0),
        Factor("salience ×", e["salience_boost"], 1.0),
        Factor("temporal ×", e["temporal_factor"], 1.0),
        Factor("co-occ ×", cooc_factor, 1.0),
        Factor("feedback ×", e["feedback_boost"], 1.0),
        Factor("status ×", e["status_multiplier"], 1.0),
        Factor("metadata ×", e["metadata_penalty"], 1.0),
        Factor("limbic", e["limbic_score"], 0.0),
        Factor("final", e["final_score"], 0.0),
    )
    lines = [_base_line(e, params)]
    if params.observation_weight and params.relevance_fusion:
        lines.append(_observation_line(e, params))
    if params.context_weight:
        lines.append(_context_line(e, params))
    if _dated(e, params):
        lines.append(_date_line(e, params))
    if e["max_access"] > 0:
        lines.append(
            f"access = log₂(1+{e['access_count']}) / log₂(1+{e['max_access']}) = {e['access_norm']:.4f}; "
            f"degree = min({e['degree']}, {params.d_max:.0f}) / {params.d_max:.0f} = {e['degree_norm']:.4f}; "
            f"consolidation = log₂(1+{e['access_days']}) / log₂(1+{e['max_days']}) = {e['consolidation']:.4f}")
    else:
        lines.append("access = 0: no candidate of this search has been accessed yet, so importance is 0")
    lines.append(
        f"importance = {e['access_norm']:.4f} × (1 + {params.beta_deg:g}×{e['degree_norm']:.4f}) × "
        f"(1 + {params.alpha_cons:g}×{e['consolidation']:.4f}) = <b>{e['importance']:.4f}</b>")
    lines.append(_temporal_line(e, params))
    lines.append(f"salience = 1 + {params.beta_sal:g} × {e['importance']:.4f} = <b>{e['salience_boost']:.4f}</b>")
    lines.append(f"co-occurrence = 1 + {params.gamma:g} × {e['cooc_boost']:.4f} = <b>{cooc_factor:.4f}</b>")
    lines.append(_feedback_line(e, params))
    lines.append(f"status ({escape(str(e['status']))}) × <b>{e['status_multiplier']:g}</b>; "
                 f"metadata × <b>{e['metadata_penalty']:g}</b>")
    product = (f"{e['salience_boost']:.4f} × {e['temporal_factor']:.4f} × {cooc_factor:.4f}"
               f" × {e['feedback_boost']:.4f} × {e['status_multiplier']:g} × {e['metadata_penalty']:g}")
    prior = product if kappa == 1.0 else f"({product})^{kappa:g}"
    lines.append(f"limbic = {e['base']:.4f} × {prior} = <b>{e['limbic_score']:.4f}</b>")
    norm = "limbic / max limbic" if params.limbic_ratio else "min–max of limbic"
    w = e["cosine_weight"]
    lines.append(
        f"final ({str(e['strategy']).replace('_', ' ')}) = {w:g} × {e['base']:.4f} + "
        f"{1 - w:g} × {e['limbic_norm']:.4f} ({norm}) = <b>{e['final_score']:.4f}</b>")
    return Explanation(str(e["name"]), str(e["entity_type"]), int(e["rank"]), factors, tuple(lines))


EMPTY_TEXT = "Select a result to see how it was scored, factor by factor."


class ScoringInspector(QWidget):
    """Horizontal bars (pyqtgraph ``BarGraphItem``, one call with whole arrays) above the written formula.

    Multipliers are green above their neutral value 1, red below it, grey at it (dashed line at 1).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(EMPTY_TEXT)
        self.title.setWordWrap(True)
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
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
        self.details = splitter  # hidden while nothing is selected: no empty axes, the title says what to do
        splitter.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(splitter, 1)
        self.explanation: Explanation | None = None

    def show_result(self, result: Any, params: ScoringParams, candidates: Any) -> None:
        """Show ``result`` (a ``SearchResult`` of the ``CandidateSet`` ``candidates``) ranked with ``params``."""
        hits = [] if candidates is None else np.flatnonzero(candidates.entity_ids == result.entity_id).tolist()
        if not hits:
            self.clear()
            return
        previous = self.explanation
        self.explanation = describe(candidates, params, hits[0])
        if previous is None:
            self.title.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
            self.details.setVisible(True)
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
        shown = self.explanation
        title = f"<b>{escape(shown.name)}</b> — {escape(shown.entity_type)}, rank {shown.rank}"
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
        self.title.setText(EMPTY_TEXT)
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.details.setVisible(False)
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
