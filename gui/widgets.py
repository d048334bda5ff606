"""Small widget constructors shared by the panels (typed: PySide6's stubs do not list the property
keywords its constructors accept at run time, such as ``QToolButton(text=…)``)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QScrollBar,
    QToolButton,
    QWidget,
)


def plural(count: int, noun: str) -> str:
    """``"1 search"``, ``"2 searches"``, ``"1,681 entities"``: the count and the noun, plural unless the count is 1."""
    if count == 1:
        return f"{count:,} {noun}"
    if noun.endswith("y") and not noun.endswith(("ay", "ey", "oy", "uy")):
        return f"{count:,} {noun[:-1]}ies"
    return f"{count:,} {noun}{'es' if noun.endswith(('s', 'sh', 'ch', 'x')) else 's'}"


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


class ElidedLabel(QLabel):
    """A one-line label that never asks for more width than ``minimum`` pixels: a text that does not fit
    is elided at the end (``mode``) and shown whole in the tooltip. Its size hint is the whole text, so
    a layout gives it room when there is some."""

    def __init__(self, text: str = "", parent: QWidget | None = None, *, minimum: int = 40,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> None:
        super().__init__(parent)
        self._full = ""
        self._minimum = minimum
        self._mode = mode
        self.setMinimumWidth(minimum)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        self._full = text
        self.setToolTip(text if text else "")
        self._elide()
        self.updateGeometry()

    def full_text(self) -> str:
        return self._full

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        hint = super().sizeHint()
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 8, hint.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(self._minimum, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self._full, self._mode, max(0, self.width() - 4))
        if shown != super().text():
            super().setText(shown)


class ProgressBanner(QWidget):
    """A slim bar with a text and a progress bar over the top of a view, for long work the window waits
    for (the first run's sample import and embedding). :meth:`show_progress` with an empty text hides it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("progressBanner")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet("QWidget#progressBanner { background: palette(alternate-base); }")
        self.label = ElidedLabel(minimum=80)
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(220)
        self.bar.setTextVisible(True)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 3, 8, 3)
        row.addWidget(self.label, 1)
        row.addWidget(self.bar)
        self.hide()

    def show_progress(self, done: int, total: int, text: str) -> None:
        """``done`` of ``total`` steps (``total`` 0: busy, no count); an empty ``text`` hides the banner."""
        if not text:
            self.hide()
            return
        self.label.setText(f"{text} {done:,} of {total:,}" if total > 1 else text)
        self.bar.setRange(0, max(total, 0))
        self.bar.setValue(min(done, total) if total else 0)
        self.show()


class WheelGuard(QObject):
    """Keeps the mouse wheel from changing a value by accident: over a combo box, spin box or slider that does not
    have the keyboard focus, a wheel turn scrolls the panel under it instead (its nearest scroll area) and the
    value stays. A click (or Tab) gives the widget the focus; then the wheel changes it as usual.

    Installed on the application while its ``parent`` lives (Qt drops the filter with the object).
    """

    GUARDED = (QComboBox, QAbstractSpinBox, QAbstractSlider)

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Polish and isinstance(watched, self.GUARDED) and isinstance(watched, QWidget) \
                and watched.focusPolicy() == Qt.FocusPolicy.WheelFocus:
            watched.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # a wheel turn must not give it the focus
            return False
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, self.GUARDED) or isinstance(
                watched, QScrollBar) or not isinstance(watched, QWidget) or watched.hasFocus():
            return False
        area = watched.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:
            QApplication.sendEvent(area.verticalScrollBar(), event)
        return True  # the unfocused widget never sees it
