"""``--db`` takes a file path or a PostgreSQL URL; what cannot be used is refused in one line, creates nothing
locally, and never shows a password."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from limbic.core.paths import database_address


def _limbic(*args: str, cwd, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "limbic.gui.launcher", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env=env)


def _no_local_files(folder) -> bool:
    return not [p for p in folder.rglob("*") if p.is_file() or p.name in ("servers", "postgresql:")]


def test_a_path_is_kept_and_home_expanded(tmp_path):
    assert database_address(str(tmp_path / "m.db")) == str(tmp_path / "m.db")
    assert database_address("~/m.db") == os.path.expanduser("~/m.db")


def test_a_postgresql_url_is_kept_as_given():
    assert database_address(" postgresql://u@h/x ") == "postgresql://u@h/x"
    assert database_address("postgres://u@h:5433/x?sslmode=require") == "postgres://u@h:5433/x?sslmode=require"


@pytest.mark.parametrize("address", ["ftp://x", "mysql://user:s3cret@localhost/x", "HTTP://h/p", ""])
def test_other_urls_and_empty_addresses_are_refused(address):
    with pytest.raises(ValueError) as refused:
        database_address(address)
    assert "s3cret" not in str(refused.value)


def test_an_unsupported_scheme_is_refused_in_one_line_and_creates_nothing(tmp_path, limbic_home):
    done = _limbic("--db", "ftp://u:s3cret@x/y", "stats", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "limbic: error: --db: ftp:// addresses are not supported; give the path of a database file "
        "or a postgresql:// address"]
    assert "s3cret" not in done.stderr + done.stdout
    assert list(tmp_path.iterdir()) == [] and _no_local_files(limbic_home)


def test_the_app_refuses_an_unsupported_scheme_before_qt_starts(tmp_path):
    done = _limbic("--db", "ftp://x", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.strip().startswith("limbic: error: --db: ftp://")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("address", ["postgresql://bob:s3cret@nosuchhost.invalid/x",
                                     "postgresql://bob:s3cret@127.0.0.1:1/x"])
def test_an_unreachable_server_is_one_line_without_the_password(tmp_path, limbic_home, address):
    done = _limbic("--db", address, "stats", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("limbic: error: cannot reach the database server at "
                                                   "postgresql://bob:***@")
    assert "s3cret" not in done.stderr + done.stdout
    assert list(tmp_path.iterdir()) == [] and _no_local_files(limbic_home)


def test_a_wrong_password_is_one_line_without_the_password(tmp_path, limbic_home):
    from _pg import PASSWORD, password_address, server_or_skip

    server_or_skip()
    address = password_address()
    if address is None:
        pytest.skip("the PostgreSQL server of LIMBIC_TEST_PG_DSN is not ours to configure")
    parts = urlsplit(address)
    wrong = urlunsplit((parts.scheme, f"{parts.username}:n0t-{PASSWORD}@", parts.path, parts.query, ""))
    before = sorted(limbic_home.rglob("*"))
    done = _limbic("--db", wrong, "stats", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"limbic: error: the database server at {wrong.replace(f'n0t-{PASSWORD}', '***')} refused the login: "
        "wrong user name or password"]
    assert PASSWORD not in done.stderr + done.stdout
    assert list(tmp_path.iterdir()) == [] and sorted(limbic_home.rglob("*")) == before
    # the same role with PGPASSWORD (libpq's own variable) gets in
    env = dict(os.environ, PGPASSWORD=PASSWORD)
    good = _limbic("--db", address, "stats", "--json", cwd=tmp_path, env=env)
    assert good.returncode == 0, good.stderr
    assert PASSWORD not in good.stdout + good.stderr


def test_debug_logging_of_a_working_memory_never_shows_the_password(tmp_path, pg_address):
    from _pg import with_password

    address = with_password(pg_address, "pw-in-url")
    for command in (["stats", "--json"], ["search", "anything", "--json"], ["mcp", "config", "--client", "cursor"]):
        done = _limbic("-v", "--db", address, *command, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "pw-in-url" not in done.stdout + done.stderr


SECRET = "pa55-w0rd"
MALFORMED = {
    "port out of range": f"postgresql://bob:{SECRET}@db.example:99999/team",
    "port not a number": f"postgresql://bob:{SECRET}@db.example:54x/team",
    "broken IPv6": f"postgresql://bob:{SECRET}@[::1/team",
    "not an IPv6 address": f"postgresql://bob:{SECRET}@[fe80::zz]:5432/team",
    "IPv6 without brackets": f"postgresql://bob:{SECRET}@::1:5432/team",
    "unknown parameter": f"postgresql://bob@db.example/team?password={SECRET}&colour=blue",
    "bad port parameter": f"postgresql://bob@db.example/team?sslpassword={SECRET}&port=70000",
    "unknown scheme, upper case": f"MYSQL://bob:{SECRET}@db.example/team",
    "unknown scheme, mixed case": f"PostgreSQLx://bob:{SECRET}@db.example/team",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_address_is_one_line_exit_2_no_files_no_secret(tmp_path, limbic_home, case, capsys,
                                                                     monkeypatch):
    from limbic.core.cli.main import main

    monkeypatch.setenv("PGPASSWORD", f"env-{SECRET}")
    monkeypatch.chdir(tmp_path)
    assert main(["-v", "--db", MALFORMED[case], "mcp", "--http"]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("limbic: error: --db: "), lines
    assert "Error:" not in lines[0]
    assert SECRET not in out + err
    assert list(tmp_path.iterdir()) == [] and list(limbic_home.iterdir()) == []


def test_an_unreachable_server_leaves_no_folders_behind_when_serving(tmp_path, limbic_home):
    done = _limbic("-v", "--db", f"postgresql://bob:{SECRET}@127.0.0.1:1/x", "mcp", "--http", cwd=tmp_path,
                   env=dict(os.environ, PGPASSWORD=SECRET))
    assert done.returncode == 2
    assert [line for line in done.stderr.splitlines() if "error" in line] == [
        "limbic: error: cannot reach the database server at postgresql://bob:***@127.0.0.1:1/x: Connection refused"]
    assert SECRET not in done.stderr + done.stdout
    assert list(tmp_path.iterdir()) == [] and list(limbic_home.iterdir()) == []


def test_the_scheme_may_be_written_in_capitals(tmp_path, pg_address):
    upper = "POSTGRESQL" + pg_address[len("postgresql"):]
    done = _limbic("--db", upper, "stats", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_every_secret_of_an_address_is_masked(monkeypatch):
    from limbic.core.store.postgres.address import explain, masked, scrub, without_password

    monkeypatch.setenv("PGPASSWORD", "from-env")
    address = "postgresql://bob:p%40ss@h:5433/db?password=q1&sslpassword=q2&oauth_client_secret=q3&sslmode=require"
    assert masked(address) == ("postgresql://bob:***@h:5433/db?password=***&sslpassword=***"
                               "&oauth_client_secret=***&sslmode=require")
    assert without_password(address) == "postgresql://bob@h:5433/db?sslmode=require"
    said = scrub("login as bob with p@ss, q1, q2, q3 or from-env; password=other", address)
    assert not any(s in said for s in ("p@ss", "q1", "q2", "q3", "from-env", "other")), said
    assert "q1" not in explain(address, RuntimeError("bad password q1"))
    assert masked("postgresql://bob:x@[::1/db") == "postgresql://bob:***@[::1/db"  # even a malformed one


NEAR_MISSES = {
    "one slash": f"postgresql:/limbic:{SECRET}@db.example/team",
    "the scheme alone": "postgres:",
    "no slashes": f"postgresql:limbic:{SECRET}@db.example/team",
    "no colon": f"postgresql//limbic:{SECRET}@db.example/team",
    "capitals and one slash": f"POSTGRES:/limbic:{SECRET}@db.example/team",
    "a password after the scheme": f"postgres:{SECRET}@db.example/team",
    "in quotes": f"'postgresql://limbic:{SECRET}@db.example/team'",
    "a key=value string": f"host=db.example dbname=team user=limbic password={SECRET}",
    "no scheme": f"limbic:{SECRET}@db.example/team",
    "another scheme with one slash": f"mysql:/limbic:{SECRET}@db.example/team",
}


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_an_address_that_only_looks_like_one_is_refused_wherever_it_enters(tmp_path, limbic_home, case, capsys,
                                                                            monkeypatch):
    """``--db`` (a command, ``mcp --http``), ``db copy``, ``MemoryService.open``, ``MEMORY_FILE_PATH`` and the
    app's *Open*: one line, the password masked, exit code 2, and no local file made of it."""
    from limbic.core.cli.main import address_refusal, main
    from limbic.core.errors import ValidationError
    from limbic.core.service import MemoryService

    address = NEAR_MISSES[case]
    monkeypatch.chdir(tmp_path)
    for argv in (["--db", address, "stats"], ["-v", "--db", address, "mcp", "--http"],
                 ["db", "copy", address, str(tmp_path / "copy.db")]):
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("limbic: error: "), (argv, lines)
        assert SECRET not in out + err
    with pytest.raises(ValidationError) as refused:
        MemoryService.open(address, embedder=None)
    assert SECRET not in str(refused.value) and "\n" not in str(refused.value)
    monkeypatch.setenv("MEMORY_FILE_PATH", address)
    assert main(["mcp"]) == 2
    out, err = capsys.readouterr()
    assert err.strip().splitlines()[0].startswith("limbic: error: MEMORY_FILE_PATH: ") and SECRET not in out + err
    refusal = address_refusal(address)  # what the app's Open says in its status bar
    assert refusal is not None and SECRET not in refusal
    assert list(tmp_path.iterdir()) == [] and list(limbic_home.iterdir()) == []


def test_a_mistyped_address_given_to_the_app_or_a_server_creates_nothing(tmp_path, limbic_home):
    address = f"postgresql:/limbic:{SECRET}@db.example/team"
    for args in (["--db", address, "stats"], ["--db", address, "mcp", "--http"], ["--db", address]):
        done = _limbic(*args, cwd=tmp_path)
        assert done.returncode == 2, args
        assert done.stderr.strip().splitlines() == [
            "limbic: error: --db: postgresql:/limbic:***@db.example/team: not a PostgreSQL address; it starts with "
            "postgresql:// (a colon and two slashes), as in postgresql://user@host/database"]
        assert SECRET not in done.stdout + done.stderr
        assert list(tmp_path.iterdir()) == [] and _no_local_files(limbic_home)


@pytest.mark.parametrize("path", ["postgresql/memory.db", "postgres.db", "a=b.db", "./me@example.org/memory.db",
                                  "memory:v2.db"])
def test_file_paths_that_resemble_none_of_those_are_kept(path):
    from limbic.core.store.backend import checked_address

    assert checked_address(path) == str(Path(path))


def test_a_postgresql_url_in_memory_file_path_is_refused_for_the_db_option(tmp_path, limbic_home, monkeypatch, capsys):
    from limbic.core.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMORY_FILE_PATH", f"postgresql://limbic:{SECRET}@db.example/team")
    assert main(["mcp"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "limbic: error: MEMORY_FILE_PATH: postgresql://limbic:***@db.example/team: this variable names a file; give "
        "a PostgreSQL memory with --db"]
    assert list(tmp_path.iterdir()) == [] and list(limbic_home.iterdir()) == []


def _password_memory():
    from _pg import PASSWORD, password_address, server_or_skip

    server_or_skip()
    address = password_address()
    if address is None:
        pytest.skip("the PostgreSQL server of LIMBIC_TEST_PG_DSN is not ours to configure")
    return address, PASSWORD


@pytest.mark.parametrize("source", ["PGPASSWORD", "PGPASSFILE"])
def test_the_password_may_come_from_libpq_alone_and_a_team_server_serves_with_it(tmp_path, source):
    """The address without its password (as docs/team.md advises: a password in the URL shows in ``ps``), the
    password in ``PGPASSWORD`` or in a password file (``PGPASSFILE``, libpq's ``~/.pgpass``): a command, a token and
    ``mcp --http`` serving a call all work, and the password is never printed."""
    from _mcp_helpers import LIMBIC
    from _outage_helpers import RawClient, free_port

    address, password = _password_memory()
    env = {k: v for k, v in os.environ.items() if k not in ("PGPASSWORD", "PGPASSFILE")}
    env["LIMBIC_HOME"] = str(tmp_path / "home")
    if source == "PGPASSWORD":
        env["PGPASSWORD"] = password
    else:
        passfile = tmp_path / "pgpass"
        passfile.write_text(f"*:*:*:{urlsplit(address).username}:{password}\n", encoding="utf-8")
        passfile.chmod(0o600)  # libpq ignores a password file others may read
        env["PGPASSFILE"] = str(passfile)
    stats = _limbic("--db", address, "stats", "--json", cwd=tmp_path, env=env)
    assert stats.returncode == 0, stats.stderr
    token = _limbic("--db", address, "mcp", "token", "add", f"reader-{source.lower()}-{os.getpid()}", cwd=tmp_path,
                    env=env)
    assert token.returncode == 0, token.stderr
    server = subprocess.Popen([LIMBIC, "--db", address, "mcp", "--http", "--port", str(free_port())], cwd=tmp_path,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://"), server.stderr.read() if server.poll() is not None else url
        client = RawClient(url, token.stdout.splitlines()[0].strip())
        try:
            call = client.call("read_graph", {})
        finally:
            client.close()
        assert call.ok, call.text
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert password not in stats.stdout + stats.stderr + token.stdout + token.stderr + err
    without = _limbic("--db", address, "stats", cwd=tmp_path,
                      env={k: v for k, v in env.items() if k not in ("PGPASSWORD", "PGPASSFILE")})
    assert without.returncode == 2 and without.stderr.strip().endswith("refused the login: wrong user name or password")
