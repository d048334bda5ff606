"""ChangeWatcher notices commits made through another connection (another process in real use)."""

from __future__ import annotations

import subprocess
import sys
import time

from limbic.core.models import EntityInput as E
from limbic.core.watcher import ChangeWatcher


def test_watcher_sees_writes_of_another_process(service):
    seen = []
    watcher = ChangeWatcher(service.database.path, seen.extend, interval=0.05).start()
    try:
        code = (
            "from limbic.core.service import MemoryService\n"
            "from limbic.core.store.database import Database\n"
            "from limbic.core.models import EntityInput\n"
            f"s = MemoryService(Database({str(service.database.path)!r}), None, origin='mcp')\n"
            "s.create_entities([EntityInput('FromOutside', 'Agent')])\n"
            "s.close()\n"
        )
        subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
        deadline = time.monotonic() + 2
        while not seen and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [(c.origin, c.op) for c in seen] == [("mcp", "create_entities")]
        new_id = service.get_entity("FromOutside").entity.id
        assert seen[0].entity_ids == {new_id}
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
