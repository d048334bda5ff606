"""The MCP panel: the embedded server's address, the bearer token (copy button), ready-made client
snippets, and a live activity log of tool calls fed by ``controller.mcp_call``.

Snippets come from ``limbic mcp config`` (:func:`limbic.core.mcp.config.client_config`), so the
panel and the command line always print the same thing. The token is masked in the field and in the
snippet until *Show* is pressed (*Copy snippet* copies it whole). A server that could not start says so
here, wrapped, with the whole traceback behind *Show details* and a *Retry* button.

The server's state is one line on top; below it the activity log, the server's settings and the client
snippets are tabs, so the log has the panel's height in a laptop's side column. The log's columns fit
without a horizontal scroll bar: time, who, tool and ms as wide as their content, the arguments (or the
error, in red) get the rest, whole in their tooltips.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QResizeEvent
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
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from limbic.core.mcp.config import client_config
from limbic.core.mcp.profiles import DEFAULT_PROFILE, PROFILES
from limbic.gui.controller import AppController
from limbic.gui.widgets import plural

MASK = "••••••••"
CLIENTS = (("Claude Code", "claude-code"), ("Claude Desktop", "claude-desktop"), ("Cursor", "cursor"),
           ("VS Code", "vscode"))
MAX_LOG_ROWS = 5000
TOOL_PROFILES = {"agent": "agent: everyday memory (default)", "curation": "curation: agent + curation tools",
                 "reference": "reference: the reference server's nine", "all": "all: every tool",
                 "seed": "seed: mcp-memory's tool names"}
"""The label of each tool profile in the *Tools* box (docs/mcp.md "Tool profiles")."""
LOG_SAMPLES = {"time": "00:00:00", "who": "stdio", "tool": "search_semantic", "ms": "0000.0"}  # widest usual values
ERROR_COLOUR = QColor(220, 60, 60)
STATE_LINES = 3  # lines of the server's state shown above the tabs
Index = QModelIndex | QPersistentModelIndex


class ActivityModel(QAbstractTableModel):
    """Tool-call records (``ToolCallRecord``: at, tool, arguments, duration_ms, error, origin), oldest first,
    at most ``limit`` rows (the oldest are dropped). *who* is the caller's token name (``alice`` for the
    origin ``mcp:alice``); a failed call's row is red and says ``error: …`` in the arguments' place."""

    COLUMNS = ("time", "who", "tool", "arguments", "ms")  # a failed call shows its error in place of the arguments

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
                "arguments": f"error: {r.error}" if r.error else r.arguments,
                "ms": f"{r.duration_ms:.1f}",
            }[column]
        if role == Qt.ItemDataRole.ToolTipRole and column == "arguments":
            return f"{r.arguments}\nerror: {r.error}" if r.error else r.arguments
        if role == Qt.ItemDataRole.ForegroundRole and r.error:
            return ERROR_COLOUR
        if role == Qt.ItemDataRole.TextAlignmentRole and column == "ms":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class _StateLabel(QLabel):
    """A word-wrapped label that never asks for more height than its maximum (a long failure is clipped at
    :data:`STATE_LINES` lines; the whole text is in the tooltip and behind *Show details*)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.setWordWrap(True)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        return False  # else the dock's scroll area sizes the panel by its children's size hints, and scrolls

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        hint = super().sizeHint()
        height = super().heightForWidth(self.width()) if self.width() > 40 else hint.height()
        return QSize(hint.width(), min(height, self.maximumHeight()))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.updateGeometry()  # the text wraps differently: its height hint changed

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(40, min(super().minimumSizeHint().height(), self.maximumHeight()))


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
        self.state = _StateLabel("MCP server: not running")
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # at most STATE_LINES lines, so that a long failure leaves the log its room (the whole text: tooltip, details)
        self.state.setMaximumHeight(self.state.fontMetrics().lineSpacing() * STATE_LINES + 4)
        self.state.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
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
        self.tools_box = QComboBox()
        for name in PROFILES:
            self.tools_box.addItem(TOOL_PROFILES.get(name, name), name)
        self.tools_box.setCurrentIndex(PROFILES.index(DEFAULT_PROFILE))
        self.tools_box.setToolTip("The tools agents are offered: fewer tools cost them less context on every turn "
                                  "(the server restarts; `limbic mcp --tools PROFILE --list` shows the sizes)")
        self.tools_box.currentIndexChanged.connect(self._apply_tools)
        form.addRow("Tools", self.tools_box)

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
        self.log.setWordWrap(False)
        header = self.log.horizontalHeader()
        header.setStretchLastSection(False)
        for column, name in enumerate(ActivityModel.COLUMNS):
            if name not in LOG_SAMPLES:  # the arguments get the width left
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
                continue
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(column, max(self.log.fontMetrics().horizontalAdvance(LOG_SAMPLES[name]),
                                             header.fontMetrics().horizontalAdvance(name)) + 14)
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

        self.sections = QTabWidget()
        self.sections.setDocumentMode(True)
        for section, title in ((log_box, "Activity"), (server_box, "Server"), (snippet_box, "Clients")):
            section.setFlat(True)
            section.setTitle("")
            self.sections.addTab(section, title)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.state)
        layout.addLayout(failure_row)
        layout.addWidget(self.sections, 1)
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
        self.state.setToolTip("")
        self._set_failure("")
        self.refresh_snippet()

    def _apply_project(self) -> None:
        if hasattr(self._server, "set_project"):
            self._server.set_project(self.project_field.text().strip() or None)

    def _apply_tools(self) -> None:
        if hasattr(self._server, "set_tools"):
            self._server.set_tools(self.tools_box.currentData())
        self.refresh_snippet()

    def set_failed(self, message: str, details: str = "") -> None:
        """Show a failed start: ``message`` wrapped here, ``details`` (the traceback) behind *Show details*."""
        self.set_server(None)
        self.state.setText(f"The MCP server could not start: {message}")
        self.state.setToolTip(self.state.text())
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
                                      db=self.controller.service.shareable_address,
                                      tools=self.tools_box.currentData())
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
