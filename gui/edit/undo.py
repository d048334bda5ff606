"""The editor's undo: the core's edits (:mod:`limbic.core.service.edits`) as ``QUndoCommand`` objects, run in order
off the UI thread.

An :class:`EditCommand` wraps one :class:`~limbic.core.service.edits.Edit`; Qt's ``redo`` and ``undo`` queue
the edit's ``apply`` and ``revert`` on the :class:`EditQueue`, which runs them one after another on the
controller's worker thread. The edit knows what to write and how to take it back; nothing here touches
the database.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand

from limbic.core.service.edits import Edit
from limbic.gui.controller import AppController

Submit = Callable[[Callable[[Any], Any], str, "str | None"], None]


class EditQueue(QObject):
    """Runs ``fn(service)`` calls strictly in order through ``controller.run``.

    ``finished(focus)`` after each success (``focus``: entity to select, or ``None``); ``failed(message)``
    when one raises — the queue is then emptied, since later edits assumed it had succeeded.
    """

    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, controller: AppController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._pending: deque[tuple[Callable[[Any], Any], str, str | None, Callable[[], None] | None]] = deque()
        self._busy = False

    @property
    def busy(self) -> bool:
        """True while an edit runs or waits."""
        return self._busy or bool(self._pending)

    def submit(self, fn: Callable[[Any], Any], label: str, focus: str | None = None,
               on_success: Callable[[], None] | None = None) -> None:
        self._pending.append((fn, label, focus, on_success))
        self._next()

    def _next(self) -> None:
        if self._busy or not self._pending:
            return
        fn, label, focus, on_success = self._pending.popleft()
        self._busy = True
        self._controller.run(fn, self._controller.service,
                             on_success=lambda _r: self._done(focus, on_success),
                             on_failure=lambda exc: self._failed(label, exc))

    def _done(self, focus: str | None, on_success: Callable[[], None] | None) -> None:
        self._busy = False
        if on_success is not None:
            on_success()
        self.finished.emit(focus)
        self._next()

    def _failed(self, label: str, error: BaseException) -> None:
        self._busy = False
        self._pending.clear()
        self.failed.emit(f"{label} failed: {error}")


class EditCommand(QUndoCommand):
    """One edit on the undo stack; ``submit(fn, label, focus)`` queues ``fn(service)`` (:meth:`EditQueue.submit`).

    The first ``redo()`` (Qt calls it on ``push``) is skipped: the editor pushes a command only after
    the edit's first ``apply`` succeeded (:meth:`mark_applied`).
    """

    def __init__(self, edit: Edit, submit: Submit) -> None:
        super().__init__(edit.description)
        self.edit = edit
        self._submit = submit
        self._applied_once = False

    def mark_applied(self) -> None:
        self._applied_once = True

    def redo(self) -> None:
        if self._applied_once:
            self._applied_once = False
            return
        self._submit(self.edit.apply, f"Redo {self.text()}", self.edit.subject())

    def undo(self) -> None:
        self._submit(self.edit.revert, f"Undo {self.text()}", self.edit.subject(reverted=True))
