"""Rowid access to sqlite-vec's vec0 tables (``limbic.core.store.vec_rows``) on a real database file."""

from __future__ import annotations

import numpy as np

from limbic.core.store import vec_rows
from limbic.core.store.database import Database
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, ensure_vector_table


def _filled(tmp_path, count: int = 40) -> tuple[Database, np.ndarray]:
    database = Database(tmp_path / "vectors.db")
    vectors = np.random.default_rng(3).standard_normal((count, 8)).astype(np.float32)
    with database.maintenance() as conn:
        ensure_vector_table(conn, 8, "test-model")
        conn.executemany(f"INSERT INTO {OBSERVATION_VECTOR_TABLE}(rowid, embedding) VALUES (?, ?)",
                         [(10 + i, vectors[i].tobytes()) for i in range(count)])
    return database, vectors


def test_read_returns_the_rows_asked_for_in_order_and_leaves_out_absent_ones(tmp_path):
    database, vectors = _filled(tmp_path)
    rows = vec_rows.read(database.read(), OBSERVATION_VECTOR_TABLE, [30, 999, 10, 49])
    assert [rowid for rowid, _ in rows] == [30, 10, 49]
    for rowid, blob in rows:
        assert np.array_equal(np.frombuffer(blob, dtype=np.float32), vectors[rowid - 10])
    assert vec_rows.read(database.read(), OBSERVATION_VECTOR_TABLE, []) == []
    database.close()


def test_delete_removes_exactly_the_rows_named(tmp_path):
    database, _ = _filled(tmp_path)
    with database.maintenance() as conn:
        vec_rows.delete(conn, OBSERVATION_VECTOR_TABLE, [11, 12, 999])
        vec_rows.delete(conn, OBSERVATION_VECTOR_TABLE, [])
    left = [r[0] for r in database.read().execute(f"SELECT rowid FROM {OBSERVATION_VECTOR_TABLE} ORDER BY rowid")]
    assert left == [10] + list(range(13, 50))
    database.close()
