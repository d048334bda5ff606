"""The merge queue: duplicate observations and duplicate entities, found at a chosen similarity and settled
with one click each — merge, supersede, keep both — every action an undoable core edit. A cluster's members
are listed one per row (any number of them stays readable), with the reason and the text a merge keeps above
them — or, when no member keeps every detail of the others, the one text that would keep them all (Combine
writes it; merging or superseding then needs a member chosen by hand); a "more specific" pair offers keep both
and supersede only. An entity pair shows both sides: each
entity's type, observation count and first observations, and which name a merge keeps.

Finding runs off the UI thread (:meth:`~limbic.core.service.MemoryService.curation.find_duplicate_observations`,
``find_duplicate_entities``) and never writes; an action applies one edit of
:mod:`limbic.core.service.curation_edits` through an :class:`~limbic.gui.edit.undo.EditQueue` and, once it
succeeded, pushes it on a ``QUndoStack`` (the app passes the entity editor's, so Edit ▸ Undo takes it back).
The queue looks again after each edit, undo or redo made through its edit queue while it is shown.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSlider,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from limbic.core.curation.duplicates import DEFAULT_THRESHOLD
from limbic.core.models import iso
from limbic.core.service import curation_edits
from limbic.core.service.curating import DuplicateCluster, EntityDuplicate
from limbic.core.service.edits import Edit
from limbic.core.service.entity_edits import MergeEntities
from limbic.gui.controller import AppController
from limbic.gui.edit.undo import EditCommand, EditQueue
from limbic.gui.widgets import single_shot_timer

LISTED = 100_000  # clusters read at once (the lists hold them all, so that the counts are the Review's)


def _percent(value: float) -> int:
    return round(value * 100)


class MergeQueue(QWidget):
    """Duplicate clusters (tab "Observations") and duplicate entities (tab "Entities") with their evidence and
    the actions that settle them. ``stack``/``queue``: the undo stack and edit queue to use (default: its own)."""

    def __init__(self, controller: AppController, parent: QWidget | None = None, *,
                 stack: QUndoStack | None = None, queue: EditQueue | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.stack = stack if stack is not None else QUndoStack(self)
        self.queue = queue if queue is not None else EditQueue(controller, self)
        self.queue.failed.connect(self._failed)
        self.clusters: list[DuplicateCluster] = []
        self.entity_groups: list[EntityDuplicate] = []
        self._channel = f"merge-queue-{id(self)}"
        self._refresh_timer = single_shot_timer(self, 300, self.find_duplicates)
        self._build()
        self.queue.finished.connect(self._edited)

    def drop_answers(self) -> None:
        """Drop the lists still being looked for (the window closes)."""
        self._refresh_timer.stop()
        self.controller.runner.cancel_channel(self._channel)

    # --- construction -------------------------------------------------------------------------------

    def _build(self) -> None:
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(60, 99)
        self.slider.setValue(_percent(DEFAULT_THRESHOLD))
        self.slider.setToolTip("Cosine similarity from which two observations of one entity may be duplicates")
        self.slider_label = QLabel()
        self.slider.valueChanged.connect(self._threshold_moved)
        self.scope = QLineEdit(placeholderText="all entities (or one entity's name)")
        self.scope.returnPressed.connect(self.find_duplicates)
        self.find_button = QPushButton("Find")
        self.find_button.clicked.connect(self.find_duplicates)
        top = QHBoxLayout()
        for widget, stretch in ((QLabel("Similarity ≥"), 0), (self.slider, 2), (self.slider_label, 0),
                                (self.scope, 2), (self.find_button, 0)):
            top.addWidget(widget, stretch)
        self._threshold_moved(self.slider.value())

        self.cluster_list = QListWidget()
        self.cluster_list.currentRowChanged.connect(self._show_cluster)
        self.members = QTableWidget(0, 3)
        self.members.setHorizontalHeaderLabels(["entity", "observation", "created"])
        self.members.setWordWrap(True)
        self.members.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.members.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.members.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.members.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.members.setToolTip("Select a row to choose the observation that stays")
        self.members.itemSelectionChanged.connect(self._enable)
        self.cluster_reason = QLabel(wordWrap=True)
        self.cluster_reason.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.merge_button = QPushButton("Merge")
        self.merge_button.setToolTip("Keep one text (the selected one, else the one that says the most) and delete "
                                     "the others")
        self.supersede_button = QPushButton("Supersede")
        self.supersede_button.setToolTip("Keep one live (the selected one, else the one that says the most); the "
                                         "others stay as history")
        self.keep_button = QPushButton("Keep both")
        self.keep_button.setToolTip("They are different: do not propose them together again")
        self.combine_button = QPushButton("Combine")
        self.combine_button.setToolTip("Write the one text shown above, which keeps every detail of the members; "
                                       "they stay as its history")
        self.merge_button.clicked.connect(lambda: self.settle_cluster("merge"))
        self.supersede_button.clicked.connect(lambda: self.settle_cluster("supersede"))
        self.keep_button.clicked.connect(lambda: self.settle_cluster("keep"))
        self.combine_button.clicked.connect(lambda: self.settle_cluster("combine"))
        observations = self._pane(self.cluster_list, self._stacked(self.cluster_reason, self.members),
                                  [self.merge_button, self.supersede_button, self.keep_button, self.combine_button])

        self.group_list = QListWidget()
        self.group_list.currentRowChanged.connect(self._show_group)
        self.names = QListWidget()
        self.names.setToolTip("Select the name that stays (default: the first)")
        self.names.setMaximumHeight(self.names.fontMetrics().lineSpacing() * 6)
        self.group_reason = QLabel(wordWrap=True)
        self.sides = QTextBrowser()
        self.sides.setOpenLinks(False)
        self.merge_entities_button = QPushButton("Merge entities")
        self.merge_entities_button.setToolTip("Merge into the selected name: observations, relations and usage move")
        self.keep_entities_button = QPushButton("Keep apart")
        self.merge_entities_button.clicked.connect(lambda: self.settle_group("merge"))
        self.keep_entities_button.clicked.connect(lambda: self.settle_group("keep"))
        entities = self._pane(self.group_list, self._stacked(self.group_reason, self.names, self.sides),
                              [self.merge_entities_button, self.keep_entities_button])

        self.tabs = QTabWidget()
        self.tabs.addTab(observations, "Observations")
        self.tabs.addTab(entities, "Entities")
        self.summary = QLabel("Press Find to look for duplicates.", wordWrap=True)
        undo, redo = QPushButton("Undo"), QPushButton("Redo")
        undo.clicked.connect(self.stack.undo)
        redo.clicked.connect(self.stack.redo)
        self.stack.canUndoChanged.connect(undo.setEnabled)
        self.stack.canRedoChanged.connect(redo.setEnabled)
        undo.setEnabled(self.stack.canUndo())
        redo.setEnabled(self.stack.canRedo())
        bottom = QHBoxLayout()
        bottom.addWidget(self.summary, 1)
        bottom.addWidget(undo)
        bottom.addWidget(redo)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(bottom)
        self._enable()

    @staticmethod
    def _stacked(*widgets: QWidget) -> QWidget:
        box = QWidget()
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        for index, widget in enumerate(widgets):
            lay.addWidget(widget, 0 if index == 0 else 1)
        return box

    @staticmethod
    def _pane(listing: QWidget, detail: QWidget, buttons: list[QPushButton]) -> QWidget:
        row = QHBoxLayout()
        for button in buttons:
            row.addWidget(button)
        row.addStretch(1)
        right = QWidget()
        lay = QVBoxLayout(right)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(detail, 1)
        lay.addLayout(row)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(listing)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 2)
        return splitter

    # --- finding ------------------------------------------------------------------------------------

    @property
    def threshold(self) -> float:
        return self.slider.value() / 100

    def _threshold_moved(self, value: int) -> None:
        self.slider_label.setText(f"{value / 100:.2f}")

    def find_duplicates(self) -> None:
        """Look for duplicates at the slider's threshold (off the UI thread); the lists follow."""
        scope = self.scope.text().strip() or None
        threshold, service = self.threshold, self.controller.service

        def both() -> tuple[Any, Any]:
            return (service.curation.find_duplicate_observations(scope, threshold, LISTED),
                    service.curation.find_duplicate_entities(limit=LISTED, entity_name=scope))

        self.summary.setText("Looking for duplicates…")
        self.controller.run(both, on_success=self._found, on_failure=self._find_failed, channel=self._channel)

    def _found(self, answer: tuple[Any, tuple[int, list[EntityDuplicate]]]) -> None:
        report, (entity_total, groups) = answer
        self.clusters, self.entity_groups = list(report.clusters), groups
        self._fill(self.cluster_list, [self._cluster_line(c) for c in self.clusters])
        self._fill(self.group_list, [f"{' / '.join(g.names)} — {g.reason}" for g in self.entity_groups])
        shared = f"; {report.shared_total:,} texts said alike of several entities (each entity's own)" \
            if report.shared_total else ""
        note = f" {report.note}." if report.note else ""
        duplicates = sum(c.relation == "duplicate" for c in report.clusters)
        specific = f" and {len(report.clusters) - duplicates:,} more specific pairs" \
            if len(report.clusters) > duplicates else ""
        self.summary.setText(f"{duplicates:,} duplicate clusters{specific} among {report.compared:,} observations and "
                             f"{entity_total:,} possible duplicate entities ({report.seconds:.1f} s){shared}.{note}")
        self._enable()

    @staticmethod
    def _cluster_line(cluster: DuplicateCluster) -> str:
        where = " / ".join(cluster.entities)
        if cluster.survivor is None:
            return f"{where}: {cluster.size} say the same, each with a detail of its own"
        if cluster.relation == "duplicate":
            return f"{where}: {cluster.size} say the same — “{cluster.survivor.content[:70]}”"
        return f"{where}: one says more — “{cluster.survivor.content[:70]}”"

    def _find_failed(self, error: BaseException) -> None:
        self.summary.setText(f"Could not look for duplicates: {error}")

    @staticmethod
    def _fill(listing: QListWidget, texts: list[str]) -> None:
        listing.blockSignals(True)
        listing.clear()
        for text in texts:
            item = QListWidgetItem(text)
            item.setToolTip(text)
            listing.addItem(item)
        listing.blockSignals(False)
        listing.setCurrentRow(0 if texts else -1)

    def _show_cluster(self, row: int) -> None:
        cluster = self.clusters[row] if 0 <= row < len(self.clusters) else None
        members = cluster.members if cluster is not None else ()
        self.cluster_reason.setText("" if cluster is None else self._settling(cluster))
        self.members.clearContents()
        self.members.setRowCount(len(members))
        for line, member in enumerate(members):
            for column, text in enumerate((member.entity, member.content, (iso(member.created_at) or "")[:16])):
                item = QTableWidgetItem(text.replace("T", " ") if column == 2 else text)
                item.setToolTip(text)
                self.members.setItem(line, column, item)
        self.members.resizeRowsToContents()
        self._enable()

    @staticmethod
    def _settling(cluster: DuplicateCluster) -> str:
        """The cluster's reason and what settling it keeps (or the text Combine writes), in plain words."""
        keeps = f"Merging keeps: “{cluster.survivor.content}”" if cluster.survivor is not None \
            else f"Combining writes: “{cluster.merged}”"
        more = f" ({cluster.size - len(cluster.members)} more not listed)" if cluster.size > len(cluster.members) else ""
        return f"{cluster.reason[:1].upper()}{cluster.reason[1:]}. {keeps}{more}"

    def _show_group(self, row: int) -> None:
        group = self.entity_groups[row] if 0 <= row < len(self.entity_groups) else None
        self.names.clear()
        for name in group.names if group is not None else ():
            self.names.addItem(name)
        self.group_reason.setText("" if group is None else f"{group.why[:1].upper()}{group.why[1:]}. "
                                  f"Merging {group.merge_note}.")
        self.sides.setHtml("" if group is None else "".join(
            f"<p><b>{html.escape(side.name)}</b> ({html.escape(side.entity_type)}, {side.observations} observations)"
            "<ul>" + "".join(f"<li>{html.escape(text)}</li>" for text in side.first) + "</ul></p>"
            for side in group.sides))
        self._enable()

    def _enable(self) -> None:
        row = self.cluster_list.currentRow()
        cluster = self.clusters[row] if 0 <= row < len(self.clusters) else None
        chosen = bool(self.members.selectionModel().selectedRows())
        keeper = cluster is not None and (cluster.survivor is not None or chosen)  # no suggested keeper: a chosen one
        self.keep_button.setEnabled(cluster is not None)
        self.supersede_button.setEnabled(keeper)
        self.merge_button.setEnabled(keeper and cluster is not None and cluster.relation == "duplicate")
        self.combine_button.setEnabled(cluster is not None and cluster.merged is not None)
        has_group = 0 <= self.group_list.currentRow() < len(self.entity_groups)
        self.merge_entities_button.setEnabled(has_group)
        self.keep_entities_button.setEnabled(has_group)

    # --- settling -----------------------------------------------------------------------------------

    def settle_cluster(self, option: str, row: int | None = None) -> None:
        """Settle cluster ``row`` (default: the current one) with ``merge``, ``supersede``, ``keep`` or
        ``combine``; the selected row, if any, is the observation that stays (else the cluster's survivor, the
        member that keeps every detail of the others; without one and without a selected row, merge and supersede
        do nothing)."""
        row = self.cluster_list.currentRow() if row is None else row
        if not 0 <= row < len(self.clusters):
            return
        cluster = self.clusters[row]
        rows = self.members.selectionModel().selectedRows()
        survivor = cluster.members[rows[0].row()] if rows and row == self.cluster_list.currentRow() \
            else cluster.survivor
        edit: Edit
        if option == "combine":
            if cluster.merged is None:
                return
            edit = curation_edits.CombineDuplicates(cluster.members, cluster.merged)
        elif option in ("merge", "supersede") and survivor is None:
            return
        elif option == "merge":
            edit = curation_edits.merge_duplicates(cluster.members, survivor)
        elif option == "supersede":
            edit = curation_edits.SupersedeDuplicates(cluster.members, survivor)
        else:
            edit = curation_edits.keep_observations_apart(cluster.members)
        self._apply(edit)

    def settle_group(self, option: str, row: int | None = None) -> None:
        """Settle entity group ``row`` (default: the current one) with ``merge`` (into the selected name, else
        the first) or ``keep``."""
        row = self.group_list.currentRow() if row is None else row
        if not 0 <= row < len(self.entity_groups):
            return
        group = self.entity_groups[row]
        chosen = self.names.currentItem()
        target = chosen.text() if chosen is not None and row == self.group_list.currentRow() else group.names[0]
        if option == "merge":
            self._apply(MergeEntities([n for n in group.names if n != target], target))
        else:
            self._apply(curation_edits.keep_entities_apart(group.ids, group.names))

    def _apply(self, edit: Edit) -> None:
        command = EditCommand(edit, self.queue.submit)

        def pushed() -> None:
            command.mark_applied()
            self.stack.push(command)
            self.summary.setText(f"Done: {edit.description} (Undo takes it back).")

        self.queue.submit(edit.apply, edit.description, edit.subject(), on_success=pushed)

    def _failed(self, message: str) -> None:
        if message.startswith(("Undo", "Redo")):
            self.stack.clear()  # the stored inverses no longer match the database
            message += " — the undo history was cleared"
        self.summary.setText(message)

    def _edited(self, _focus: Any) -> None:
        """After an edit, undo or redo through the queue, look again (a look at a large memory takes seconds, so
        other writers' changes wait for Find)."""
        if self.isVisible():
            self._refresh_timer.start()
