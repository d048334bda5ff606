"""The entity editor: the selected entity's observations, relations, reflections and history (who changed it),
and every edit, undoable.

Each edit is one of the core's undoable edits (:mod:`limbic.core.service.entity_edits`), applied through
``MemoryService`` off the UI thread, one after another, and kept on a ``QUndoStack``
(:mod:`limbic.gui.edit.undo`): Ctrl+Z undoes, Ctrl+Shift+Z redoes, from any window of the app (a text field with
the focus keeps Ctrl+Z for its own text), and the Edit menu names the edit ("Undo set Bob archived").
Observations, relations, reflections and history are tabs, so the observations get the editor's height (at
least six rows in the side column at 1366×768); a row is one line, elided, whole in its tooltip. The public methods (``create_entity``,
``rename``, …) are what the buttons call after their dialog; they take plain values, so menus and tests
can call them too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from html import escape
from typing import Any

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from limbic.core.models import STATUSES, EntityDetail, EntityInput, ObservationInput, RelationInput, iso
from limbic.core.service import entity_edits as edits
from limbic.core.service.edits import Edit
from limbic.core.service.lifecycle_edits import SetObservationTerms
from limbic.gui.controller import AppController
from limbic.gui.edit import observation_dialogs as dialogs
from limbic.gui.edit.forms import Field, FormDialog
from limbic.gui.edit.history import HistoryPanel
from limbic.gui.edit.observation_dialogs import KINDS
from limbic.gui.edit.reflections import ReflectionsPanel
from limbic.gui.edit.terms import state_text, title_suffix, weight_text
from limbic.gui.edit.undo import EditCommand, EditQueue
from limbic.gui.widgets import plural, single_shot_timer

UNDO_CHARS = 60  # an undo menu entry's edit description is elided beyond this (whole in the tooltip)


def _elided(text: str, limit: int = UNDO_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table(headers: list[str], stretch: int = 0) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setWordWrap(False)
    table.setTextElideMode(Qt.TextElideMode.ElideRight)
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
    table.setHorizontalHeaderLabels(headers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    header = table.horizontalHeader()
    for column in range(len(headers)):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch if column == stretch
                                    else QHeaderView.ResizeMode.ResizeToContents)
    return table


class EntityEditor(QWidget):
    """Shows and edits the first selected entity; see the module docstring."""

    loaded = Signal(object)  # the EntityDetail shown (None when nothing is)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.detail: EntityDetail | None = None
        self._name: str | None = None
        self._channel = f"editor-{id(self)}"
        self.stack = QUndoStack(self)
        self.queue = EditQueue(controller, self)
        self.queue.finished.connect(self._edit_finished)
        self.queue.failed.connect(self._edit_failed)
        self.undo_action = QAction("&Undo", self)
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.undo_action.triggered.connect(self.stack.undo)
        self.redo_action = QAction("&Redo", self)
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.redo_action.triggered.connect(self.stack.redo)
        for action in (self.undo_action, self.redo_action):
            action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)  # from any window: Curation too
        self.addActions([self.undo_action, self.redo_action])
        self.stack.indexChanged.connect(lambda _i: self._name_undo())
        self.stack.cleanChanged.connect(lambda _c: self._name_undo())
        self._reload_timer = single_shot_timer(self, 120, self.reload)
        self._build_ui()
        self._name_undo()
        controller.selection_changed.connect(self._on_selection)
        controller.graph_changed.connect(self._on_changes)
        self._on_selection(controller.selection)

    # --- construction ---------------------------------------------------------------------------

    def _name_undo(self) -> None:
        """Undo and Redo say which edit they take back or do again (Edit menu, tooltips)."""
        if not shiboken6.isValid(self.stack) or not shiboken6.isValid(self.undo_action):
            return  # the stack empties itself while the editor is destroyed
        for action, verb, can, text in ((self.undo_action, "Undo", self.stack.canUndo(), self.stack.undoText()),
                                        (self.redo_action, "Redo", self.stack.canRedo(), self.stack.redoText())):
            action.setEnabled(can)
            action.setText(f"&{verb} {_elided(text)}" if can and text else f"&{verb}")
            action.setToolTip(f"{verb} {text}" if can and text else f"Nothing to {verb.lower()}")
        if hasattr(self, "undo_button"):  # the editor's own buttons stay short; their tooltips name the edit
            for button, action in ((self.undo_button, self.undo_action), (self.redo_button, self.redo_action)):
                button.setEnabled(action.isEnabled())
                button.setToolTip(action.toolTip())

    def _button(self, text: str, slot: Callable[[], None], row: QHBoxLayout, tip: str = "") -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.clicked.connect(slot)
        row.addWidget(button)
        return button

    def _build_ui(self) -> None:
        self.title = QLabel("No entity selected", textFormat=Qt.TextFormat.RichText)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # never widens the dock
        self.status_box = QComboBox()
        self.status_box.setToolTip("Status of the entity")
        self.status_box.addItems(STATUSES)
        self.status_box.activated.connect(lambda _i: self.set_status(self.status_box.currentText()))
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.status_box)
        entity_row = QHBoxLayout()
        self._button("New…", self._ask_create, entity_row, "Create an entity")
        self._entity_buttons = [
            self._button("Rename…", self._ask_rename, entity_row),
            self._button("Merge into…", self._ask_merge, entity_row, "Merge the selected entities into another"),
            self._button("Delete", self._ask_delete, entity_row, "Delete the selected entities"),
        ]
        entity_row.addStretch(1)
        self.undo_button = self._button("Undo", self.stack.undo, entity_row)
        self.redo_button = self._button("Redo", self.stack.redo, entity_row)
        entity_row.setSpacing(4)

        self.observations = _table(["observation", "kind", "weight", "created", "state"])
        obs_row = QHBoxLayout()
        self._obs_buttons = [
            self._button("Add…", partial(dialogs.ask_add_observation, self), obs_row),
            self._button("Edit…", partial(dialogs.ask_edit_observation, self), obs_row),
            self._button("Supersede…", partial(dialogs.ask_supersede, self), obs_row,
                         "Replace by a newer observation, keep history"),
            self._button("Terms…", partial(dialogs.ask_terms, self), obs_row, "When it expires and its weight"),
            self._button("Delete", self._delete_selected_observation, obs_row),
        ]
        obs_row.addStretch(1)
        self.relations = _table(["relation", "other entity", "state", "context"], stretch=1)
        rel_row = QHBoxLayout()
        self._rel_buttons = [
            self._button("Add…", self._ask_add_relation, rel_row),
            self._button("End", self._end_selected_relation, rel_row, "Mark as ended (kept as history)"),
            self._button("Delete", self._delete_selected_relation, rel_row),
        ]
        rel_row.addStretch(1)
        self.message = QLabel(wordWrap=True)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        for table, row, title in ((self.observations, obs_row, "Observations"), (self.relations, rel_row, "Relations")):
            box = QWidget()
            lay = QVBoxLayout(box)
            lay.setContentsMargins(0, 2, 0, 0)
            lay.setSpacing(2)
            lay.addWidget(table)
            lay.addLayout(row)
            self.tabs.addTab(box, title)
        self.reflections = ReflectionsPanel(self.controller, self.execute)
        self.tabs.addTab(self.reflections, "Reflections")
        self.history = HistoryPanel(self.controller)
        self.tabs.addTab(self.history, "History")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addLayout(head)
        layout.addLayout(entity_row)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.message)
        self.message.setVisible(False)
        self._show(None)

    # --- loading --------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the current entity again (off the UI thread). Looking is not using: neither opening an
        entity here nor a refresh records an access (the explicit *Mark as useful* of the search panel does)."""
        name = self._name
        if name is None:
            self._show(None)
            return
        self.controller.run(partial(self.controller.service.entities.get_entity, name), on_success=self._show,
                            on_failure=lambda _e: self._show(None, missing=name), channel=self._channel)

    def _on_selection(self, names: list[str]) -> None:
        self._name = names[0] if names else None
        self.reload()

    def _on_changes(self, changes: list[Any]) -> None:
        if self.detail is None:
            if self._name is not None and not self._reload_timer.isActive():
                self._reload_timer.start()
            return
        touched = set().union(*(c.entity_ids for c in changes)) if changes else set()
        related = {self.detail.entity.id} | {r.source_id for r in self.detail.relations} | {
            r.target_id for r in self.detail.relations}
        if (touched & related or not touched) and not self._reload_timer.isActive():
            self._reload_timer.start()

    def _show(self, detail: EntityDetail | None, missing: str | None = None) -> None:
        self.detail = detail
        enabled = detail is not None
        for button in (*self._entity_buttons, *self._obs_buttons, *self._rel_buttons):
            button.setEnabled(enabled)
        self.status_box.setEnabled(enabled)
        self.observations.setRowCount(0)
        self.relations.setRowCount(0)
        self.reflections.show_entity(detail.entity.name if detail is not None else None)
        self.history.show_entity(detail.entity.name if detail is not None else None)
        if detail is None:
            self.title.setText(f"<i>{escape(missing)} no longer exists</i>" if missing else "No entity selected")
            self.tabs.setTabText(0, "Observations")
            self.tabs.setTabText(1, "Relations")
            self.loaded.emit(None)
            return
        e = detail.entity
        self.title.setText(f"<b>{escape(e.name)}</b> — {escape(e.entity_type)} · {plural(detail.access_count, 'use')}"
                           f" · {plural(detail.impression_count, 'impression')}"
                           f" · degree {detail.degree}{title_suffix(e)}")
        self.title.setToolTip(self.title.text())
        self.status_box.blockSignals(True)
        self.status_box.setCurrentText(e.status)
        self.status_box.blockSignals(False)
        now = time.time()
        for o in sorted(e.observations, key=lambda o: (not o.current(now), o.id)):
            self._add_row(self.observations, o.content, [o.content, o.kind or "", weight_text(o), (iso(
                o.created_at) or "")[:16].replace("T", " "), state_text(o, now)], greyed=not o.current(now))
        for r in detail.relations:
            outgoing = r.source == e.name
            text = f"→ {r.relation_type}" if outgoing else f"← {r.relation_type}"
            self._add_row(self.relations, r, [text, r.target if outgoing else r.source,
                                              "active" if r.active else "ended", r.context or ""],
                          greyed=not r.active)
        self.tabs.setTabText(0, f"Observations ({self.observations.rowCount()})")
        self.tabs.setTabText(1, f"Relations ({self.relations.rowCount()})")
        self.loaded.emit(detail)

    @staticmethod
    def _add_row(table: QTableWidget, payload: Any, texts: list[str], greyed: bool) -> None:
        row = table.rowCount()
        table.insertRow(row)
        for column, text in enumerate(texts):
            item = QTableWidgetItem(text)
            item.setToolTip(text)
            if column == 0:
                item.setData(Qt.ItemDataRole.UserRole, payload)
            if greyed:
                item.setForeground(Qt.GlobalColor.gray)
            table.setItem(row, column, item)

    @staticmethod
    def _selected(table: QTableWidget) -> Any:
        rows = table.selectionModel().selectedRows()
        item = table.item(rows[0].row(), 0) if rows else None
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    # --- edits (public: plain values) -------------------------------------------------------------

    def execute(self, edit: Edit) -> None:
        """Apply ``edit`` now (off the UI thread); once it succeeded it goes onto the undo stack."""
        command = EditCommand(edit, self.queue.submit)

        def pushed() -> None:
            command.mark_applied()
            self.stack.push(command)

        self.queue.submit(edit.apply, edit.description, edit.subject(), on_success=pushed)

    def create_entity(self, name: str, entity_type: str, observations: tuple[ObservationInput, ...] = ()) -> None:
        self.execute(edits.CreateEntity(EntityInput(name, entity_type or None, observations)))

    def rename(self, new: str) -> None:
        self.execute(edits.RenameEntity(self._current(), new))

    def merge_into(self, target: str, sources: list[str] | None = None) -> None:
        self.execute(edits.MergeEntities(sources or self._selected_names(), target))

    def delete_entities(self, names: list[str] | None = None) -> None:
        self.execute(edits.DeleteEntities(names or self._selected_names()))

    def set_status(self, status: str, names: list[str] | None = None) -> None:
        self.execute(edits.SetStatus(names or [self._current()], status))

    def add_observation(self, content: str, kind: str | None = None, expires_at: float | None = None,
                        weight: float = 1.0) -> None:
        self.execute(edits.AddObservation(self._current(), ObservationInput(
            content, kind or None, expires_at=expires_at, weight=weight)))

    def set_observation_terms(self, content: str, expires_at: float | None, weight: float) -> None:
        self.execute(SetObservationTerms(self._current(), content, expires_at, weight))

    def edit_observation(self, old: str, new: str, kind: str | None = None) -> None:
        self.execute(edits.EditObservation(self._current(), old, new, kind or None))

    def supersede_observation(self, old: str, new: str, kind: str | None = None) -> None:
        self.execute(edits.SupersedeObservation(self._current(), old, ObservationInput(new, kind or None)))

    def delete_observation(self, content: str) -> None:
        self.execute(edits.DeleteObservation(self._current(), content))

    def add_relation(self, source: str, target: str, relation_type: str, context: str | None = None) -> None:
        self.execute(edits.AddRelation(RelationInput(source, target, relation_type, context or None)))

    def end_relation(self, source: str, target: str, relation_type: str) -> None:
        self.execute(edits.EndRelation(RelationInput(source, target, relation_type)))

    def delete_relation(self, source: str, target: str, relation_type: str) -> None:
        self.execute(edits.DeleteRelation(RelationInput(source, target, relation_type)))

    def _current(self) -> str:
        if self.detail is None:
            raise RuntimeError("no entity is shown in the editor")
        return self.detail.entity.name

    def _selected_names(self) -> list[str]:
        return self.controller.selection or [self._current()]

    def _edit_finished(self, focus: str | None) -> None:
        self.message.clear()
        self.message.setVisible(False)
        if focus is not None and focus != self._name:
            self.controller.select([focus])
        else:
            self.reload()

    def _edit_failed(self, message: str) -> None:
        if message.startswith(("Undo", "Redo")):
            self.stack.clear()  # the stored inverses no longer match the database
            message += " — the undo history was cleared"
        self.message.setText(message)
        self.message.setVisible(True)
        self.controller.status_message.emit(message)
        self.reload()

    # --- dialogs ----------------------------------------------------------------------------------

    def _with_names(self, then: Callable[[list[str]], None]) -> None:
        self.controller.run(self.controller.service.entities.entity_names, on_success=then)

    def _ask_create(self) -> None:
        answer = FormDialog.ask(self, "New entity", [
            Field("name", "Name"), Field("type", "Type", "Concept"),
            Field("observation", "First observation", multiline=True, required=False),
            Field("kind", "Kind", choices=KINDS, required=False)])
        if answer:
            first = (ObservationInput(answer["observation"], answer["kind"] or None),) if answer["observation"] else ()
            self.create_entity(answer["name"], answer["type"], first)

    def _ask_rename(self) -> None:
        answer = FormDialog.ask(self, "Rename entity", [Field("name", "New name", self._current())])
        if answer and answer["name"] != self._current():
            self.rename(answer["name"])

    def _ask_merge(self) -> None:
        sources = self._selected_names()

        def ask(names: list[str]) -> None:
            answer = FormDialog.ask(self, f"Merge {', '.join(sources)} into…",
                                    [Field("target", "Target entity", completions=names)])
            if answer:
                self.merge_into(answer["target"], [s for s in sources if s != answer["target"]])

        self._with_names(ask)

    def _ask_delete(self) -> None:
        names = self._selected_names()
        if QMessageBox.question(self, "Delete", f"Delete {', '.join(names)} with their observations and "
                                "relations? (Undo restores them.)") == QMessageBox.StandardButton.Yes:
            self.delete_entities(names)

    def _delete_selected_observation(self) -> None:
        content = self._selected(self.observations)
        if content is not None:
            self.delete_observation(content)

    def _ask_add_relation(self) -> None:
        source = self._current()

        def ask(names: list[str]) -> None:
            answer = FormDialog.ask(self, f"Relation from {source}", [
                Field("type", "Relation type", "relates_to"), Field("target", "Target entity", completions=names),
                Field("context", "Context", required=False)])
            if answer:
                self.add_relation(source, answer["target"], answer["type"], answer["context"])

        self._with_names(ask)

    def _end_selected_relation(self) -> None:
        r = self._selected(self.relations)
        if r is not None and r.active:
            self.end_relation(r.source, r.target, r.relation_type)

    def _delete_selected_relation(self) -> None:
        r = self._selected(self.relations)
        if r is not None:
            self.delete_relation(r.source, r.target, r.relation_type)
