"""The ``limbic`` command line: sub-commands over the memory graph (no Qt here).

The program's entry point is :func:`limbic.gui.launcher.main`, which runs the desktop app when no
sub-command is given and otherwise calls :func:`main` here. Sub-command modules each expose
``register(subparsers)`` and set ``handler=fn`` with ``fn(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from limbic.core import version
from limbic.core.cli.options import add_global_options
from limbic.core.errors import LimbicError, unstored
from limbic.core.store import scope
from limbic.core.store.transactions import commits_recorded
from limbic.core.validation import label

SUBCOMMAND_MODULES = ("stats", "data_commands", "search_commands", "model_commands", "mcp_commands",
                      "eval_commands", "learning_commands", "lifecycle_commands", "curation_commands",
                      "change_commands", "decision_commands", "db_commands")


def build_parser(prog: str = "limbic") -> argparse.ArgumentParser:
    """The argument parser with the global options and every sub-command."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Limbic Studio: explore, search and curate AI agents' memory graphs. "
        "Without a sub-command, opens the desktop app.",
    )
    add_global_options(parser)
    parser.add_argument("--version", action="version", version=f"limbic {version()}",
                        help="print the version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"{__package__}.{name}").register(subparsers)
    return parser


def address_refusal(text: str) -> str | None:
    """Why ``text`` cannot be a memory's address (see :func:`limbic.core.store.backend.checked_address`: one line,
    the password masked), else ``None``."""
    from limbic.core.store.backend import checked_address

    try:
        checked_address(text)
    except ValueError as exc:
        return str(exc)
    return None


def check_database_address(args: argparse.Namespace) -> str | None:
    """Check ``args.db`` in place (see :func:`limbic.core.store.backend.checked_address`); the error line to print
    when it is refused (nothing has been opened or created then), else ``None``."""
    if args.db is None:
        return None
    from limbic.core.store.backend import checked_address

    try:
        args.db = checked_address(args.db)
    except ValueError as exc:
        return f"limbic: error: --db: {exc}"
    return None


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed sub-command; a :class:`LimbicError` becomes a one-line message and exit code 2. A command
    that writes (its parser sets ``writes=True``) and stored nothing says so when the database failed it:
    ``nothing was stored: <why>`` (:func:`~limbic.core.errors.unstored`)."""
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr)
    refused = check_database_address(args)
    if refused:
        print(refused, file=sys.stderr)
        return 2
    committed: list[int] | None = None
    try:
        project = None if args.bound_project is None else label(args.bound_project, "project")
        with scope.bound(project), commits_recorded(getattr(args, "writes", False)) as committed:
            return int(args.handler(args) or 0)
    except LimbicError as exc:
        told = unstored(exc) if committed == [] else exc
        print(f"limbic: error: {told}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `limbic … | head` closed the pipe: stop quietly, like other Unix tools
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run a sub-command (``limbic --help`` lists them)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 1
    return run_command(args)
