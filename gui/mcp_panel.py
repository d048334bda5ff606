"""The MCP panel: the embedded server's address, the bearer token (copy button), ready-made client
snippets, and a live activity log of tool calls fed by ``controller.mcp_call``.

Snippets come from ``limbic mcp config`` (:func:`limbic.core.mcp.config.client_config`), so the
panel and the command line always print the same thing. The token is masked in the field and in the
snippet until *Show* is pressed (*Copy snippet* copies it whole). A server that could not start says so
here, wrapped, with the whole traceback behind *Show details* and a *Retry* button.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from limbic.core.mcp.config import client_config
from limbic.gui.controller import AppController
from limbic.gui.widgets import plural

MASK = "••••••••"
CLIENTS = (("Claude Code", "claude-code"), ("Claude Desktop", "claude-desktop"), ("Cursor", "cursor"),
           ("VS Code", "vscode"))
MAX_LOG_ROWS = 5000
COLUMN_WIDTHS = (70, 90, 150, 0, 60, 180)  # pixels per log column; 0 stretches (the arguments)
ERROR_COLOUR = QColor(220, 60, 60)
Index = QModelIndex | QPersistentModelIndex


class ActivityModel(QAbstractTableModel):
    """Tool-call records (``ToolCallRecord``: at, tool, arguments, duration_ms, error, origin), oldest first,
    at most ``limit`` rows (the oldest are dropped). *who* is the caller's token name (``alice`` for the
    origin ``mcp:alice``)."""

    COLUMNS = ("time", "who", "tool", "arguments", "ms", "error")

    def __init__(self, parent: Any = None, limit: int = MAX_LOG_ROWS) -> None:
        super().__init__(parent)
        self._rows: list[Any] = []
        self._limit = limit

    def append(self, record: Any) -> None:
        if len(self._rows) >= self._limit:
            drop = len(self._rows) - self._limit + 1
            self.beginRemoveRows(QModelIndex(), 0, drop - 1)
            del self._rows[:drop]
            self.endRemoveRows()
        row = len(self._rows)
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.append(record)
        self.endInsertRows()

    def clear(self) -> None:
        self.beginResetModel()
        self._rows = []
        self.endResetModel()

    def record(self, row: int) -> Any:
        return self._rows[row]

    def errors(self) -> int:
        return sum(1 for r in self._rows if r.error)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r = self._rows[index.row()]
        column = self.COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return {
                "time": time.strftime("%H:%M:%S", time.localtime(r.at)),
                "who": r.origin.removeprefix("mcp:"),
                "tool": r.tool,
                "arguments": r.arguments,
                "ms": f"{r.duration_ms:.1f}",
                "error": r.error or "",
            }[column]
        if role == Qt.ItemDataRole.ToolTipRole and column in ("arguments", "error"):
            return r.arguments if column == "arguments" else r.error
        if role == Qt.ItemDataRole.ForegroundRole and r.error:
            return ERROR_COLOUR
        if role == Qt.ItemDataRole.TextAlignmentRole and column == "ms":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class McpPanel(QWidget):
    """See the module docstring. Call :meth:`set_server` with the running server (anything with
    ``url``, ``port`` and ``token``: an ``HttpMcpServer`` or a ``McpHost``), or ``None`` when stopped;
    :meth:`set_failed` after a failed start. ``retry_requested`` is emitted by the *Retry* button."""

    retry_requested = Signal()

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self._server: Any = None
        self._snippet = ""  # the snippet as copied (token in clear)
        self._details = ""
        self.state = QLabel("MCP server: not running", wordWrap=True)
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_button = QPushButton("Show details…")
        self.details_button.clicked.connect(self.show_details)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setToolTip("Start the MCP server again")
        self.retry_button.clicked.connect(self.retry_requested)
        failure_row = QHBoxLayout()
        failure_row.addStretch(1)
        failure_row.addWidget(self.details_button)
        failure_row.addWidget(self.retry_button)
        self.address = QLineEdit(readOnly=True, placeholderText="not running")
        self.token_field = QLineEdit(readOnly=True, echoMode=QLineEdit.EchoMode.Password)
        self.copy_token_button = QPushButton("Copy token")
        self.copy_token_button.setToolTip("Copy the bearer token to the clipboard")
        self.copy_token_button.clicked.connect(self.copy_token)
        self.show_token_button = QPushButton("Show")
        self.show_token_button.setCheckable(True)
        self.show_token_button.setToolTip("Show the token in the field and in the snippet")
        self.show_token_button.toggled.connect(self._show_token)
        token_row = QHBoxLayout()
        for w in (self.token_field, self.show_token_button, self.copy_token_button):
            token_row.addWidget(w)
        self.token_field.setMinimumWidth(60)
        server_box = QGroupBox("Server")
        form = QFormLayout(server_box)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow(self.state)
        form.addRow(failure_row)
        form.addRow("Address", self.address)
        self.memory_field = QLineEdit(controller.service.shown_address, readOnly=True)
        self.memory_field.setToolTip("The memory this server serves (a PostgreSQL password is never shown)")
        form.addRow("Memory", self.memory_field)
        form.addRow("Bearer token", token_row)
        self.project_field = QLineEdit(placeholderText="every memory")
        self.project_field.setToolTip("Bind the server to a project: new entities belong to it, reads and searches "
                                      "see its memories and the global ones only (the server restarts)")
        self.project_field.editingFinished.connect(self._apply_project)
        form.addRow("Project", self.project_field)

        self.client_box = QComboBox()
        for label, key in CLIENTS:
            self.client_box.addItem(label, key)
        self.transport_box = QComboBox()
        self.transport_box.addItem("HTTP (this app)", True)
        self.transport_box.addItem("stdio (limbic mcp)", False)
        self.snippet = QPlainTextEdit(readOnly=True)
        self.snippet.setMaximumHeight(130)
        self.snippet.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        copy_snippet = QPushButton("Copy snippet")
        copy_snippet.setToolTip("Copy the snippet, token included")
        copy_snippet.clicked.connect(lambda: QGuiApplication.clipboard().setText(self._snippet))
        for box in (self.client_box, self.transport_box):
            box.currentIndexChanged.connect(lambda _i: self.refresh_snippet())
        pick = QHBoxLayout()
        for widget in (self.client_box, self.transport_box, copy_snippet):
            widget.setMinimumWidth(40)
            pick.addWidget(widget)
        snippet_box = QGroupBox("Client configuration")
        snippet_layout = QVBoxLayout(snippet_box)
        snippet_layout.addLayout(pick)
        snippet_layout.addWidget(self.snippet)

        self.model = ActivityModel(self)
        self.log = QTableView()
        self.log.setModel(self.model)
        self.log.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.log.verticalHeader().hide()
        header = self.log.horizontalHeader()
        for column, width in enumerate(COLUMN_WIDTHS):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch if width == 0
                                        else QHeaderView.ResizeMode.Interactive)
            if width:
                self.log.setColumnWidth(column, width)
        self.counts = QLabel("no calls yet")
        clear = QPushButton("Clear log")
        clear.clicked.connect(self.clear_log)
        log_row = QHBoxLayout()
        log_row.addWidget(self.counts, 1)
        log_row.addWidget(clear)
        log_box = QGroupBox("Activity")
        log_layout = QVBoxLayout(log_box)
        log_layout.addWidget(self.log)
        log_layout.addLayout(log_row)

        layout = QVBoxLayout(self)
        layout.addWidget(server_box)
        layout.addWidget(snippet_box)
        layout.addWidget(log_box, 1)
        controller.mcp_call.connect(self.add_record)
        self.set_server(None)

    def set_server(self, server: Any) -> None:
        """Show ``server``'s address and token (``None``: not running)."""
        self._server = server
        url = getattr(server, "url", None) if server is not None else None
        self.address.setText(url or "")
        self.token_field.setText(server.token if url else "")
        self.copy_token_button.setEnabled(bool(url))
        self.state.setText(f"MCP server: listening on {url}" if url else "MCP server: not running")
        self._set_failure("")
        self.refresh_snippet()

    def _apply_project(self) -> None:
        if hasattr(self._server, "set_project"):
            self._server.set_project(self.project_field.text().strip() or None)

    def set_failed(self, message: str, details: str = "") -> None:
        """Show a failed start: ``message`` wrapped here, ``details`` (the traceback) behind *Show details*."""
        self.set_server(None)
        self.state.setText(f"The MCP server could not start: {message}")
        self._set_failure(details or message)

    def set_starting(self) -> None:
        self.state.setText("MCP server: starting…")
        self._set_failure("")

    def _set_failure(self, details: str) -> None:
        self._details = details
        self.details_button.setVisible(bool(details))
        self.retry_button.setVisible(bool(details))

    def show_details(self) -> QMessageBox:
        """The failure in a message box, the whole text behind its *Show Details…* button."""
        box = QMessageBox(QMessageBox.Icon.Critical, "Limbic Studio — MCP server", self.state.text(),
                          QMessageBox.StandardButton.Close, self)
        box.setDetailedText(self._details)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box

    def _show_token(self, shown: bool) -> None:
        self.token_field.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        self._show_snippet()

    def copy_token(self) -> None:
        if self._server is not None:
            QGuiApplication.clipboard().setText(self._server.token)
            self.controller.status_message.emit("MCP bearer token copied to the clipboard")

    def refresh_snippet(self) -> None:
        http = bool(self.transport_box.currentData())
        port = getattr(self._server, "port", None) if self._server is not None else None
        if http and not port:
            self._snippet = ""
            self.snippet.setPlainText("Start the MCP server to get an HTTP snippet (or pick stdio).")
            return
        self._snippet = client_config(self.client_box.currentData(), http=http, port=port or 0,
                                      db=self.controller.service.shareable_address)
        self._show_snippet()

    def _show_snippet(self) -> None:
        token = getattr(self._server, "token", None) if self._server is not None else None
        shown = self._snippet
        if token and not self.show_token_button.isChecked():
            shown = shown.replace(token, MASK)
        if shown and shown != self.snippet.toPlainText():
            self.snippet.setPlainText(shown)

    def add_record(self, record: Any) -> None:
        """Append one ``ToolCallRecord`` to the log (keeps the view at the bottom if it was there)."""
        bar = self.log.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 2
        self.model.append(record)
        if at_bottom:
            self.log.scrollToBottom()
        self._update_counts()

    def clear_log(self) -> None:
        self.model.clear()
        self._update_counts()

    def _update_counts(self) -> None:
        n, errors = self.model.rowCount(), self.model.errors()
        self.counts.setText(f"{plural(n, 'call')}, {plural(errors, 'error')}")
