"""A team server survives its database: two ``limbic mcp --http`` servers on one PostgreSQL memory, four
writers (named tokens) and a reader, while the real server is stopped and started again, or ends the servers'
connections (``pg_terminate_backend``). Every acknowledged write is stored once, no committed write is answered
as an error, calls during the outage fail at once with one clear reason (503, never 401, for a token that could
not be checked; a write's says that nothing was stored), every call after the database is back succeeds within
seconds, and the servers' logs hold one line per event, no traceback."""

from __future__ import annotations

import re
import threading
import time
from urllib.parse import urlsplit

import psycopg
import pytest
from _outage_helpers import Load, RawClient, Reader, ServerProcess, Writer

from limbic.core.errors import MAY_BE_STORED, NOTHING_STORED
from limbic.core.models import EntityInput as E
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

WRITERS = 4
CLEAR = re.compile(r"unreachable; retrying|was lost|nothing was stored|may be stored|could not be checked")
ONE_LINE_EVENT = re.compile(r"(WARNING|INFO):limbic\.[\w.]+:[^\n]+")
"""A log line of the servers: one line per event, from Limbic's own loggers (no traceback, no driver's line)."""
BACK_WITHIN_SECONDS = 2.0
ERROR_WITHIN_SECONDS = 1.0
LOG_LINES_PER_OUTAGE = 5
TERMINATION_SECONDS = 0.5


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """A new memory with an entity per writer and named tokens, served by two HTTP server processes."""
    from _pg import bundled_server, drop_database, new_database

    if bundled_server() is None:
        pytest.skip("the server of LIMBIC_TEST_PG_DSN is not ours to stop")
    address = new_database("outage")
    service = MemoryService(open_database(address), None, origin="cli")
    try:
        service.entities.create_entities([E(f"w{n}", "writer") for n in range(WRITERS)])
        tokens = {name: service.projects.add_token(name) for name in [*(f"writer-{n}" for n in range(WRITERS)), "reader"]}
    finally:
        service.close()
    home = tmp_path_factory.mktemp("outage_home")
    servers = [ServerProcess(address, home, home / f"server-{n}.log") for n in range(2)]
    try:
        urls = [server.url() for server in servers]
        assert all(url.startswith("http://") for url in urls), [s.log_lines() for s in servers]
        yield address, servers, urls, tokens
    finally:
        for server in servers:
            server.process.terminate()
        for server in servers:
            server.stop()
        drop_database(address)


def _workers(urls, tokens, tag: str) -> list:
    writers = [Writer(f"w{n}", tag, RawClient(urls[n % 2], tokens[f"writer-{n}"])) for n in range(WRITERS)]
    return [*writers, Reader(RawClient(urls[0], tokens["reader"]))]


def _stored(address: str) -> dict[str, list[str]]:
    with psycopg.connect(address) as conn:
        rows = conn.execute("SELECT e.name, o.content FROM observations o JOIN entities e ON e.id = o.entity_id "
                            "WHERE e.entity_type = 'writer'").fetchall()
    found: dict[str, list[str]] = {}
    for name, content in rows:
        found.setdefault(name, []).append(content)
    return found


def _check_writes(address: str, workers: list) -> None:
    """Every acknowledged content stored exactly once, none stored unacknowledged, none answered as an error
    after it had committed (its retry would have found it already there)."""
    stored = _stored(address)
    for writer in (w for w in workers if isinstance(w, Writer)):
        kept = [c for c in stored.get(writer.name, []) if c.startswith(writer.prefix + " ")]
        assert len(kept) == len(set(kept)), f"{writer.name}: a content stored twice"
        assert sorted(kept) == sorted(writer.acknowledged), f"{writer.name}: stored {len(kept)}, " \
                                                            f"acknowledged {len(writer.acknowledged)}"
        assert writer.answered_as_present == [], f"{writer.name}: committed writes answered as errors"


def _check_failed_writes(calls) -> None:
    """Every write that failed says that nothing was stored and why (or, its commit unconfirmed, that it may be),
    in the one wording of core/errors.py, whether the tool refused it or the token could not be checked (503)."""
    unclear = [c.text[:160] for c in calls if c.tool == "add_observations" and not c.ok
               and f"{NOTHING_STORED}: " not in c.text and MAY_BE_STORED not in c.text]
    assert not unclear, unclear


def _log_since(servers, marks) -> list[str]:
    return [line for server, mark in zip(servers, marks, strict=True) for line in server.log_lines()[mark:]
            if not line.startswith("limbic: MCP over Streamable HTTP")]  # a late start-up line


def test_a_restarted_database_is_served_again_within_two_seconds(team):
    from _pg import start_server, stop_server

    address, servers, urls, tokens = team
    marks = [len(s.log_lines()) for s in servers]
    workers = _workers(urls, tokens, "restart")
    with Load(workers) as load:
        time.sleep(1.0)
        down = time.monotonic()
        stop_server()
        time.sleep(2.0)
        start_server()
        back = time.monotonic()
        time.sleep(BACK_WITHIN_SECONDS + 2.0)
    calls = load.calls()
    failed = [c for c in calls if not c.ok]
    assert failed, "the outage was not seen"
    assert all(c.status != 401 for c in calls), "a good token was refused"
    assert any(c.status == 503 and "could not be checked" in c.text for c in failed)  # a lookup, not a refusal
    unclear = [c.text[:120] for c in failed if not CLEAR.search(c.text)]
    assert not unclear, unclear
    _check_failed_writes(calls)
    slow = [round(c.seconds, 2) for c in failed if c.seconds > ERROR_WITHIN_SECONDS]
    assert not slow, f"errors slower than {ERROR_WITHIN_SECONDS} s: {slow}"
    late = [c for c in calls if c.started > back + BACK_WITHIN_SECONDS and not c.ok]
    assert not late, [c.text[:120] for c in late]
    for url_index in range(2):  # each server serves again within the bound, named tokens included
        served = [c for w in workers if w.client.url == urls[url_index] for c in w.calls if c.ok and c.started > back]
        assert served and min(c.ended for c in served) - back <= BACK_WITHIN_SECONDS
    assert any(c.ok and c.started > back and c.tool == "add_observations" for c in calls)
    first = [min(c.ended for w in workers if w.client.url == url for c in w.calls if c.ok and c.started > back) - back
             for url in urls]
    print(f"\nrestart: {len(calls)} calls, {len(failed)} failed (slowest failure {max(c.seconds for c in failed):.3f} s), "
          f"served again {max(first):.2f} s after the database was back, "
          f"{sum(len(w.acknowledged) for w in workers if isinstance(w, Writer))} writes acknowledged")
    assert all(c.started > down or c.ok for c in calls[:5])
    _check_writes(address, workers)
    lines = _log_since(servers, marks)
    print(f"log lines: {len(lines)}: {lines}")
    assert len(lines) <= 2 * LOG_LINES_PER_OUTAGE, lines  # two servers
    assert all(ONE_LINE_EVENT.fullmatch(line) for line in lines), lines
    for server, mark in zip(servers, marks, strict=True):  # each server: once away, once back
        own = server.log_lines()[mark:]
        reach = [line for line in own if line.startswith("WARNING:limbic.core.store.postgres.reach:")]
        assert sum("is unreachable; retrying" in line for line in reach) == 1, own  # a failed call's own line aside
        assert sum("answers again" in line for line in reach) == 1, own


def test_connections_ended_by_the_server_are_replaced_at_once(team):
    from _pg import server_dsn

    address, servers, urls, tokens = team
    database = urlsplit(address).path.lstrip("/")
    marks = [len(s.log_lines()) for s in servers]
    workers = _workers(urls, tokens, "terminate")
    kills = []
    with Load(workers) as load, psycopg.connect(server_dsn(), autocommit=True) as admin:
        time.sleep(1.0)
        for _ in range(2):
            kills.append(time.monotonic())
            ended = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                  "WHERE datname = %s AND application_name = 'limbic'", (database,)).fetchone()[0]
            assert ended >= 4  # each server's writer, listener and read connections
            time.sleep(1.5)
    calls = load.calls()
    # a call under way when its server's connections were ended may fail ("lost; try again"); the server ends
    # them asynchronously (each backend when it next runs), so "under way" reaches a little past the command
    in_flight = [c for c in calls if any(c.started <= at + TERMINATION_SECONDS and c.ended >= at for at in kills)]
    failed = [c for c in calls if not c.ok]
    assert all(c in in_flight for c in failed), [(c.tool, c.text[:120]) for c in failed if c not in in_flight]
    assert all(CLEAR.search(c.text) for c in failed), [c.text[:120] for c in failed]
    _check_failed_writes(calls)
    assert all(c.status != 401 for c in calls)
    assert sum(c.ok and c.started > kills[-1] for c in calls) >= 10
    print(f"\nterminate: {len(calls)} calls, {len(failed)} failed (of {len(in_flight)} under way at a termination), "
          f"{sum(len(w.acknowledged) for w in workers if isinstance(w, Writer))} writes acknowledged")
    _check_writes(address, workers)
    lines = _log_since(servers, marks)
    print(f"log lines: {len(lines)}: {lines}")
    assert len(lines) <= LOG_LINES_PER_OUTAGE, lines
    assert all(ONE_LINE_EVENT.fullmatch(line) for line in lines), lines


def test_a_write_whose_follow_up_fails_after_the_commit_is_answered_as_stored(pg_address):
    """The database goes away right after ``add_observations`` committed (a subscriber ends its connections and
    makes it refuse new ones): the answer says the observation was added, its conflicts ``"unavailable"``; the
    observation is there once it is back."""
    from _mcp_helpers import outcome, portal_client
    from _pg import server_dsn

    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.mcp.server import build_server

    name = urlsplit(pg_address).path.lstrip("/")
    service = MemoryService(open_database(pg_address), HashingEmbedder())
    stopped = []

    def allow(connections: bool) -> None:
        with psycopg.connect(server_dsn(), autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS {str(connections).lower()}')
            if not connections:
                admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))

    def away_after_commit(changes) -> None:
        if any(c.op == "add_observations" for c in changes) and not stopped:
            stopped.append(True)
            allow(False)
            try:  # the follow-up must meet a database that refuses
                psycopg.connect(pg_address, connect_timeout=2).close()
            except psycopg.OperationalError:
                stopped.append("refused")

    try:
        service.entities.create_entities([E("Ada", "person")])
        service.subscribe(away_after_commit)
        with portal_client(build_server(service)) as (portal, client):
            try:
                answer = outcome(portal.call(client.call_tool, "add_observations", {
                    "observations": [{"entityName": "Ada", "contents": ["writes the first program"]}]}))
            finally:
                allow(True)
            assert stopped == [True, "refused"] and not answer["error"], (stopped, answer)
            assert answer["structured"] == {"results": [{"entityName": "Ada",
                                                         "addedObservations": ["writes the first program"]}],
                                            "conflicts": "unavailable"}
            deadline = time.monotonic() + 10
            while True:  # the database answers again within a retry step
                try:
                    found = service.entities.open_nodes(["Ada"]).entities[0]
                    break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
        assert [o.content for o in found.observations] == ["writes the first program"]
    finally:
        service.close()


def test_a_write_whose_connection_ends_inside_a_pipeline_fails_clearly_and_the_next_is_stored(pg_address):
    """The server ends the write connection while the text index's pipeline waits for its results
    (``pg_terminate_backend``, an idle timeout, a failover): the write fails with the one clear error and the next
    write runs on a new connection. Depending on when the end arrives, psycopg marks the connection broken or, with
    results still due, cannot leave pipeline mode and leaves it unmarked; the store closes the latter
    (``postgres.connection.pipeline``), which the restart and termination tests above met in about one run in six
    before, every later write then failing, ``ROLLBACK`` included."""
    from _pg import server_dsn

    from limbic.core.errors import DatabaseUnavailableError
    from limbic.core.store.postgres import full_text

    service = MemoryService(open_database(pg_address), None)
    try:
        service.entities.create_entities([E("Ada", "person")])
        database = service.database
        with pytest.raises(DatabaseUnavailableError, match="nothing was stored"):
            with database.write("test", "add_observations") as txn:
                pid = txn.conn.raw.info.backend_pid
                ending = threading.Timer(0.2, lambda: psycopg.connect(server_dsn(), autocommit=True).execute(
                    "SELECT pg_terminate_backend(%s)", (pid,)))
                ending.start()  # while the pipeline waits for its results
                try:
                    with full_text.pipeline(txn.conn.raw):
                        txn.conn.raw.execute("SELECT pg_sleep(1)")
                        for _ in range(3):
                            txn.conn.raw.execute("SELECT 1")
                finally:
                    ending.join()
        service.entities.add_observations([("Ada", ["writes the first program"])])
        assert [o.content for o in service.entities.open_nodes(["Ada"]).entities[0].observations] == ["writes the first program"]
    finally:
        service.close()


def test_32_clients_at_once_on_one_server_all_succeed(team):
    """32 concurrent clients (searches and writes) on one server: none fails, none waits for a connection
    (the long run is tests/bench/bench_team_writes.py --clients 32 --seconds 60)."""
    address, servers, urls, tokens = team
    workers = [Writer(f"w{n % WRITERS}", f"load{n}", RawClient(urls[0], tokens[f"writer-{n % WRITERS}"]))
               if n % 4 == 0 else Reader(RawClient(urls[0], tokens["reader"])) for n in range(32)]
    with Load(workers) as load:
        time.sleep(4.0)
    calls = load.calls()
    assert len(calls) >= 32 and all(c.ok for c in calls), [c.text[:120] for c in calls if not c.ok][:5]
    _check_writes(address, workers)
    print(f"\n32 clients: {len(calls)} calls, slowest {max(c.seconds for c in calls):.2f} s")


def test_a_database_that_refuses_more_connections_says_so_and_serves_when_one_is_free():
    """The server's own limit (a role allowed 3 connections): a read that needs a fourth fails within a second
    with the server's reason, nothing is marked away, and the next read after a connection was given back works."""
    import threading

    from _pg import PASSWORD, password_address, server_dsn, with_password

    from limbic.core.errors import DatabaseUnavailableError
    from limbic.core.store.postgres.database import PgDatabase

    address = password_address()
    if address is None:
        pytest.skip("the server of LIMBIC_TEST_PG_DSN is not ours to configure")
    with psycopg.connect(server_dsn(), autocommit=True) as admin:
        admin.execute("ALTER ROLE limbic_pw CONNECTION LIMIT 3")
    database = PgDatabase(with_password(address, PASSWORD))  # the writer and one pooled connection
    try:
        held, release = threading.Barrier(3), threading.Event()

        def hold() -> None:
            conn = database.read()
            conn.execute("SELECT 1")
            held.wait(timeout=30)
            release.wait(timeout=30)

        holders = [threading.Thread(target=hold) for _ in range(2)]
        for thread in holders:
            thread.start()
        held.wait(timeout=30)  # writer + 2 leases: the role's 3
        refused: list[BaseException] = []
        started = time.monotonic()

        def fourth() -> None:
            try:
                database.read().execute("SELECT 1")
            except DatabaseUnavailableError as exc:
                refused.append(exc)

        thread = threading.Thread(target=fourth)
        thread.start()
        thread.join()
        took = time.monotonic() - started
        release.set()
        for holder in holders:
            holder.join()
        assert len(refused) == 1 and took < ERROR_WITHIN_SECONDS + 0.5, (refused, took)
        assert "refuses connections (too many connections for role" in str(refused[0])
        assert PASSWORD not in str(refused[0]) and not database._reach.down
        assert database.read().execute("SELECT 1").get == 1  # a connection came back: served
    finally:
        database.close()
        with psycopg.connect(server_dsn(), autocommit=True) as admin:
            admin.execute("ALTER ROLE limbic_pw CONNECTION LIMIT -1")
