"""Reading, writing and deleting rows of the vector tables by rowid, on either backend.

On SQLite the tables are sqlite-vec ``vec0`` tables, which answer ``rowid = ?`` with a look-up but scan every
vector for ``rowid IN (…)`` (``EXPLAIN QUERY PLAN``: ``SCAN … VIRTUAL TABLE INDEX 0:1``). Measured with MiniLM
vectors, 40 rowids: reading took 32.8 ms at 10k entities (50,044 observation vectors) and 160 ms at all of
Debian (287,875) with ``IN``, 1.9 and 5.3 ms one ``rowid = ?`` each; so SQLite gets one statement per rowid.
On PostgreSQL they are pgvector tables (``rowid bigint`` primary key, ``embedding vector(d)``), read in one
statement through ``vector_send`` (big-endian float4 after a 4-byte header) and written from float32 arrays.
Either way a vector comes and goes as the bytes of a little-endian ``(d,) float32`` array.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from limbic.core.store.connection import Connection
from limbic.core.store.postgres.connection import on_postgres

SCAN_CACHE_KIB = 8192
"""The page cache (KiB) of a SQLite connection while it scans a whole vector table: the pages are read once, so
they need not fill the connection's 64 MB (the vector copy's load, the duplicate finders). sqlite-vec keeps 1,024
vectors in one chunk (1.5 MB at 384 dimensions); a cache that cannot hold a chunk reads it again for every vector
(measured at 10k: 0.21 s with 4 or 64 MB, 3.2 s with 1 MB)."""


def _from_pg(data: bytes) -> bytes:
    return np.frombuffer(data, dtype=">f4", offset=4).astype("<f4").tobytes()


def read(conn: Connection, table: str, rowids: Iterable[int]) -> list[tuple[int, bytes]]:
    """``(rowid, embedding bytes)`` of each of ``rowids`` present in ``table``, in the given order;
    absent rowids are left out."""
    wanted = [int(rowid) for rowid in rowids]
    if on_postgres(conn):
        found = {int(r): _from_pg(bytes(v)) for r, v in conn.raw.execute(  # type: ignore[attr-defined]
            f"SELECT rowid, vector_send(embedding) FROM {table} WHERE rowid = ANY(%s)", (wanted,))}
        return [(rowid, found[rowid]) for rowid in wanted if rowid in found]
    rows = conn.executemany(f"SELECT rowid, embedding FROM {table} WHERE rowid = ?", [(rowid,) for rowid in wanted])
    return [(int(rowid), bytes(blob)) for rowid, blob in rows]


def scan(conn: Connection, table: str) -> Iterator[tuple[int, bytes]]:
    """``(rowid, embedding bytes)`` of every row of ``table``, in no particular order; on SQLite the connection's
    page cache is held to :data:`SCAN_CACHE_KIB` meanwhile."""
    if on_postgres(conn):
        with conn.raw.cursor() as cursor:  # type: ignore[attr-defined]
            for rowid, data in cursor.execute(f"SELECT rowid, vector_send(embedding) FROM {table}"):
                yield int(rowid), _from_pg(bytes(data))
        return
    size = conn.execute("PRAGMA cache_size").get
    conn.execute(f"PRAGMA cache_size = -{SCAN_CACHE_KIB}")  # a smaller size gives the pages beyond it back at once
    try:
        for rowid, blob in conn.execute(f"SELECT rowid, embedding FROM {table}"):
            yield int(rowid), bytes(blob)
    finally:
        conn.execute(f"PRAGMA cache_size = {int(size)}")


def insert(conn: Connection, table: str, rows: Sequence[tuple[int, bytes]]) -> None:
    """Add ``(rowid, embedding bytes)`` rows to ``table`` (the rowids must be absent)."""
    if on_postgres(conn):
        conn.register_vectors()  # type: ignore[attr-defined]
        conn.raw.cursor().executemany(  # type: ignore[attr-defined]
            f"INSERT INTO {table}(rowid, embedding) VALUES (%s, %s)",
            [(int(rowid), np.frombuffer(blob, dtype=np.float32)) for rowid, blob in rows])
        return
    conn.executemany(f"INSERT INTO {table}(rowid, embedding) VALUES (?, ?)", [(int(r), b) for r, b in rows])


def delete(conn: Connection, table: str, rowids: Iterable[int]) -> None:
    """Delete the rows ``rowids`` of ``table`` (absent ones are ignored)."""
    wanted = [int(rowid) for rowid in rowids]
    if on_postgres(conn):
        conn.raw.execute(f"DELETE FROM {table} WHERE rowid = ANY(%s)", (wanted,))  # type: ignore[attr-defined]
        return
    conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(rowid,) for rowid in wanted])


def replacing(conn: Connection, table: str, rows: Sequence[tuple[int, bytes]]) -> list[tuple[str, Sequence[Any]]]:
    """The statements that put ``(rowid, embedding bytes)`` rows in ``table`` in place of any rows those rowids
    had, as ``(sql, bindings)`` for :func:`~limbic.core.store.connection.execute_all` (which may send them with
    other statements of the same write in one round trip)."""
    if on_postgres(conn):
        conn.register_vectors()  # type: ignore[attr-defined]
        return [(f"DELETE FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))",
                 (json.dumps([int(rowid) for rowid, _ in rows]),)),
                *((f"INSERT INTO {table}(rowid, embedding) VALUES (?, ?)",
                   (int(rowid), np.frombuffer(blob, dtype=np.float32))) for rowid, blob in rows)]
    return [*((f"DELETE FROM {table} WHERE rowid = ?", (int(rowid),)) for rowid, _ in rows),
            *((f"INSERT INTO {table}(rowid, embedding) VALUES (?, ?)", (int(rowid), blob)) for rowid, blob in rows)]
