"""The errors the core raises. Every boundary (MCP tools, CLI, GUI forms) shows their message as is.

All derive from :class:`LimbicError`, so a caller can catch one type. Messages say what was wrong
and what to do about it; they never carry SQLite internals.
"""

from __future__ import annotations


class LimbicError(Exception):
    """Base class of every error raised on purpose by ``limbic.core``."""


class ValidationError(LimbicError, ValueError):
    """Input broke a documented limit or shape (too long, too many items, wrong status, empty name)."""


class NotFoundError(LimbicError, LookupError):
    """One or more named entities, observations or relations do not exist.

    ``missing`` lists the names (or ids) that were not found, in input order.
    """

    def __init__(self, message: str, missing: list[str] | None = None) -> None:
        super().__init__(message)
        self.missing = list(missing or [])


class ConflictError(LimbicError):
    """The change contradicts stored state (rename onto an existing name, merging an entity into itself)."""


class ModelNotInstalledError(LimbicError):
    """No embedding model is installed; the message says how to install one (``limbic model install``)."""


class ModelIntegrityError(LimbicError):
    """A model file's sha256 does not match the pinned hash; nothing was installed."""


class ImportFormatError(LimbicError):
    """A whole import file could not be read (not UTF-8, not JSON/JSONL, empty). Per-line problems are reported, not raised."""


class StoreBusyError(LimbicError):
    """The database stayed locked by another process longer than the busy timeout (10 s)."""


class DatabaseClosedError(LimbicError):
    """The database was closed (the application or server is shutting down); nothing was read or written."""


class MigrationError(LimbicError):
    """A schema migration failed; that migration's transaction was rolled back, the cause is chained."""


class DatabaseUnavailableError(LimbicError):
    """The database server could not be reached, refused the login, or lacks what the memory needs
    (the message names the address without its password)."""


class CommitUnknownError(DatabaseUnavailableError):
    """The connection to the database was lost while a write committed, and the database could not be asked
    afterwards whether it was stored: it may be (the message says so, :data:`MAY_BE_STORED`)."""


NOTHING_STORED = "nothing was stored"
"""How every failed write begins its message when nothing of it was stored (:func:`nothing_stored`)."""
MAY_BE_STORED = "it may be stored; sending it again stores it once"
"""How a write whose commit could not be confirmed ends its message (:class:`CommitUnknownError`)."""
OUTAGE_ERRORS = (DatabaseUnavailableError, StoreBusyError, DatabaseClosedError)
"""The errors of a database that could not serve the call (away, busy, closing), rather than of its input."""


def nothing_stored(reason: object) -> str:
    """The one wording of a failed write that stored nothing: ``nothing was stored: <reason>`` (a ``reason``
    already worded so is kept as it is)."""
    text = str(reason)
    return text if text.startswith(NOTHING_STORED) else f"{NOTHING_STORED}: {text}"


def unstored(exc: LimbicError) -> LimbicError:
    """The error to show for ``exc``, raised by a write call of which nothing was stored: an outage's error
    (:data:`OUTAGE_ERRORS`) of the same class, worded by :func:`nothing_stored`; any other error as it is (a
    refused input's message is the tool's own, and a :class:`CommitUnknownError` already says the write may be
    stored)."""
    if not isinstance(exc, OUTAGE_ERRORS) or isinstance(exc, CommitUnknownError) or \
            str(exc).startswith(NOTHING_STORED):
        return exc
    told = type(exc)(nothing_stored(exc))
    told.__cause__ = exc.__cause__
    return told
