"""Text that is not Unicode never reaches a tool, and its request is still answered.

JSON can carry a lone UTF-16 surrogate as an escape (``"a\\ud800b"``); it is not valid Unicode text. The
SDK's strict JSON parser rejects such a line without answering it (over stdio the client then waits
forever). :func:`surrogate_refusal` builds the JSON-RPC ``Invalid params`` reply naming the field, used
by the stdio loop (:mod:`limbic.core.mcp.stdio`) and, over HTTP, by :class:`SurrogateRefusalMiddleware`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_types import INVALID_PARAMS, ErrorData, JSONRPCError
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SurrogateRefusalMiddleware", "lone_surrogate", "surrogate_refusal"]

_SURROGATE = re.compile("[\ud800-\udfff]")

RequestId = str | int


def lone_surrogate(value: Any, where: str = "params") -> str | None:
    """The first string in ``value`` (decoded JSON) holding a lone UTF-16 surrogate, as a message
    naming its place and code point (e.g. ``params.arguments.query contains U+D800 …``), else None."""
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        if found is None:
            return None
        return (f"{where} contains a lone surrogate (U+{ord(found.group()):04X}), which is not valid Unicode "
                "text; send well-formed UTF-8")
    if isinstance(value, dict):
        for key, item in value.items():
            message = lone_surrogate(key, f"{where} key") or lone_surrogate(item, f"{where}.{key}")
            if message:
                return message
    if isinstance(value, list):
        for index, item in enumerate(value):
            message = lone_surrogate(item, f"{where}[{index}]")
            if message:
                return message
    return None


def surrogate_refusal(line: str | bytes) -> JSONRPCError | None:
    """For one JSON-RPC request (text of one message) whose params hold a lone surrogate, the
    ``Invalid params`` error reply with the request's id; None for anything else (valid text,
    notifications, unparsable lines: the SDK handles those)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" not in message or not isinstance(message.get("id"), str | int):
        return None
    problem = lone_surrogate(message.get("params"))
    if problem is None:
        return None
    return JSONRPCError(jsonrpc="2.0", id=message["id"], error=ErrorData(code=INVALID_PARAMS, message=problem))


class SurrogateRefusalMiddleware:
    """ASGI middleware: a JSON-RPC request whose params hold a lone surrogate (``"a\\ud800b"``) is
    answered with a JSON-RPC ``Invalid params`` error naming the field (HTTP 400), never executed;
    the same refusal as over stdio (:func:`limbic.core.mcp.stdio.surrogate_refusal`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, receive, send)
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        refusal = surrogate_refusal(body)
        if refusal is not None:
            await JSONResponse(refusal.model_dump(mode="json", by_alias=True, exclude_none=True),
                               status_code=400)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)
