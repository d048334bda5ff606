"""The first window comes before the heavy modules: ``limbic`` without a sub-command reads its options without the
CLI, shows the starting window with Qt alone, and only then imports the app (numpy, pyqtgraph, igraph, the store,
onnxruntime); the CLI still gets every other command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from limbic.gui.launcher import app_arguments

HEAVY = ("numpy", "pyqtgraph", "igraph", "onnxruntime", "limbic.core.store", "limbic.core.service", "limbic.gui.app")

# The real launcher, offscreen; the starting window's show() reports what is imported at that moment, then ends.
PROBE = r"""
import json, os, sys
from limbic.gui import starting

def shown(window):
    heavy = [name for name in HEAVY if name in sys.modules]
    print(json.dumps({"title": window.windowTitle(), "text": window.label.text(), "heavy": heavy}), flush=True)
    os._exit(0)

starting.StartingWindow.show = shown
from limbic.gui.launcher import main
main(sys.argv[1:])
"""


def _launch_probe(tmp_path, *args: str) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LIMBIC_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{PROBE}", *args], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    line = next((x for x in done.stdout.splitlines() if x.startswith("{")), None)
    assert line is not None, done.stderr[-3000:]
    return json.loads(line)


def test_the_starting_window_shows_before_the_heavy_modules_are_imported(tmp_path):
    shown = _launch_probe(tmp_path, "--no-mcp")
    assert shown["title"] == "Limbic Studio" and shown["text"].startswith("Starting")
    assert shown["heavy"] == []


def test_with_a_database_file_the_app_modules_still_come_after_the_window(tmp_path):
    shown = _launch_probe(tmp_path, "--db", str(tmp_path / "memory.db"), "--no-mcp", "--mcp-port", "9")
    assert not {"limbic.gui.app", "pyqtgraph", "igraph", "onnxruntime", "limbic.core.service"} & set(shown["heavy"])
    assert not (tmp_path / "memory.db").exists()  # nothing opened or created before the window


@pytest.mark.parametrize("argv", [["stats"], ["--db", "x.db", "search", "q"], ["--help"], ["--version"],
                                  ["--mcp-port", "not a port"], ["--no-such-option"]])
def test_everything_but_the_app_goes_to_the_cli(argv):
    assert app_arguments(argv) is None


def test_the_apps_own_options_are_read_without_the_cli():
    args = app_arguments(["--db", "memory.db", "--no-mcp", "--mcp-port", "8800", "-v"])
    assert (args.db, args.no_mcp, args.mcp_port, args.verbose) == ("memory.db", True, 8800, True)
    assert app_arguments([]).db is None


def test_app_modules_that_cannot_be_imported_end_the_app_with_one_line(tmp_path):
    broken = "from limbic.gui import starting\nstarting.APP_MODULE = 'limbic.gui.no_such_module'\n" \
             "from limbic.gui.launcher import main\nmain(['--no-mcp'])"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LIMBIC_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", broken], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1
    told = [line for line in done.stderr.splitlines() if line.startswith("limbic:")]
    assert told == ["limbic: error: the app could not start: ModuleNotFoundError: No module named "
                    "'limbic.gui.no_such_module'"]
    assert "Traceback" not in done.stderr
