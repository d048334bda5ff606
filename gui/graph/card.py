"""The hover card of the graph view: a node's full name, type, project, first observations, relations and last use.

What the drawn arrays know (name, type, relations, last use) shows at once; the entity's project and first
observations follow from one read off the UI thread (``MemoryService.entities.get_entity`` without recording: looking
is not using), kept per name until the graph changes. The card sits beside the cursor, inside the canvas.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QWidget

from limbic.core.models import iso

OBSERVATIONS = 3   # first observations shown
OBSERVATION_CHARS = 140
WIDTH = 300        # pixels, at most
OFFSET = 16        # pixels from the cursor


def card_html(name: str, entity_type: str, relations: int, last_use: float, detail: Any | None) -> str:
    """The card's rich text; ``last_use`` UTC seconds (NaN: never used), ``detail`` an ``EntityDetail`` or ``None``
    (still being read)."""
    used = "never used" if math.isnan(last_use) else f"last used {(iso(last_use) or '')[:10]}"
    rows = [f"<b>{escape(name)}</b>", f"{escape(entity_type)} · {relations:,} relation{'s' if relations != 1 else ''}"
            f" · {used}"]
    if detail is None:
        rows.append("<i>reading…</i>")
    else:
        entity = detail.entity
        rows[1] += f" · project: {escape(entity.project)}" if entity.project else " · no project"
        live = entity.live_observations
        for observation in live[:OBSERVATIONS]:
            text = observation.content
            text = text if len(text) <= OBSERVATION_CHARS else text[: OBSERVATION_CHARS - 1] + "…"
            rows.append(f"• {escape(text)}")
        if len(live) > OBSERVATIONS:
            rows.append(f"<i>and {len(live) - OBSERVATIONS} more observations</i>")
        if not live:
            rows.append("<i>no observations</i>")
    rows.append("<span style='color: gray'>click: select · double-click: edit</span>")
    return "<br>".join(rows)


class HoverCard(QLabel):
    """A rich-text card over ``host`` (the canvas), shown by :meth:`show_at`."""

    def __init__(self, host: QWidget) -> None:
        super().__init__(host)
        self._host = host
        self.setObjectName("hoverCard")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setMaximumWidth(WIDTH)
        self.setStyleSheet("QLabel#hoverCard { padding: 6px 8px; font-size: 8pt; }")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.name: str | None = None
        self.hide()

    def show_at(self, name: str, html: str, where: QPoint) -> None:
        """Show ``html`` for ``name`` beside ``where`` (host coordinates), kept inside the host."""
        self.name = name
        self.setText(html)
        self.setFixedWidth(WIDTH)
        self.adjustSize()
        x = where.x() + OFFSET if where.x() + OFFSET + self.width() <= self._host.width() else where.x() - OFFSET - self.width()
        y = min(max(0, where.y() + OFFSET), max(0, self._host.height() - self.height()))
        self.move(max(0, x), y)
        self.show()
        self.raise_()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setBrush(self.palette().toolTipBase().color())
        painter.setPen(self.palette().mid().color())
        painter.drawRoundedRect(self.rect().adjusted(0, 0, -1, -1), 4, 4)
        painter.end()
        super().paintEvent(event)
