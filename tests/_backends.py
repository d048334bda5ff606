"""Addresses of memories on each backend beyond the one ``memory_address`` gives: a second memory in the same
test, or one memory shared by a module (its fixtures are parametrised over ``BACKENDS`` themselves, since
the conftest's ``backend`` is per test)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

BACKENDS = ("sqlite", "postgresql")


def address_on(backend: str, file: Path) -> Iterator[str]:
    """Yield the address of a new, empty memory on ``backend`` (``file`` for SQLite, a new PostgreSQL database
    otherwise, dropped afterwards); the PostgreSQL half skips, with the reason, when no server can run."""
    if backend == "sqlite":
        yield str(file)
        return
    from _pg import drop_database, new_database, server_or_skip

    server_or_skip()
    address = new_database(file.stem)
    try:
        yield address
    finally:
        drop_database(address)


def on_postgres(conn: object) -> bool:
    """Whether ``conn`` is a PostgreSQL memory's connection, for the tests that look at one engine's own tables or
    tracing (the product never asks)."""
    from limbic.core.store.postgres.connection import PgConnection

    return isinstance(conn, PgConnection)
