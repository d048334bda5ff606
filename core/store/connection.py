"""The connection every reader of the store is typed against, whichever engine gives it.

A SQLite memory hands out :class:`~limbic.core.store.sqlite.connection.SqliteConnection` (apsw's); a PostgreSQL
memory hands out :class:`~limbic.core.store.postgres.connection.PgConnection`, which keeps apsw's calling
conventions (``execute`` with ``?``/``?N`` bindings returning a cursor, ``executemany``, ``changes``, ``with
conn:`` for one consistent read). :class:`Connection` is that common shape as a ``Protocol``, with what each
engine does its own way behind ``ops`` (:class:`~limbic.core.store.operations.Operations`): code outside
``core/store`` receives a ``Connection``, passes it back to the store's functions and never learns which engine
it is (docs/architecture.md "Storage backends").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from limbic.core.store.operations import Operations

Statements = Sequence[tuple[str, Sequence[Any] | None]]
"""``(sql, bindings)`` pairs, run in order."""


class Cursor(Protocol):
    """The rows of one statement: ``fetchone`` (None after the last), ``fetchall``, iteration, and ``get``
    (apsw's: None for no row, the value of a one-column row, else the row; a list when several)."""

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...

    @property
    def get(self) -> Any: ...


class Connection(Protocol):
    """One connection of a memory, on either engine (module docstring)."""

    def execute(self, statements: str, bindings: Any = None, /) -> Cursor: ...

    def executemany(self, statements: str, sequenceofbindings: Iterable[Any], /) -> Any: ...

    def execute_all(self, statements: Statements, /) -> None:
        """Run ``statements`` (none returning rows) in order, for their effect: on PostgreSQL in one round trip.
        The first that fails raises its error; those after it do not run."""
        ...

    def fetch_all(self, statements: Statements, /) -> list[list[Any]]:
        """The rows of each of ``statements`` (independent reads, run in order): on PostgreSQL from one round
        trip."""
        ...

    def changes(self) -> int: ...

    @property
    def in_transaction(self) -> bool: ...

    @property
    def ops(self) -> Operations:
        """What this connection's engine does its own way (:class:`~limbic.core.store.operations.Operations`)."""
        ...

    def __enter__(self) -> Any: ...

    def __exit__(self, etype: Any, evalue: Any, etraceback: Any, /) -> Any: ...
