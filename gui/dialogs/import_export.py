"""Import and export dialogs: memory files in (JSONL / JSON, with progress and the import report),
the graph out (JSONL, GraphML, GEXF).

Each file of an import may be given a project (docs/lifecycle.md "Project scope"): its entities then belong to
that project, and its names resolve to that project's entities and the global ones. The work runs off the UI
thread through ``controller.run`` with :mod:`limbic.core.io.importer` and
:mod:`limbic.core.io.exporter`; the importer's progress callback (called on the worker thread) reaches
the progress bar through a queued signal. The imported entities reach every view through the service's
change notifications, like any other write.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from limbic.core.io.exporter import FORMATS, export_graph
from limbic.core.io.importer import import_files
from limbic.core.service import MemoryService
from limbic.gui.controller import AppController
from limbic.gui.widgets import plural

MEMORY_FILES = "Memory files (*.jsonl *.json *.ndjson *.txt);;All files (*)"
PROJECT_CHARS = 24  # characters the project box shows at least
EXPORT_FILTERS = {"jsonl": "JSON Lines (*.jsonl)", "graphml": "GraphML (*.graphml)", "gexf": "GEXF (*.gexf)"}


class _Progress(QObject):
    """Carries ``(done, total, message)`` from the importer's worker thread to the UI thread."""

    changed = Signal(int, int, str)

    def __call__(self, done: int, total: int, message: str) -> None:
        self.changed.emit(done, total, message)


class ImportDialog(QDialog):
    """Pick memory files, import them through the service, show progress and the report.

    ``finished_import(report)`` is emitted with the :class:`~limbic.core.io.report.ImportReport`;
    ``report`` keeps the last one.
    """

    finished_import = Signal(object)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.report: Any = None
        self.setWindowTitle("Import memory files")
        self.resize(720, 520)
        self.files = QTreeWidget()
        self.files.setHeaderLabels(["File", "Project"])
        self.files.setRootIsDecorated(False)
        self.files.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self.files.setColumnWidth(0, 520)
        add = QPushButton("Add files…")
        add.clicked.connect(self._browse)
        remove = QPushButton("Remove")
        remove.clicked.connect(self._remove_selected)
        self.project_box = QComboBox(editable=True)
        self.project_box.setToolTip("The project of the selected files (of every file when none is selected); "
                                    "empty: no project (global entities, or the projects the file names)")
        editor = self.project_box.lineEdit()
        if editor is not None:
            editor.setPlaceholderText("no project")
        self.project_box.addItem("")
        controller.run(controller.service.projects.names, on_success=self._add_projects)  # read off the UI thread
        self.project_box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.project_box.setMinimumContentsLength(PROJECT_CHARS)  # a project's name whole, not a 30 px sliver
        self.project_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        assign = QPushButton("Set project")
        assign.clicked.connect(lambda: self.set_project(self.project_box.currentText()))
        picks = QHBoxLayout()
        picks.addWidget(add)
        picks.addWidget(remove)
        picks.addStretch(1)
        picks.addWidget(QLabel("Project:"))
        picks.addWidget(self.project_box, 2)
        picks.addWidget(assign)
        self.progress_bar = QProgressBar()
        self.progress_bar.setValue(0)
        self.progress_label = QLabel("Choose one or more files: reference JSONL, JSON documents, graph dumps.")
        self.report_view = QPlainTextEdit(readOnly=True, placeholderText="The import report appears here.")
        self.import_button = QPushButton("Import")
        self.import_button.clicked.connect(self.start_import)
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.import_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.files)
        layout.addLayout(picks)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.report_view, 1)
        layout.addLayout(buttons)
        self._progress = _Progress(self)
        self._progress.changed.connect(self._on_progress)

    def _rows(self) -> list[QTreeWidgetItem]:
        rows = (self.files.topLevelItem(i) for i in range(self.files.topLevelItemCount()))
        return [row for row in rows if row is not None]

    def paths(self) -> list[str]:
        return [row.text(0) for row in self._rows()]

    def projects(self) -> list[str | None]:
        """The project of each listed file, in order (``None``: no project)."""
        return [row.text(1).strip() or None for row in self._rows()]

    def set_paths(self, paths: list[str | Path], project: str | None = None) -> None:
        self.files.clear()
        self._add(paths, project)

    def set_project(self, project: str | None) -> None:
        """Give the selected files (every file when none is selected) ``project`` (empty or ``None``: none)."""
        rows = self.files.selectedItems() or self._rows()
        for row in rows:
            row.setText(1, (project or "").strip())

    def _add(self, paths: Sequence[str | Path], project: str | None) -> None:
        existing = set(self.paths())
        for path in (str(p) for p in paths):
            if path not in existing:
                self.files.addTopLevelItem(QTreeWidgetItem([path, (project or "").strip()]))

    def _remove_selected(self) -> None:
        for item in self.files.selectedItems():
            self.files.takeTopLevelItem(self.files.indexOfTopLevelItem(item))

    def _add_projects(self, projects: list[str]) -> None:
        """Offer the memory's projects in the project box (read off the UI thread)."""
        self.project_box.addItems(list(projects))

    def _browse(self) -> None:
        chosen, _ = QFileDialog.getOpenFileNames(self, "Import memory files", "", MEMORY_FILES)
        self._add(chosen, self.project_box.currentText())

    def start_import(self) -> None:
        """Import the listed files (off the UI thread)."""
        paths = self.paths()
        if not paths:
            self.progress_label.setText("Add at least one file first.")
            return
        self.import_button.setEnabled(False)
        self.progress_bar.setRange(0, 0)  # busy until the parser reports a total
        self.progress_label.setText(f"Reading {len(paths)} file(s)…")
        self.controller.run(import_files, self.controller.service, paths, self._progress, self.projects(),
                            on_success=self._done, on_failure=self._failed)

    def _on_progress(self, done: int, total: int, message: str) -> None:
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(min(done, total))
        self.progress_label.setText(message)

    def _done(self, report: Any) -> None:
        self.report = report
        self.import_button.setEnabled(True)
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(1)
        totals = report.totals()
        self.progress_label.setText(
            f"Done: {plural(totals['entities_created'], 'entity')} created, "
            f"{plural(totals['observations_added'], 'observation')} and "
            f"{plural(totals['relations_created'], 'relation')} added" + ("" if report.ok else " — some files were NOT imported"))
        self.report_view.setPlainText(report.summary(limit=200))
        self.controller.status_message.emit(self.progress_label.text())
        self.finished_import.emit(report)

    def _failed(self, error: BaseException) -> None:
        self.import_button.setEnabled(True)
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.progress_label.setText(f"Import failed: {error}")
        self.report_view.setPlainText(str(error))


class ExportDialog(QDialog):
    """Write the whole graph to a file as JSONL (reference format, optional extras), GraphML or GEXF.

    ``finished_export(summary)`` carries the :class:`~limbic.core.io.exporter.ExportSummary`.
    """

    finished_export = Signal(object)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.summary: Any = None
        self.setWindowTitle("Export the memory graph")
        self.format_box = QComboBox()
        for fmt in FORMATS:
            self.format_box.addItem(EXPORT_FILTERS[fmt].split(" (")[0], fmt)
        self.extras = QCheckBox("Include Limbic extras (status, timestamps, kinds, history)")
        self.extras.setChecked(True)
        self.format_box.currentIndexChanged.connect(lambda _i: self.extras.setEnabled(self.format() == "jsonl"))
        self.path = QLineEdit(placeholderText="file to write")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path, 1)
        path_row.addWidget(browse)
        self.message = QLabel()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.ActionRole)
        self.export_button.clicked.connect(self.start_export)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Format", self.format_box)
        form.addRow("", self.extras)
        form.addRow("File", path_row)
        form.addRow(self.message)
        form.addRow(self.buttons)

    def format(self) -> str:
        return self.format_box.currentData()

    def _browse(self) -> None:
        fmt = self.format()
        chosen, _ = QFileDialog.getSaveFileName(self, "Export to", f"memory.{fmt}", EXPORT_FILTERS[fmt])
        if chosen:
            self.path.setText(chosen)

    def start_export(self) -> None:
        """Write the file (off the UI thread)."""
        target = self.path.text().strip()
        if not target:
            self.message.setText("Choose a file first.")
            return
        self.export_button.setEnabled(False)
        self.message.setText("Exporting…")
        self.controller.run(_export_to_file, self.controller.service, self.format(), target,
                            self.extras.isChecked(), on_success=self._done, on_failure=self._failed)

    def _done(self, summary: Any) -> None:
        self.summary = summary
        self.export_button.setEnabled(True)
        self.message.setText(f"Wrote {plural(summary.entities, 'entity')} and {plural(summary.relations, 'relation')} "
                             f"({summary.format}) to {self.path.text().strip()}")
        self.controller.status_message.emit(self.message.text())
        self.finished_export.emit(summary)

    def _failed(self, error: BaseException) -> None:
        self.export_button.setEnabled(True)
        self.message.setText(f"Export failed: {error}")


def _export_to_file(service: MemoryService, fmt: str, target: str, extras: bool) -> Any:
    """Worker: export into a temporary sibling file, then move it over ``target`` (no half-written file)."""
    path = Path(target).expanduser()
    partial = path.with_name(f".{path.name}.partial")
    try:
        with open(partial, "wb") as out:
            summary = export_graph(service, fmt, out, extras=extras)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
    return summary
