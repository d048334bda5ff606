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
from limbic.core.service.changes import WATCHER_THREAD_NAME, ChangeWatcher


def _write_from_another_process(db_path: Path, name: str) -> None:
    code = (
        "from limbic.core.service import MemoryService\n"
        "from limbic.core.store.database import Database\n"
        "from limbic.core.models import EntityInput\n"
        f"s = MemoryService(Database({str(db_path)!r}), None, origin='mcp')\n"
        f"s.create_entities([EntityInput({name!r}, 'Agent')])\n"
        "s.close()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def _watcher_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == WATCHER_THREAD_NAME and t.is_alive())


def test_watcher_sees_writes_of_another_process(service):
    seen = []
    watcher = ChangeWatcher(service.database.path, seen.extend, interval=0.05).start()
    try:
        _write_from_another_process(service.database.path, "FromOutside")
        deadline = time.monotonic() + 2
        while not seen and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [(c.origin, c.op) for c in seen] == [("mcp", "create_entities")]
        assert seen[0].entity_ids == {service.get_entity("FromOutside").entity.id}
    finally:
        watcher.stop()


def test_poll_returns_nothing_without_commits(service):
    service.create_entities([E("Before", "T")])
    watcher = ChangeWatcher(service.database.path, lambda changes: None)
    try:
        assert watcher.poll() == []
        service.create_entities([E("After", "T")])
        assert [c.op for c in watcher.poll()] == ["create_entities"]
        assert watcher.poll() == []
    finally:
        watcher.stop()


def test_feed_delivers_a_change_seen_by_commit_and_watcher_once(service):
    service.changes.watch_interval = 0.02
    seen = []
    unsubscribe = service.subscribe(seen.extend, other_processes=True)
    assert service.changes.watching and _watcher_threads() == 1
    service.create_entities([E("Mine", "T")])  # published at commit, and seen by the watcher's next poll
    time.sleep(0.3)
    assert [c.op for c in seen] == ["create_entities"]
    unsubscribe()
    assert not service.changes.watching and _watcher_threads() == 0


def test_other_process_change_reaches_gui_and_mcp_once_through_one_watcher(qtbot, service):
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
                    await anyio.to_thread.run_sync(_write_from_another_process, service.database.path, "Outsider")
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
