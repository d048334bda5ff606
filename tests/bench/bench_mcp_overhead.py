"""What an MCP call over stdio costs beyond its tool: ``search_semantic`` against the pipeline's own total, and a
call that does almost nothing (``open_nodes`` of an unknown name), on a server in its own process.

Per tool: wall-clock p50/p95 seen by the client, the pipeline's ``timings.total`` (search only), and, read from
``/proc`` (Linux), the server's CPU time and its threads' context switches per call. CPU time and context
switches barely move with the machine's load, where wall-clock time does; on a shared machine they are the
figures to compare.

    python tests/bench/bench_mcp_overhead.py DB [--calls 200]

DB: a Limbic database with vectors (e.g. the one ``tests/bench/bench_mcp.py`` builds at 10k entities); the
active model of ``LIMBIC_HOME`` is used. Run it against two checkouts (``PYTHONPATH``) to compare them.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import statistics
import sys
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _mcp_helpers import LIMBIC, stdio_client  # noqa: E402
from bench_mcp import QUERIES  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def context_switches(pid: int) -> tuple[int, int]:
    """Voluntary and involuntary context switches of every thread of ``pid``."""
    voluntary = involuntary = 0
    for status in glob.glob(f"/proc/{pid}/task/*/status"):
        try:
            for line in Path(status).read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches"):
                    voluntary += int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches"):
                    involuntary += int(line.split()[1])
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return voluntary, involuntary


def server_pid(db: str) -> int:
    """The ``limbic --db DB mcp`` process (the newest)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"mcp" in command and db.encode() in command:
                found.append(int(entry.name))
    return max(found)


async def measure(db: str, calls: int) -> dict:
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=LIMBIC, args=["--db", db, "mcp"], env=dict(os.environ))
    rng = random.Random(7)
    arguments = {"search_semantic": lambda: {"query": rng.choice(QUERIES), "limit": 10},
                 "open_nodes": lambda: {"names": ["no such entity"]}}
    figures = {}
    async with stdio_client(params) as client:
        pid = server_pid(db)
        for tool, make in arguments.items():
            for _ in range(20):
                await client.call_tool(tool, make())
            cpu, switches = cpu_seconds(pid), context_switches(pid)
            wall, pipeline = [], []
            for _ in range(calls):
                given = make()
                started = time.perf_counter()
                result = await client.call_tool(tool, given)
                wall.append(time.perf_counter() - started)
                if tool == "search_semantic":
                    pipeline.append(result.structured_content["timings"]["total"])
            await anyio.sleep(0.5)  # what the server does after answering (the search log) counts too
            after = context_switches(pid)
            wall.sort()
            figures[tool] = {
                "p50_ms": round(statistics.median(wall) * 1000, 2),
                "p95_ms": round(wall[int(len(wall) * 0.95) - 1] * 1000, 2),
                "pipeline_p50_ms": round(statistics.median(pipeline), 2) if pipeline else None,
                "server_cpu_ms_per_call": round((cpu_seconds(pid) - cpu) / calls * 1000, 2),
                "voluntary_switches_per_call": round((after[0] - switches[0]) / calls, 1),
                "involuntary_switches_per_call": round((after[1] - switches[1]) / calls, 1),
            }
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    load = os.getloadavg()
    figures = anyio.run(measure, str(Path(args.db).resolve()), args.calls)
    print(f"{os.cpu_count()} cores, load average {load[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"{'tool':16} {'p50 ms':>8} {'p95 ms':>8} {'pipeline':>9} {'CPU ms':>7} {'vol sw':>7} {'invol sw':>8}")
    for tool, row in figures.items():
        print(f"{tool:16} {row['p50_ms']:>8} {row['p95_ms']:>8} {row['pipeline_p50_ms'] or '-':>9} "
              f"{row['server_cpu_ms_per_call']:>7} {row['voluntary_switches_per_call']:>7} "
              f"{row['involuntary_switches_per_call']:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
