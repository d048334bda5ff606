"""The stdio transport of ``limbic mcp``: the SDK's, plus three guarantees it lacks.

- **Every request gets an answer.** A request whose JSON carries a lone surrogate escape (``"a\\ud800b"``)
  is not valid Unicode text; the SDK's strict JSON parser rejects the whole line and nobody answers, so
  the client waits forever. Such a request is refused here with a JSON-RPC ``Invalid params`` error
  naming the field, and nothing is executed.
- **Answers are never lost on stdin close.** At end of input the SDK closes the session and drops the
  replies still being computed (``printf '…' | limbic mcp`` got only ``initialize`` back). Here end of
  input is passed on to the server only once every request read so far has been answered.
- **A client that goes away gets a quiet stop.** When the reader of stdout closes its end, the server says so in
  one line on stderr and ends with code 0 once stdin ends, instead of a traceback of the broken pipe.

And one economy (docs/performance.md "search_semantic over stdio"): no thread hand-offs per call. The SDK reads each
line, runs each synchronous tool and writes (then flushes) each answer on worker threads, each hand-off a wake-up
the scheduler may delay. Here, on POSIX, pipes on stdin and stdout are read and written by the event loop itself
(a file or terminal keeps the SDK's threads; while serving, fd 1 points at stderr so that a stray print never
reaches the wire, as the SDK's own claim does), and the tools run on the event loop thread (a server built with
``build_server(..., tools_on_the_loop=True)``, as ``limbic mcp`` builds it): one client's requests are answered one
after the other.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from io import TextIOWrapper

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

from limbic.core.mcp.tooling import transport_origin
from limbic.core.mcp.wire import surrogate_refusal

__all__ = ["serve_stdio"]

MAX_LINE = 1 << 30
"""Longest request line read (bytes): far above any request the tools accept (1,000 items of 10,000 characters)."""


class _Pending:
    """Ids of the requests read and not yet answered; ``drained`` waits until there are none."""

    def __init__(self) -> None:
        self._ids: set[str | int] = set()
        self._changed = anyio.Event()

    def add(self, request_id: str | int) -> None:
        self._ids.add(request_id)

    def answered(self, request_id: str | int) -> None:
        self._ids.discard(request_id)
        self._changed.set()
        self._changed = anyio.Event()

    async def drained(self) -> None:
        while self._ids:
            await self._changed.wait()


async def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` over this process's stdin/stdout until stdin closes and every request read
    has been answered. Stray prints of handlers go to stderr (the SDK's stdout claim). The tools log their
    writes with the origin ``stdio``; built with ``build_server(..., tools_on_the_loop=True)`` they run on the
    event loop thread (the module docstring)."""
    transport_origin.set("stdio")  # this task's context: the tasks started below inherit it
    pending = _Pending()
    refusals_send, refusals = anyio.create_memory_object_stream[SessionMessage](float("inf"))
    to_server_send, to_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    from_server, from_server_receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def lines(stdin: AsyncIterator[str]) -> AsyncIterator[str]:
        async for line in stdin:
            refusal = surrogate_refusal(line)
            if refusal is None or refusal.id is None:
                yield line
                continue
            pending.add(refusal.id)
            refusals_send.send_nowait(SessionMessage(refusal))

    try:
        async with _stdin_lines() as stdin, _stdout_pipe() as stdout, \
                stdio_server(stdin=lines(stdin), stdout=stdout) as (wire_in, wire_out):  # type: ignore[arg-type]
            async with anyio.create_task_group() as group:
                group.start_soon(_inbound, wire_in, to_server_send, pending)
                group.start_soon(_outbound, from_server_receive, wire_out, pending)
                group.start_soon(_outbound, refusals, wire_out, pending)
                lowlevel = server._lowlevel_server
                await lowlevel.run(to_server, from_server, lowlevel.create_initialization_options())
                await refusals_send.aclose()
            await wire_out.aclose()
    except* (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
        # the client closed its end of stdout: nobody is left to answer, which is not the server's failure
        print("limbic mcp: the client closed the connection; stopping", file=sys.stderr)


def _is_pipe(fd: int) -> bool:
    """Whether ``fd`` is a pipe or socket (what the event loop's pipe transports take; not a file or terminal)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def _stdin_lines() -> AsyncIterator[AsyncIterator[str]]:
    """The lines of stdin: read by the event loop from a pipe (POSIX), else by a worker thread."""
    if os.name != "posix" or not _is_pipe(0):
        async def threaded() -> AsyncIterator[str]:
            async for line in anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")):
                yield line

        yield threaded()
        return
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                os.fdopen(os.dup(0), "rb", buffering=0))

    async def lines() -> AsyncIterator[str]:
        while line := await reader.readline():
            yield line.decode("utf-8", errors="replace")

    try:
        yield lines()
    finally:
        transport.close()


class _PipeOut:
    """stdout as the SDK's writer uses it (``write`` then ``flush``), written by the event loop's pipe transport."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        if self._writer.transport.is_closing():
            raise anyio.ClosedResourceError  # the client closed its end: the SDK's writer stops quietly
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        try:
            await self._writer.drain()
        except ConnectionError as exc:  # the client closed its end of the pipe
            raise anyio.ClosedResourceError from exc


@asynccontextmanager
async def _stdout_pipe() -> AsyncIterator[_PipeOut | None]:
    """stdout written by the event loop when it is a pipe (POSIX), with fd 1 pointed at stderr meanwhile so that a
    stray print never reaches the wire (the SDK's own claim, which an explicit stream skips); else None (the SDK's
    writer thread)."""
    if os.name != "posix" or not _is_pipe(1):
        yield None
        return
    sys.stdout.flush()
    wire = os.dup(1)
    saved = os.dup(1)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                        os.fdopen(wire, "wb", buffering=0))
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    try:
        yield _PipeOut(writer)
    finally:
        try:
            if not transport.is_closing():
                await writer.drain()
        except ConnectionError:  # the client is gone: nothing more can be said to it
            pass
        finally:
            transport.close()
            os.dup2(saved, 1)
            os.close(saved)


async def _inbound(wire_in: ObjectReceiveStream[SessionMessage | Exception],
                   to_server: ObjectSendStream[SessionMessage | Exception], pending: _Pending) -> None:
    async with to_server:
        async for item in wire_in:
            request = item.message if isinstance(item, SessionMessage) else None
            if isinstance(request, JSONRPCRequest) and isinstance(request.id, str | int):
                pending.add(request.id)
            await to_server.send(item)
        await pending.drained()


async def _outbound(replies: ObjectReceiveStream[SessionMessage], wire_out: ObjectSendStream[SessionMessage],
                    pending: _Pending) -> None:
    async with replies:
        async for item in replies:
            await wire_out.send(item)
            if isinstance(item.message, JSONRPCResponse | JSONRPCError) and item.message.id is not None:
                pending.answered(item.message.id)
