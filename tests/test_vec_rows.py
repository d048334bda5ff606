"""Rowid access to the vector tables (``limbic.core.store.vec_rows``): sqlite-vec's vec0 tables on a real database
file, pgvector tables on a real PostgreSQL."""

from __future__ import annotations

import numpy as np

from limbic.core.store import vec_rows
from limbic.core.store.backend import open_database
from limbic.core.store.database import Database
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, ensure_vector_table
from limbic.core.store.sqlite import operations as sqlite_operations


def _filled(address: str, count: int = 40) -> tuple[Database, np.ndarray]:
    database = open_database(address)
    vectors = np.random.default_rng(3).standard_normal((count, 8)).astype(np.float32)
    with database.maintenance() as conn:
        ensure_vector_table(conn, 8, "test-model")
        vec_rows.insert(conn, OBSERVATION_VECTOR_TABLE, [(10 + i, vectors[i].tobytes()) for i in range(count)])
    return database, vectors


def test_read_returns_the_rows_asked_for_in_order_and_leaves_out_absent_ones(memory_address):
    database, vectors = _filled(memory_address)
    rows = vec_rows.read(database.read(), OBSERVATION_VECTOR_TABLE, [30, 999, 10, 49])
    assert [rowid for rowid, _ in rows] == [30, 10, 49]
    for rowid, blob in rows:
        assert np.array_equal(np.frombuffer(blob, dtype=np.float32), vectors[rowid - 10])
    assert vec_rows.read(database.read(), OBSERVATION_VECTOR_TABLE, []) == []
    database.close()


def test_delete_removes_exactly_the_rows_named(memory_address):
    database, _ = _filled(memory_address)
    with database.maintenance() as conn:
        vec_rows.delete(conn, OBSERVATION_VECTOR_TABLE, [11, 12, 999])
        vec_rows.delete(conn, OBSERVATION_VECTOR_TABLE, [])
    left = [r[0] for r in database.read().execute(f"SELECT rowid FROM {OBSERVATION_VECTOR_TABLE} ORDER BY rowid")]
    assert left == [10] + list(range(13, 50))
    database.close()


def test_scan_gives_every_row_once(memory_address):
    database, vectors = _filled(memory_address)
    rows = dict(vec_rows.scan(database.read(), OBSERVATION_VECTOR_TABLE))
    assert sorted(rows) == list(range(10, 50))
    assert all(np.array_equal(np.frombuffer(blob, dtype=np.float32), vectors[rowid - 10]) for rowid, blob in rows.items())
    database.close()


def test_a_scan_holds_the_sqlite_page_cache_down_and_restores_its_size(tmp_path, monkeypatch):
    import apsw

    monkeypatch.setattr(sqlite_operations, "SCAN_CACHE_KIB", 256)
    database = open_database(tmp_path / "memory.db")
    vectors = np.random.default_rng(5).standard_normal((4000, 64)).astype(np.float32)  # 1 MB of vectors
    with database.maintenance() as conn:
        ensure_vector_table(conn, 64, "test-model")
        vec_rows.insert(conn, OBSERVATION_VECTOR_TABLE, [(i + 1, vectors[i].tobytes()) for i in range(len(vectors))])
    conn = database.read()
    conn.execute("PRAGMA shrink_memory")
    size = conn.execute("PRAGMA cache_size").get
    assert len(dict(vec_rows.scan(conn, OBSERVATION_VECTOR_TABLE))) == len(vectors)
    assert conn.status(apsw.SQLITE_DBSTATUS_CACHE_USED)[0] <= 320 * 1024  # the scan's 256 KiB and the schema
    assert conn.execute("PRAGMA cache_size").get == size
    database.close()
