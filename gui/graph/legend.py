"""The graph view's legend: a slim panel beside the canvas (never over the drawing) whose entries you can click.

It says what the colours mean (entity type, community, who wrote it, or what fades next; see
:mod:`limbic.gui.graph.colouring`) and what the rings, sizes and opacity mean. Each colour row is a
checkable entry: clicking one highlights the nodes of that type, community or origin (the others fade);
clicking it again, or *Show all*, clears it. Below the entries, a detail list shows what the chosen entry
stands for when there is more to say: an origin's writes in order (*Who wrote it*), the memories that fade
with the date each crosses (*What fades next*); clicking a row there selects its entity. It follows the
application palette (dark mode) by itself; collapse it with L.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget

from limbic.gui.graph import style

WIDTH = 210      # pixels
MAX_ROWS = 14    # colour rows listed; the rest are summed up in one row
Entry = tuple[tuple[int, int, int], str]


def _swatch(rgb: tuple[int, int, int]) -> QIcon:
    pixmap = QPixmap(12, 12)
    pixmap.fill(QColor(*rgb))
    return QIcon(pixmap)


def _dot(rgb: tuple[int, int, int], symbol: str = "●") -> str:
    return f"<span style='color: rgb{rgb}'>{symbol}</span>"


class GraphLegend(QWidget):
    """See the module docstring. ``entry_clicked(index)`` gives the clicked colour row (``-1``: cleared);
    ``detail_clicked(name)`` the entity of a clicked detail row."""

    entry_clicked = Signal(int)
    detail_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphLegend")
        self.setFixedWidth(WIDTH)
        self.title = ""
        self.entries: tuple[Entry, ...] = ()
        self.chosen = -1
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.list = QListWidget()
        self.list.setToolTip("Click an entry to highlight its nodes; click it again to show all")
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # long rows elide instead
        self.list.itemClicked.connect(self._clicked)
        self.clear_button = QPushButton("Show all")
        self.clear_button.setVisible(False)
        self.clear_button.clicked.connect(lambda: self.choose(-1))
        self.detail_title = QLabel()
        self.detail_title.setWordWrap(True)
        self.detail = QListWidget()
        self.detail.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.detail.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.detail.itemClicked.connect(lambda item: self.detail_clicked.emit(item.data(Qt.ItemDataRole.UserRole)))
        self.key = QLabel(f"{_dot(style.HIT_COLOUR, '○')} hit · {_dot(style.SELECTION_COLOUR, '○')} selected · "
                          f"{_dot(style.PINNED_COLOUR, '◇')} pinned · {_dot(style.REPLAY_COLOUR, '•')} written "
                          "(replay)<br>size: use · faded: unused lately")
        self.key.setTextFormat(Qt.TextFormat.RichText)
        self.key.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addWidget(self.heading)
        layout.addWidget(self.list, 3)
        layout.addWidget(self.clear_button)
        layout.addWidget(self.detail_title)
        layout.addWidget(self.detail, 2)
        layout.addWidget(self.key)
        self.set_detail("", [])
        self.setStyleSheet("QWidget#graphLegend { font-size: 8pt; }")

    def set_entries(self, title: str, entries: Sequence[Entry]) -> None:
        """The colour rows (at most :data:`MAX_ROWS`, the rest summed up) under ``title``; a changed set of
        entries clears the chosen one."""
        entries = tuple(entries)
        if (title, entries) == (self.title, self.entries):
            return
        keep = self.chosen if [t for _, t in entries] == [t for _, t in self.entries] else -1
        self.title, self.entries = title, entries
        self.heading.setText(f"<b>{escape(title)}</b>")
        self.list.clear()
        for rgb, text in entries[:MAX_ROWS]:
            item = QListWidgetItem(_swatch(rgb), text)
            item.setToolTip(text)
            self.list.addItem(item)
        if len(entries) > MAX_ROWS:
            rest = QListWidgetItem(_swatch(style.OTHER_COLOUR), f"and {len(entries) - MAX_ROWS} more")
            rest.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(rest)
        self.setToolTip("\n".join([title, *(text for _, text in entries)]))
        self.show_chosen(keep)

    def choose(self, index: int) -> None:
        """Choose colour row ``index`` (``-1``: none) as a click would; emits ``entry_clicked``."""
        self.show_chosen(index if 0 <= index < min(len(self.entries), MAX_ROWS) else -1)
        self.entry_clicked.emit(self.chosen)

    def set_detail(self, title: str, rows: Sequence[tuple[str, str]]) -> None:
        """The detail list: ``title`` and ``(text, entity name)`` rows (hidden when there are none)."""
        self.detail_title.setText(title)
        self.detail.clear()
        for text, name in rows:
            item = QListWidgetItem(text)
            item.setToolTip(text)
            item.setData(Qt.ItemDataRole.UserRole, name)
            self.detail.addItem(item)
        self.detail_title.setVisible(bool(title))
        self.detail.setVisible(bool(rows))

    def detail_texts(self) -> list[str]:
        return [self.detail.item(i).text() for i in range(self.detail.count())]

    def _clicked(self, item: QListWidgetItem) -> None:
        index = self.list.row(item)
        self.choose(-1 if index == self.chosen else index)

    def show_chosen(self, index: int) -> None:
        """Mark colour row ``index`` (``-1``: none) as chosen without emitting ``entry_clicked``."""
        self.chosen = index
        self.list.blockSignals(True)
        self.list.clearSelection()
        if index >= 0:
            self.list.item(index).setSelected(True)
        self.list.blockSignals(False)
        self.clear_button.setVisible(index >= 0)
