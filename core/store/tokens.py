"""Rows of the ``mcp_tokens`` table (schema 13; ``project`` since 14): the named bearer tokens of the MCP HTTP transport.

Only a token's SHA-256 hex digest is stored. Nothing here commits or validates: the service does
(:mod:`limbic.core.service.tokens`). Plain SQL with ``?`` placeholders (the team backend runs the same).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from limbic.core.store.connection import Connection


@dataclass(frozen=True, slots=True)
class NamedToken:
    """A named token as listed: ``created_at`` and ``revoked_at`` are UTC unix seconds (``revoked_at`` None
    while it is valid); ``project`` the project its calls are bound to (schema 14; ``None``: none). Neither the
    token nor its hash is part of it."""

    name: str
    created_at: float
    revoked_at: float | None = None
    project: str | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


def _token(row: Any) -> NamedToken:
    return NamedToken(str(row[0]), float(row[1]), None if row[2] is None else float(row[2]),
                      None if row[3] is None else str(row[3]))


def insert(conn: Connection, name: str, token_hash: str, at: float, project: str | None = None) -> None:
    """Add a token row (the caller checked that ``name`` is free)."""
    conn.execute("INSERT INTO mcp_tokens(name, token_hash, created_at, project) VALUES (?, ?, ?, ?)",
                 (name, token_hash, at, project))


def find(conn: Connection, name: str) -> NamedToken | None:
    """The token named ``name``, revoked or not; None if there is none."""
    rows = list(conn.execute("SELECT name, created_at, revoked_at, project FROM mcp_tokens WHERE name = ?", (name,)))
    return _token(rows[0]) if rows else None


def all_tokens(conn: Connection) -> list[NamedToken]:
    """Every named token, by name."""
    return [_token(r) for r in conn.execute("SELECT name, created_at, revoked_at, project FROM mcp_tokens ORDER BY name")]


def revoke(conn: Connection, name: str, at: float) -> None:
    """Mark the token ``name`` revoked at ``at`` (a revoked one keeps its first revocation time)."""
    conn.execute("UPDATE mcp_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL", (at, name))


def name_by_hash(conn: Connection, token_hash: str) -> str | None:
    """The name of the unrevoked token whose SHA-256 hex digest is ``token_hash``; None if none is."""
    rows = list(conn.execute("SELECT name FROM mcp_tokens WHERE token_hash = ? AND revoked_at IS NULL",
                             (token_hash,)))
    return str(rows[0][0]) if rows else None
