"""Streamable HTTP transport of the MCP server: our own ``uvicorn.Server`` in a worker thread.

Served on 127.0.0.1 by default, guarded by bearer tokens (the per-install token file
``config_dir()/mcp_token``, file mode 0600, generated on first use, named ``local``; and the named tokens kept
in the memory, docs/mcp.md "Teams") and by the SDK's DNS-rebinding protection
(``TransportSecuritySettings``: a foreign ``Host`` header gets 421, a foreign ``Origin`` header 403; public
names of a reverse proxy in front are added with ``public_names``). The GUI and ``limbic mcp --http`` both use :class:`HttpMcpServer`; ``start()`` returns
once the socket listens and ``stop()`` closes it, so the port is free again afterwards.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Sequence

import anyio.to_thread
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from limbic.core.errors import LimbicError, ValidationError, nothing_stored
from limbic.core.mcp.config import DEFAULT_HOST
from limbic.core.mcp.profiles import Profile, profile
from limbic.core.mcp.server import ToolCallRecord, build_server
from limbic.core.mcp.token import FileToken
from limbic.core.mcp.tooling import caller_name
from limbic.core.mcp.wire import SurrogateRefusalMiddleware
from limbic.core.service.projects import LOCAL_TOKEN_NAME

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"
_LOOPBACK_NAMES = ("localhost",)
NAME_CACHE_SECONDS = 2.0
WORKER_THREADS = 16
"""Tool calls served at once by one server (anyio worker threads); the PostgreSQL read pool is larger
(``READ_POOL_SIZE``, 24), so a call never waits for a connection held by another."""
"""How long (seconds) a server trusts its answer about a named token: a revocation applies within this time."""
_NAME_CACHE_SIZE = 1024


class BearerTokenMiddleware:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``, else 401.

    Accepted are the token file's token (``token``, a callable so it can be rotated without rebuilding the
    app; its name is ``local``) and, when ``names`` is given, every unrevoked named token of the memory
    (``names(secret)`` returns its name or None: ``MemoryService.projects.token_name``). A named token's answer is
    kept for ``cache_seconds`` seconds, so a revocation takes effect within that time and a client making
    many requests costs one lookup per window; the lookup runs on a worker thread, never on the event loop.
    When it fails (the database is away, busy or closing) the request gets **503** with the reason, saying that
    nothing was stored (the request was not served), and ``Retry-After``, not 401: the token may well be good. The file token is compared in constant time
    (``hmac.compare_digest``); a named one is hashed first and the hash looked up.

    The accepted token's name is in :data:`~limbic.core.mcp.tooling.caller_name` while the request is served
    (so its tool calls log their writes with the origin ``mcp:NAME``). At start-up (ASGI ``lifespan``) the
    worker threads that run tool calls are bounded to ``workers`` (anyio's default is 40), fewer than the
    database's read connections, so no call waits for a connection another worker keeps.
    """

    def __init__(self, app: ASGIApp, token: Callable[[], str], names: Callable[[str], str | None] | None = None,
                 *, cache_seconds: float = NAME_CACHE_SECONDS, workers: int | None = None) -> None:
        self.app = app
        self._token = token
        self._names = names
        self._cache_seconds = cache_seconds
        self._cache: dict[str, tuple[float, str | None]] = {}
        self._workers = workers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" and self._workers:
            anyio.to_thread.current_default_thread_limiter().total_tokens = self._workers
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            known, name = self._known(headers)
            if not known:
                name = await anyio.to_thread.run_sync(self.authenticate, headers)
        except TokenLookupError as exc:
            response = JSONResponse({"error": "temporarily_unavailable", "error_description": str(exc)},
                                    status_code=503, headers={"Retry-After": "1"})
            await response(scope, receive, send)
            return
        if name is None:
            response = JSONResponse(
                {"error": "invalid_token", "error_description": "missing, wrong or revoked bearer token"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="limbic"'},
            )
            await response(scope, receive, send)
            return
        reset = caller_name.set(name)
        try:
            await self.app(scope, receive, send)
        finally:
            caller_name.reset(reset)

    def _known(self, headers: Headers) -> tuple[bool, str | None]:
        """``(True, name)`` when the answer needs no lookup (no token, the file's, or a cached one), else
        ``(False, None)``."""
        scheme, _, supplied = headers.get("authorization", "").partition(" ")
        supplied = supplied.strip()
        if scheme.lower() != "bearer" or not supplied:
            return True, None
        if hmac.compare_digest(supplied.encode("utf-8"), self._token().encode("utf-8")):
            return True, LOCAL_TOKEN_NAME
        if self._names is None:
            return True, None
        cached = self._cache.get(supplied)
        if cached is not None and cached[0] > time.monotonic():
            return True, cached[1]
        return False, None

    def authenticate(self, headers: Headers) -> str | None:
        """The name of the bearer token in ``headers`` (``local`` for the token file), None if it is missing,
        unknown or revoked.

        Raises:
            TokenLookupError: a named token could not be looked up (the database is away, busy or closing).
        """
        known, name = self._known(headers)
        if known:
            return name
        return self._named(headers.get("authorization", "").partition(" ")[2].strip())

    def _named(self, secret: str) -> str | None:
        try:
            name = self._names(secret) if self._names is not None else None
        except LimbicError as exc:
            raise TokenLookupError(nothing_stored(f"the bearer token could not be checked: {exc}")) from None
        except Exception as exc:
            logger.warning("looking up a named MCP token failed: %s", type(exc).__name__)
            raise TokenLookupError(nothing_stored("the bearer token could not be checked; try again")) from None
        now = time.monotonic()
        if len(self._cache) >= _NAME_CACHE_SIZE:
            self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
            if len(self._cache) >= _NAME_CACHE_SIZE:
                self._cache.clear()
        self._cache[secret] = (now + self._cache_seconds, name)
        return name


class TokenLookupError(LimbicError):
    """A named bearer token could not be looked up; the request is answered 503, not 401."""


# --- the server ---------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_in_url(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _with_port(value: str, port: int) -> str:
    """``name`` → ``name:port``; ``name:port`` and ``[v6]:port`` stay; a bare IPv6 address is bracketed."""
    value = value.strip()
    if value.startswith("["):
        return value if "]:" in value else f"{value}:{port}"
    if value.count(":") == 1:
        return value
    return f"[{value}]:{port}" if ":" in value else f"{value}:{port}"


_PUBLIC_NAME = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?)+(?::[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](?::[0-9]{1,5})?")


def public_name(value: str) -> str:
    """``value`` (``name`` or ``name:port``, a DNS name, IPv4 address or bracketed IPv6 address) lower-cased.

    Raises:
        ValidationError: anything else (a scheme, a path, a space, a port above 65535).
    """
    name = value.strip().lower()
    port = name.partition("]:")[2] if name.startswith("[") else name.partition(":")[2]
    if not _PUBLIC_NAME.fullmatch(name) or (port and not 0 < int(port) <= 65535):
        raise ValidationError(f"a public name is NAME or NAME:PORT (memory.example.org, memory.example.org:8443); "
                              f"got {value!r}")
    return name


def _is_wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "")


def _machine_names() -> list[str]:
    """Names and addresses by which remote clients may reach a server bound to a wildcard address."""
    names = {socket.gethostname(), socket.getfqdn()}
    with contextlib.suppress(OSError):
        for info in socket.getaddrinfo(socket.gethostname(), None):
            names.add(str(info[4][0]))
    return sorted(n for n in names if n)


class HttpMcpServer:
    """The MCP server over Streamable HTTP at ``http://host:port/mcp``, in a daemon thread.

    Args:
        service: the ``MemoryService`` the tools use.
        host: the address to bind; loopback (127.0.0.1) by default.
        port: the TCP port; 0 picks a free one (read :attr:`port` or :attr:`url` after ``start()``).
        token: a fixed bearer token; ``None`` uses the per-install token file (created if missing,
            followed when rotated).
        allow_remote: must be True to bind anything other than a loopback address.
        on_call: called with a :class:`ToolCallRecord` after every tool call (the GUI's activity log).
        allowed_hosts: extra ``Host`` header values (``name`` or ``name:port``) to accept besides the
            bound address; only useful with ``allow_remote``.
        project: the project this server (and so its token) is bound to by default: new entities belong
            to it, reads and searches see its memories and the global ones (docs/lifecycle.md "Project scope").
        tools: the tool profile served (docs/mcp.md "Tool profiles"); a named token given its own
            (``limbic mcp token add NAME --tools P``) gets that one instead.

    Raises:
        ValidationError: a non-loopback host without ``allow_remote``, or a port outside 0–65535.
    """

    def __init__(
        self,
        service,
        host: str = DEFAULT_HOST,
        port: int = 0,
        token: str | None = None,
        allow_remote: bool = False,
        *,
        on_call: Callable[[ToolCallRecord], None] | None = None,
        allowed_hosts: Sequence[str] = (),
        project: str | None = None,
        public_names: Sequence[str] = (),
        token_cache_seconds: float = NAME_CACHE_SECONDS,
        tools: str | Profile = "all",
    ) -> None:
        host = host.strip().strip("[]")
        if not is_loopback(host) and not allow_remote:
            raise ValidationError(
                f"refusing to serve MCP on the non-loopback address {host!r}: "
                "pass allow_remote=True (CLI: --allow-remote) if you really mean it"
            )
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValidationError(f"port must be an integer between 0 and 65535, got {port!r}")
        self._service = service
        self._host = host
        self._port = port
        self._token: Callable[[], str] = (lambda: token) if token else FileToken()
        self._on_call = on_call
        self._extra_hosts = list(allowed_hosts)
        self._public_names = [public_name(n) for n in public_names]
        self._cache_seconds = token_cache_seconds
        self.project = project
        self.tools = tools if isinstance(tools, Profile) else profile(tools)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._failure: BaseException | None = None

    # --- properties -----------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        """The bound port once started (the requested one before)."""
        return self._port

    @property
    def url(self) -> str:
        """``http://host:port/mcp`` (a wildcard bind is shown as 127.0.0.1)."""
        host = "127.0.0.1" if _is_wildcard(self._host) else self._host
        return f"http://{_host_in_url(host)}:{self._port}{MCP_PATH}"

    @property
    def token(self) -> str:
        """The bearer token clients must send (the token file's current one, unless one was given)."""
        return self._token()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # --- security settings ----------------------------------------------------------------------

    def _allowed_hosts(self) -> list[str]:
        port = self._port
        names: list[str] = []
        if is_loopback(self._host) or _is_wildcard(self._host):
            names += ["127.0.0.1", "localhost", "[::1]"]
        if _is_wildcard(self._host):
            names += [_host_in_url(n) for n in _machine_names()]
        elif not is_loopback(self._host):
            names.append(_host_in_url(self._host))
        hosts = [f"{n}:{port}" for n in names]
        hosts += [_with_port(extra, port) for extra in self._extra_hosts]
        return list(dict.fromkeys(hosts))

    def security_settings(self) -> TransportSecuritySettings:
        """The SDK's DNS-rebinding protection for the bound address and port and the public names."""
        hosts = self._allowed_hosts()
        public = [n for n in self._public_names if n not in hosts]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=hosts + public,
            allowed_origins=[f"http://{h}" for h in hosts] + [f"{s}://{n}" for n in public for s in ("https", "http")],
        )

    # --- life cycle -----------------------------------------------------------------------------

    def _bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        # proto must say TCP: asyncio sets TCP_NODELAY only on such sockets, and without it every
        # response waits ~40 ms for a delayed ACK (Nagle).
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            if os.name == "posix":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self._host, self._port))
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        return sock

    def start(self, timeout: float = 15.0) -> None:
        """Bind the socket and serve in a daemon thread; returns when the server accepts requests.

        Raises:
            OSError: the port is taken or the address cannot be bound.
            RuntimeError: already running, or the server failed to start within ``timeout`` seconds.
        """
        if self.running:
            raise RuntimeError("the MCP HTTP server is already running")
        self._socket = self._bind()
        self._port = self._socket.getsockname()[1]
        mcp = build_server(self._service, on_call=self._on_call, project=self.project, tools=self.tools,
                           token_tools=self._service.projects.token_tools)
        app = mcp.streamable_http_app(
            streamable_http_path=MCP_PATH,
            transport_security=self.security_settings(),
            host=self._host,
        )
        names = self._service.projects.token_name
        config = uvicorn.Config(
            BearerTokenMiddleware(SurrogateRefusalMiddleware(app), self._token, names,
                                  cache_seconds=self._cache_seconds, workers=WORKER_THREADS),
            log_level="warning",
            access_log=False,
            lifespan="on",
            ws="none",
            timeout_graceful_shutdown=3,
        )
        self._server = uvicorn.Server(config)
        self._failure = None
        self._thread = threading.Thread(target=self._serve, name="limbic-mcp-http", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the MCP HTTP server did not start: {self._failure!r}")
            time.sleep(0.02)

    def _serve(self) -> None:
        assert self._server is not None and self._socket is not None
        try:
            self._server.run(sockets=[self._socket])
        except BaseException as exc:  # SystemExit from uvicorn's failed start-up included
            self._failure = exc
            logger.exception("MCP HTTP server stopped with an error")

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving, close open sessions and the socket; the port is free when this returns."""
        server, thread = self._server, self._thread
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive() and server is not None:
                server.force_exit = True
                thread.join(timeout)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

    def __enter__(self) -> HttpMcpServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
