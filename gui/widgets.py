"""Small widget constructors shared by the panels (typed: PySide6's stubs do not list the property
keywords its constructors accept at run time, such as ``QToolButton(text=…)``)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QLabel, QToolButton, QWidget


def single_shot_timer(parent: QObject, interval_ms: int, slot: Callable[[], object]) -> QTimer:
    """A single-shot ``QTimer`` owned by ``parent`` that calls ``slot`` ``interval_ms`` after each ``start()``."""
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(interval_ms)
    timer.timeout.connect(slot)
    return timer


def tool_button(text: str, tip: str = "", *, shortcut: str = "", checkable: bool = False,
                checked: bool = False, popup: bool = False) -> QToolButton:
    """A ``QToolButton`` with its text, tooltip and optional shortcut; ``checkable`` ones start ``checked``;
    ``popup`` ones open their menu at once."""
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    if shortcut:
        button.setShortcut(shortcut)
    button.setCheckable(checkable)
    button.setChecked(checked)
    if popup:
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    return button


class CornerLabel(QLabel):
    """A small caption pinned to the bottom-left corner of ``parent`` (drawn over it, mouse clicks pass through).

    The text is elided in the middle when ``parent`` is too narrow for it; the whole text is in the tooltip.
    """

    MARGIN = 6

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._host = parent
        self._full = ""
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setStyleSheet("QLabel { background: palette(window); border-radius: 3px; padding: 1px 4px; }")
        parent.installEventFilter(self)

    def full_text(self) -> str:
        """The text as set, before eliding."""
        return self._full

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setToolTip(text)
        self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._host and event.type() == QEvent.Type.Resize:
            self._place()
        return False

    def _place(self) -> None:
        parent = self._host
        room = max(0, parent.width() - 2 * self.MARGIN)
        padding = self.sizeHint().width() - self.fontMetrics().horizontalAdvance(self.text())
        self.setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideMiddle, max(0, room - padding)))
        self.adjustSize()
        self.resize(min(self.width(), room), self.height())
        self.move(self.MARGIN, parent.height() - self.height() - self.MARGIN)
        self.raise_()
