"""The options every ``limbic`` command line takes before its sub-command (or with none: the desktop app).

Kept apart from :mod:`limbic.core.cli.main` and free of heavy imports, so that the launcher can read the
app's options before anything but Qt is loaded (``gui/launcher.py``).
"""

from __future__ import annotations

import argparse


def add_global_options(parser: argparse.ArgumentParser) -> None:
    """``--db ADDRESS``, ``--project NAME`` (stored as ``bound_project``) and ``-v/--verbose`` on ``parser``."""
    parser.add_argument("--db", metavar="ADDRESS", help="the memory: a database file, or a PostgreSQL URL "
                        "postgresql://user@host/database (default: the embedded file in the user data dir)")
    parser.add_argument("--project", dest="bound_project", metavar="NAME",
                        help="bind a sub-command to a project: it sees and changes that project's memories and the "
                        "global ones only (docs/lifecycle.md \"Project scope\")")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
