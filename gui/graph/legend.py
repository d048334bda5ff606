"""The graph view's legend: a small panel over a corner of the canvas, never taking canvas room.

It says what the colours mean (entity type or community, see :mod:`limbic.gui.graph.colouring`) and
what the rings, sizes and opacity mean. It sits in the top-left, top-right or bottom-right corner,
whichever covers the fewest drawn nodes (:meth:`GraphLegend.settle`; the bottom-left holds the count).
Its text and background come from the application palette, so it follows a live switch to dark mode;
long names are elided (whole in the tooltip).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np
from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QWidget

from limbic.gui.graph import style

MAX_ROWS = 6
OPACITY = 215  # of 255: the nodes under the legend show through
CORNERS = ("top-left", "top-right", "bottom-right")
TEXT_CHARS = 30
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
        self.setStyleSheet("QLabel#graphLegend { padding: 4px 6px; font-size: 8pt; }")
        self.title = ""
        self.entries: tuple[tuple[tuple[int, int, int], str], ...] = ()
        self.corner = CORNERS[0]
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
        rows.append(f"{_dot(style.HIT_COLOUR, '○')} hit {_dot(style.SELECTION_COLOUR, '○')} selected · size: use · "
                    "faded: unused lately")
        self.setText("<br>".join(rows))
        self.setToolTip("\n".join([title, *(text for _, text in entries)]))
        self.adjustSize()
        self._place()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        fill = self.palette().base().color()
        fill.setAlpha(OPACITY)
        painter.setBrush(fill)
        painter.setPen(self.palette().mid().color())
        painter.drawRoundedRect(self.rect().adjusted(0, 0, -1, -1), 4, 4)
        painter.end()
        super().paintEvent(event)

    def settle(self, pixels: np.ndarray, weights: np.ndarray) -> str:
        """Move to the corner that hides the least weight of the nodes at ``pixels`` ``(N, 2)`` (host
        coordinates; ``weights`` ``(N,)``, high for the selection and hits), the top-left on a tie;
        returns the corner."""
        def covered(corner: str) -> float:
            at = self._spot(corner)
            inside = ((pixels[:, 0] >= at.x()) & (pixels[:, 0] <= at.x() + self.width())
                      & (pixels[:, 1] >= at.y()) & (pixels[:, 1] <= at.y() + self.height()))
            return float(weights[inside].sum())

        self.corner = min(CORNERS, key=lambda corner: (covered(corner), CORNERS.index(corner))) if len(pixels) \
            else CORNERS[0]
        self._place()
        return self.corner

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self._host and event.type() == QEvent.Type.Resize:
            self._place()
        return False

    def _spot(self, corner: str) -> QPoint:
        right = self._host.width() - self.width() - MARGIN
        bottom = self._host.height() - self.height() - MARGIN
        return {"top-left": QPoint(MARGIN, MARGIN), "top-right": QPoint(right, MARGIN),
                "bottom-right": QPoint(right, bottom)}[corner]

    def _place(self) -> None:
        self.move(self._spot(self.corner))
        self.raise_()
