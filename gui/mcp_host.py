"""The embedded MCP server: :class:`~limbic.core.mcp.http.HttpMcpServer` started and stopped for the app.

The server (uvicorn in its own daemon thread) is bound to 127.0.0.1 and guarded by the bearer token.
Starting it binds a socket and waits until uvicorn accepts requests, so :meth:`McpHost.start` does
that on a worker (the app passes its start-up runner, so the MCP SDK is used on the thread that
imported it; see ``gui/startup.py``); each tool call's ``ToolCallRecord`` is handed from the server
thread to the UI thread with ``controller.post_mcp_call`` (a queued signal) and comes out as
``controller.mcp_call``. :meth:`McpHost.stop` returns once the port is free.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from limbic.core.mcp.config import DEFAULT_PORT
from limbic.core.mcp.http import HttpMcpServer
from limbic.core.mcp.profiles import DEFAULT_PROFILE
from limbic.gui.controller import AppController
from limbic.gui.dialogs.failure import describe_failure
from limbic.gui.workers import TaskRunner


class McpHost(QObject):
    """Owns one ``HttpMcpServer``; see the module docstring.

    Args:
        controller: the ``AppController`` (its ``service`` is served; records go to ``mcp_call``).
        port: TCP port on 127.0.0.1; when taken, any free port is used instead (0 = any from the start).
        token: a fixed bearer token; ``None`` uses the per-install token file.
        runner: where the blocking start runs (default ``controller.runner``).

    Signals: ``started(url)``, ``stopped()``, ``failed(message, details)`` (a short message for people
    and the whole traceback, see :func:`~limbic.gui.dialogs.failure.describe_failure`).
    """

    started = Signal(str)
    stopped = Signal()
    failed = Signal(str, str)

    def __init__(self, controller: AppController, parent: QObject | None = None, *, port: int = DEFAULT_PORT,
                 token: str | None = None, runner: TaskRunner | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.runner = runner if runner is not None else controller.runner
        self.requested_port = port
        self._token = token
        self.project: str | None = None  # the project the next start binds the server to (docs/lifecycle.md)
        self.tools = DEFAULT_PROFILE  # the tool profile the next start serves (docs/mcp.md "Tool profiles")
        self.server: HttpMcpServer | None = None
        self._starting: list[HttpMcpServer] = []
        self._requested = False  # a start is under way (set on the UI thread, before the worker runs)

    @property
    def running(self) -> bool:
        return self.server is not None and self.server.running

    @property
    def url(self) -> str | None:
        return self.server.url if self.server is not None else None

    @property
    def port(self) -> int | None:
        return self.server.port if self.server is not None else None

    @property
    def token(self) -> str | None:
        return self.server.token if self.server is not None else None

    def start(self) -> None:
        """Start serving (off the UI thread); ``started`` or ``failed`` follows. Also a retry after a failure."""
        if self.server is not None or self._requested:
            return
        self._requested = True
        self.runner.run(self._start_blocking, self.requested_port, on_success=self._started, on_failure=self._failed)

    def _start_blocking(self, port: int) -> HttpMcpServer:  # worker thread
        server = HttpMcpServer(self.controller.service, port=port, token=self._token,
                               on_call=self.controller.post_mcp_call, project=self.project, tools=self.tools)
        self._starting.append(server)  # stop() can reach it even while it starts
        try:
            server.start()
        except OSError:
            self._starting.remove(server)
            if port == 0:
                raise
            return self._start_blocking(0)  # the port is taken (another instance?): any free port
        return server

    def _started(self, server: HttpMcpServer) -> None:
        self._requested = False
        if server not in self._starting:  # stop() was called while it was starting
            server.stop()
            return
        self._starting.remove(server)
        self.server = server
        self.started.emit(server.url)
        self.controller.status_message.emit(f"MCP server listening on {server.url}")

    def _failed(self, error: BaseException) -> None:
        self._starting.clear()
        self._requested = False
        message, details = describe_failure(error)
        self.failed.emit(message, details)

    def set_project(self, project: str | None) -> None:
        """Bind the server (and its token) to ``project`` (``None``: every memory); a running server restarts."""
        if project == self.project:
            return
        self.project = project
        if self.server is not None:
            self.stop()
            self.start()

    def set_tools(self, tools: str) -> None:
        """Serve the tool profile ``tools`` (a ``--tools`` value); a running server restarts."""
        if tools == self.tools:
            return
        self.tools = tools
        if self.server is not None:
            self.stop()
            self.start()

    def stop(self) -> None:
        """Stop the server (blocks until the port is free; at most a few seconds)."""
        servers = [s for s in (self.server, *self._starting) if s is not None]
        self.server = None
        self._starting.clear()
        self._requested = False
        for server in servers:
            server.stop()
        if servers:
            self.stopped.emit()
