"""A connection to a SQLite memory: apsw's, with sqlite-vec loaded and the store's common shape.

:class:`SqliteConnection` is an ``apsw.Connection`` that also answers what the store asks of every connection
(:class:`~limbic.core.store.connection.Connection`): its engine's operations (``ops``,
:class:`~limbic.core.store.sqlite.operations.SqliteOperations`) and several statements at once
(``execute_all``, ``fetch_all``: one by one here, there being no round trip to save).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import apsw
import sqlite_vec

from limbic.core.store.sqlite.operations import SqliteOperations

if TYPE_CHECKING:
    from apsw import SQLiteValue

BUSY_TIMEOUT_MS = 10_000
READ_CACHE_KIB = 64_000
"""Page cache of each read connection (KiB)."""


class SqliteConnection(apsw.Connection):
    """An apsw connection with the store's common shape (module docstring)."""

    @property
    def ops(self) -> SqliteOperations:
        """The SQLite operations bound to this connection."""
        return SqliteOperations(self)

    def execute_all(self, statements: Sequence[tuple[str, Sequence[Any] | None]]) -> None:
        """Run ``statements`` (``(sql, bindings)``, none returning rows) in order; the first that fails raises
        its error and those after it do not run."""
        for sql, bindings in statements:
            self.execute(sql, bindings)

    def fetch_all(self, statements: Sequence[tuple[str, Sequence[Any] | None]]) -> list[list[Any]]:
        """The rows of each of ``statements`` (``(sql, bindings)``, independent reads, run in order)."""
        return [self.execute(sql, bindings).fetchall() for sql, bindings in statements]


def connect(path: str, *, read_only: bool = False) -> SqliteConnection:
    """A configured connection to the file ``path``: sqlite-vec loaded, foreign keys on, the busy timeout,
    :data:`READ_CACHE_KIB` of page cache and ``unicode_lower``; ``read_only`` opens it so (the change
    watcher's)."""
    if read_only:
        conn = SqliteConnection(path, flags=apsw.SQLITE_OPEN_READONLY)
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        return conn
    conn = SqliteConnection(path)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute(f"PRAGMA cache_size = -{READ_CACHE_KIB}")
    # Unicode lower-casing for search_nodes (SQLite's lower() and LIKE fold ASCII only).
    conn.create_scalar_function("unicode_lower", _unicode_lower, 1, deterministic=True)
    return conn


def _unicode_lower(*args: SQLiteValue) -> SQLiteValue:
    """SQL ``unicode_lower(text)``: Python's full Unicode lower-casing; other values pass through."""
    (text,) = args
    return text.lower() if isinstance(text, str) else text
