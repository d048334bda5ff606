""""Why not this one?": pin any entity by name and see where it ranks and what keeps it out of the top K.

The pinned entity's rank among all candidates of the shown search, and its score written out factor by
factor beside the K-th result's, both from the core's :func:`limbic.core.search.scoring.explain` (the
numbers the inspector shows); the factor with the smallest ratio to the K-th result's is the one that
keeps it down. It follows the sliders like the results (a re-rank of the cached candidates, no SQL).
An entity the search did not fetch has no rank: the panel says so (and whether the name exists at all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Any

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtWidgets import QCompleter, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from limbic.core.errors import NotFoundError
from limbic.core.search.params import ScoringParams
from limbic.core.search.scoring import explain
from limbic.gui.controller import AppController

# (label, key of explain()'s answer, short column title); "cooc" is the factor 1 + γ·cooc_boost
FACTORS = (("base", "base", "base"), ("salience ×", "salience_boost", "sal×"), ("temporal ×", "temporal_factor", "temp×"),
           ("co-occurrence ×", "cooc", "co-oc×"), ("feedback ×", "feedback_boost", "fb×"),
           ("status ×", "status_multiplier", "stat×"), ("metadata ×", "metadata_penalty", "meta×"),
           ("limbic", "limbic_score", "limbic"), ("final", "final_score", "final"))
NAME_CHARS = 36
MULTIPLIERS = ("base", "salience_boost", "temporal_factor", "cooc", "feedback_boost", "status_multiplier",
               "metadata_penalty")


@dataclass(frozen=True, slots=True)
class Comparison:
    """The pinned entity against the K-th result: ``rank`` among ``candidates`` (``None``: not a candidate),
    ``rows`` of ``(label, pinned value, K-th value)`` and the factor that keeps it down (``weakest``, its
    label; "" when it is in the top K or nothing is lower)."""

    name: str
    rank: int | None
    candidates: int
    k: int
    kth_name: str
    rows: tuple[tuple[str, float, float], ...]
    weakest: str


def _factors(candidates: Any, params: ScoringParams, index: int) -> dict[str, Any]:
    e = explain(candidates, params, index)
    e["cooc"] = 1 + params.gamma * e["cooc_boost"]
    return e


def compare(candidates: Any, params: ScoringParams, name: str, kth_name: str, k: int) -> Comparison:
    """``name`` against ``kth_name`` (the last shown result, rank ``k``) in the ``CandidateSet`` scored with ``params``."""
    names = list(candidates.names)
    if name not in names or kth_name not in names:
        return Comparison(name, None, len(names), k, kth_name, (), "")
    pinned, kth = _factors(candidates, params, names.index(name)), _factors(candidates, params, names.index(kth_name))
    rows = tuple((label, float(pinned[key]), float(kth[key])) for label, key, _ in FACTORS)
    weakest = ""
    if pinned["rank"] > k:
        ratios = {label: math.log(max(float(pinned[key]), 1e-12) / max(float(kth[key]), 1e-12))
                  for label, key, _ in FACTORS if key in MULTIPLIERS}
        label, ratio = min(ratios.items(), key=lambda item: item[1])
        weakest = label if ratio < 0 else ""
    return Comparison(name, int(pinned["rank"]), len(names), k, kth_name, rows, weakest)


def _short(name: str) -> str:
    return escape(name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…")


def describe(c: Comparison) -> str:
    """The comparison as rich text for the panel (one short line each: no wrapping, long names elided)."""
    who = f"<b>{_short(c.name)}</b>"
    if c.rank is None:
        return f"{who} is not among the {c.candidates:,} candidates<br>this search fetched (raise “expansion” to fetch more)."
    head = f"{who} ranks <b>{c.rank}</b> of {c.candidates:,} candidates"
    head += f" — in the top {c.k}." if c.rank <= c.k else f";<br>the top {c.k} ends with <b>{_short(c.kth_name)}</b>."
    titles = "".join(f"<th align=right title='{escape(label)}'>{short}</th>" for (label, _, short) in FACTORS)
    pinned_cells = "".join(f"<td align=right>{value:.3f}</td>" for _, value, _ in c.rows)
    kth_cells = "".join(f"<td align=right>{value:.3f}</td>" for _, _, value in c.rows)
    table = (f"<table cellspacing=0 cellpadding=2 style='font-size: small'><tr><th></th>{titles}</tr>"
             f"<tr><td>pinned</td>{pinned_cells}</tr><tr><td>rank {c.k}</td>{kth_cells}</tr></table>")
    if not c.weakest:
        return f"{head}{table}"
    mine, theirs = next((m, t) for label, m, t in c.rows if label == c.weakest)
    verdict = (f"Kept down most by <b>{escape(c.weakest.rstrip(' ×'))}</b>: {mine:.3f} against {theirs:.3f}"
               f" (×{mine / theirs:.2f})" if theirs else f"Kept down most by <b>{escape(c.weakest)}</b>")
    return f"{head}{table}{verdict}"


class PinPanel(QWidget):
    """The name field (completing from the search's candidates), *Pin* and *Clear*, and the comparison.
    ``pinned_changed(name or None)`` tells the graph view which entity to mark."""

    pinned_changed = Signal(object)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.pinned: str | None = None
        self.comparison: Comparison | None = None
        self.field = QLineEdit(placeholderText="Why not this one? Pin an entity by name")
        self.field.setToolTip("Compare any entity with the last result of the top K: its rank and each factor")
        self.names = QStringListModel(self)
        completer = QCompleter(self.names, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.field.setCompleter(completer)
        self.pin_button = QPushButton("Pin")
        self.clear_button = QPushButton("Clear")
        self.text = QLabel()  # not word-wrapped: a wrapped label would make the dock scroll instead of the table shrink
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setVisible(False)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.field, 1)
        row.addWidget(self.pin_button)
        row.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.text)
        self.pin_button.clicked.connect(lambda: self.pin(self.field.text()))
        self.field.returnPressed.connect(lambda: self.pin(self.field.text()))
        self.clear_button.clicked.connect(lambda: self.pin(""))
        controller.search_finished.connect(self._search_finished)
        controller.results_reranked.connect(lambda _results: self.refresh())

    def pin(self, name: str) -> None:
        """Pin ``name`` (an empty name unpins) and show how it compares."""
        self.pinned = name.strip() or None
        if self.field.text() != (self.pinned or ""):
            self.field.setText(self.pinned or "")
        self.pinned_changed.emit(self.pinned)
        self.refresh()

    def refresh(self) -> None:
        """Compare the pinned entity again with the current parameters (pure numpy over the cached candidates)."""
        outcome, results = self.controller.last_outcome, self.controller.results
        if self.pinned is None or outcome is None or not results:
            self.comparison = None
            self.text.setText("Search first, then pin an entity to compare it." if self.pinned else "")
            self.text.setVisible(self.pinned is not None)
            return
        self.comparison = compare(outcome.candidate_set, self.controller.params, self.pinned, results[-1].name,
                                  len(results))
        self.text.setText(describe(self.comparison))
        self.text.setVisible(True)
        if self.comparison.rank is None:
            self.controller.run(self.controller.service.entities.get_entity, self.pinned,
                                on_success=lambda _found: None, on_failure=self._unknown, channel="pin-exists")

    def _unknown(self, error: BaseException) -> None:
        if isinstance(error, NotFoundError) and self.comparison is not None and self.comparison.rank is None:
            self.text.setText(f"No entity is named <b>{_short(self.comparison.name)}</b>.")

    def _search_finished(self, outcome: Any) -> None:
        self.names.setStringList(sorted(outcome.candidate_set.names) if outcome is not None else [])
        self.refresh()
