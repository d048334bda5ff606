"""The window stays on the screen and the graph gets the room, at 1366×768 and 1600×1000, on the real corpus.

The app runs in its own process on a screen of that size — an offscreen screen always, a real X server
(Xvfb, no window manager) too when it is installed — through ``tests/_gui_tour.py``: start, a search, a
selection, an edit, and a failure shown three ways at once (a status-bar line, the MCP panel, the failure
dialog), each with a text far longer than the screen is wide, and the Review list. After every step the window
(frame included) lies within the screen's free area, no dock shown is narrower than its minimum readable width,
the graph view has at least 55 % of the window's width, and no table shown (the results, the Review list, the MCP
log, the editor's observations) scrolls sideways; the results show at least seven rows, the editor at least six observation rows, and the MCP
panel its activity log without scrolling.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _explorer_helpers import start_xvfb

from limbic.gui.main_window import MIN_DOCK_WIDTH

pytestmark = pytest.mark.gui
TOUR = Path(__file__).with_name("_gui_tour.py")
SIZES = ((1366, 768), (1600, 1000))
GRAPH_SHARE = 0.55
STEPS = ("start", "search", "select", "edit", "failure", "tab:reviewDock")
EDITOR_ROWS = 6
RESULT_ROWS = 7
LOG_ROWS = 4


def _screen(kind: str, width: int, height: int, folder: Path):
    """Environment for the tour on a ``width`` × ``height`` screen; a started Xvfb process or ``None``."""
    if kind == "offscreen":
        config = folder / "screen.json"
        config.write_text(json.dumps({"screens": [{"name": "screen", "x": 0, "y": 0, "width": width, "height": height,
                                                   "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
        return {"QT_QPA_PLATFORM": f"offscreen:configfile={config}"}, None
    return start_xvfb(width, height)


@pytest.mark.parametrize("kind", ["offscreen", pytest.param("xvfb", marks=pytest.mark.skipif(
    shutil.which("Xvfb") is None, reason="Xvfb is not installed"))])
@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_window_fits_the_screen_and_the_graph_gets_the_room(tmp_path, corpus_db, kind, width, height):
    home = tmp_path / "home"
    home.mkdir()
    database = home / "memory.db"
    shutil.copy(corpus_db, database)
    screen, server = _screen(kind, width, height, tmp_path)
    env = {**os.environ, **screen, "LIMBIC_HOME": str(home)}
    try:
        done = subprocess.run([sys.executable, str(TOUR), "--db", str(database), "--steps", ",".join(STEPS)], env=env,
                              capture_output=True, text=True, timeout=180)
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    steps = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and [s.get("step") for s in steps] == [
        step.replace(":", "-") for step in STEPS], done.stdout + done.stderr[-3000:]
    for step in steps:
        x, y, w, h = step["frame"]
        sx, sy, sw, sh = step["screen"]
        assert (sw, sh) == (width, height) or kind == "xvfb"  # Xvfb: the whole screen is free (no panel)
        assert sx <= x and sy <= y and x + w <= sx + sw and y + h <= sy + sh, step  # on the screen, frame included
        assert step["minimum"][0] <= sw and step["minimum"][1] <= sh, step
        assert step["graph_share"] >= GRAPH_SHARE, step
        assert step["docks"] and all(dock >= MIN_DOCK_WIDTH for dock in step["docks"].values()), step
        assert not any(table["hscroll"] for table in step["tables"].values()), step
    by_step = {step["step"]: step for step in steps}
    assert by_step["search"]["tables"]["results"]["rows"] >= RESULT_ROWS, by_step["search"]
    assert by_step["edit"]["tables"]["observations"]["rows"] >= EDITOR_ROWS, by_step["edit"]
    failure = by_step["failure"]  # the MCP panel, with a failure shown: the log is still there, no scrolling
    assert failure["tables"]["mcp_log"]["rows"] >= LOG_ROWS and not failure["dock_scrolls"]["mcpDock"], failure
    assert "review" in by_step["tab-reviewDock"]["tables"], by_step["tab-reviewDock"]
    first = steps[0]
    print(f"\n{kind} {width}×{height}: window {first['frame'][2]}×{first['frame'][3]}, graph view "
          f"{first['graph_width']} px = {first['graph_share']:.0%} of the window width, docks {first['docks']}, "
          f"editor rows {by_step['edit']['tables']['observations']['rows']}, "
          f"MCP log rows {failure['tables']['mcp_log']['rows']}")
