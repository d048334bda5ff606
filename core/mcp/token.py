"""The MCP HTTP server's bearer token: ``config_dir()/mcp_token``, file mode 0600, generated on first use.

The GUI's server, ``limbic mcp --http`` and the client snippets of :mod:`limbic.core.mcp.config` read it here.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from limbic.core.paths import config_dir

TOKEN_FILE = "mcp_token"


def token_path() -> Path:
    """``config_dir()/mcp_token``: the file that holds the bearer token."""
    return config_dir() / TOKEN_FILE


def _new_token() -> str:
    return secrets.token_urlsafe(32)


def _write_private(path: Path, token: str) -> Path:
    """Write ``token`` to a fresh sibling file created with mode 0600; returns that file's path."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (token + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return temporary


def load_token(*, create: bool = True) -> str:
    """The bearer token, generated (32 random bytes, URL-safe base64) and saved on first use.

    The file is created with mode 0600 and its mode is tightened again if someone widened it.
    Two processes starting at once agree on one token (the first file wins: ``os.link`` is atomic).

    Raises:
        FileNotFoundError: no token yet and ``create`` is False.
    """
    path = token_path()
    try:
        token = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        if not create:
            raise
        temporary = _write_private(path, _new_token())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            temporary.unlink()
        token = path.read_text(encoding="ascii").strip()
    if not token:
        return rotate_token()
    if os.name == "posix" and path.stat().st_mode & 0o077:
        path.chmod(0o600)
    return token


def rotate_token() -> str:
    """Replace the token with a new random one (atomically, mode 0600) and return it.

    Clients configured with the old token get 401 from then on, also from an :class:`HttpMcpServer`
    already running on the token file (it re-reads the file when it changes).
    """
    path = token_path()
    token = _new_token()
    os.replace(_write_private(path, token), path)
    return token


class FileToken:
    """The token of the token file, re-read when the file changes (``limbic mcp token --rotate``)."""

    def __init__(self) -> None:
        self._token = load_token()
        self._stamp = self._file_stamp()

    @staticmethod
    def _file_stamp() -> tuple[int, int] | None:
        try:
            info = token_path().stat()
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size

    def __call__(self) -> str:
        stamp = self._file_stamp()
        if stamp is not None and stamp != self._stamp:
            self._stamp, self._token = stamp, load_token()
        return self._token
