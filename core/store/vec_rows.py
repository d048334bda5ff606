"""Reading, writing and deleting rows of the vector tables by rowid, on either engine (each its own way:
``conn.ops``, :class:`~limbic.core.store.operations.Operations`).

A vector comes and goes as the bytes of a little-endian ``(d,) float32`` array.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from limbic.core.store.connection import Connection


def read(conn: Connection, table: str, rowids: Iterable[int]) -> list[tuple[int, bytes]]:
    """``(rowid, embedding bytes)`` of each of ``rowids`` present in ``table``, in the given order;
    absent rowids are left out."""
    return conn.ops.read_vectors(table, [int(rowid) for rowid in rowids])


def scan(conn: Connection, table: str) -> Iterator[tuple[int, bytes]]:
    """``(rowid, embedding bytes)`` of every row of ``table``, in no particular order (on SQLite with a small
    page cache meanwhile: the pages are read once)."""
    return conn.ops.scan_vectors(table)


def insert(conn: Connection, table: str, rows: Sequence[tuple[int, bytes]]) -> None:
    """Add ``(rowid, embedding bytes)`` rows to ``table`` (the rowids must be absent)."""
    conn.ops.insert_vectors(table, rows)


def delete(conn: Connection, table: str, rowids: Iterable[int]) -> None:
    """Delete the rows ``rowids`` of ``table`` (absent ones are ignored)."""
    conn.ops.delete_vectors(table, [int(rowid) for rowid in rowids])


def replacing(conn: Connection, table: str, rows: Sequence[tuple[int, bytes]]) -> list[tuple[str, Sequence[Any]]]:
    """The statements that put ``(rowid, embedding bytes)`` rows in ``table`` in place of any rows those rowids
    had, as ``(sql, bindings)`` for the connection's ``execute_all`` (which may send them with other statements of
    the same write in one round trip)."""
    return conn.ops.replacing_vectors(table, rows)
