"""Search panel: a debounced query box, the FTS-only banner (with *Install model*), the ranked results table,
*Mark as useful* and the way to "Why not this one?" (:mod:`limbic.gui.search.pin`, its own panel: the main
window docks ``pin`` beside the other tools, so the results keep their room).

Typing waits ``DEBOUNCE_MS`` before searching; Enter searches at once. The search itself runs off
the UI thread through ``controller.search`` (stale answers dropped by the runner's generation
counter). Δrank compares every row with the ranking of the same cached candidate set under the
default parameters; that ranking is computed once per search (pure numpy, ``service.search.rerank``).
Selecting a row selects the entity in the controller (the inspector and the graph follow) and records
nothing: looking is not using. *Mark as useful* (Ctrl+U) on the selected row records one use and labels
the search, as an agent's MCP ``mark_used`` does; the search then runs again, so the new use ranks at once.
The table fits its dock without a horizontal scroll bar: the name column takes the width left by the others,
which are as wide as their header or widest value needs; a long name is elided in the middle
(``src/…/MoonRenderer.js``), whole in its tooltip.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from limbic.gui.controller import AppController
from limbic.gui.search.pin import PinPanel
from limbic.gui.search.results_model import COLUMNS, DELTA_LEGEND, STRETCH_COLUMN, ResultsModel
from limbic.gui.startup import embedding_state
from limbic.gui.widgets import ElidedLabel, plural

DEBOUNCE_MS = 250
PENDING_POLL_MS = 1000  # how often the count of entities not embedded yet is read while there are some
FTS_ONLY_TEXT = "No embedding model: search is full-text only (BM25). Install one to search by meaning."
EMBEDDING_TEXT = "Embedding {embedded:,} of {total:,} entities: search is full text (BM25) until done."
STALE_TEXT = ("{embedded:,} of {total:,} entities have vectors of this model: search is full text (BM25) until they "
              "are re-embedded (Model ▸ status).")
SAMPLE_VALUES = {"rank": "000", "final": "0.0000", "Δrank": "▼000", "limbic": "0.0000", "base": "0.0000"}
CELL_PADDING = 14  # pixels around a cell's text (the style's margins and the grid line)


class SearchPanel(QWidget):
    """Query box + results table bound to an :class:`AppController`.

    ``result_activated(SearchResult)`` is emitted when the user picks a row (after the controller
    selection was updated); selections made elsewhere are shown without being echoed.
    """

    result_activated = Signal(object)
    install_model_requested = Signal()
    why_not_requested = Signal()

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.query = QLineEdit()
        self.query.setPlaceholderText("Search memory…  (Ctrl+F)")
        self.query.setClearButtonEnabled(True)
        self.limit = QSpinBox()
        self.limit.setRange(1, 200)
        self.limit.setValue(10)
        self.limit.setPrefix("top ")
        self.limit.setToolTip("Number of results (top-K)")
        self.banner = QWidget()
        self.banner.setObjectName("ftsOnlyBanner")
        self.banner.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.banner.setStyleSheet("QWidget#ftsOnlyBanner { background: #8a6d1f; } "
                                  "QWidget#ftsOnlyBanner QLabel { color: white; }")
        self.banner_text = banner_text = ElidedLabel(FTS_ONLY_TEXT, minimum=60)
        self.install_button = QPushButton("Install model")
        self.install_button.setToolTip("Download and install all-MiniLM-L6-v2 (83 MB, pinned hashes); the progress "
                                       "shows over the graph")
        self.install_button.clicked.connect(self.install_model_requested)
        banner_row = QHBoxLayout(self.banner)
        banner_row.setContentsMargins(6, 3, 6, 3)
        banner_row.addWidget(banner_text, 1)
        banner_row.addWidget(self.install_button)
        self.banner.setVisible(False)
        self.summary = ElidedLabel(minimum=60)
        self.pending_label = ElidedLabel(minimum=60)
        self.pending_label.setVisible(False)
        self.pending_timer = QTimer(self)
        self.pending_timer.setInterval(PENDING_POLL_MS)
        self.pending_timer.timeout.connect(self._poll_pending)
        self.legend = QLabel(DELTA_LEGEND)
        self.legend.setWordWrap(True)  # in a narrow side column it wraps, and the buttons beside it stay whole
        self.legend.setToolTip("Δrank: places gained (▲) or lost (▼) against the default parameters; the row colour "
                               "says the same")
        self.useful_button = QPushButton("Mark as useful")
        self.useful_button.setShortcut(QKeySequence("Ctrl+U"))
        self.useful_button.setToolTip("The selected result helped (Ctrl+U): records one use and labels this search "
                                      "for the ranking's quality figures, as an agent's mark_used does. Selecting "
                                      "or inspecting a result records nothing.")
        self.useful_button.setEnabled(False)
        self.useful_button.clicked.connect(self.mark_useful)
        self.why_button = QPushButton("Why not…?")
        self.why_button.setToolTip("Why not this one? Pin any entity and see where it ranks and what keeps it out "
                                   "of the top K (its own panel)")
        self.why_button.clicked.connect(self.why_not_requested)
        self.pin = PinPanel(controller)  # shown by the main window as its own panel
        self.model = ResultsModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        # compact rows (the text's height and 4 px): seven results show at 1366×768, where the search gets 42 %
        # of the side column
        self.table.verticalHeader().setMinimumSectionSize(1)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 4)
        self.table.setAlternatingRowColors(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setWordWrap(False)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self._fit_columns()
        top = QHBoxLayout()
        top.addWidget(self.query, 1)
        top.addWidget(self.limit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.banner)
        layout.addWidget(self.table, 1)
        under = QHBoxLayout()
        under.addWidget(self.legend, 1)
        for button in (self.why_button, self.useful_button):  # whole, however narrow the column: the legend wraps
            button.setMinimumWidth(button.sizeHint().width())
            under.addWidget(button)
        layout.addLayout(under)
        layout.addWidget(self.summary)
        layout.addWidget(self.pending_label)

        self.debounce = QTimer(self)
        self.debounce.setSingleShot(True)
        self.debounce.setInterval(DEBOUNCE_MS)
        self.debounce.timeout.connect(self.search_now)
        self.query.textEdited.connect(lambda _: self.debounce.start())
        self.query.returnPressed.connect(self.search_now)
        self.limit.valueChanged.connect(lambda _: self.debounce.start())
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)

        controller.search_finished.connect(self.show_outcome)
        controller.results_reranked.connect(self.show_reranked)
        controller.selection_changed.connect(self._follow_selection)
        controller.model_attached.connect(self._model_attached)
        no_model = controller.service.embedder is None  # offered before the first search too
        self.banner.setVisible(no_model)
        self.install_button.setVisible(no_model)

    def _fit_columns(self) -> None:
        """Every column but the name as wide as its header or its widest value; the name gets the rest."""
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        metrics, header_metrics = self.table.fontMetrics(), header.fontMetrics()
        for column, name in enumerate(COLUMNS):
            if column == STRETCH_COLUMN:
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
                continue
            width = max(metrics.horizontalAdvance(SAMPLE_VALUES.get(name, name)),
                        header_metrics.horizontalAdvance(name)) + CELL_PADDING
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(column, width)
        header.setMinimumSectionSize(24)

    # --- actions --------------------------------------------------------------------------------

    def focus_query(self) -> None:
        self.query.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query.selectAll()

    def search_now(self) -> None:
        """Search the current text at once (cancels a pending debounce)."""
        self.debounce.stop()
        self.controller.search(self.query.text(), self.limit.value())

    def mark_useful(self) -> int:
        """*Mark as useful* on the selected result (``controller.mark_useful``); −1 when none is selected."""
        row = self.table.selectionModel().currentIndex().row()
        if row < 0 or row >= self.model.rowCount():
            return -1
        return self.controller.mark_useful([self.model.result(row).name])

    # --- controller → view ----------------------------------------------------------------------

    def show_outcome(self, outcome: Any) -> None:
        """A new search answered (or ``None``: cleared)."""
        no_model = self.controller.service.embedder is None
        if outcome is None:
            self.model.clear()
            self.summary.setText("")
            self.banner.setVisible(no_model)
            self.useful_button.setEnabled(False)
            self.show_pending(0)
            return
        candidates = outcome.candidate_set
        self.banner.setVisible(no_model or candidates.mode == "fts_only")
        self._say_embedding(outcome.pending_vectors, None if no_model else outcome.embedded)
        self.install_button.setVisible(no_model)
        default_ranks = self._default_ranks(outcome)
        self._show(list(outcome.results), default_ranks)
        dates = f" · memories of {', '.join(outcome.dates)} lifted" if outcome.dates else ""
        graph = " · KNN through the HNSW graph" if outcome.knn == "graph" else ""
        self.summary.setText(
            f"{len(outcome.results)} of {plural(len(candidates), 'candidate')} · {candidates.mode.replace('_', ' ')} · "
            f"routing {candidates.strategy.replace('_', ' ')}{dates}{graph}"
        )
        self.show_pending(outcome.pending_vectors)

    def show_pending(self, pending: int) -> None:
        """``pending`` entities are not embedded yet: say so (kept live, read every ``PENDING_POLL_MS`` off the UI
        thread) until none is left; the search then runs again, by meaning too."""
        was = self.pending_label.isVisibleTo(self)
        self.pending_label.setVisible(pending > 0)
        if pending > 0:
            verb = "is" if pending == 1 else "are"
            self.pending_label.setText(f"{plural(pending, 'entity')} {verb} not embedded yet (found by keyword only)")
            self.pending_timer.start()
            return
        self.pending_timer.stop()
        if was and self.controller.last_outcome is not None:
            self.controller.refresh_search(record=False)

    def _model_attached(self, _name: str) -> None:
        """A model was loaded into the running session: the shown search runs again (on full text until the
        memory is embedded; the banner says how far), and the pending count is followed."""
        self.install_button.setVisible(False)
        if self.controller.refresh_search(record=False) < 0:
            self.banner.setVisible(False)
        self._poll_pending()

    def _say_embedding(self, pending: int, embedded: tuple[int, int] | None) -> None:
        """The banner's text: no model, or how far the embedding search waits for is (``embedded`` of all)."""
        if embedded is None:
            self.banner_text.setText(FTS_ONLY_TEXT)
            return
        waiting = EMBEDDING_TEXT if pending else STALE_TEXT
        self.banner_text.setText(waiting.format(embedded=embedded[0], total=embedded[1]))

    def _poll_pending(self) -> None:
        self.controller.run(embedding_state, self.controller.service, on_success=self._embedding_read,
                            channel="search-pending")

    def _embedding_read(self, state: tuple[int, tuple[int, int] | None]) -> None:
        pending, embedded = state
        if embedded is not None and self.banner.isVisibleTo(self):
            self._say_embedding(pending, embedded)
        self.show_pending(pending)

    def show_reranked(self, results: Any) -> None:
        """The sliders moved: same candidates, new order (Δrank and tint against the defaults)."""
        self._show(list(results), None)

    def _show(self, results: list, default_ranks: dict[str, int] | None) -> None:
        current = self.controller.selection[0] if self.controller.selection else None
        self.model.set_results(results, default_ranks)
        if current is not None:
            self._select_row(self.model.row_of(current))
        self._update_useful()

    def _update_useful(self) -> None:
        row = self.table.selectionModel().currentIndex().row()
        self.useful_button.setEnabled(self.table.selectionModel().hasSelection() and 0 <= row < self.model.rowCount())

    def _default_ranks(self, outcome: Any) -> dict[str, int]:
        """Rank of every candidate under the default parameters (pure numpy, no SQL)."""
        candidates = outcome.candidate_set
        everyone = dataclasses.replace(candidates, limit=max(1, len(candidates)))
        ranked = self.controller.service.search.rerank(everyone, self.controller.default_params)
        return {r.name: r.rank for r in ranked}

    def _follow_selection(self, names: list) -> None:
        self._select_row(self.model.row_of(names[0]) if names else -1)
        self._update_useful()

    def _select_row(self, row: int) -> None:
        """Show ``row`` as selected without echoing it back to the controller (−1 clears)."""
        selection = self.table.selectionModel()
        if (row < 0 and not selection.hasSelection()) or (
                row >= 0 and selection.currentIndex().row() == row and selection.isRowSelected(row)):
            return  # already shown: no repaint, no scrolling
        selection.blockSignals(True)
        try:
            if row < 0:
                selection.clear()
            else:
                selection.setCurrentIndex(
                    self.model.index(row, 0),
                    QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
                )
        finally:
            selection.blockSignals(False)
        self.table.viewport().update()
        if row >= 0:
            self.table.scrollTo(self.model.index(row, 0))

    # --- view → controller ----------------------------------------------------------------------

    def _row_changed(self, current, _previous) -> None:
        if not current.isValid():
            return
        result = self.model.result(current.row())
        self.controller.select([result.name])
        self._update_useful()
        self.result_activated.emit(result)
