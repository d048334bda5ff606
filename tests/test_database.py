"""The database file: read connections stay bounded across short-lived threads, named errors."""

from __future__ import annotations

import threading

import apsw
import pytest

from limbic.core.errors import DatabaseClosedError, MigrationError
from limbic.core.models import EntityInput as E
from limbic.core.store.database import READ_POOL_SIZE, Database


def _one_shot(fn) -> None:
    thread = threading.Thread(target=fn)
    thread.start()
    thread.join()


def test_open_connections_stay_bounded_across_100_one_shot_worker_threads(service):
    service.create_entities([E(f"note {i}", "Note") for i in range(10)])
    before = len(apsw.connections())
    for i in range(100):  # a search and a graph read per thread, as a GUI task or an MCP call does
        _one_shot(lambda i=i: (service.search(f"note {i % 10}", 3, record=False), service.read_graph()))
    assert len(apsw.connections()) <= before + 1
    assert service.database.open_read_connections() <= READ_POOL_SIZE

    busy = threading.Barrier(8)  # 8 threads reading at once lease 8 connections, then give them back

    def read_together() -> None:
        service.stats()
        busy.wait(timeout=10)

    threads = [threading.Thread(target=read_together) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # + 1: this test thread's own lease (it wrote, and its write's vectors were read on it after commit)
    assert service.database.open_read_connections() == READ_POOL_SIZE + 1
    assert len(apsw.connections()) <= before + READ_POOL_SIZE


def test_a_pooled_connection_serves_the_next_thread_with_fresh_data(service):
    names: list[list[str]] = []
    _one_shot(lambda: names.append(service.entity_names()))
    service.create_entities([E("Later", "Note")])
    _one_shot(lambda: names.append(service.entity_names()))
    assert names == [[], ["Later"]]
    assert service.database.open_read_connections() == 2  # the pooled one and this thread's (it wrote)


def test_closed_database_raises_a_named_error(tmp_path):
    database = Database(tmp_path / "memory.db")
    database.close()
    with pytest.raises(DatabaseClosedError, match="closed"):
        database.read()
    with pytest.raises(DatabaseClosedError), database.write("cli", "nothing"):
        pass


def test_failed_migration_raises_migration_error_with_its_cause(tmp_path):
    path = tmp_path / "memory.db"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE entities (something_else TEXT)")  # version 0, yet the table exists
    conn.close()
    before = len(apsw.connections())
    with pytest.raises(MigrationError) as caught:
        Database(path)
    assert len(apsw.connections()) == before
    assert "schema version 1" in str(caught.value) and "sqlite" not in str(caught.value).lower()
    assert isinstance(caught.value.__cause__, apsw.SQLError)
    conn = apsw.Connection(str(path))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'observations'").fetchone()[0] == 0
    conn.close()


def test_open_connections_stay_bounded_across_expiring_qt_pool_threads(qtbot, service):
    from PySide6.QtCore import QRunnable, QThreadPool

    class Search(QRunnable):
        def run(self) -> None:
            service.search("note", 3, record=False)

    service.create_entities([E("note", "Note")])
    before = len(apsw.connections())
    pool = QThreadPool()
    pool.setMaxThreadCount(2)
    pool.setExpiryTimeout(1)  # Qt's default is 30 s; here every task's thread ends right after it
    for _ in range(40):
        pool.start(Search())
        assert pool.waitForDone(10_000)
        qtbot.wait(5)
    assert len(apsw.connections()) <= before + 1
    assert service.database.open_read_connections() <= READ_POOL_SIZE
