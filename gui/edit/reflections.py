"""The entity editor's reflections: what people and agents thought about the entity and its relations, shown
and edited (add, edit, delete), each edit an undoable core edit on the editor's stack.

The reflections are read off the UI thread (:meth:`~limbic.core.service.MemoryService.reflections.reflections_of`);
the edits are :class:`~limbic.core.service.curation_edits.AddReflection`, ``EditReflection`` and
``DeleteReflection``, run through the editor's ``execute``.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from limbic.core.curation.reflections import SUGGESTED_MOODS
from limbic.core.models import Reflection, iso
from limbic.core.service.curation_edits import AddReflection, DeleteReflection, EditReflection
from limbic.core.service.edits import Edit
from limbic.gui.controller import AppController
from limbic.gui.edit.forms import Field, FormDialog

AUTHOR_KEY = "curation/author"


def _default_author() -> str:
    remembered = QSettings().value(AUTHOR_KEY, "", type=str)
    if remembered:
        return str(remembered)
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "me"


class ReflectionsPanel(QWidget):
    """A table of reflections (about the entity, or about one of its relations) with Add, Edit and Delete;
    ``execute(edit)`` applies an edit and keeps it for undo (the editor's)."""

    def __init__(self, controller: AppController, execute: Callable[[Edit], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.execute = execute
        self.entity: str | None = None
        self.reflections: list[Reflection] = []
        self._channel = f"reflections-{id(self)}"
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["reflection", "author", "mood", "about"])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(True)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.doubleClicked.connect(lambda _index: self.ask_edit())
        row = QHBoxLayout()
        row.addWidget(QLabel("Reflections"))
        self.buttons = []
        for text, slot in (("Add…", self.ask_add), ("Edit…", self.ask_edit), ("Delete", self.delete_selected)):
            button = QPushButton(text)
            button.clicked.connect(slot)
            row.addWidget(button)
            self.buttons.append(button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.table)
        self.show_entity(None)

    def show_entity(self, name: str | None) -> None:
        """Show the reflections about ``name`` (read off the UI thread); ``None`` clears the table."""
        self.entity = name
        for button in self.buttons:
            button.setEnabled(name is not None)
        if name is None:
            self._fill([])
            return
        self.controller.run(partial(self.controller.service.reflections.reflections_of, name), on_success=self._fill,
                            on_failure=lambda _e: self._fill([]), channel=self._channel)

    def _fill(self, reflections: list[Reflection]) -> None:
        self.reflections = list(reflections)
        self.table.setRowCount(0)
        for reflection in self.reflections:
            about = "this entity" if reflection.target_type == "entity" else \
                f"{reflection.entity} → {reflection.relation_type} → {reflection.target}"
            row = self.table.rowCount()
            self.table.insertRow(row)
            for column, text in enumerate((reflection.content, reflection.author, reflection.mood or "", about)):
                item = QTableWidgetItem(text)
                item.setToolTip(f"{text}\n{(iso(reflection.updated_at) or '')[:16].replace('T', ' ')}")
                self.table.setItem(row, column, item)
        self.table.resizeRowsToContents()

    def selected(self) -> Reflection | None:
        rows = self.table.selectionModel().selectedRows()
        return self.reflections[rows[0].row()] if rows and rows[0].row() < len(self.reflections) else None

    # --- edits (public: plain values) -------------------------------------------------------------

    def add(self, author: str, content: str, mood: str | None = None) -> None:
        if self.entity is None:
            raise RuntimeError("no entity is shown")
        QSettings().setValue(AUTHOR_KEY, author)
        self.execute(AddReflection("entity", self.entity, author, content, mood or None))

    def edit(self, reflection_id: int, content: str, author: str | None = None, mood: str | None = None) -> None:
        self.execute(EditReflection(reflection_id, content, author, "" if mood is None else mood))

    def delete(self, reflection_id: int) -> None:
        self.execute(DeleteReflection(reflection_id))

    def _fields(self, author: str, content: str = "", mood: str = "") -> list[Field]:
        return [Field("content", "Reflection", content, multiline=True), Field("author", "Author", author),
                Field("mood", "Mood", mood, choices=("", *SUGGESTED_MOODS), required=False)]

    def ask_add(self) -> None:
        answer = FormDialog.ask(self, f"Reflection about {self.entity}", self._fields(_default_author()))
        if answer:
            self.add(answer["author"], answer["content"], answer["mood"])

    def ask_edit(self) -> None:
        chosen = self.selected()
        if chosen is None:
            return
        answer = FormDialog.ask(self, "Edit reflection", self._fields(chosen.author, chosen.content, chosen.mood or ""))
        if answer and (answer["content"], answer["author"], answer["mood"]) != (
                chosen.content, chosen.author, chosen.mood or ""):
            self.edit(chosen.id, answer["content"], answer["author"], answer["mood"])

    def delete_selected(self) -> None:
        chosen = self.selected()
        if chosen is not None:
            self.delete(chosen.id)

