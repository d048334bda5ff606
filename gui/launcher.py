"""The ``limbic`` program: the desktop app without a sub-command, the core CLI with one.

Qt is imported only when the app starts, so ``limbic mcp`` and the other sub-commands never load it.
Before Qt, the app imports pydantic's validators: once PySide6 is loaded, its import hook reads the
source of every module imported after it (``inspect.getsource``, which asks the module for
``__wrapped__``); pydantic's modules answer that through a module ``__getattr__`` that imports
``pydantic._internal._validators`` — which fails with "partially initialized module" when that
module is being imported at the same moment (by the MCP server's start-up, while another thread
imports too). Loaded first, it is complete before any thread can ask.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from limbic.core.cli.main import build_parser, check_database_address, run_command
from limbic.core.mcp.config import DEFAULT_PORT


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    app = parser.add_argument_group("desktop app (no sub-command)")
    app.add_argument("--no-mcp", action="store_true", help="do not start the embedded MCP HTTP server")
    app.add_argument("--mcp-port", type=int, default=None, metavar="P", help=f"port of the embedded MCP server (default {DEFAULT_PORT})")
    args = parser.parse_args(argv)
    if getattr(args, "handler", None):
        return run_command(args)
    refused = check_database_address(args)
    if refused:
        print(refused, file=sys.stderr)
        return 2
    import pydantic._internal._validators  # noqa: F401 - before Qt: see the module docstring

    from limbic.gui.platform_check import XCB_EXIT_CODE, xcb_problem

    problem = xcb_problem()  # before Qt: a missing X11 library gets one clear line, not Qt's abort
    if problem:
        print(problem, file=sys.stderr)
        return XCB_EXIT_CODE
    from limbic.gui.app import run

    run(args)  # ends the process when the app quits


if __name__ == "__main__":
    sys.exit(main())
