"""The connection every reader of the store is typed against, whichever backend gives it.

A SQLite memory hands out ``apsw.Connection`` objects; a PostgreSQL memory hands out
:class:`~limbic.core.store.postgres.connection.PgConnection`, which keeps apsw's calling conventions
(``execute`` with ``?``/``?N`` bindings returning a cursor, ``executemany``, ``changes``, ``with conn:`` for one
consistent read). :class:`Connection` is that common shape as a ``Protocol``: code outside ``core/store``
receives a ``Connection``, passes it back to the store's functions and never learns which backend it is
(docs/architecture.md "Storage backends").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from limbic.core.store.postgres.connection import on_postgres


class Cursor(Protocol):
    """The rows of one statement: ``fetchone`` (None after the last), ``fetchall``, iteration, and ``get``
    (apsw's: None for no row, the value of a one-column row, else the row; a list when several)."""

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...

    @property
    def get(self) -> Any: ...


class Connection(Protocol):
    """One connection of a memory, on either backend (module docstring)."""

    def execute(self, statements: str, bindings: Any = None, /) -> Cursor: ...

    def executemany(self, statements: str, sequenceofbindings: Iterable[Any], /) -> Any: ...

    def changes(self) -> int: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, etype: Any, evalue: Any, etraceback: Any, /) -> Any: ...


def execute_all(conn: Connection, statements: Sequence[tuple[str, Sequence[Any] | None]]) -> None:
    """Run ``statements`` (``(sql, bindings)``, none returning rows) in order, for their effect: on PostgreSQL in
    one round trip (:meth:`~limbic.core.store.postgres.connection.PgConnection.execute_all`), on SQLite one by
    one. The first that fails raises its error; those after it do not run."""
    if on_postgres(conn):
        conn.execute_all(statements)  # type: ignore[attr-defined]
        return
    for sql, bindings in statements:
        conn.execute(sql, bindings)


def fetch_all(conn: Connection, statements: Sequence[tuple[str, Sequence[Any] | None]]) -> list[list[Any]]:
    """The rows of each of ``statements`` (``(sql, bindings)``, independent reads, run in order): on PostgreSQL
    from one round trip (:meth:`~limbic.core.store.postgres.connection.PgConnection.fetch_all`), on SQLite one
    by one."""
    if on_postgres(conn):
        return conn.fetch_all(statements)  # type: ignore[attr-defined]
    return [conn.execute(sql, bindings).fetchall() for sql, bindings in statements]
