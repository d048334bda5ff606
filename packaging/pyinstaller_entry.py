"""Entry script of the PyInstaller bundle (packaging/limbic.spec): the same ``main`` as the ``limbic`` command
(pyproject.toml ``[project.scripts]``): the desktop app without a sub-command, the CLI with one."""

import multiprocessing
import sys

from limbic.gui.launcher import main

if __name__ == "__main__":
    # Large graph layouts run in a worker process; a frozen bundle must let that process start.
    multiprocessing.freeze_support()
    sys.exit(main())
