"""Write latency through MCP stdio as agents call it: ``add_observations`` with one
writer and with four concurrent writers, each its own ``limbic mcp`` process on the same database, and
how long the vectors of those writes take to land (the background embedder, outside the write lock).

    python tests/bench/bench_writes.py --db /path/to/debian-10k.db [--calls 200] [--writers 4]

``--db`` is an existing database (copied first, never written), e.g. ``tests/bench/bench_search.py``'s
or ``limbic import`` of ``../shared/tools/debian_kg.py --limit 10000``. Run with the model installed
(``limbic model install``): the servers embed with it. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _mcp_helpers import LIMBIC, stdio_client  # noqa: E402


def percentiles(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000, 2)

    return {"calls": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": at(0.95), "p99_ms": at(0.99), "max_ms": round(ordered[-1] * 1000, 2)}


async def writer(db: Path, names: list[str], calls: int, tag: str, errlog: Path, start: anyio.Event,
                 latencies: list[float]) -> None:
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=LIMBIC, args=["--db", str(db), "mcp"], env=dict(os.environ))
    rng = random.Random(tag)
    async with stdio_client(params, errlog) as client:
        for i in range(5):  # warm-up: the model loads, the connection pools fill
            await client.call_tool("add_observations", {"observations": [
                {"entityName": rng.choice(names), "contents": [f"warm-up note {tag} {i}"]}]})
        await start.wait()
        for i in range(calls):
            arguments = {"observations": [{"entityName": rng.choice(names),
                                           "contents": [f"benchmark note from writer {tag}, call {i}"]}]}
            t0 = time.perf_counter()
            result = await client.call_tool("add_observations", arguments)
            latencies.append(time.perf_counter() - t0)
            if result.is_error:
                raise RuntimeError(result.content[0].text)


async def run(db: Path, names: list[str], calls: int, writers: int, out: Path) -> dict:
    latencies: list[float] = []
    start = anyio.Event()
    async with anyio.create_task_group() as group:
        for w in range(writers):
            group.start_soon(writer, db, names, calls, f"{writers}-{w}", out / f"writer-{writers}-{w}.stderr",
                             start, latencies)
        await anyio.sleep(0.5)
        while True:  # every writer warmed up: its 5 warm-up calls are visible
            if _notes(db, f"warm-up note {writers}-") >= 5 * writers:
                break
            await anyio.sleep(0.2)
        began = time.perf_counter()
        start.set()
    wall = time.perf_counter() - began
    return {"writers": writers, **percentiles(latencies), "calls_per_s": round(len(latencies) / wall, 1)}


def _notes(db: Path, prefix: str) -> int:
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute("SELECT count(*) FROM observations WHERE content LIKE ? || '%'", (prefix,)).get)
    finally:
        conn.close()


def vectors_landed_seconds(db: Path, timeout: float = 600.0) -> float:
    """Seconds until no vector is pending (the last server process keeps embedding after the calls)."""
    from limbic.core.embedding.onnx_embedder import load_active_embedder
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    began = time.perf_counter()
    service = MemoryService(open_database(db), load_active_embedder(), background_vectors=True)
    try:
        service.search.wait_for_vectors(timeout)
        return round(time.perf_counter() - began, 2)
    finally:
        service.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="an existing database (copied)")
    parser.add_argument("--calls", type=int, default=200, help="measured calls per writer")
    parser.add_argument("--writers", type=int, default=4, help="concurrent writers of the second run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = work / "bench.db"
        shutil.copyfile(args.db, db)
        import apsw

        conn = apsw.Connection(str(db))
        names = [row[0] for row in conn.execute("SELECT name FROM entities ORDER BY id")]
        conn.close()
        figures = {"entities": len(names), "cpu_count": os.cpu_count(), "load_before": os.getloadavg()[0]}
        figures["one_writer"] = anyio.run(run, db, names, args.calls, 1, work)
        figures["one_writer"]["vectors_landed_s_after"] = vectors_landed_seconds(db)
        figures["concurrent"] = anyio.run(run, db, names, max(1, args.calls // args.writers), args.writers, work)
        figures["concurrent"]["vectors_landed_s_after"] = vectors_landed_seconds(db)
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
