"""The xcb check before Qt starts: which platforms it applies to, what it reports, and the real
``limbic`` entry point exiting with one line (a stand-in dynamic loader plays the missing library)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from limbic.gui.platform_check import (
    XCB_EXIT_CODE,
    XCB_LIBRARY_PACKAGES,
    missing_xcb_libraries,
    uses_xcb,
    xcb_problem,
)


def loader_without(*absent: str):
    def load(soname: str) -> object:
        if soname in absent:
            raise OSError(f"{soname}: cannot open shared object file: No such file or directory")
        return object()
    return load


@pytest.mark.parametrize(("environ", "platform", "expected"), [
    ({"QT_QPA_PLATFORM": "xcb"}, "linux", True),
    ({"QT_QPA_PLATFORM": "xcb:display=:1"}, "linux", True),
    ({}, "linux", True),
    ({"WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}, "linux", False),
    ({"QT_QPA_PLATFORM": "offscreen"}, "linux", False),
    ({"QT_QPA_PLATFORM": "wayland;xcb"}, "linux", False),
    ({}, "darwin", False),
    ({}, "win32", False),
])
def test_the_check_applies_only_where_qt_starts_xcb(environ, platform, expected):
    assert uses_xcb(environ, platform) is expected


def test_missing_libraries_are_named_with_their_debian_packages():
    load = loader_without("libxcb-cursor.so.0", "libxcb-keysyms.so.1")
    assert missing_xcb_libraries(load) == ["libxcb-cursor.so.0", "libxcb-keysyms.so.1"]
    line = xcb_problem({"QT_QPA_PLATFORM": "xcb"}, load, "linux")
    assert line is not None and "\n" not in line
    assert "libxcb-cursor.so.0, libxcb-keysyms.so.1" in line
    assert "sudo apt install libxcb-cursor0 libxcb-keysyms1 " in line


def test_nothing_to_report_when_everything_loads_or_xcb_is_not_used():
    assert xcb_problem({"QT_QPA_PLATFORM": "xcb"}, loader_without(), "linux") is None
    everything_missing = loader_without(*XCB_LIBRARY_PACKAGES)
    assert xcb_problem({"QT_QPA_PLATFORM": "offscreen"}, everything_missing, "linux") is None


def test_limbic_exits_with_one_line_before_creating_the_qapplication(tmp_path):
    database = tmp_path / "memory.db"
    script = textwrap.dedent(f"""
        import ctypes, sys
        real = ctypes.CDLL
        def load(name, *args, **kwargs):
            if name == "libxcb-cursor.so.0":
                raise OSError(name + ": cannot open shared object file")
            return None if name in {sorted(XCB_LIBRARY_PACKAGES)!r} else real(name, *args, **kwargs)
        ctypes.CDLL = load
        from limbic.gui.launcher import main
        code = main(["--no-mcp", "--db", {str(database)!r}])
        assert "PySide6.QtWidgets" not in sys.modules, "Qt was started"
        sys.exit(code)
    """)
    environ = {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": ":0"}
    done = subprocess.run([sys.executable, "-c", script], env=environ, capture_output=True, text=True, timeout=120)
    assert done.returncode == XCB_EXIT_CODE, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "sudo apt install libxcb-cursor0" in lines[0]
    assert not database.exists()
