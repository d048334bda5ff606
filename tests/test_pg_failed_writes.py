"""A write the PostgreSQL server fails says so in one wording, ``nothing was stored: <why>`` (core/errors.py), over
MCP (in process, stdio) and the command line, and only when nothing of it was stored; the log meanwhile holds one
line per event and no traceback. Real server, real cuts: a connection ended by ``pg_terminate_backend`` in the middle
of a write, the server stopped, an address nobody answers."""

from __future__ import annotations

import gc
import logging
import sys
import threading
import time
from urllib.parse import urlsplit

import psycopg
import pytest

from limbic.core.errors import NOTHING_STORED, DatabaseUnavailableError
from limbic.core.models import EntityInput as E
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

WAIT_SECONDS = 20


def _terminate(pid: int) -> None:
    from _pg import server_dsn

    with psycopg.connect(server_dsn(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def _waiting_writer(address: str) -> int:
    """The pid of the memory's connection that waits for a row lock (a write held up by another transaction)."""
    from _pg import server_dsn

    database = urlsplit(address).path.lstrip("/")
    deadline = time.monotonic() + WAIT_SECONDS
    with psycopg.connect(server_dsn(), autocommit=True) as admin:
        while time.monotonic() < deadline:
            row = admin.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = 'limbic' "
                                "AND wait_event_type = 'Lock'", (database,)).fetchone()
            if row:
                return int(row[0])
            time.sleep(0.02)
    raise AssertionError("the write never waited for the row lock")


class _Unraisable:
    """Exceptions Python could only print (``Exception ignored in: …``), caught instead for the block."""

    def __enter__(self) -> list:
        self.seen: list = []
        self._before, sys.unraisablehook = sys.unraisablehook, self.seen.append
        return self.seen

    def __exit__(self, *exc_info: object) -> None:
        gc.collect()
        sys.unraisablehook = self._before


def _no_traceback(records: list[logging.LogRecord]) -> None:
    noisy = [r.getMessage() for r in records if r.levelno >= logging.WARNING and (r.exc_info or "\n" in r.getMessage())]
    assert noisy == [], noisy
    assert not [r for r in records if r.name.startswith("psycopg") and r.levelno >= logging.WARNING]


def test_a_savepoint_whose_connection_is_cut_is_left_cleanly_and_the_write_stores_nothing(pg_address, caplog):
    """The server ends the write connection inside a savepoint (as the contradiction check of a write runs in
    one): the savepoint is not rolled back on the dead connection (no ``Exception ignored in: <generator …>``), the
    write fails with the one wording, and the next write runs on a new connection."""
    database = open_database(pg_address)
    try:
        caplog.set_level(logging.DEBUG)
        with _Unraisable() as unraisable:
            with pytest.raises(DatabaseUnavailableError) as failed:
                with database.write("test", "probe") as txn:
                    txn.conn.execute("INSERT INTO settings(key, value) VALUES ('probe', 'cut')")
                    with database.maintenance() as conn:
                        _terminate(txn.conn.raw.info.backend_pid)
                        conn.execute("SELECT pg_sleep(1)")
        assert unraisable == []
        assert str(failed.value).startswith(f"{NOTHING_STORED}: the connection to the database at "), failed.value
        _no_traceback(caplog.records)
        assert database.get_setting("probe") is None
        with database.write("test", "probe") as txn:
            txn.conn.execute("INSERT INTO settings(key, value) VALUES ('probe', 'kept')")
        assert database.get_setting("probe") == "kept"
    finally:
        database.close()


def test_a_write_cut_in_the_middle_over_mcp_says_nothing_was_stored(pg_address, caplog):
    """``add_observations`` held up inside its transaction (another session holds the entity's row) while the server
    ends its connection: the answer is ``nothing was stored`` with the reason, nothing is stored, and the same call
    sent again stores the observation once."""
    from _mcp_helpers import outcome, portal_client

    from limbic.core.mcp.server import build_server
    from limbic.core.store.postgres.address import host_port

    caplog.set_level(logging.DEBUG)
    service = MemoryService(open_database(pg_address), None)
    arguments = {"observations": [{"entityName": "Ada", "contents": ["writes the first program"]}]}
    try:
        service.entities.create_entities([E("Ada", "person")])
        with portal_client(build_server(service)) as (portal, client), \
                psycopg.connect(pg_address) as holder:
            holder.execute("SELECT 1 FROM entities WHERE name = 'Ada' FOR UPDATE")  # its transaction stays open
            cut = threading.Thread(target=lambda: _terminate(_waiting_writer(pg_address)))
            cut.start()
            try:
                answer = outcome(portal.call(client.call_tool, "add_observations", arguments))
            finally:
                cut.join()
                holder.rollback()
            assert answer["error"], answer
            assert answer["text"] == (f"Error executing tool add_observations: {NOTHING_STORED}: the connection to the "
                                      f"database at {host_port(pg_address)} was lost; try again"), answer["text"]
            assert not service.entities.open_nodes(["Ada"]).entities[0].observations
            again = outcome(portal.call(client.call_tool, "add_observations", arguments))
        assert not again["error"] and again["structured"]["results"][0]["addedObservations"] == [
            "writes the first program"]
        assert [o.content for o in service.entities.open_nodes(["Ada"]).entities[0].observations] == ["writes the first program"]
        _no_traceback(caplog.records)
    finally:
        service.close()


def test_a_write_while_the_server_is_stopped_says_nothing_was_stored_over_stdio(pg_address, tmp_path):
    """``limbic mcp`` (stdio) on a memory whose server stops: a write fails at once with the one wording, a read
    with the outage's reason alone, and once the server is back the write is stored; the server's log holds one
    line per event (unreachable, answers again) and no traceback."""
    import anyio
    from _mcp_helpers import limbic_params, outcome, stdio_client
    from _pg import bundled_server, start_server, stop_server

    if bundled_server() is None:
        pytest.skip("the server of LIMBIC_TEST_PG_DSN is not ours to stop")
    service = MemoryService(open_database(pg_address), None)
    try:
        service.entities.create_entities([E("Ada", "person")])
    finally:
        service.close()
    errlog = tmp_path / "stderr.log"
    arguments = {"observations": [{"entityName": "Ada", "contents": ["writes the first program"]}]}

    async def session() -> tuple[dict, dict, dict]:
        async with stdio_client(limbic_params(pg_address, tmp_path / "home"), errlog) as client:
            await client.call_tool("read_graph", {})
            stop_server()
            try:
                write = outcome(await client.call_tool("add_observations", arguments))
                read = outcome(await client.call_tool("open_nodes", {"names": ["Ada"]}))
            finally:
                start_server()
            deadline = time.monotonic() + WAIT_SECONDS
            while True:  # served again within a retry step
                again = outcome(await client.call_tool("add_observations", arguments))
                if not again["error"] or time.monotonic() > deadline:
                    return write, read, again
                await anyio.sleep(0.1)

    write, read, again = anyio.run(session)
    assert write["error"] and write["text"].startswith(f"Error executing tool add_observations: {NOTHING_STORED}: "
                                                       "the database at "), write
    assert write["text"].endswith(" is unreachable; retrying")
    assert read["error"] and NOTHING_STORED not in read["text"], read  # a read stores nothing anyway: not said
    assert not again["error"], again
    lines = [line for line in errlog.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert not [line for line in lines if "Traceback" in line or "Exception ignored" in line], lines
    assert sum("is unreachable; retrying" in line for line in lines) == 1, lines
    assert sum("answers again" in line for line in lines) == 1, lines


def test_a_writing_command_that_cannot_reach_its_server_says_nothing_was_stored(tmp_path, limbic_home, monkeypatch,
                                                                                 capsys):
    """The command line: a command that writes (``import``) says that nothing was stored and why; one that reads
    (``stats``) gives the reason alone."""
    from limbic.core.cli.main import main

    monkeypatch.chdir(tmp_path)
    source = tmp_path / "memory.jsonl"
    source.write_text('{"type": "entity", "name": "Ada", "entityType": "person", "observations": []}\n')
    address = "postgresql://bob:s3cret@127.0.0.1:1/team"
    reason = "cannot reach the database server at postgresql://bob:***@127.0.0.1:1/team: Connection refused"
    assert main(["--db", address, "import", str(source)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"limbic: error: {NOTHING_STORED}: {reason}"]
    assert main(["--db", address, "stats"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"limbic: error: {reason}"]


def test_a_pipeline_whose_connection_ends_logs_no_driver_warning(pg_address, caplog):
    """The server ends a connection while a pipeline's result is read inside the block: the block's error is
    raised, and psycopg's line about leaving the pipeline after it (``error ignored terminating <psycopg.Pipeline
    [BAD]>``, a warning of its own) goes to the debug log."""
    from limbic.core.store.postgres.connection import pipeline

    caplog.set_level(logging.DEBUG)
    with psycopg.connect(pg_address, autocommit=True) as raw:
        with pytest.raises(psycopg.OperationalError):
            with pipeline(raw):
                raw.execute("SELECT 1")
                _terminate(raw.info.backend_pid)
                time.sleep(0.2)
                raw.execute("SELECT 2").fetchone()  # the block reads a result: the server has ended the connection
    assert not [r for r in caplog.records if r.name.startswith("psycopg") and r.levelno >= logging.WARNING]
    assert [r for r in caplog.records if r.name == "limbic.core.store.postgres.connection"
            and r.getMessage().startswith("psycopg: error ignored terminating")]


def test_a_write_whose_commit_was_lost_is_not_taken_for_the_next_writers_change(pg_address, caplog):
    """The server ends a write's connection as it sends ``COMMIT`` (the transaction is not committed), and another
    server's write commits next and takes the same change id (ids are max + 1): the check that follows asks for the
    write's own row, so the write says that nothing was stored — never that it was (an acknowledged write lost)."""
    first = MemoryService(open_database(pg_address), None, origin="mcp:one")
    second = MemoryService(open_database(pg_address), None, origin="mcp:two")
    try:
        first.entities.create_entities([E("Ada", "person")])
        database = first.database
        commit = database._commit
        taken: list[int] = []

        def lost_then_taken(conn, change_id):
            _terminate(conn.raw.info.backend_pid)  # the transaction ends with its connection, uncommitted
            second.entities.add_observations([("Ada", ["a note another server wrote"])])
            taken.append(second.history.last_change_id())
            commit(conn, change_id)

        database._commit = lost_then_taken
        with caplog.at_level(logging.INFO), pytest.raises(DatabaseUnavailableError) as failed:
            first.entities.add_observations([("Ada", ["the note that was lost"])])
        database._commit = commit
        assert taken and taken[0] == first.database._change_row[0]  # the other write took the lost one's id
        assert f"{NOTHING_STORED}: " in str(failed.value)
        stored = [o.content for o in second.entities.open_nodes(["Ada"]).entities[0].observations]
        assert stored == ["a note another server wrote"]
        first.entities.add_observations([("Ada", ["the note that was lost"])])  # sent again: stored once
        stored = [o.content for o in second.entities.open_nodes(["Ada"]).entities[0].observations]
        assert sorted(stored) == ["a note another server wrote", "the note that was lost"]
    finally:
        first.close()
        second.close()
