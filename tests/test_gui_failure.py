"""A failed background task is shown in a dialog on the real main window: a plain message, and the
traceback (with its chained cause) behind "Show Details…"."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import apsw
import pytest
from PySide6.QtWidgets import QTextEdit

from limbic.core.errors import DatabaseClosedError
from limbic.gui.controller import AppController
from limbic.gui.main_window import MainWindow

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, service):
    controller = AppController(service)
    win = MainWindow(controller)
    qtbot.addWidget(win)
    win.show()
    yield win
    controller.shutdown()


def _fail_with_a_cause() -> None:
    try:
        apsw.Connection(":memory:").execute("SELECT * FROM no_such_table")
    except apsw.SQLError as exc:
        raise DatabaseClosedError("the database is closed") from exc


def test_failed_task_opens_a_dialog_with_message_and_details(qtbot, window):
    assert window.failure_dialog is None
    with qtbot.waitSignal(window.controller.task_failed, timeout=5000):
        window.controller.run(_fail_with_a_cause)
    dialog = window.failure_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible, timeout=2000)
    assert dialog.informativeText() == "the database is closed"
    assert "no_such_table" not in dialog.text() + dialog.informativeText()
    details = dialog.detailedText()
    assert "DatabaseClosedError" in details and "SQLError" in details and "no_such_table" in details
    assert dialog.findChild(QTextEdit) is not None  # the expandable details area
    assert window.statusBar().currentMessage() == "Error: the database is closed"


def test_unexpected_errors_are_named_by_type_without_their_internal_text(qtbot, window):
    def crash() -> None:
        apsw.Connection(":memory:").execute("SELECT * FROM missing_internal_table")

    with qtbot.waitSignal(window.controller.task_failed, timeout=5000) as failed:
        window.controller.run(crash)
    _title, message, details = failed.args
    assert message == "An unexpected error stopped a background task (SQLError)."
    assert "missing_internal_table" in details
    assert window.failure_dialog is not None
    qtbot.waitUntil(window.failure_dialog.isVisible, timeout=2000)
