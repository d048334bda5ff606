"""Entity splitting in the app: candidates over their type's threshold, a proposed split to review (rename a
part, move observations between parts or back to the entity), then executed as one undoable edit.

Finding and proposing run off the UI thread (:meth:`~limbic.core.service.MemoryService.splits.find_split_candidates`,
``propose_entity_split``); the split is a :class:`~limbic.core.service.curation_edits.SplitEntity` applied
through an :class:`~limbic.gui.edit.undo.EditQueue` and pushed on the undo stack once it succeeded.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from limbic.core.curation import splitting
from limbic.core.service.curation_edits import KeepAsIs, SplitEntity
from limbic.core.service.edits import Edit
from limbic.core.service.splitting import SplitCandidate, SplitPart, SplitProposal
from limbic.gui.controller import AppController
from limbic.gui.edit.undo import EditCommand, EditQueue

STAYS = "(stays on the entity)"


def _proposal(service: Any, name: str) -> SplitProposal:
    """Worker: the proposed split of entity ``name``; then the memory its clustering used is given back
    (``curation.release_memory``: 41 MB of the C heap at 10,000 entities after the first proposal)."""
    try:
        return service.splits.propose_entity_split(name)
    finally:
        service.curation.release_memory()


class SplitPanel(QWidget):
    """Split candidates (left) and the proposal of the selected one (right) with Move, Split and Keep whole."""

    def __init__(self, controller: AppController, parent: QWidget | None = None, *,
                 stack: QUndoStack | None = None, queue: EditQueue | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.stack = stack if stack is not None else QUndoStack(self)
        self.queue = queue if queue is not None else EditQueue(controller, self)
        self.queue.failed.connect(self._say)
        self.candidates: list[SplitCandidate] = []
        self.proposal: SplitProposal | None = None
        self._channel = f"split-{id(self)}"
        self.find_button = QPushButton("Find candidates")
        self.find_button.clicked.connect(self.find_candidates)
        self.candidate_list = QListWidget()
        self.candidate_list.currentRowChanged.connect(self._candidate_chosen)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["part / observation"])
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setToolTip("Double-click a part to rename it; select observations and Move them")
        self.target = QComboBox()
        self.move_button = QPushButton("Move to")
        self.move_button.clicked.connect(lambda: self.move_selected(self.target.currentIndex()))
        self.split_button = QPushButton("Split")
        self.split_button.clicked.connect(self.split)
        self.keep_button = QPushButton("Keep whole")
        self.keep_button.clicked.connect(self.keep_whole)
        actions = QHBoxLayout()
        for widget in (self.move_button, self.target, self.split_button, self.keep_button):
            actions.addWidget(widget)
        actions.addStretch(1)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.find_button)
        left_layout.addWidget(self.candidate_list, 1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.tree, 1)
        right_layout.addLayout(actions)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 2)
        self.message = QLabel("Press Find candidates.", wordWrap=True)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.message)
        self._enable()

    # --- finding and proposing ----------------------------------------------------------------------

    def drop_answers(self) -> None:
        """Drop the candidates and the proposal still being looked for (the window closes)."""
        self.controller.runner.cancel_channel(self._channel)

    def find_candidates(self) -> None:
        """Entities over their type's threshold (off the UI thread)."""
        self.controller.run(partial(self.controller.service.splits.find_split_candidates, 200), on_success=self._found,
                            channel=self._channel)

    def _found(self, answer: tuple[int, list[SplitCandidate]]) -> None:
        total, self.candidates = answer
        self.candidate_list.blockSignals(True)  # the first candidate is proposed once, below
        self.candidate_list.clear()
        for c in self.candidates:
            self.candidate_list.addItem(f"{c.name} — {c.observations} observations (threshold {c.threshold})")
        if self.candidates:
            self.candidate_list.setCurrentRow(0)
        self.candidate_list.blockSignals(False)
        self._say(f"{total} entities hold more observations than their type should.")
        self.propose(self.candidates[0].name if self.candidates else None)

    def _candidate_chosen(self, row: int) -> None:
        if 0 <= row < len(self.candidates):
            self.propose(self.candidates[row].name)

    def propose(self, name: str | None) -> None:
        """Propose a split of entity ``name`` (off the UI thread); ``None`` clears the proposal."""
        if name is None:
            self._show(None)
            return
        self._say(f"Looking for the topics of {name}…")
        self.controller.run(_proposal, self.controller.service, name, on_success=self._show, channel=self._channel)

    def _show(self, proposal: SplitProposal | None) -> None:
        self.proposal = proposal
        self.tree.clear()
        self.target.clear()
        if proposal is not None:
            for part in proposal.parts:
                self._group(part.name, part.observations, editable=True)
            self._group(STAYS, proposal.staying, editable=False)
            self.tree.expandAll()
            verdict = "Rename parts, move observations, then Split." if proposal.suggested else (
                f"Maybe: below the {splitting.QUALITY_FLOOR:.2f} a split is suggested from, the topics do not stand "
                "apart — split only if you see them.")
            self._say(f"{proposal.entity}: {len(proposal.parts)} topics ({proposal.method}, quality "
                      f"{proposal.quality:.2f}). {verdict}")
        self._targets()
        self._enable()

    def _group(self, name: str, observations: tuple[str, ...] | list[str], *, editable: bool) -> QTreeWidgetItem:
        group = QTreeWidgetItem([name])
        flags = group.flags() & ~Qt.ItemFlag.ItemIsSelectable
        group.setFlags(flags | Qt.ItemFlag.ItemIsEditable if editable else flags)
        for text in observations:
            child = QTreeWidgetItem([text])
            child.setToolTip(0, text)
            group.addChild(child)
        self.tree.addTopLevelItem(group)
        return group

    def _at(self, index: int) -> QTreeWidgetItem:
        item = self.tree.topLevelItem(index)
        assert item is not None
        return item

    def _targets(self) -> None:
        self.target.clear()
        for index in range(self.tree.topLevelItemCount()):
            self.target.addItem(self._at(index).text(0))

    # --- review -------------------------------------------------------------------------------------

    def rename_part(self, index: int, name: str) -> None:
        """Give part ``index`` a new name."""
        self._at(index).setText(0, name)
        self._targets()

    def move_selected(self, target: int) -> None:
        """Move the selected observations to group ``target`` (a part, or the last group: stays)."""
        if not 0 <= target < self.tree.topLevelItemCount():
            return
        destination = self._at(target)
        for item in self.tree.selectedItems():
            source = item.parent()
            if source is not None and source is not destination:
                taken = source.takeChild(source.indexOfChild(item))
                if taken is not None:
                    destination.addChild(taken)
        self.tree.clearSelection()

    def parts(self) -> list[SplitPart]:
        """The parts as reviewed: names as shown, observations as moved, each part's relations kept."""
        if self.proposal is None:
            return []
        out = []
        for index, part in enumerate(self.proposal.parts):
            group = self._at(index)
            texts = tuple(child.text(0) for child in (group.child(i) for i in range(group.childCount())) if child)
            if texts:
                out.append(replace(part, name=group.text(0).strip(), observations=texts))
        return out

    # --- settling -----------------------------------------------------------------------------------

    def split(self) -> None:
        """Execute the reviewed split (one transaction, undoable)."""
        if self.proposal is not None and self.parts():
            self._apply(SplitEntity(self.proposal.entity, self.parts()))

    def keep_whole(self) -> None:
        """Keep the entity whole: it is not proposed again (undoable)."""
        row = self.candidate_list.currentRow()
        if 0 <= row < len(self.candidates):
            chosen = self.candidates[row]
            self._apply(KeepAsIs([f"split:{chosen.id}"], f"keep {chosen.name} whole"))

    def _apply(self, edit: Edit) -> None:
        command = EditCommand(edit, self.queue.submit)

        def pushed() -> None:
            command.mark_applied()
            self.stack.push(command)
            self._say(f"Done: {edit.description} (Undo takes it back).")
            self.find_candidates()

        self.queue.submit(edit.apply, edit.description, edit.subject(), on_success=pushed)

    def _enable(self) -> None:
        ready = self.proposal is not None and bool(self.proposal.parts)
        for widget in (self.move_button, self.target, self.split_button):
            widget.setEnabled(ready)
        self.keep_button.setEnabled(bool(self.candidates))

    def _say(self, text: Any) -> None:
        self.message.setText(str(text))
