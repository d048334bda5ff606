"""The dialog that shows a failed background task: a plain message, the full traceback behind "Show Details…".

A failure in a worker (a search, a graph read, a layout) reaches the UI thread as an exception
(:mod:`limbic.gui.workers`); the controller turns it into ``task_failed(message, details)`` and the
main window shows it here, besides the status bar line.
"""

from __future__ import annotations

import traceback

from PySide6.QtWidgets import QMessageBox, QWidget

from limbic.core.errors import LimbicError


def describe_failure(error: BaseException) -> tuple[str, str]:
    """``(message, details)`` for a failed task.

    The message is the error's own text for the core's deliberate errors (:class:`LimbicError`, whose
    messages are written for people) and for operating-system errors; any other exception is a bug or
    an internal failure, named by its type only, so no SQLite or library text reaches the message.
    The details hold the whole traceback, chained causes included.
    """
    if isinstance(error, LimbicError | OSError):
        message = str(error) or type(error).__name__
    else:
        message = f"An unexpected error stopped a background task ({type(error).__name__})."
    details = "".join(traceback.format_exception(error)).rstrip()
    return message, details


class FailureDialog(QMessageBox):
    """A non-modal critical message box; :meth:`show_failure` replaces its text and shows it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Critical)
        self.setWindowTitle("Limbic Studio — a task failed")
        self.setStandardButtons(QMessageBox.StandardButton.Close)
        self.setModal(False)

    def show_failure(self, title: str, message: str, details: str) -> None:
        self.setText(title)
        self.setInformativeText(message)
        self.setDetailedText(details)
        self.show()
        self.raise_()
