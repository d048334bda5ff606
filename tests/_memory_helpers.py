"""More memories than the ``memory_address`` fixture's one, on the backend a test runs on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def extra_memory(backend: str, folder: Path, name: str) -> Iterator[str]:
    """The address of another new, empty memory on ``backend``: ``folder / name`` for SQLite, a new database
    on the test server for PostgreSQL (dropped on exit)."""
    if backend == "sqlite":
        yield str(folder / name)
        return
    from _pg import drop_database, new_database

    address = new_database(Path(name).stem)
    try:
        yield address
    finally:
        drop_database(address)
