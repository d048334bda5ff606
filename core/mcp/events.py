"""Events around the MCP tools: the activity log record and the knowledge-graph update notices.

:class:`ToolCallRecord` is what ``build_server(service, on_call=...)`` reports after every tool call
(the GUI's activity log); :class:`GraphNotifier` announces ``memory://knowledge-graph`` updates after
committed changes of any origin, to ``subscriptions/listen`` streams (2026 protocol) and to sessions
that used ``resources/subscribe`` (older clients, as with the reference server).
"""

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    EmptyResult,
    SubscribeRequestParams,
    TextContent,
    UnsubscribeRequestParams,
)

from limbic.core.mcp.tooling import current_origin

logger = logging.getLogger(__name__)

KNOWLEDGE_GRAPH_URI = "memory://knowledge-graph"
_SUMMARY_CHARS = 240


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One finished tool call, for the GUI's activity log.

    ``at``: start time, UTC unix seconds; ``arguments``: a one-line JSON summary (≤ 240 characters);
    ``duration_ms``: wall time in milliseconds; ``error``: the error text of a failed call, else None;
    ``origin``: who called (``mcp:NAME`` for the HTTP token NAME, :func:`~limbic.core.mcp.tooling.current_origin`).
    """

    at: float
    tool: str
    arguments: str
    duration_ms: float
    error: str | None
    origin: str = "mcp"


def summarize_arguments(arguments: Any, limit: int = _SUMMARY_CHARS) -> str:
    """Compact one-line JSON of a call's arguments, cut to ``limit`` characters with an ellipsis."""
    text = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False, separators=(",", ":"),
                      default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _error_text(result: Any) -> str | None:
    if isinstance(result, CallToolResult):
        if not result.is_error:
            return None
        texts = [c.text for c in result.content if isinstance(c, TextContent)]
        return " ".join(texts) or "error"
    if isinstance(result, dict) and result.get("isError"):
        texts = [c.get("text", "") for c in result.get("content") or () if isinstance(c, dict)]
        return " ".join(t for t in texts if t) or "error"
    return None


def activity_middleware(on_call: Callable[[ToolCallRecord], None]):
    """Server middleware that reports every ``tools/call`` (including refused arguments) to ``on_call``."""

    async def middleware(ctx, call_next):
        if ctx.method != "tools/call" or ctx.request_id is None:
            return await call_next(ctx)
        params = ctx.params or {}
        started, clock = time.time(), time.perf_counter()
        error: str | None = None
        try:
            result = await call_next(ctx)
            error = _error_text(result)
            return result
        except BaseException as exc:
            error = str(exc) or type(exc).__name__
            raise
        finally:
            record = ToolCallRecord(
                at=started,
                tool=str(params.get("name", "")),
                arguments=summarize_arguments(params.get("arguments")),
                duration_ms=(time.perf_counter() - clock) * 1000.0,
                error=error,
                origin=current_origin(),
            )
            try:
                on_call(record)
            except Exception:  # the log must never break a call
                logger.exception("on_call callback failed")

    return middleware


class GraphNotifier:
    """Announces ``memory://knowledge-graph`` updates after committed changes of any origin.

    A listener of the service's one change feed (:class:`~limbic.core.service.changes.ChangeFeed`, which
    also follows other processes' commits on the same file and delivers each change once). The
    notice is handed to the server's event loop, and a burst of commits yields one notice per loop turn.
    """

    def __init__(self, service, bus: InMemorySubscriptionBus) -> None:
        self._service = service
        self._bus = bus
        self._sessions: set[Any] = set()
        self._lock = threading.Lock()
        self._users = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._pending = False

    @asynccontextmanager
    async def attached(self):
        """Follow the changes while a transport runs (the server lifespan)."""
        with self._lock:
            self._users += 1
            if self._unsubscribe is None:
                self._loop = asyncio.get_running_loop()
                self._unsubscribe = self._service.subscribe(self._on_changes, other_processes=True)
        try:
            yield
        finally:
            unsubscribe = None
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    unsubscribe, self._unsubscribe, self._loop = self._unsubscribe, None, None
            if unsubscribe is not None:  # outside the lock: the feed may be delivering to us
                unsubscribe()

    def _on_changes(self, changes: list[Any]) -> None:
        """Called by the change feed on the committing thread or its watcher thread."""
        with self._lock:
            loop = self._loop
            if not changes or loop is None or loop.is_closed() or self._pending:
                return
            self._pending = True
        asyncio.run_coroutine_threadsafe(self._notify(), loop)

    async def _notify(self) -> None:
        self._pending = False
        await self._bus.publish(ResourceUpdated(uri=KNOWLEDGE_GRAPH_URI))
        for session in list(self._sessions):
            try:
                await session.send_resource_updated(KNOWLEDGE_GRAPH_URI)
            except Exception:  # a closed session: forget it
                self._sessions.discard(session)

    async def subscribe(self, ctx, params: SubscribeRequestParams) -> EmptyResult:
        if str(params.uri) != KNOWLEDGE_GRAPH_URI:
            raise MCPError(INVALID_PARAMS, f"unknown resource {params.uri}; use {KNOWLEDGE_GRAPH_URI}")
        self._sessions.add(ctx.session)
        return EmptyResult()

    async def unsubscribe(self, ctx, params: UnsubscribeRequestParams) -> EmptyResult:
        self._sessions.discard(ctx.session)
        return EmptyResult()
