"""The ``limbic`` program: the desktop app without a sub-command, the core CLI with one.

Qt is imported only when the app starts, so ``limbic mcp`` and the other sub-commands never load it. The
app's command line is read by a parser of its options alone (:func:`app_arguments`), so the starting
window (``gui/starting.py``) shows before the store, numpy or the CLI's sub-commands are imported; anything
else on the command line (a sub-command, ``--help``, ``--version``, a mistake) goes to the CLI's parser.
A ``--db`` address is checked before Qt starts (the check imports the store).

Before Qt, the app imports pydantic's validators: once PySide6 is loaded, its import hook reads the
source of every module imported after it (``inspect.getsource``, which asks the module for
``__wrapped__``); pydantic's modules answer that through a module ``__getattr__`` that imports
``pydantic._internal._validators`` — which fails with "partially initialized module" when that
module is being imported at the same moment (by the MCP server's start-up, while another thread
imports too). Loaded first, it is complete before any thread can ask.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from limbic.core.cli.options import add_global_options


class _NotTheApp(Exception):
    """The command line is not one the app's parser takes."""


class _AppParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _NotTheApp(message)


def add_app_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, default_port: int | None = None) -> None:
    """``--no-mcp`` and ``--mcp-port P``: the desktop app's own options (``default_port`` named in the help)."""
    parser.add_argument("--no-mcp", action="store_true", help="do not start the embedded MCP HTTP server")
    parser.add_argument("--mcp-port", type=int, default=None, metavar="P", help="port of the embedded MCP server"
                        + ("" if default_port is None else f" (default {default_port})"))


def app_arguments(argv: Sequence[str] | None) -> argparse.Namespace | None:
    """The app's options when ``argv`` holds only those (and the global ``--db``, ``--project``, ``-v``), else
    ``None``: a sub-command, ``--help``, ``--version`` or a mistake, for the CLI's parser to handle."""
    parser = _AppParser(prog="limbic", add_help=False)
    add_global_options(parser)
    add_app_options(parser)
    try:
        args, rest = parser.parse_known_args(argv)
    except _NotTheApp:
        return None
    return None if rest else args


def main(argv: Sequence[str] | None = None) -> int:
    args = app_arguments(argv)
    if args is None:
        from limbic.core.cli.main import build_parser, run_command
        from limbic.core.mcp.config import DEFAULT_PORT

        parser = build_parser()
        add_app_options(parser.add_argument_group("desktop app (no sub-command)"), DEFAULT_PORT)
        args = parser.parse_args(argv)
        if getattr(args, "handler", None):
            return run_command(args)
    if args.db is not None:
        from limbic.core.cli.main import check_database_address

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
    from limbic.gui.starting import launch

    launch(args)  # ends the process when the app quits


if __name__ == "__main__":
    sys.exit(main())
