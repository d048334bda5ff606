"""The database (a SQLite file, a PostgreSQL memory): read connections stay bounded across short-lived
threads, reads see committed writes, a failed write leaves nothing, nested writes are savepoints, every
write is logged once in the change log, named errors."""

from __future__ import annotations

import threading

import apsw
import pytest

from limbic.core.errors import DatabaseClosedError, MigrationError
from limbic.core.models import EntityInput as E
from limbic.core.store import reads
from limbic.core.store.backend import open_database
from limbic.core.store.postgres import database as pg_database
from limbic.core.store.sqlite.database import READ_POOL_SIZE

POOL_SIZE = {"sqlite": READ_POOL_SIZE, "postgresql": pg_database.READ_POOL_SIZE}


@pytest.fixture
def database(memory_address):
    """A new memory's database on each backend (closed afterwards)."""
    db = open_database(memory_address)
    yield db
    db.close()


def _setting(db, key: str) -> str | None:
    """``key``'s value as another thread reads it (its own read connection)."""
    found: list[str | None] = []
    _one_shot(lambda: found.append(db.get_setting(key)))
    return found[0]


def _one_shot(fn) -> None:
    thread = threading.Thread(target=fn)
    thread.start()
    thread.join()


def test_open_connections_stay_bounded_across_100_one_shot_worker_threads(service, backend):
    service.entities.create_entities([E(f"note {i}", "Note") for i in range(10)])
    before = len(apsw.connections())
    for i in range(100):  # a search and a graph read per thread, as a GUI task or an MCP call does
        _one_shot(lambda i=i: (service.search.query(f"note {i % 10}", 3, record=False), service.entities.read_graph()))
    assert len(apsw.connections()) <= before + 1
    assert service.database.open_read_connections() <= POOL_SIZE[backend]

    busy = threading.Barrier(8)  # 8 threads reading at once lease 8 connections, then give them back

    def read_together() -> None:
        service.entities.stats()
        busy.wait(timeout=10)

    threads = [threading.Thread(target=read_together) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # on SQLite this test thread's own connection (it wrote, and its write's vectors were read on it after
    # commit) and the idle ones kept for the next threads; PostgreSQL's leases last one request: none is out
    assert service.database.open_read_connections() == (READ_POOL_SIZE + 1 if backend == "sqlite" else 0)
    assert len(apsw.connections()) <= before + READ_POOL_SIZE


def test_a_pooled_connection_serves_the_next_thread_with_fresh_data(service, backend):
    names: list[list[str]] = []
    _one_shot(lambda: names.append(service.entities.entity_names()))
    service.entities.create_entities([E("Later", "Note")])
    _one_shot(lambda: names.append(service.entities.entity_names()))
    assert names == [[], ["Later"]]
    # on SQLite this thread's (it wrote) and the idle one the next thread took and gave back; on PostgreSQL
    # every lease went back with its request
    assert service.database.open_read_connections() == (2 if backend == "sqlite" else 0)


def test_reads_see_a_write_once_it_commits(database):
    with database.write("cli", "set") as txn:
        txn.conn.execute("INSERT INTO settings(key, value) VALUES (?, ?)", ("colour", "teal"))
        assert database.read().execute("SELECT value FROM settings WHERE key = 'colour'").get == "teal"  # its own
        assert _setting(database, "colour") is None  # another thread: not before the commit
    assert _setting(database, "colour") == "teal"
    assert database.get_setting("colour") == "teal"


def test_a_failed_write_leaves_nothing(database):
    before = reads.last_change_id(database.read())
    with pytest.raises(RuntimeError, match="refused"), database.write("cli", "set") as txn:
        txn.conn.execute("INSERT INTO settings(key, value) VALUES (?, ?)", ("colour", "teal"))
        txn.touch(7)
        raise RuntimeError("refused")
    assert database.get_setting("colour") is None and _setting(database, "colour") is None
    assert reads.last_change_id(database.read()) == before
    with database.write("cli", "set") as txn:  # the next write goes through
        txn.conn.execute("INSERT INTO settings(key, value) VALUES (?, ?)", ("colour", "red"))
    assert database.get_setting("colour") == "red"


def test_a_nested_write_is_a_savepoint_of_the_outer_one(database):
    with database.write("cli", "batch") as outer:
        outer.conn.execute("INSERT INTO settings(key, value) VALUES ('a', '1')")
        outer.touch(1)
        with pytest.raises(RuntimeError), database.write("cli", "inner") as inner:
            assert inner.nested
            inner.conn.execute("INSERT INTO settings(key, value) VALUES ('b', '2')")
            inner.touch(2)
            raise RuntimeError("inner refused")
        with database.write("cli", "inner") as inner:
            inner.conn.execute("INSERT INTO settings(key, value) VALUES ('c', '3')")
            inner.touch(3)
    assert [database.get_setting(k) for k in "abc"] == ["1", None, "3"]
    changes = reads.changes_since(database.read(), 0)  # one transaction, one change: the outer one's
    assert [(c.change_id, c.origin, c.op, c.entity_ids) for c in changes] == [(outer.change_id, "cli", "batch", {1, 3})]


def test_the_change_log_holds_each_write_once_in_commit_order(database):
    ids = []
    for op, touched in (("first", [4, 2]), ("second", []), ("third", [9])):
        with database.write("mcp", op) as txn:
            txn.conn.execute("INSERT INTO settings(key, value) VALUES (?, ?)", (op, op))
            txn.touch(touched)
        ids.append(txn.change_id)
    with database.maintenance() as conn:  # upkeep without a change row
        conn.execute("INSERT INTO settings(key, value) VALUES ('upkeep', 'x')")
    assert ids == sorted(ids) and len(set(ids)) == 3
    changes = reads.changes_since(database.read(), 0)
    assert [(c.change_id, c.origin, c.op, c.entity_ids) for c in changes] == [
        (ids[0], "mcp", "first", {2, 4}), (ids[1], "mcp", "second", set()), (ids[2], "mcp", "third", {9})]
    assert reads.changes_since(database.read(), ids[1]) == changes[2:]
    assert reads.last_change_id(database.read()) == ids[2]
    assert database.get_setting("upkeep") == "x"


def test_closed_database_raises_a_named_error(memory_address):
    database = open_database(memory_address)
    database.close()
    with pytest.raises(DatabaseClosedError, match="closed"):
        database.read()
    with pytest.raises(DatabaseClosedError), database.write("cli", "nothing"):
        pass


def test_failed_migration_raises_migration_error_with_its_cause(tmp_path):  # SQLite only: the file's own state
    path = tmp_path / "memory.db"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE entities (something_else TEXT)")  # version 0, yet the table exists
    conn.close()
    before = len(apsw.connections())
    with pytest.raises(MigrationError) as caught:
        open_database(path)
    assert len(apsw.connections()) == before
    assert "schema version 1" in str(caught.value) and "sqlite" not in str(caught.value).lower()
    assert isinstance(caught.value.__cause__, apsw.SQLError)
    conn = apsw.Connection(str(path))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'observations'").fetchone()[0] == 0
    conn.close()


def test_open_connections_stay_bounded_across_expiring_qt_pool_threads(qtbot, service, backend):
    from PySide6.QtCore import QRunnable, QThreadPool

    class Search(QRunnable):
        def run(self) -> None:
            service.search.query("note", 3, record=False)

    service.entities.create_entities([E("note", "Note")])
    before = len(apsw.connections())
    pool = QThreadPool()
    pool.setMaxThreadCount(2)
    pool.setExpiryTimeout(1)  # Qt's default is 30 s; here every task's thread ends right after it
    for _ in range(40):
        pool.start(Search())
        assert pool.waitForDone(10_000)
        qtbot.wait(5)
    assert len(apsw.connections()) <= before + 1
    assert service.database.open_read_connections() <= POOL_SIZE[backend]


def test_stats_order_equal_counts_by_name_on_both_backends(service):
    service.entities.create_entities([E(f"{kind} {n}", kind) for kind, count in
                             (("beta", 2), ("Alpha", 2), ("alpha", 2), ("émigré", 2), ("zeta", 3), ("gamma", 1))
                             for n in range(count)])
    assert list(service.entities.stats().entity_types.items()) == [
        ("zeta", 3), ("Alpha", 2), ("alpha", 2), ("beta", 2), ("émigré", 2), ("gamma", 1)]
