#!/usr/bin/env python3
"""The Linux bundle of Limbic Studio: ``python3 dev.py bundle`` builds it, ``python3 dev.py bundle --check`` also
runs it.

``bundle``: PyInstaller builds the one-folder bundle ``dist/limbic/`` (packaging/limbic.spec) in the build
environment ``build/bundle-venv`` (the project and PyInstaller, nothing else; re-installed when pyproject.toml
changes), then :func:`write_tarball` writes ``dist/limbic-studio-<version>-linux-<arch>.tar.gz``: one folder
``limbic-studio-<version>/`` holding the bundle (``limbic/``, its program ``limbic/limbic``), the desktop entry,
the icon and ``INSTALL.txt`` (:func:`install_note`). No model is bundled: the app installs it (the bundled pip
downloads the official weights, the bundle converts them).

``bundle --check``: the same built in a fresh virtual environment (made in a temporary folder, removed
afterwards), then the tarball unpacked in a temporary folder and its ``limbic`` run on a home of its own
(``LIMBIC_HOME``): one line per check (:data:`CHECKS`), exit status 1 when one fails. The checks talk to the
program as its users do: JSON-RPC over the pipes of ``limbic mcp``, HTTP with the bearer token to the app's
embedded server. After each, no process of the bundle may be left.

Standard library only: it runs on the ``python3`` that runs dev.py (3.11 or newer, for tomllib).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import tomllib
import urllib.request
import venv
from collections.abc import Callable
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "packaging" / "limbic.spec"
DESKTOP_ENTRY = ROOT / "packaging" / "limbic-studio.desktop"
ICON = ROOT / "resources" / "limbic.svg"
DIST = ROOT / "dist"
BUILD_VENV = ROOT / "build" / "bundle-venv"
PROGRAM = "limbic"  # the bundle's folder and its program: dist/limbic/limbic
FILES = ("limbic-studio.desktop", "limbic-studio.svg", "INSTALL.txt")  # beside the bundle folder in the tarball
MODEL_SUFFIXES = (".onnx", ".onnx_data", ".safetensors")  # weights never ship in the tarball
PROTOCOL = "2025-06-18"  # the MCP protocol version the checks ask for
START_SECONDS = 180.0  # the app's MCP port must open within this (first run: the sample memory is loaded)
ANSWER_SECONDS = 120.0  # one JSON-RPC answer
QUIT_SECONDS = 30.0  # the app ends after SIGTERM, the stdio server after its stdin closes


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 dev.py bundle",
                                     description="Build the Linux bundle of Limbic Studio and its tarball in dist/.")
    parser.add_argument("--check", action="store_true",
                        help="build in a fresh virtual environment, then run the bundled program and check it")
    return parser.parse_args(argv)


def project_version() -> str:
    """The version in pyproject.toml (``0.1.0``)."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def folder_name(version: str) -> str:
    """The one top-level folder of the tarball."""
    return f"limbic-studio-{version}"


def tarball_name(version: str, arch: str) -> str:
    """``limbic-studio-<version>-linux-<arch>.tar.gz``; ``arch`` as ``platform.machine()`` names it (``x86_64``)."""
    return f"{folder_name(version)}-linux-{arch}.tar.gz"


def install_note(version: str, arch: str) -> str:
    """INSTALL.txt: where to unpack, the command on PATH, the menu entry. Its indented lines are shell commands,
    run in this order from the folder holding the tarball (tests/test_bundle.py runs them)."""
    folder = folder_name(version)
    return f"""Limbic Studio {version} for Linux ({arch})

The folder {PROGRAM}/ is the whole application: {PROGRAM}/{PROGRAM} opens the desktop app, and with a command
it is the command line ({PROGRAM}/{PROGRAM} --help). It needs no Python and no administrator rights.
The embedding model is not included: the app offers to install it on first start (status bar,
"Install model"), or run {PROGRAM}/{PROGRAM} model install. It downloads the official weights once.
Under X11, Qt needs the xcb libraries of your distribution: if some are missing, {PROGRAM} names them
and the command that installs them.

Install for your user. Unpack where your own programs live, for example ~/.local/opt:

    mkdir -p ~/.local/opt
    tar -xzf {tarball_name(version, arch)} -C ~/.local/opt
    cd ~/.local/opt/{folder}

Put the limbic command on your PATH (~/.local/bin is on it on most distributions):

    mkdir -p ~/.local/bin
    ln -sfn "$PWD/{PROGRAM}/{PROGRAM}" ~/.local/bin/limbic

Add Limbic Studio to the applications menu, with its icon:

    mkdir -p ~/.local/share/applications
    sed "s|=limbic$|=$PWD/{PROGRAM}/{PROGRAM}|" limbic-studio.desktop > ~/.local/share/applications/limbic-studio.desktop
    install -Dm644 limbic-studio.svg ~/.local/share/icons/hicolor/scalable/apps/limbic-studio.svg

To uninstall, delete ~/.local/opt/{folder}, ~/.local/bin/limbic and those two files.
Your memory, models and settings stay in your user data folders (LIMBIC_HOME=DIR puts them under DIR).
"""


def tarball_files(version: str, arch: str) -> dict[str, bytes]:
    """The tarball's :data:`FILES` beside the bundle folder: name in the top folder → content."""
    contents = (DESKTOP_ENTRY.read_bytes(), ICON.read_bytes(), install_note(version, arch).encode("utf-8"))
    return dict(zip(FILES, contents, strict=True))


def _as_root(member: tarfile.TarInfo) -> tarfile.TarInfo:
    member.uid = member.gid = 0
    member.uname = member.gname = "root"
    return member


def write_tarball(bundle: Path, directory: Path, version: str, arch: str) -> Path:
    """Write ``directory/<tarball_name>``: ``<folder_name>/`` holding ``bundle`` as ``limbic/`` (links and modes
    kept, owner root) and :func:`tarball_files`. Written under a temporary name, then renamed. Returns its path.
    Raises FileNotFoundError when ``bundle/limbic`` is missing."""
    if not (bundle / PROGRAM).is_file():
        raise FileNotFoundError(f"no program {bundle / PROGRAM}: build the bundle first")
    target = directory / tarball_name(version, arch)
    partial = target.with_name(target.name + ".partial")
    top = folder_name(version)
    now = int(time.time())
    with tarfile.open(partial, "w:gz", compresslevel=6) as tar:
        folder = tarfile.TarInfo(top)
        folder.type, folder.mode, folder.mtime = tarfile.DIRTYPE, 0o755, now
        tar.addfile(_as_root(folder))
        tar.add(bundle, arcname=f"{top}/{PROGRAM}", filter=_as_root)
        for name, content in tarball_files(version, arch).items():
            member = tarfile.TarInfo(f"{top}/{name}")
            member.size, member.mode, member.mtime = len(content), 0o644, now
            tar.addfile(_as_root(member), io.BytesIO(content))
    partial.replace(target)
    return target


def run(*command: str | Path, env: dict | None = None) -> None:
    print("+", " ".join(str(c) for c in command), flush=True)
    subprocess.run([str(c) for c in command], check=True, cwd=ROOT, env=env)


def build_environment(directory: Path, *, fresh: bool) -> Path:
    """The Python of a virtual environment at ``directory`` holding the project (``pip install .[packaging]``:
    its dependencies and PyInstaller); ``fresh`` makes it anew, else it is re-installed when pyproject.toml
    changed since."""
    python = directory / "bin" / "python"
    stamp = directory / ".installed-pyproject-sha256"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if fresh and directory.exists():
        shutil.rmtree(directory)
    if not python.exists():
        print(f"creating {directory}", flush=True)
        venv.EnvBuilder(with_pip=True).create(directory)
    if not stamp.exists() or stamp.read_text() != digest:
        run(python, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
        run(python, "-m", "pip", "install", "--quiet", ".[packaging]")
        stamp.write_text(digest)
    return python


def build(python: Path) -> Path:
    """Build ``dist/limbic/`` with PyInstaller run by ``python``, then the tarball; returns the tarball's path."""
    run(python, "-m", "PyInstaller", SPEC, "--noconfirm", "--log-level", "WARN", "--distpath", DIST,
        "--workpath", ROOT / "build" / "pyinstaller")
    print("writing the tarball", flush=True)
    return write_tarball(DIST / PROGRAM, DIST, project_version(), platform.machine())


# --- the checks -------------------------------------------------------------------------------------------


class CheckFailed(Exception):
    """A check's failure; its message is printed on the check's line."""


class Bundle:
    """The unpacked tarball and a home of its own; every process started through it is one it can find again."""

    def __init__(self, tarball: Path, work: Path) -> None:
        self.tarball = tarball
        self.work = work
        self.home = work / "home"
        self.home.mkdir()
        self.folder = work / "unpacked" / folder_name(project_version())
        self.program = self.folder / PROGRAM / PROGRAM

    def env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, "LIMBIC_HOME": str(self.home), **extra}

    def run(self, *args: str, timeout: float = ANSWER_SECONDS) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.program), *args], env=self.env(), capture_output=True, text=True,
                              timeout=timeout, start_new_session=True)

    def start(self, *args: str, log: str, **extra: str) -> subprocess.Popen:
        """The program started in a session of its own, its standard error written to ``work/log``."""
        with open(self.work / log, "wb") as errors:
            return subprocess.Popen([str(self.program), *args], env=self.env(**extra), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=errors, start_new_session=True)

    def log_tail(self, log: str) -> str:
        lines = (self.work / log).read_text(encoding="utf-8", errors="replace").strip().splitlines()
        return " | ".join(lines[-3:])

    def left_behind(self) -> list[int]:
        """Processes whose program lies in the unpacked folder (Linux: read from /proc)."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if Path(os.readlink(entry / "exe")).is_relative_to(self.folder):
                        found.append(int(entry.name))
                except OSError:  # ended meanwhile, or not ours to read
                    continue
        return found


def check_tarball(bundle: Bundle) -> str:
    with tarfile.open(bundle.tarball) as tar:
        names = tar.getnames()
    (bundle.work / "unpacked").mkdir()
    subprocess.run(["tar", "-xzf", str(bundle.tarball), "-C", str(bundle.work / "unpacked")], check=True)
    top = folder_name(project_version())
    expected = {f"{top}/{name}" for name in (f"{PROGRAM}/{PROGRAM}", *FILES)}
    missing = sorted(expected - set(names))
    outside = [name for name in names if name != top and not name.startswith(top + "/")]
    weights = [name for name in names if name.endswith(MODEL_SUFFIXES)]
    if missing or outside or weights:
        raise CheckFailed(f"missing {missing}, outside {top}/ {outside[:3]}, model weights {weights[:3]}")
    if not os.access(bundle.program, os.X_OK):
        raise CheckFailed(f"{PROGRAM}/{PROGRAM} is not executable")
    size = sum(path.stat().st_size for path in bundle.folder.rglob("*") if path.is_file() and not path.is_symlink())
    return (f"{bundle.tarball.name}, {bundle.tarball.stat().st_size / 1e6:.0f} MB packed, "
            f"{size / 1e6:.0f} MB unpacked, {len(names)} entries, no model weights")


def check_version(bundle: Bundle) -> str:
    """``limbic --version``, run as unpacked and through a symbolic link (as INSTALL.txt puts it on PATH)."""
    link = bundle.work / "bin" / "limbic"
    link.parent.mkdir()
    link.symlink_to(bundle.program)
    expected = f"limbic {project_version()}"
    for program in (bundle.program, link):
        done = subprocess.run([str(program), "--version"], env=bundle.env(), capture_output=True, text=True,
                              timeout=ANSWER_SECONDS)
        if done.returncode != 0 or done.stdout.strip() != expected:
            raise CheckFailed(f"{program}: exit {done.returncode}, printed {done.stdout.strip()!r} (expected "
                              f"{expected!r}) {done.stderr.strip()[-300:]}")
    return f"{expected}, also through a link on PATH"


def check_model_install(bundle: Bundle) -> str:
    started = time.monotonic()
    done = bundle.run("model", "install", "--int8", timeout=600)
    if done.returncode != 0:
        raise CheckFailed(f"exit {done.returncode}: {(done.stderr or done.stdout).strip()[-400:]}")
    verified = bundle.run("model", "verify")
    if verified.returncode != 0:
        raise CheckFailed(f"model verify, exit {verified.returncode}: {verified.stdout.strip()[-300:]}")
    return (f"the bundled pip fetched the official weights, converted to ONNX int8 and verified "
            f"in {time.monotonic() - started:.0f} s")


def check_embed(bundle: Bundle) -> str:
    done = bundle.run("embed", "why did we stop using Airflow", "--json")
    if done.returncode != 0:
        raise CheckFailed(f"exit {done.returncode}: {done.stderr.strip()[-300:]}")
    answer = json.loads(done.stdout)
    vector = answer["vectors"][0]
    norm = sum(value * value for value in vector) ** 0.5
    if len(vector) != answer["dim"] or abs(norm - 1) > 1e-3:
        raise CheckFailed(f"{len(vector)} values for dim {answer['dim']}, norm {norm:.4f}")
    return f"{answer['model']}: {answer['dim']} dimensions, norm {norm:.4f}"


def _initialize(request_id: int) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                       "clientInfo": {"name": "limbic-bundle-check", "version": project_version()}}}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


def _result(reply: dict, what: str) -> dict:
    if "result" not in reply:
        raise CheckFailed(f"{what} answered {json.dumps(reply)[:300]}")
    return reply["result"]


def _read_lines(stream: IO[bytes], lines: queue.Queue[bytes]) -> None:
    """Each line of ``stream`` into ``lines``, then ``b""`` at its end."""
    for line in stream:
        lines.put(line)
    lines.put(b"")


def check_mcp_stdio(bundle: Bundle) -> str:
    process = bundle.start("mcp", log="mcp-stdio.log")
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True).start()

    def ended() -> CheckFailed:
        return CheckFailed(f"the server ended (exit {process.wait(timeout=QUIT_SECONDS)}) "
                           f"({bundle.log_tail('mcp-stdio.log')})")

    def ask(message: dict) -> dict:
        try:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
        except BrokenPipeError:
            raise ended() from None
        deadline = time.monotonic() + ANSWER_SECONDS
        while True:  # notifications (log messages) may come first
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise CheckFailed(f"no answer to {message['method']} within {ANSWER_SECONDS:.0f} s "
                                  f"({bundle.log_tail('mcp-stdio.log')})") from None
            if not line:
                raise ended()
            reply = json.loads(line)
            if reply.get("id") == message["id"]:
                return _result(reply, message["method"])

    try:
        server = ask(_initialize(1))["serverInfo"]
        process.stdin.write(json.dumps(INITIALIZED).encode() + b"\n")
        tools = ask(TOOLS_LIST)["tools"]
        process.stdin.close()  # the end of the input ends the server
        code = process.wait(timeout=QUIT_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if code != 0:
        raise CheckFailed(f"exit {code} after stdin closed ({bundle.log_tail('mcp-stdio.log')})")
    return (f"initialize: {server['name']} {server.get('version', '')}; tools/list: {len(tools)} tools; "
            f"exit 0 when stdin closed")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def _post(url: str, token: str, message: dict, session: str | None) -> tuple[dict | None, str | None]:
    """POST one JSON-RPC message to the Streamable HTTP endpoint: its answer (JSON or an event stream; None for a
    notification) and the session id."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "Authorization": f"Bearer {token}"}
    if session:
        headers |= {"Mcp-Session-Id": session, "Mcp-Protocol-Version": PROTOCOL}
    request = urllib.request.Request(url, data=json.dumps(message).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=ANSWER_SECONDS) as response:
        body = response.read().decode("utf-8")
        session = response.headers.get("Mcp-Session-Id") or session
        kind = response.headers.get("Content-Type", "")
    if "id" not in message:
        return None, session
    if kind.startswith("text/event-stream"):
        replies = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:")]
    else:
        replies = [json.loads(body)]
    for reply in replies:
        if reply.get("id") == message["id"]:
            return _result(reply, message["method"]), session
    raise CheckFailed(f"no answer to {message['method']} in {body[:300]!r}")


def check_app(bundle: Bundle) -> str:
    port = _free_port()
    started = time.monotonic()
    app = bundle.start("--mcp-port", str(port), log="app.log", QT_QPA_PLATFORM="offscreen")
    try:
        while not _listening(port):
            if app.poll() is not None:
                raise CheckFailed(f"the app ended with {app.returncode} before serving ({bundle.log_tail('app.log')})")
            if time.monotonic() - started > START_SECONDS:
                raise CheckFailed(f"port {port} not open after {START_SECONDS:.0f} s ({bundle.log_tail('app.log')})")
            time.sleep(0.2)
        serving = time.monotonic() - started
        token = bundle.run("mcp", "token").stdout.strip()
        url = f"http://127.0.0.1:{port}/mcp"
        server, session = _post(url, token, _initialize(1), None)
        _post(url, token, INITIALIZED, session)
        tools, _ = _post(url, token, TOOLS_LIST, session)
        asked = time.monotonic()
        app.send_signal(signal.SIGTERM)
        code = app.wait(timeout=QUIT_SECONDS)
        quit_seconds = time.monotonic() - asked
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    if code != 0:
        raise CheckFailed(f"exit {code} after SIGTERM ({bundle.log_tail('app.log')})")
    if _listening(port):
        raise CheckFailed(f"port {port} still open after the app ended")
    return (f"offscreen, MCP on {url} after {serving:.1f} s; tools/list with the token: {len(tools['tools'])} tools; "
            f"SIGTERM → exit 0 in {quit_seconds:.1f} s, port free")


CHECKS: list[tuple[str, Callable[[Bundle], str]]] = [
    ("tarball", check_tarball),
    ("limbic --version", check_version),
    ("limbic model install", check_model_install),
    ("limbic embed", check_embed),
    ("limbic mcp (stdio)", check_mcp_stdio),
    ("app + MCP over HTTP", check_app),
]


def run_checks(tarball: Path) -> bool:
    """Run :data:`CHECKS` on ``tarball`` in a temporary folder, one line each (``ok``/``FAIL``, the check, what
    it saw); after each, processes left running from the bundle fail it (they are killed). True when all pass;
    after a failed unpacking the others are not run."""
    passed = True
    with tempfile.TemporaryDirectory(prefix="limbic-bundle-check-") as work:
        bundle = Bundle(tarball, Path(work))
        for name, check in CHECKS:
            try:
                line = check(bundle)
            except CheckFailed as failure:
                line, ok = str(failure), False
            except Exception as error:  # noqa: BLE001 - a check's crash is that check's failure, the others go on
                line, ok = f"{type(error).__name__}: {error}", False
            else:
                ok = True
            left = bundle.left_behind()
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            if left:
                line, ok = f"{line}; processes left behind: {left}", False
            print(f"{'ok  ' if ok else 'FAIL'}  {name}: {line}", flush=True)
            passed = passed and ok
            if not ok and check is check_tarball:
                break
    return passed


def main(argv: list[str]) -> int:
    options = parse_args(argv)
    started = time.monotonic()
    if not options.check:
        tarball = build(build_environment(BUILD_VENV, fresh=False))
        print(f"{tarball} ({tarball.stat().st_size / 1e6:.0f} MB) built in {time.monotonic() - started:.0f} s")
        return 0
    with tempfile.TemporaryDirectory(prefix="limbic-bundle-venv-") as directory:
        tarball = build(build_environment(Path(directory) / "venv", fresh=True))
    built = time.monotonic() - started
    print(f"{tarball} ({tarball.stat().st_size / 1e6:.0f} MB) built in a fresh environment in {built:.0f} s",
          flush=True)
    return 0 if run_checks(tarball) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
