"""The Review view: one place for what needs a person's decision (docs/lifecycle.md "Review").

Generic over the sections of :func:`limbic.core.service.review.review`: open contradictions, expired observations, forget and
promote candidates, and whatever other kinds are registered (duplicates, split proposals, …). A contradiction's
two observations are shown side by side with the similarity and the checkable difference; any other decision
shows its evidence in plain words (:func:`~limbic.core.service.decisions.describe`). Decisions alike enough to
settle together (a :class:`~limbic.core.service.decisions.Family`) are listed under one row: selecting it
selects them all. One click applies an option to the selected decision — or to all the selected decisions of
one kind at once (bulk archive, pin, …) as one edit. Every action is an undoable edit of the core
(:mod:`limbic.core.service.edits`) handed to ``execute`` (the entity editor's, so Ctrl+Z undoes it); the list
reads again after every change. Reading it records nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from limbic.core.service import review
from limbic.core.service.decisions import Decision, ReviewSection, describe
from limbic.core.service.edits import Compound, Edit
from limbic.gui.controller import AppController
from limbic.gui.widgets import single_shot_timer

LIMIT = 200  # decisions listed per kind
ROLE = Qt.ItemDataRole.UserRole


class ReviewView(QWidget):
    """See the module docstring. ``execute(edit)`` applies an edit and keeps it for undo."""

    def __init__(self, controller: AppController, execute: Callable[[Edit], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.execute = execute
        self.sections: list[ReviewSection] = []
        self._items: list[QTreeWidgetItem] = []  # one per decision listed
        self._buttons: list[QPushButton] = []  # the option buttons shown
        self.summary = QLabel("Nothing read yet", wordWrap=True)  # the whole count of every kind, on two lines if need be
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.reload)
        head = QHBoxLayout()
        head.addWidget(self.summary, 1)
        head.addWidget(refresh)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Decision", "Suggested"])
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.tree.header()  # the decision's title gets the width, the suggested option what it needs
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.itemSelectionChanged.connect(self._selection_changed)
        self.older, self.newer = QPlainTextEdit(readOnly=True), QPlainTextEdit(readOnly=True)
        self.older.setPlaceholderText("older observation")
        self.newer.setPlaceholderText("newer observation")
        self.evidence = QPlainTextEdit(readOnly=True)
        self.reason = QLabel(wordWrap=True)
        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.addWidget(self.older)
        sides.addWidget(self.newer)
        self.sides = sides
        self.options = QHBoxLayout()
        self.message = QLabel(wordWrap=True)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        detail = QWidget()
        column = QVBoxLayout(detail)
        column.setContentsMargins(0, 0, 0, 0)
        for widget in (self.reason, sides, self.evidence):
            column.addWidget(widget)
        column.addLayout(self.options)
        split.addWidget(detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.evidence.setMinimumHeight(self.evidence.fontMetrics().lineSpacing() * 8)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(split, 1)
        layout.addWidget(self.message)
        self._reload_timer = single_shot_timer(self, 250, self.reload)
        controller.graph_changed.connect(lambda _c: self._reload_timer.start())
        controller.project_changed.connect(lambda _p: self.reload())
        self._show_detail([])
        self.reload()

    # --- reading --------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the queue of decisions again (off the UI thread), of the project chosen in the project filter and
        the global memories when one is (``controller.project``), as an agent bound to it sees them."""
        service, project = self.controller.service, self.controller.project

        def read() -> list[ReviewSection]:
            with service.scoped(project):
                return review.review(service, None, LIMIT)

        self.controller.run(read, on_success=lambda sections: self._loaded(sections, project),
                            channel=f"review-{id(self)}")

    def _loaded(self, sections: list[ReviewSection], project: str | None) -> None:
        selected = {d.key for d in self.selected()}
        self.sections = sections
        self.tree.blockSignals(True)
        self.tree.clear()
        self._items = []
        for section in sections:
            top = QTreeWidgetItem([f"{section.kind} ({section.total:,})", ""])
            top.setFlags(top.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            self.tree.addTopLevelItem(top)
            listed = {d.key for d in section.items}
            parents: dict[str, QTreeWidgetItem] = {}
            for alike in section.families:
                shown = [k for k in alike.keys if k in listed]
                if len(shown) < 2:
                    continue
                node = QTreeWidgetItem([alike.title + (f" ({len(shown)} listed)" if len(shown) < alike.count else ""),
                                        alike.options[0].replace("_", " ") if alike.options else ""])
                node.setToolTip(0, "Select this row to settle them all at once")
                top.addChild(node)
                parents.update(dict.fromkeys(shown, node))
            for decision in section.items:
                item = QTreeWidgetItem([decision.title, decision.options[0].replace("_", " ") if decision.options else ""])
                item.setToolTip(0, decision.title)
                item.setData(0, ROLE, decision)
                parents.get(decision.key, top).addChild(item)
                item.setSelected(decision.key in selected)
                self._items.append(item)
            top.setExpanded(bool(section.items))
        self.tree.blockSignals(False)
        counts = ", ".join(f"{s.total:,} {s.kind}" for s in sections if s.total)
        scope = f" (project {project} and the global memories)" if project else ""
        self.summary.setText((counts or "Nothing to decide") + scope)
        self._selection_changed()

    def decisions(self, kind: str | None = None) -> list[Decision]:
        """The decisions listed (of one ``kind`` when given), in the order shown."""
        return [d for s in self.sections if kind in (None, s.kind) for d in s.items]

    def selected(self) -> list[Decision]:
        """The decisions selected; a selected family row stands for all of its members."""
        chosen: dict[str, Decision] = {}
        for item in self.tree.selectedItems():
            children = (item.child(i) for i in range(item.childCount()))
            found = [item.data(0, ROLE)] if item.data(0, ROLE) is not None else [
                child.data(0, ROLE) for child in children if child is not None]
            chosen.update((d.key, d) for d in found if d is not None)
        return list(chosen.values())

    def select(self, keys: list[str]) -> None:
        """Select the decisions with these keys (tests, menus)."""
        for item in self._items:
            item.setSelected(item.data(0, ROLE).key in keys)

    # --- showing ----------------------------------------------------------------------------------

    def _selection_changed(self) -> None:
        self._show_detail(self.selected())

    def _show_detail(self, chosen: list[Decision]) -> None:
        for button in self._buttons:
            button.deleteLater()
        self._buttons = []
        while self.options.count():  # the stretch
            self.options.takeAt(0)
        kinds = {d.kind for d in chosen}
        single = chosen[0] if len(chosen) == 1 else None
        conflict = single is not None and {"new", "old"} <= set(single.evidence)
        self.sides.setVisible(conflict)
        self.evidence.setVisible(single is not None and not conflict)
        if single is None:
            self.reason.setText(f"{len(chosen)} {next(iter(kinds))} decisions selected" if len(kinds) == 1
                                else "Select a decision" if not chosen else "Select decisions of one kind")
        elif conflict:
            old, new = single.evidence["old"], single.evidence["new"]
            self.older.setPlainText(f"{old['entity']} (older)\n\n{old['observation']}")
            self.newer.setPlainText(f"{new['entity']} (newer)\n\n{new['observation']}")
            suggestion = single.evidence.get("suggestion")
            self.reason.setText(f"{single.evidence.get('reason', '')} · similarity {single.evidence.get('similarity')}"
                                + (f"\nSuggested: {suggestion}" if suggestion else ""))
        else:
            self.reason.setText(single.title)
            self.evidence.setPlainText(describe(single))
        if len(kinds) != 1:
            return
        options = [o for o in chosen[0].options if all(o in d.options for d in chosen)]
        for index, option in enumerate(options):
            button = QPushButton(option.replace("_", " ") + (f" ({len(chosen)})" if len(chosen) > 1 else ""))
            button.setObjectName(f"option-{option}")
            button.setDefault(index == 0)
            button.clicked.connect(lambda _c=False, o=option: self.apply(o))
            self.options.addWidget(button)
            self._buttons.append(button)
        self.options.addStretch(1)

    # --- acting -----------------------------------------------------------------------------------

    def apply(self, option: str, decisions: list[Decision] | None = None) -> None:
        """Settle ``decisions`` (default: the selected ones) with ``option`` as one undoable edit."""
        chosen = self.selected() if decisions is None else decisions
        if not chosen:
            return
        service = self.controller.service

        def build() -> Edit:
            edits = [review.edit_for(service, d, option) for d in chosen]
            return edits[0] if len(edits) == 1 else Compound(f"{option} {len(edits)} {chosen[0].kind}", edits)

        self.message.clear()
        self.controller.run(build, on_success=self.execute, on_failure=self._failed)

    def _failed(self, error: BaseException) -> None:
        self.message.setText(str(error))
        self.reload()

    def option_buttons(self) -> list[QPushButton]:
        """The option buttons shown now (tests)."""
        return list(self._buttons)
