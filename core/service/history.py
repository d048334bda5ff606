"""Who changed what: the ``changes`` log of :class:`~limbic.core.service.MemoryService` read for people (the
editor's *History* tab, ``limbic changes``). Each change carries its origin: ``gui`` (the app), ``cli``,
``import``, ``system``, ``stdio`` (an MCP client over stdio) or ``mcp:NAME`` (over HTTP with the token NAME,
docs/mcp.md "Teams").

A mixin of ``MemoryService``; reading records nothing.
"""

from __future__ import annotations

from limbic.core import validation as check
from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.models import Changes
from limbic.core.store import history, reads
from limbic.core.store.database import Database

MAX_HISTORY = 10_000


def _limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_HISTORY:
        raise ValidationError(f"limit must be an integer between 1 and {MAX_HISTORY}, got {limit!r}")
    return limit


def origin_label(origin: str) -> str:
    """How a change's origin is shown: ``alice (MCP)`` for ``mcp:alice``, ``agent (stdio)`` for ``stdio``,
    ``app`` for ``gui``, the origin itself otherwise."""
    if origin.startswith("mcp:"):
        return f"{origin[4:]} (MCP)"
    return {"gui": "app", "stdio": "agent (stdio)", "mcp": "agent (MCP)"}.get(origin, origin)


class ChangeHistory:
    """The change log, for people (mixed into ``MemoryService``)."""

    database: Database

    def recent_changes(self, limit: int = 100) -> list[Changes]:
        """The last ``limit`` (1–10,000) changes of the memory, newest first. Raises ValidationError."""
        return history.recent_changes(self.database.read(), _limit(limit))

    def entity_history(self, name: str, limit: int = 100) -> list[Changes]:
        """The last ``limit`` (1–10,000) changes that touched the entity ``name``, newest first (renames keep
        an entity's history; a deleted entity has none to show).

        Raises:
            ValidationError: a malformed name or limit.
            NotFoundError: no entity has that name.
        """
        name, limit = check.name(name), _limit(limit)
        conn = self.database.read()
        ids = reads.ids_by_names(conn, [name])
        if name not in ids:
            raise NotFoundError(f"entity {name!r} not found", [name])
        return history.entity_changes(conn, ids[name], limit)
