"""Small widget constructors shared by the panels (typed: PySide6's stubs do not list the property
keywords its constructors accept at run time, such as ``QToolButton(text=…)``)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QToolButton


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
