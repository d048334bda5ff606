"""The one change feed: its watcher notices other processes' commits, and every listener (the GUI
bridge, the MCP resource notifier) gets each change once, through one watcher thread."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
from anyio.from_thread import start_blocking_portal
from mcp import Client

from limbic.core.mcp.server import KNOWLEDGE_GRAPH_URI, build_server
from limbic.core.models import EntityInput as E
from limbic.core.store.postgres.listen import LISTENER_THREAD_NAME, ChangeListener
from limbic.core.store.sqlite.watcher import WATCHER_THREAD_NAME, ChangeWatcher


def _write_from_another_process(address: str | Path, name: str) -> float:
    """Create the entity ``name`` from a new Python process; returns the time (UTC seconds) just before that
    process started its write."""
    code = (
        "import time\n"
        "from limbic.core.service import MemoryService\n"
        "from limbic.core.store.backend import open_database\n"
        "from limbic.core.models import EntityInput\n"
        f"s = MemoryService(open_database({str(address)!r}), None, origin='mcp')\n"
        "print(time.time(), flush=True)\n"
        f"s.entities.create_entities([EntityInput({name!r}, 'Agent')])\n"
        "s.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=True, timeout=60, capture_output=True, text=True)
    return float(done.stdout.split()[0])


def _watcher_threads() -> int:
    """Threads following other processes' commits: SQLite's watcher or PostgreSQL's listener."""
    names = (WATCHER_THREAD_NAME, LISTENER_THREAD_NAME)
    return sum(1 for t in threading.enumerate() if t.name in names and t.is_alive())


def _follower(backend: str, memory_address: str, callback, interval: float = 0.05):
    """What follows other processes' commits on the memory: polling the file, or LISTEN on the server."""
    if backend == "sqlite":
        return ChangeWatcher(memory_address, callback, interval=interval)
    return ChangeListener(memory_address, callback, interval=interval)


def test_watcher_sees_writes_of_another_process(service, backend, memory_address):
    seen = []
    watcher = _follower(backend, memory_address, seen.extend).start()
    try:
        _write_from_another_process(memory_address, "FromOutside")
        deadline = time.monotonic() + 2
        while not seen and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [(c.origin, c.op) for c in seen] == [("mcp", "create_entities")]
        assert seen[0].entity_ids == {service.entities.get_entity("FromOutside").entity.id}
    finally:
        watcher.stop()


def test_poll_returns_nothing_without_commits(service, backend, memory_address):
    service.entities.create_entities([E("Before", "T")])
    watcher = _follower(backend, memory_address, lambda changes: None)
    try:
        assert watcher.poll() == []
        service.entities.create_entities([E("After", "T")])
        assert [c.op for c in watcher.poll()] == ["create_entities"]
        assert watcher.poll() == []
    finally:
        watcher.stop()


def test_feed_delivers_a_change_seen_by_commit_and_watcher_once(service):
    service.changes.watch_interval = 0.02
    seen = []
    unsubscribe = service.subscribe(seen.extend, other_processes=True)
    assert service.changes.watching and _watcher_threads() == 1
    service.entities.create_entities([E("Mine", "T")])  # published at commit, and seen by the watcher's next poll
    time.sleep(0.3)
    assert [c.op for c in seen] == ["create_entities"]
    unsubscribe()
    assert not service.changes.watching and _watcher_threads() == 0


def test_a_listener_sees_another_process_write_within_one_second(service, memory_address):
    """A listener for other processes' changes learns of another process's write within 1 s of it."""
    arrived: list[tuple[float, list]] = []
    unsubscribe = service.subscribe(lambda changes: arrived.append((time.time(), changes)), other_processes=True)
    try:
        started = _write_from_another_process(memory_address, "FromOutside")
        deadline = time.monotonic() + 5
        while not arrived and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        unsubscribe()
    assert arrived, "the other process's write never reached the listener"
    at, changes = arrived[0]
    assert [(c.origin, c.op) for c in changes] == [("mcp", "create_entities")]
    assert at - started < 1.0  # from before the write began to the listener's call


def test_other_process_change_reaches_gui_and_mcp_once_through_one_watcher(qtbot, service, memory_address):
    from limbic.gui.bridge import ChangeBridge

    service.changes.watch_interval = 0.05
    batches: list[list] = []
    bridge = ChangeBridge(service)
    bridge.changes_arrived.connect(batches.append)
    bridge.start()
    server = build_server(service)
    try:
        with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(server)) as client:
            async def listen_while_other_writes() -> list:
                events = []
                async with client.listen(resource_subscriptions=[KNOWLEDGE_GRAPH_URI]) as subscription:
                    assert _watcher_threads() == 1  # the GUI bridge and the MCP notifier share it
                    await anyio.to_thread.run_sync(_write_from_another_process, memory_address, "Outsider")
                    with anyio.move_on_after(1.5):  # room for a second, duplicate notice
                        async for event in subscription:
                            events.append(event.uri)
                return events

            assert portal.call(listen_while_other_writes) == [KNOWLEDGE_GRAPH_URI]
        qtbot.waitUntil(lambda: bool(batches), timeout=5000)
        qtbot.wait(200)
        delivered = [(c.origin, c.op) for batch in batches for c in batch]
        assert delivered == [("mcp", "create_entities")]
    finally:
        bridge.stop()
    assert _watcher_threads() == 0
