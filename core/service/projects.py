"""Projects, and the named bearer tokens of the MCP HTTP transport, kept in the memory so that every ``limbic mcp --http``
server on it accepts them (docs/mcp.md "Teams").

The manager :class:`Projects` (``memory.projects``): the projects of the memory and these tokens. A token is 32 random bytes (URL-safe base64, 43 characters), shown once by
:meth:`Projects.add_token`; the database keeps only its SHA-256 hex digest. The name says who writes: a write
made with the token ``alice`` is logged with the origin ``mcp:alice``. ``local`` is the name of each
machine's token file (:mod:`limbic.core.mcp.token`) and cannot be taken. A token may carry the MCP tool profile
its clients are served (``limbic mcp token add NAME --tools PROFILE``), kept in the settings under
``mcp_token_tools:NAME``; without one they get the server's.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from limbic.core import validation as check
from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.store import scope, views
from limbic.core.store import tokens as rows
from limbic.core.store.database import WriteTransaction
from limbic.core.store.schema import put_setting
from limbic.core.store.tokens import NamedToken
from limbic.core.validation import label

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService

LOCAL_TOKEN_NAME = "local"
"""The name of the per-install token file's token (never stored in the memory)."""
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
TOOLS_SETTING = "mcp_token_tools:"
"""Prefix of the setting that keeps a named token's tool profile (the ``--tools`` value, e.g. ``curation``)."""
_MAX_TOOLS = 2000


def token_hash(secret: str) -> str:
    """SHA-256 hex digest (64 characters) of the UTF-8 bytes of ``secret``."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_token_name(name: object) -> str:
    """``name`` when it is 1–64 letters, digits, ``-``, ``_`` or ``.`` and not ``local``.

    Raises:
        ValidationError: any other value.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValidationError(f"a token name is 1 to 64 letters, digits, '-', '_' or '.'; got {name!r}")
    if name == LOCAL_TOKEN_NAME:
        raise ValidationError(f"the token name {LOCAL_TOKEN_NAME!r} is reserved for this machine's token file "
                              "(`limbic mcp token`)")
    return name


class Projects:
    """Projects and the agents' tokens that may be bound to one (docs/mcp.md "Teams").

    Reached as ``memory.projects`` (:class:`~limbic.core.service.memory.MemoryService`).
    """


    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def add_token(self, name: str, *, project: str | None = None, tools: str | None = None,
                  origin: str | None = None) -> str:
        """Create the token ``name`` and return its secret (shown this once: only its hash is stored).
        ``project``: every call made with the token is bound to that project (its entities and the global ones
        only; docs/lifecycle.md "Project scope"); ``None``: the server's scope. ``tools``: the tool profile its
        clients are served (a ``--tools`` value the caller has checked, at most 2,000 characters); None: the
        server's. One transaction.

        Raises:
            ValidationError: a malformed or reserved name (see :func:`check_token_name`), or ``tools`` too long.
            ValidationError: also when a token of that name exists, revoked or not.
        """
        name = check_token_name(name)
        project = None if project is None else label(project, "project")
        if tools is not None and not 0 < len(tools) <= _MAX_TOOLS:
            raise ValidationError(f"a token's tools are 1 to {_MAX_TOOLS} characters")
        secret = secrets.token_urlsafe(32)

        def body(txn: WriteTransaction) -> None:
            if rows.find(txn.conn, name) is not None:
                raise ValidationError(f"a token named {name!r} exists already (a revoked token keeps its name); "
                                    "choose another name")
            rows.insert(txn.conn, name, token_hash(secret), time.time(), project)
            if tools is not None:
                put_setting(txn.conn, TOOLS_SETTING + name, tools)

        self.memory.write("add_token", origin, body)
        return secret

    def token_tools(self, name: str) -> str | None:
        """The tool profile (``--tools`` value) given to the token ``name`` when it was added; None: the server's."""
        return self.memory.database.get_setting(TOOLS_SETTING + name)

    def list_tokens(self) -> list[NamedToken]:
        """Every named token by name: name, created and revoked time (UTC seconds); never secrets or hashes."""
        return rows.all_tokens(self.memory.database.read())

    def revoke_token(self, name: str, *, origin: str | None = None) -> NamedToken:
        """Revoke the token ``name`` (servers refuse it within seconds); revoking it again changes nothing.
        One transaction. Returns the token as it now is.

        Raises:
            ValidationError: a malformed name.
            NotFoundError: no token has that name.
        """
        if name == LOCAL_TOKEN_NAME:
            raise ValidationError("the token file of a machine is replaced, not revoked: `limbic mcp token --rotate`")
        name = check_token_name(name)
        known = rows.find(self.memory.database.read(), name)
        if known is not None and known.revoked:
            return known  # nothing to write or log

        def body(txn: WriteTransaction) -> NamedToken:
            if rows.find(txn.conn, name) is None:
                raise NotFoundError(f"no token named {name!r} (`limbic mcp token list` shows them)", [name])
            rows.revoke(txn.conn, name, time.time())
            found = rows.find(txn.conn, name)
            assert found is not None
            return found

        result: NamedToken = self.memory.write("revoke_token", origin, body)
        return result

    def token_project(self, name: str) -> str | None:
        """The project the named token ``name`` is bound to (``None``: not bound, or no such token)."""
        found = rows.find(self.memory.database.read(), name)
        return None if found is None else found.project

    def token_name(self, secret: str) -> str | None:
        """The name of the unrevoked named token ``secret``, else None. The secret is hashed first and the
        hash looked up, so the time taken says nothing about how much of a secret was right."""
        if not secret:
            return None
        return rows.name_by_hash(self.memory.database.read(), token_hash(secret))

    def names(self) -> dict[str, int]:
        """``{project: number of entities}`` of every project named in the memory (global entities aside); a call
        bound to a project sees that one only."""
        found = views.projects(self.memory.database.read())
        binding = scope.current()
        return found if binding is None else {p: n for p, n in found.items() if p == binding}

    def outside_project(self, names: Sequence[str]) -> list[str]:
        """Of ``names`` (order kept, each once), those that another project holds and the project the call is bound
        to does not see (neither its own entity of the name nor a global one): what the call cannot touch
        although the memory has it (docs/lifecycle.md "Project scope"). Empty when the call is unbound (every
        entity is seen). Raises ValidationError for a malformed name."""
        binding = scope.current()
        if binding is None:
            return []
        names = list(dict.fromkeys(check.name(n) for n in names))
        held = scope.held_elsewhere(self.memory.database.read(), names, binding)
        return [n for n in names if n in held]

    def entity_projects(self) -> dict[int, str]:
        """``{entity id: project}`` of the entities that belong to one (the app's project filter)."""
        return views.entity_projects(self.memory.database.read())
