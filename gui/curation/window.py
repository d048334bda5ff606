"""A window holding the curation panels (the merge queue; split candidates), opened from Edit ▸ Curation.
Their edits go on the undo stack they are given (the app passes the entity editor's). Closing it drops the
answers still due to its panels and gives the memory behind its lists back (the comparisons behind the lists:
35–90 MB at 10,000 entities)."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QPaintEvent, QUndoStack
from PySide6.QtWidgets import QDialog, QTabWidget, QVBoxLayout, QWidget

from limbic.gui.controller import AppController
from limbic.gui.curation.merge_queue import MergeQueue
from limbic.gui.curation.split_panel import SplitPanel
from limbic.gui.edit.undo import EditQueue


class CurationWindow(QDialog):
    """Non-modal: the merge queue and the split candidates in tabs. It looks for duplicates once it has been drawn
    (a search started while the window is built and first painted would compete with it for the interpreter lock:
    docs/performance.md "The UI thread at 10,000 entities"), and for split candidates when the Split tab is first
    shown (a proposal's clustering runs in the app's worker process: docs/performance.md "Memory")."""

    def __init__(self, controller: AppController, parent: QWidget | None = None, *,
                 stack: QUndoStack | None = None, queue: EditQueue | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setWindowTitle("Curation")
        self.resize(1100, 700)
        self.merge_queue = MergeQueue(controller, stack=stack, queue=queue)
        self.split_panel = SplitPanel(controller, stack=self.merge_queue.stack, queue=self.merge_queue.queue)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.merge_queue, "Merge queue")
        self.tabs.addTab(self.split_panel, "Split")
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        self._split_looked_for = False
        self.tabs.currentChanged.connect(self._tab_shown)
        self._looked_for = False

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        """The first time: look for duplicates from the event loop's next turn, once the window is drawn."""
        super().paintEvent(event)
        if not self._looked_for:
            self._looked_for = True
            QTimer.singleShot(0, self.merge_queue, self.merge_queue.find_duplicates)  # not once the window is gone

    def show_split(self) -> None:
        """Show the Split tab (looking for split candidates the first time)."""
        self.tabs.setCurrentWidget(self.split_panel)

    def _tab_shown(self, index: int) -> None:
        if self.tabs.widget(index) is self.split_panel and not self._split_looked_for:
            self._split_looked_for = True
            self.split_panel.find_candidates()

    def done(self, result: int) -> None:
        """Closing (Close, Escape or the title bar's button): the panels' pending answers are dropped, since their
        widgets go with the window, and the memory behind the lists is given back off the UI thread."""
        self.merge_queue.drop_answers()
        self.split_panel.drop_answers()
        self.controller.run(self.controller.service.curation.release_memory)
        super().done(result)
