"""A team's load on ``limbic mcp --http`` servers, recorded call by call: writers adding observations with
named tokens (each content sent again until it is acknowledged: writes are idempotent by content) and a
reader searching, over plain HTTP JSON-RPC (a refused request is an answer to record, not a broken client)."""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from _mcp_helpers import LIMBIC

PROTOCOL = "2025-06-18"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@dataclass
class Call:
    tool: str
    started: float
    ended: float
    ok: bool
    text: str
    status: int = 200
    structured: dict | None = None

    @property
    def seconds(self) -> float:
        return self.ended - self.started


class RawClient:
    """One MCP session over Streamable HTTP with a bearer token; it starts again after a refused start."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.http = httpx2.Client(timeout=httpx2.Timeout(20.0),
                                  headers=HEADERS | {"Authorization": f"Bearer {token}"})
        self.session: str | None = None
        self._ids = itertools.count(1)

    def _post(self, payload: dict) -> httpx2.Response:
        extra = {"Mcp-Session-Id": self.session, "MCP-Protocol-Version": PROTOCOL} if self.session else {}
        return self.http.post(self.url, json=payload, headers=extra)

    def _start(self) -> httpx2.Response | None:
        answer = self._post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "team", "version": "1"}}})
        if answer.status_code != 200:
            return answer
        self.session = answer.headers["mcp-session-id"]
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return None

    def call(self, tool: str, arguments: dict) -> Call:
        started = time.monotonic()
        try:
            refused = self._start() if self.session is None else None
            answer = refused or self._post({"jsonrpc": "2.0", "id": next(self._ids), "method": "tools/call",
                                            "params": {"name": tool, "arguments": arguments}})
        except httpx2.HTTPError as exc:
            return Call(tool, started, time.monotonic(), False, f"{type(exc).__name__}: {exc}", 0)
        ended = time.monotonic()
        if refused is not None or answer.status_code != 200:
            return Call(tool, started, ended, False, answer.text, answer.status_code)
        message = _message(answer)
        if "error" in message:
            return Call(tool, started, ended, False, json.dumps(message["error"]), 200)
        result = message["result"]
        text = "".join(part.get("text", "") for part in result.get("content", []))
        return Call(tool, started, ended, not result.get("isError"), text, 200, result.get("structuredContent"))

    def close(self) -> None:
        self.http.close()


def _message(answer: httpx2.Response) -> dict:
    if answer.headers.get("content-type", "").startswith("application/json"):
        return answer.json()
    for line in answer.text.splitlines():
        if line.startswith("data:"):
            data = json.loads(line[5:])
            if "id" in data:
                return data
    raise AssertionError(f"no answer in {answer.text[:200]!r}")


@dataclass
class Writer:
    """Adds ``NAME TAG note K`` to its entity ``NAME``, K = 1, 2, …, each sent again until acknowledged."""

    name: str
    tag: str
    client: RawClient
    calls: list[Call] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)
    answered_as_present: list[str] = field(default_factory=list)  # acknowledged as already there: stored before

    @property
    def prefix(self) -> str:
        return f"{self.name} {self.tag}"

    def run(self, stop: threading.Event) -> None:
        number = 1
        while not stop.is_set():
            content = f"{self.prefix} note {number} about the release checklist"
            call = self.client.call("add_observations",
                                    {"observations": [{"entityName": self.name, "contents": [content]}]})
            self.calls.append(call)
            if call.ok:
                added = (call.structured or {}).get("results", [{}])[0].get("addedObservations", [])
                (self.acknowledged if added == [content] else self.answered_as_present).append(content)
                number += 1
            else:
                stop.wait(0.05)


@dataclass
class Reader:
    client: RawClient
    calls: list[Call] = field(default_factory=list)

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            call = self.client.call("search_semantic", {"query": "release checklist", "limit": 5})
            self.calls.append(call)
            stop.wait(0.02 if call.ok else 0.05)


class Load:
    """Writers and readers on their own threads until :meth:`stop`."""

    def __init__(self, workers: list[Writer | Reader]) -> None:
        self.workers = workers
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=w.run, args=(self._stop,), daemon=True) for w in workers]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)
        for worker in self.workers:
            worker.client.close()

    def calls(self) -> list[Call]:
        return sorted((c for w in self.workers for c in w.calls), key=lambda c: c.started)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess:
    """``limbic --db ADDRESS mcp --http`` in a process of its own; its stderr goes to a file."""

    def __init__(self, address: str, home: Path, log: Path) -> None:
        self.log = log
        self._log_file = open(log, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [LIMBIC, "--db", address, "mcp", "--http", "--port", str(free_port())],
            stdout=subprocess.PIPE, stderr=self._log_file, text=True, env=os.environ | {"LIMBIC_HOME": str(home)})

    def url(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def log_lines(self) -> list[str]:
        return self.log.read_text(encoding="utf-8", errors="replace").splitlines()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self._log_file.close()
