"""A node's name on the graph canvas: one item that sits on its node and draws the name's box beside it, with
a leader line to the node's disc when the box had to go further out (:func:`leader`).

The item ignores the view's zoom (``ItemIgnoresTransformations``): its position is its node's position in
layout units, and the box and the leader are drawn at fixed pixel offsets from there. So a label cannot come
loose from its node: a zoom, a fit or a write that moves the node moves the item, box and leader with it.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

LABEL_REACH = 6.0  # pixels: a box this close to its node's disc (or closer) needs no leader line
PATCH_ALPHA = 150  # of 255: the translucent patch under the text


def leader(dx: float, dy: float, width: float, height: float, radius: float) -> QLineF | None:
    """The leader line joining a node of ``radius`` pixels to its label box (top-left corner at ``(dx, dy)``
    pixels from the node's centre, ``width`` × ``height``), in the same pixel offsets: from the disc's edge to
    the box's nearest point. ``None`` when the box is within ``radius`` + :data:`LABEL_REACH` of the centre."""
    x = min(max(0.0, dx), dx + width)  # the box's point nearest the centre
    y = min(max(0.0, dy), dy + height)
    distance = math.hypot(x, y)
    if distance <= radius + LABEL_REACH:
        return None
    return QLineF(x * radius / distance, y * radius / distance, x, y)


class NodeLabel(QGraphicsItem):
    """A label drawn at its node: ``setPos`` takes the node's layout position; :meth:`place` the text and where
    its box goes (pixels from the node, y downwards), with a leader line when the box is out of reach."""

    def __init__(self, font: QFont, foreground: QColor, background: QColor) -> None:
        super().__init__()
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setAcceptHoverEvents(False)
        self.font = font
        self.text = ""
        self.entity = ""
        self.box = QRectF()
        self.radius = 0.0
        self.line: QLineF | None = None
        self.accent: QColor | None = None
        self._bounds = QRectF()
        self.set_colours(foreground, background)

    def set_colours(self, foreground: QColor, background: QColor) -> None:
        """Text and leader in ``foreground``, the patch in ``background`` (translucent)."""
        self.foreground = QColor(foreground)
        self.patch = QColor(background)
        self.patch.setAlpha(PATCH_ALPHA)
        self.update()

    def place(self, text: str, entity: str, box: QRectF, radius: float, accent: QColor | None = None) -> None:
        """Show ``text`` (the name of ``entity``, maybe shortened) in ``box`` (pixels from the node's centre)
        beside a node of ``radius`` pixels; ``accent`` (the colour of the node's ring: a hit, the selection) outlines
        the box and draws its leader line."""
        self.text, self.entity, self.accent = text, entity, accent
        self._set_box(QRectF(box), radius)

    def set_radius(self, radius: float) -> None:
        """The node's disc now has ``radius`` pixels (a redraw resized it): the box moves out or in by as much,
        keeping its gap to the disc, and the leader follows."""
        if radius == self.radius:
            return
        x = min(max(0.0, self.box.left()), self.box.right())  # the box's point nearest the centre
        y = min(max(0.0, self.box.top()), self.box.bottom())
        distance = math.hypot(x, y) or 1.0
        shift = radius - self.radius
        self._set_box(self.box.translated(x / distance * shift, y / distance * shift), radius)

    def _set_box(self, box: QRectF, radius: float) -> None:
        self.prepareGeometryChange()
        self.box, self.radius = box, radius
        self.line = leader(box.left(), box.top(), box.width(), box.height(), radius)
        bounds = QRectF(self.box)
        if self.line is not None:
            bounds = bounds.united(QRectF(self.line.p1(), self.line.p2()).normalized())
        self._bounds = bounds.adjusted(-1.0, -1.0, 1.0, 1.0)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return self._bounds

    def paint(self, painter: QPainter, _option: Any, _widget: Any = None) -> None:
        ink = QColor(self.accent if self.accent is not None else self.foreground)
        ink.setAlpha(200)
        if self.line is not None:
            painter.setPen(QPen(ink, 1.2))
            painter.drawLine(self.line)
        painter.setPen(QPen(ink, 1.0) if self.accent is not None else Qt.PenStyle.NoPen)
        painter.setBrush(self.patch)
        painter.drawRoundedRect(self.box.adjusted(0.5, 0.5, -0.5, -0.5), 3.0, 3.0)
        painter.setPen(self.foreground)
        painter.setFont(self.font)
        painter.drawText(self.box, Qt.AlignmentFlag.AlignCenter, self.text)

    def device_box(self, viewport_transform: Any) -> QRectF:
        """The box in the viewport's pixels (``viewport_transform``: the graphics view's ``viewportTransform()``)."""
        return self.deviceTransform(viewport_transform).mapRect(self.box)

    def device_leader(self, viewport_transform: Any) -> QLineF | None:
        """The leader line in the viewport's pixels (``None``: the box is at its node)."""
        if self.line is None:
            return None
        transform = self.deviceTransform(viewport_transform)
        return QLineF(transform.map(self.line.p1()), transform.map(self.line.p2()))
