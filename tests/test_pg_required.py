"""The suite never skips the PostgreSQL half silently: with no server to use, a local run skips it and says why
in one line of its summary; under CI (``CI=true``, as ``.ci/run`` sets) the same run fails with the reason."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
NO_SERVER = "postgresql://nobody@127.0.0.1:1/nothing"


def _pytest(**env: str) -> subprocess.CompletedProcess:
    variables = {k: v for k, v in os.environ.items() if k not in ("CI", "LIMBIC_REQUIRE_PG", "PYTEST_XDIST_WORKER")}
    return subprocess.run([sys.executable, "-m", "pytest", str(TESTS / "test_database.py"), "-q", "-n0",
                           "-p", "no:cacheprovider", "-k", "closed_database"], cwd=TESTS.parent,
                          capture_output=True, text=True, timeout=300,
                          env=variables | {"LIMBIC_TEST_PG_DSN": NO_SERVER} | env)


@pytest.mark.parametrize("ci", [False, True])
def test_a_postgresql_that_cannot_start_is_said_and_fails_under_ci(ci):
    done = _pytest(CI="true") if ci else _pytest()
    said = [line for line in done.stdout.splitlines() if "no PostgreSQL for the tests" in line]
    if ci:
        assert done.returncode != 0 and said and "CI runs both backends" in done.stdout
    else:
        assert done.returncode == 0
        assert [line for line in said if line.startswith("limbic: 1 PostgreSQL tests skipped")], done.stdout
        assert "Connection refused" in said[-1]
