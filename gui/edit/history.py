"""The entity editor's *History*: the changes that touched the shown entity, newest first, with who made each
one (the app, the CLI, an import, an agent over stdio, or the MCP token's name: ``alice (MCP)``).

Read off the UI thread (:meth:`~limbic.core.service.MemoryService.history.entity_history`); reading records nothing.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from limbic.core.models import Changes, iso
from limbic.core.service.history import origin_label
from limbic.gui.controller import AppController

HISTORY_ROWS = 200  # changes shown per entity


class HistoryPanel(QWidget):
    """A read-only table *when · who · what* of the changes of one entity (:meth:`show_entity`)."""

    COLUMNS = ("when (UTC)", "who", "what")

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.entity: str | None = None
        self.changes: list[Changes] = []
        self._channel = f"history-{id(self)}"
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels(list(self.COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("History"))
        layout.addWidget(self.table)

    def show_entity(self, name: str | None) -> None:
        """Show the changes of ``name`` (read off the UI thread); ``None`` clears the table."""
        self.entity = name
        if name is None:
            self._fill([])
            return
        self.controller.run(partial(self.controller.service.history.entity_history, name, HISTORY_ROWS),
                            on_success=self._fill, on_failure=lambda _e: self._fill([]), channel=self._channel)

    def _fill(self, changes: list[Changes]) -> None:
        self.changes = list(changes)
        self.table.setRowCount(0)
        for change in self.changes:
            row = self.table.rowCount()
            self.table.insertRow(row)
            texts = ((iso(change.at) or "")[:19].replace("T", " "), origin_label(change.origin),
                     change.op.replace("_", " "))
            for column, text in enumerate(texts):
                item = QTableWidgetItem(text)
                item.setToolTip(change.origin if column == 1 else text)
                self.table.setItem(row, column, item)

    def rows(self) -> list[tuple[str, ...]]:
        """The table's text, row by row (what a person reads)."""
        items = ((self.table.item(r, c) for c in range(self.table.columnCount())) for r in range(self.table.rowCount()))
        return [tuple(item.text() if item is not None else "" for item in row) for row in items]
