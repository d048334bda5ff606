"""``--db`` takes a database file; a URL is refused with one line and creates nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from limbic.core.paths import database_address


def test_a_path_is_kept_and_home_expanded(tmp_path):
    assert database_address(str(tmp_path / "m.db")) == str(tmp_path / "m.db")
    assert database_address("~/m.db") == os.path.expanduser("~/m.db")


@pytest.mark.parametrize("address", ["ftp://x", "mysql://user:s3cret@localhost/x", "HTTP://h/p", ""])
def test_urls_and_empty_addresses_are_refused(address):
    with pytest.raises(ValueError) as refused:
        database_address(address)
    assert "s3cret" not in str(refused.value)


def test_the_cli_refuses_a_url_in_one_line_and_creates_nothing(tmp_path):
    done = subprocess.run([sys.executable, "-m", "limbic.gui.launcher", "--db", "postgresql://u:s3cret@host/x", "stats"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "limbic: error: --db: postgresql:// addresses are not supported; give the path of a database file"]
    assert "s3cret" not in done.stderr + done.stdout
    assert list(tmp_path.iterdir()) == []


def test_the_app_refuses_a_url_before_qt_starts(tmp_path):
    done = subprocess.run([sys.executable, "-m", "limbic.gui.launcher", "--db", "ftp://x"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.strip().startswith("limbic: error: --db: ftp://")
    assert list(tmp_path.iterdir()) == []
