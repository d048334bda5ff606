"""Entry script of the PyInstaller bundle (packaging/limbic.spec): the same ``main`` as the ``limbic`` command
(pyproject.toml ``[project.scripts]``): the desktop app without a sub-command, the CLI with one.

In the bundle ``sys.executable`` is the ``limbic`` program itself, so the two ways the code starts "this Python"
again are answered here as the interpreter answers them: ``limbic -m MODULE ARGS…`` runs a bundled module as
``__main__`` (``limbic.core.processes.module_command``: the model installer's ``pip download``) and
``limbic -c CODE ARGS…`` runs the code (``limbic.gui.app.relaunch_arguments``: *Open database…* starts the app
again on the other memory). ``sys.argv`` is set as ``python -m`` and ``python -c`` set it.
"""

import multiprocessing
import runpy
import sys


def run_as_interpreter(argv: list[str]) -> bool:
    """Run ``argv`` (``sys.argv``) when it is an interpreter's ``-m MODULE …`` or ``-c CODE …``; False when not."""
    if len(argv) < 3 or argv[1] not in ("-m", "-c"):
        return False
    if argv[1] == "-m":
        sys.argv = argv[2:]
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
    else:
        sys.argv = ["-c", *argv[3:]]
        exec(compile(argv[2], "<string>", "exec"), {"__name__": "__main__"})
    return True


if __name__ == "__main__":
    # Large graph layouts run in a worker process; a frozen bundle must let that process start.
    multiprocessing.freeze_support()
    if not run_as_interpreter(sys.argv):
        from limbic.gui.launcher import main

        sys.exit(main())
