"""The ``limbic`` program: the desktop app without a sub-command, the core CLI with one.

Qt is imported only when the app starts, so ``limbic mcp`` and the other sub-commands never load it.
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
    from limbic.gui.platform_check import XCB_EXIT_CODE, xcb_problem

    problem = xcb_problem()  # before Qt: a missing X11 library gets one clear line, not Qt's abort
    if problem:
        print(problem, file=sys.stderr)
        return XCB_EXIT_CODE
    from limbic.gui.app import run

    return int(run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
