"""The graph view's legend: a small panel over the canvas's top-left corner, never taking canvas room.

It says what the colours mean (entity type or community, see :mod:`limbic.gui.graph.colouring`) and
what the rings, sizes and opacity mean. Its text and background come from the application palette, so
it follows a live switch to dark mode; long names are elided (whole in the tooltip).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel, QWidget

from limbic.gui.graph import style

MAX_ROWS = 10
TEXT_CHARS = 34
MARGIN = 8


def _dot(rgb: tuple[int, int, int], symbol: str = "●") -> str:
    return f"<span style='color: rgb{rgb}'>{symbol}</span>"


class GraphLegend(QLabel):
    """Rich-text legend pinned to the top-left corner of ``host`` (it follows the host's resizes)."""

    def __init__(self, host: QWidget) -> None:
        super().__init__(host)
        self._host = host
        self.setObjectName("graphLegend")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setStyleSheet("QLabel#graphLegend { background: palette(base); border: 1px solid palette(mid);"
                           " border-radius: 4px; padding: 4px 6px; font-size: 8pt; }")
        self.title = ""
        self.entries: tuple[tuple[tuple[int, int, int], str], ...] = ()
        host.installEventFilter(self)

    def set_entries(self, title: str, entries: Sequence[tuple[tuple[int, int, int], str]]) -> None:
        """The colour rows (at most :data:`MAX_ROWS`, the rest summed up) under ``title``, then the key to
        rings, size and opacity."""
        entries = tuple(entries)
        if (title, entries) == (self.title, self.entries):
            return
        self.title, self.entries = title, entries
        rows = [f"<b>{escape(title)}</b>"]
        for rgb, text in entries[:MAX_ROWS]:
            short = text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"
            rows.append(f"{_dot(rgb)} {escape(short)}")
        if len(entries) > MAX_ROWS:
            rows.append(f"{_dot(style.OTHER_COLOUR)} and {len(entries) - MAX_ROWS} more")
        rows.append(f"{_dot(style.HIT_COLOUR, '○')} search hit &nbsp;{_dot(style.SELECTION_COLOUR, '○')} selected")
        rows.append("size: how often used · faded: not used lately")
        self.setText("<br>".join(rows))
        self.setToolTip("\n".join([title, *(text for _, text in entries)]))
        self.adjustSize()
        self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self._host and event.type() == QEvent.Type.Resize:
            self._place()
        return False

    def _place(self) -> None:
        self.move(MARGIN, MARGIN)
        self.raise_()
