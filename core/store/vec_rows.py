"""Reading and deleting rows of sqlite-vec's ``vec0`` tables by rowid.

vec0 answers ``rowid = ?`` with a look-up, but for ``rowid IN (…)`` it scans every vector of the table
(``EXPLAIN QUERY PLAN``: ``SCAN … VIRTUAL TABLE INDEX 0:1``). Measured with MiniLM vectors, 40 rowids:
reading took 32.8 ms at 10k entities (50,044 observation vectors) and 160 ms at all of Debian (287,875)
with ``IN``, 1.9 and 5.3 ms one ``rowid = ?`` each; a background step landing 16 entities' vectors held
the write lock for 16 ms, 11 of them in such a ``DELETE`` (2.2 ms after). So every access by a list of
rowids goes through here, one statement per rowid.
"""

from __future__ import annotations

from collections.abc import Iterable

import apsw


def read(conn: apsw.Connection, table: str, rowids: Iterable[int]) -> list[tuple[int, bytes]]:
    """``(rowid, embedding bytes)`` of each of ``rowids`` present in vec0 ``table``, in the given order;
    absent rowids are left out."""
    rows = conn.executemany(f"SELECT rowid, embedding FROM {table} WHERE rowid = ?",
                            [(int(rowid),) for rowid in rowids])
    return [(int(rowid), bytes(blob)) for rowid, blob in rows]


def delete(conn: apsw.Connection, table: str, rowids: Iterable[int]) -> None:
    """Delete the rows ``rowids`` of vec0 ``table`` (absent ones are ignored)."""
    conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(int(rowid),) for rowid in rowids])
