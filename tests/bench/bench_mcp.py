"""MCP tool-call latency: ``open_nodes``, ``add_observations``, ``search_semantic`` over stdio and HTTP at
10k entities, and ``add_observations`` / ``open_nodes`` against the npm reference server on the same graph.
The row ``service`` is the same operation called on ``MemoryService`` directly (the core's share).

The graph is real: ``shared/tools/debian_kg.py --limit N`` (Debian packages, descriptions, dependencies),
imported into a Limbic database (embedded with the active installed model, if any; FTS-only otherwise).
Each server runs in its own process, as an agent would start it; calls are sequential, after a warm-up.

    python tests/bench/bench_mcp.py [--entities 10000] [--calls 200] [--reference-calls 40]

Run it with ``LIMBIC_HOME`` pointing at a home with the model installed (``limbic model install``) to
measure ``search_semantic`` in hybrid mode; without a model the search runs FTS-only (reported).

Figures are printed as a table and written to tests/bench/out/bench_mcp.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _mcp_helpers import LIMBIC, http_client, reference_params, stdio_client  # noqa: E402

from limbic.core.vectors import approximate  # noqa: E402

DEBIAN_KG = HERE.parents[2] / "shared" / "tools" / "debian_kg.py"
QUERIES = [
    "library for parsing XML documents", "python bindings for a C library", "command line image converter",
    "font for programming", "database server", "rust crate for async networking", "game for children",
    "documentation of the perl modules", "tool to monitor system performance", "music player",
    "scientific computing with matrices", "compression utilities", "text editor for the terminal",
    "web browser", "encryption and signatures", "kernel headers", "spell checking dictionary",
    "bioinformatics sequence alignment", "network packet capture", "desktop environment themes",
]


def graph_file(out: Path, entities: int) -> Path:
    path = out / f"debian-{entities}.jsonl"
    if not path.exists():
        with open(path, "w", encoding="utf-8") as handle:
            subprocess.run([sys.executable, str(DEBIAN_KG), "--limit", str(entities)], stdout=handle, check=True)
    return path


def database(out: Path, jsonl: Path, entities: int) -> tuple[Path, float | None]:
    """The imported database (built once, with the active model if one is installed)."""
    from limbic.core.embedding.onnx_embedder import load_active_embedder
    from limbic.core.io.importer import import_file
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    embedder = load_active_embedder()
    path = out / f"mcp-bench-{entities}-{embedder.name if embedder else 'fts'}.db"
    if path.exists():
        return path, None
    started = time.perf_counter()
    service = MemoryService(open_database(path), embedder, origin="import")
    try:
        import_file(service, jsonl)
    finally:
        service.close()
    return path, time.perf_counter() - started


def summary(latencies: list[float], total: float) -> dict:
    ordered = sorted(latencies)
    return {
        "calls": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 2),
        "calls_per_s": round(len(ordered) / total, 1),
    }


async def measure(client, tool: str, argument_maker, calls: int, warmup: int = 5,
                  warmup_seconds: float = 0.0) -> tuple[dict, list]:
    """``warmup`` calls, then more until ``warmup_seconds`` have passed, then ``calls`` timed calls."""
    until = time.perf_counter() + warmup_seconds
    done = 0
    while done < warmup or time.perf_counter() < until:
        await client.call_tool(tool, argument_maker())
        done += 1
    latencies, last = [], None
    started = time.perf_counter()
    for _ in range(calls):
        arguments = argument_maker()
        t0 = time.perf_counter()
        result = await client.call_tool(tool, arguments)
        latencies.append(time.perf_counter() - t0)
        if result.is_error:
            raise RuntimeError(f"{tool} failed: {result.content[0].text}")
        last = result
    return summary(latencies, time.perf_counter() - started), last


def makers(names: list[str], tag: str) -> dict:
    rng = random.Random(7)
    counter = iter(range(10**9))
    return {
        "open_nodes": lambda: {"names": rng.sample(names, 2)},
        "add_observations": lambda: {"observations": [
            {"entityName": rng.choice(names), "contents": [f"benchmark note {tag} {next(counter)}"]}]},
        "search_semantic": lambda: {"query": rng.choice(QUERIES), "limit": 10},
    }


async def run_limbic(client, names: list[str], calls: int, tag: str, search_warmup: float) -> dict:
    figures, make = {}, makers(names, tag)
    for tool in ("open_nodes", "add_observations", "search_semantic"):
        warmup_seconds = search_warmup if tool == "search_semantic" else 0.0
        figures[tool], last = await measure(client, tool, make[tool], calls, warmup_seconds=warmup_seconds)
        if tool == "search_semantic":
            figures[tool]["mode"] = last.structured_content["mode"]
            figures[tool]["model"] = last.structured_content["model"]
    return figures


def knn_graph(db: Path) -> float | None:
    """Make the HNSW graph of a large database's vectors and keep it next to it
    (core/vectors/approximate.py), as a first search would: servers then read it. Seconds taken, or
    ``None`` when the copy is below the size that gets one or there is no model."""
    from limbic.core.embedding.onnx_embedder import load_active_embedder
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    embedder = load_active_embedder()
    if embedder is None:
        return None
    service = MemoryService(open_database(db), embedder, origin="cli")
    try:
        started = time.perf_counter()
        service.search.query(QUERIES[0], 10, record=False)
        service.search.wait_for_knn_graph()
        return round(time.perf_counter() - started, 1) if approximate.cache_files(db) else None
    finally:
        service.close()


def direct(db: Path, names: list[str], calls: int, search_warmup: float) -> dict:
    """The same operations on ``MemoryService`` in-process: the core's share of each tool call."""
    from limbic.core.embedding.onnx_embedder import load_active_embedder
    from limbic.core.models import ObservationInput
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    service = MemoryService(open_database(db), load_active_embedder(), origin="mcp", background_vectors=True)
    make = makers(names, "direct")
    operations = {
        "open_nodes": lambda a: service.entities.open_nodes(a["names"]),
        "add_observations": lambda a: service.entities.add_observations(
            [(b["entityName"], [ObservationInput(c) for c in b["contents"]]) for b in a["observations"]]),
        "search_semantic": lambda a: service.search.query(a["query"], a["limit"]),
    }
    figures = {}
    try:
        for tool, operation in operations.items():
            until = time.perf_counter() + (search_warmup if tool == "search_semantic" else 0.0)
            for _ in range(5):
                operation(make[tool]())
            while time.perf_counter() < until:
                operation(make[tool]())
            latencies, started = [], time.perf_counter()
            for _ in range(calls):
                arguments = make[tool]()
                t0 = time.perf_counter()
                operation(arguments)
                latencies.append(time.perf_counter() - t0)
            figures[tool] = summary(latencies, time.perf_counter() - started)
    finally:
        service.close()
    return figures


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def over_stdio(db: Path, names: list[str], calls: int, errlog: Path, search_warmup: float) -> dict:
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=LIMBIC, args=["--db", str(db), "mcp"], env=dict(os.environ))
    async with stdio_client(params, errlog) as client:
        return await run_limbic(client, names, calls, "stdio", search_warmup)


async def over_http(db: Path, names: list[str], calls: int, errlog: Path, search_warmup: float) -> dict:
    from limbic.core.mcp.token import load_token

    port = free_port()
    with open(errlog, "w") as log:
        process = subprocess.Popen([LIMBIC, "--db", str(db), "mcp", "--http", "--port", str(port)],
                                   stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        url = process.stdout.readline().strip()
        async with http_client(url, load_token()) as client:
            return await run_limbic(client, names, calls, "http", search_warmup)
    finally:
        process.terminate()
        process.wait(timeout=30)


async def reference(jsonl: Path, work: Path, names: list[str], calls: int) -> dict:
    memory = work / "reference-memory.jsonl"
    shutil.copyfile(jsonl, memory)
    make = makers(names, "reference")
    figures = {}
    async with stdio_client(reference_params(memory), work / "reference.stderr") as client:
        for tool in ("open_nodes", "add_observations"):
            figures[tool], _ = await measure(client, tool, make[tool], calls, warmup=2)
    figures["file_mb"] = round(memory.stat().st_size / 1e6, 1)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200, help="measured calls per tool and transport")
    parser.add_argument("--reference-calls", type=int, default=40, help="measured calls on the reference server")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--search-warmup-seconds", type=float, default=0.0,
                        help="keep searching this long before timing search_semantic (a server past 100,000 "
                             "vectors reads its KNN graph in the background after the first search)")
    args = parser.parse_args()
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)

    jsonl = graph_file(args.out, args.entities)
    base, import_seconds = database(args.out, jsonl, args.entities)
    work = args.out / "mcp-work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    db = work / "bench.db"
    shutil.copyfile(base, db)  # measured writes go to a copy; the imported base stays as built
    names = [json.loads(line)["name"] for line in jsonl.open(encoding="utf-8") if '"type": "entity"' in line]

    results = {"entities": len(names), "import_seconds": import_seconds, "cpu_count": os.cpu_count(),
               "knn_graph_seconds": knn_graph(db), "load_average_before": os.getloadavg()}
    warm = args.search_warmup_seconds
    results["service"] = direct(db, names, args.calls, warm)
    results["stdio"] = anyio.run(over_stdio, db, names, args.calls, work / "stdio.stderr", warm)
    results["http"] = anyio.run(over_http, db, names, args.calls, work / "http.stderr", warm)
    results["reference"] = anyio.run(reference, jsonl, work, names, args.reference_calls)

    results["load_average_after"] = os.getloadavg()
    (args.out / "bench_mcp.json").write_text(json.dumps(results, indent=2))
    load = ", ".join(f"{x:.1f}" for x in results["load_average_before"])
    print(f"{results['entities']:,} entities (Debian), {os.cpu_count()} cores, load average before: {load}")
    print(f"{'server':10} {'tool':18} {'calls':>6} {'p50 ms':>9} {'p95 ms':>9} {'calls/s':>9}")
    for server in ("service", "stdio", "http", "reference"):
        for tool, row in results[server].items():
            if isinstance(row, dict):
                print(f"{server:10} {tool:18} {row['calls']:>6} {row['p50_ms']:>9} {row['p95_ms']:>9} "
                      f"{row['calls_per_s']:>9}")
    semantic = results["stdio"]["search_semantic"]
    print(f"search_semantic mode: {semantic['mode']} (model: {semantic['model']}); "
          f"reference file: {results['reference']['file_mb']} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
