"""The graph view's legend: a slim panel beside the canvas (never over the drawing) whose entries you can click.

It says what the colours mean (entity type, community, who wrote it, or what fades next; see
:mod:`limbic.gui.graph.colouring`) and what the rings, sizes and opacity mean. Each colour row is a
checkable entry: clicking one highlights the nodes of that type, community or origin (the others fade);
clicking it again, or *Show all*, clears it. A long entry shows its name elided and its count whole, the
whole text in its tooltip. Below the entries, a detail list shows what the chosen entry
stands for when there is more to say: an origin's writes in order (*Who wrote it*), the memories that fade
with the date each crosses (*What fades next*); clicking a row there selects its entity. It follows the
application palette (dark mode) by itself; collapse it with L.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QIcon, QPixmap
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QStyle,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from limbic.gui.graph import style

WIDTH = 210      # pixels
MAX_ROWS = 14    # colour rows listed; the rest are summed up in one row
SWATCH = 12      # pixels: a colour row's swatch
COUNT = re.compile(r"^(.*?)(\s\([\d,]+\).*)$")  # "around Harbor" + " (12)" or " (3) · 7 writes"
Entry = tuple[tuple[int, int, int], str]


def fitted(text: str, width: float, metrics: QFontMetrics) -> str:
    """``text`` within ``width`` pixels of ``metrics``: whole when it fits, else its name elided (…) and its count
    kept — "around Memory_Gr… (20)" — never cut."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    match = COUNT.match(text)
    head, tail = (match.group(1), match.group(2)) if match else (text, "")
    room = max(width - metrics.horizontalAdvance(tail), metrics.horizontalAdvance("…"))
    return metrics.elidedText(head, Qt.TextElideMode.ElideRight, int(room)) + tail


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
        self.list.setIconSize(QSize(SWATCH, SWATCH))
        self.list.viewport().installEventFilter(self)  # a new width fits the rows again
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
            item.setData(Qt.ItemDataRole.UserRole, text)
            self.list.addItem(item)
        if len(entries) > MAX_ROWS:
            rest = QListWidgetItem(_swatch(style.OTHER_COLOUR), f"and {len(entries) - MAX_ROWS} more")
            rest.setFlags(Qt.ItemFlag.NoItemFlags)
            rest.setData(Qt.ItemDataRole.UserRole, rest.text())
            self.list.addItem(rest)
        self._fit_rows()
        self.setToolTip("\n".join([title, *(text for _, text in entries)]))
        self.show_chosen(keep)

    def text_width(self) -> float:
        """Pixels a colour row's text may take, as the style lays a row out: its text rectangle
        (``SE_ItemViewItemText``) less the text margins the style draws the text within."""
        if not self.list.count():
            return float(self.list.viewport().width())
        item = self.list.item(0)
        option = QStyleOptionViewItem()
        option.initFrom(self.list)
        option.rect = QRect(0, 0, self.list.viewport().width(), self.list.sizeHintForRow(0))
        option.features = (QStyleOptionViewItem.ViewItemFeature.HasDisplay
                           | QStyleOptionViewItem.ViewItemFeature.HasDecoration)
        option.decorationSize = self.list.iconSize()
        option.decorationPosition = QStyleOptionViewItem.Position.Left
        option.displayAlignment = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        option.icon, option.text = item.icon(), item.text()
        style = self.list.style()
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, self.list)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self.list) + 1
        return float(rect.width() - 2 * margin - 1)

    def shown_texts(self) -> list[str]:
        """The colour rows as drawn (a long name elided, its count kept)."""
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _fit_rows(self) -> None:
        metrics, width = self.list.fontMetrics(), self.text_width()
        for i in range(self.list.count()):
            item = self.list.item(i)
            item.setText(fitted(item.data(Qt.ItemDataRole.UserRole), width, metrics))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize:
            self._fit_rows()
        return super().eventFilter(watched, event)

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
