"""The Linux bundle's tarball (packaging/bundle.py), on a stand-in for the PyInstaller folder: its name, what it
holds, and its install note's commands run as written on a home of their own. Building and running the real
bundle takes minutes: ``python3 dev.py bundle --check`` does that, outside the test suite."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from limbic.core import version

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("limbic_bundle", REPO / "packaging" / "bundle.py")
assert _spec is not None and _spec.loader is not None
bundle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bundle)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the bundle is built for Linux")


def test_arguments():
    assert bundle.parse_args([]).check is False
    assert bundle.parse_args(["--check"]).check is True
    with pytest.raises(SystemExit) as stopped:
        bundle.parse_args(["--fast"])
    assert stopped.value.code == 2


def test_names_follow_the_project_version():
    assert bundle.project_version() == version()
    assert bundle.tarball_name("0.1.0", "x86_64") == "limbic-studio-0.1.0-linux-x86_64.tar.gz"
    assert bundle.folder_name("0.1.0") == "limbic-studio-0.1.0"


def _stand_in_tarball(tmp_path: Path, program: str, version: str) -> Path:
    """The tarball of a stand-in bundle folder: the ``limbic`` program given, a library and a link to it."""
    folder = tmp_path / "dist" / "limbic"
    (folder / "_internal").mkdir(parents=True)
    (folder / "limbic").write_text(program)
    (folder / "limbic").chmod(0o755)
    (folder / "_internal" / "libexample.so.1").write_bytes(b"\x7fELF")
    (folder / "_internal" / "libexample.so").symlink_to("libexample.so.1")
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    return bundle.write_tarball(folder, downloads, version, "x86_64")


@pytest.fixture
def tarball(tmp_path) -> Path:
    return _stand_in_tarball(tmp_path, "#!/bin/sh\necho limbic 9.9.9\n", "9.9.9")


def test_tarball_holds_the_bundle_the_desktop_entry_the_icon_and_the_note(tarball):
    assert tarball.name == "limbic-studio-9.9.9-linux-x86_64.tar.gz"
    assert not list(tarball.parent.glob("*.partial"))
    top = "limbic-studio-9.9.9"
    with tarfile.open(tarball) as tar:
        members = {member.name: member for member in tar.getmembers()}
        assert set(members) == {top, f"{top}/limbic", f"{top}/limbic/limbic", f"{top}/limbic/_internal",
                                f"{top}/limbic/_internal/libexample.so.1", f"{top}/limbic/_internal/libexample.so",
                                f"{top}/limbic-studio.desktop", f"{top}/limbic-studio.svg", f"{top}/INSTALL.txt"}
        assert members[top].isdir() and members[f"{top}/limbic/limbic"].mode & 0o111 == 0o111
        assert members[f"{top}/limbic/_internal/libexample.so"].linkname == "libexample.so.1"
        assert {(m.uid, m.gid, m.uname) for m in members.values()} == {(0, 0, "root")}
        read = {name: tar.extractfile(f"{top}/{name}").read() for name in bundle.FILES}
    assert read["limbic-studio.desktop"] == (REPO / "packaging" / "limbic-studio.desktop").read_bytes()
    assert read["limbic-studio.svg"] == (REPO / "resources" / "limbic.svg").read_bytes()
    assert read["INSTALL.txt"].decode() == bundle.install_note("9.9.9", "x86_64")


def test_a_folder_without_its_program_writes_no_tarball(tmp_path):
    (tmp_path / "limbic").mkdir()
    with pytest.raises(FileNotFoundError, match="build the bundle first"):
        bundle.write_tarball(tmp_path / "limbic", tmp_path, "9.9.9", "x86_64")
    assert list(tmp_path.iterdir()) == [tmp_path / "limbic"]


def test_the_install_note_installs_for_the_user(tarball, tmp_path):
    """The note's indented lines, run in order from the folder holding the tarball, with HOME elsewhere."""
    home = tmp_path / "home"
    home.mkdir()
    commands = [line.strip() for line in bundle.install_note("9.9.9", "x86_64").splitlines()
                if line.startswith("    ")]
    done = subprocess.run(["bash", "-euc", "\n".join(commands)], cwd=tarball.parent, capture_output=True, text=True,
                          env={**os.environ, "HOME": str(home)})
    assert done.returncode == 0, done.stderr
    program = home / ".local" / "opt" / "limbic-studio-9.9.9" / "limbic" / "limbic"
    on_path = home / ".local" / "bin" / "limbic"
    assert on_path.resolve() == program
    assert subprocess.run([str(on_path)], capture_output=True, text=True).stdout == "limbic 9.9.9\n"
    entry = (home / ".local" / "share" / "applications" / "limbic-studio.desktop").read_text()
    assert f"\nExec={program}\n" in entry and f"\nTryExec={program}\n" in entry
    assert "Icon=limbic-studio\n" in entry
    icon = home / ".local" / "share" / "icons" / "hicolor" / "scalable" / "apps" / "limbic-studio.svg"
    assert icon.read_bytes() == (REPO / "resources" / "limbic.svg").read_bytes()


STAND_IN = """#!{python}
import json, sys
if sys.argv[1:] == ["--version"]:
    print("limbic {version}")
elif sys.argv[1:] == ["mcp"]:  # answers initialize and tools/list, one JSON-RPC message a line
    for line in sys.stdin:
        message = json.loads(line)
        results = {{"initialize": {{"serverInfo": {{"name": "stand-in", "version": "1"}}}},
                   "tools/list": {{"tools": [{{"name": "one"}}, {{"name": "two"}}]}}}}
        if message.get("method") in results:
            print(json.dumps({{"jsonrpc": "2.0", "id": message["id"], "result": results[message["method"]]}}), flush=True)
else:
    sys.exit(3)
"""


def test_the_checks_print_one_line_each_and_fail_when_one_fails(tmp_path, capsys):
    """A stand-in program that knows only ``--version`` and ``mcp`` over stdio: those checks pass, the others fail
    with the reason, and the run fails."""
    version = bundle.project_version()
    tarball = _stand_in_tarball(tmp_path, STAND_IN.format(python=sys.executable, version=version), version)
    assert bundle.run_checks(tarball) is False
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "ok    tarball", "ok    limbic --version", "FAIL  limbic model install", "FAIL  limbic embed",
        "ok    limbic mcp (stdio)", "FAIL  app + MCP over HTTP"]
    assert "no model weights" in lines[0] and f"limbic {version}, also through a link" in lines[1]
    assert "exit 3" in lines[2] and "tools/list: 2 tools; exit 0 when stdin closed" in lines[4]
    assert "the app ended with 3 before serving" in lines[5]
