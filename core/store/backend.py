"""The one way to open a memory by its address: a SQLite file path, or a PostgreSQL URL.

Either engine gives the same :class:`~limbic.core.store.database.Database` (docs/architecture.md "Storage
backends"); this module opens them and is the only one outside the engines' packages that names them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from limbic.core.errors import ValidationError
from limbic.core.paths import database_address
from limbic.core.store.database import Database
from limbic.core.store.postgres.address import (
    checked,
    in_schema,
    is_postgres,
    masked,
    near_miss,
    without_password,
)
from limbic.core.store.postgres.connection import connect as server_connection
from limbic.core.store.postgres.database import PgDatabase
from limbic.core.store.sqlite.database import SqliteDatabase


def open_database(address: str | Path) -> Database:
    """Open (creating and migrating as needed) the memory at ``address``.

    Raises:
        ValidationError: a malformed address, or one that only looks like a database address
            (:func:`checked_address`; one line, no password): nothing is opened or created.
        DatabaseUnavailableError: a PostgreSQL server could not be used (reason in the message, no password).
        StoreBusyError, MigrationError: as the engine's database raises them.
    """
    if isinstance(address, str):
        try:
            address = checked_address(address)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        if is_postgres(address):
            return PgDatabase(address)
    return SqliteDatabase(address)


def checked_address(text: str) -> str:
    """A ``--db`` address checked before anything is opened or created: a file path (``~`` expanded) or a
    PostgreSQL URL (its scheme lower-cased).

    Raises:
        ValueError: empty, another scheme, a near miss of a database address (``postgresql:/…``, ``postgres:``,
            quotes around it, a ``key=value`` string…: :func:`~limbic.core.store.postgres.address.near_miss`), or a
            malformed PostgreSQL address (bad host, IPv6 address or port, a connection parameter libpq does not
            know); one line, the address masked.
    """
    refused = near_miss(text)
    if refused is not None:
        raise ValueError(refused)
    address = database_address(text)
    return checked(address) if is_postgres(address) else address


def shareable_form(address: str | Path) -> str:
    """The address to put in an agent's configuration, before anything is opened: a file's absolute path (``~``
    expanded), or the URL without its password (libpq reads it from ``PGPASSWORD`` or ``~/.pgpass``)."""
    if isinstance(address, str) and is_postgres(address):
        return without_password(address)
    return str(Path(address).expanduser().resolve())


@contextmanager
def scratch_schema(server: str, name: str) -> Iterator[str]:
    """A new, empty schema ``name`` on the PostgreSQL server at ``server`` for the block: yields the address of a
    memory in it, and drops the schema with everything in it afterwards (``limbic --db URL eval``).

    Raises:
        psycopg.Error: the server refused (the caller reports it without the password).
    """
    admin = server_connection(server)
    try:
        admin.execute(f"CREATE SCHEMA {name}")
        yield in_schema(server, name)
    finally:
        admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        admin.close()


__all__ = ["checked_address", "is_postgres", "masked", "open_database", "scratch_schema", "shareable_form"]
