"""Two ``limbic mcp`` processes writing the same database at once, plus a third one reading.

Concurrent writers lose nothing and surface no lock errors (WAL, busy timeout,
``BEGIN IMMEDIATE``). Each writer adds 200 observations, one call each; a reader opens nodes meanwhile.
"""

from __future__ import annotations

import anyio
import apsw
from _mcp_helpers import limbic_params, outcome, stdio_client

from limbic.core.models import EntityInput
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

WRITES = 200
ENTITIES = [f"E{i}" for i in range(10)]


def test_two_writers_and_a_reader_lose_nothing(tmp_path, limbic_home):
    db = tmp_path / "shared.db"
    seed = MemoryService(open_database(db))
    seed.entities.create_entities([EntityInput(name, "thing") for name in ENTITIES])
    seed.close()
    failures: list[str] = []
    observed_counts: list[int] = []
    done: list[anyio.Event] = []

    async def writer(tag: str) -> None:
        async with stdio_client(limbic_params(db, limbic_home), tmp_path / f"{tag}.stderr") as client:
            for i in range(WRITES):
                content = f"{tag}-{i}"
                result = outcome(await client.call_tool("add_observations", {"observations": [
                    {"entityName": ENTITIES[i % len(ENTITIES)], "contents": [content]}]}))
                if result["error"] or result["structured"]["results"][0]["addedObservations"] != [content]:
                    failures.append(f"{content}: {result['text']}")

    async def reader() -> None:
        async with stdio_client(limbic_params(db, limbic_home), tmp_path / "reader.stderr") as client:
            while not done[0].is_set():
                opened = outcome(await client.call_tool("open_nodes", {"names": ENTITIES}))
                if opened["error"]:
                    failures.append(f"reader: {opened['text']}")
                    continue
                observed_counts.append(sum(len(e["observations"]) for e in opened["structured"]["entities"]))
                await anyio.sleep(0.01)

    async def scenario() -> None:
        done.append(anyio.Event())
        with anyio.fail_after(240):
            async with anyio.create_task_group() as readers:
                readers.start_soon(reader)
                async with anyio.create_task_group() as writers:
                    writers.start_soon(writer, "a")
                    writers.start_soon(writer, "b")
                done[0].set()

    anyio.run(scenario)

    assert failures == []
    conn = apsw.Connection(str(db))
    contents = {row[0] for row in conn.execute("SELECT content FROM observations")}
    assert contents == {f"{tag}-{i}" for tag in "ab" for i in range(WRITES)}
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    assert len(set(observed_counts)) > 1  # the reader ran while the writers wrote
    assert observed_counts == sorted(observed_counts)  # and never saw a write undone
    for log in tmp_path.glob("*.stderr"):
        text = log.read_text().lower()
        assert "database is locked" not in text and "busy" not in text, log.name
