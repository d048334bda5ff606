"""Search latency on a large real graph: import time, warm search p50/p95.

    python tests/bench/bench_search.py --limit 10000 [--model hashing|active] [--queries 200]

Builds ``N`` entities from Debian's package descriptions (../shared/tools/debian_kg.py), imports them
into a fresh database, then times ``MemoryService.search.query`` (limit 10, signals not recorded) over a
fixed list of queries after a warm-up, and the read of the embedded share each search starts with
(``embedding_progress``). Prints one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.io.importer import import_file
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

TOOL = Path(__file__).resolve().parents[3] / "shared" / "tools" / "debian_kg.py"
QUERIES = [
    "web server", "python library for parsing xml", "font for programming", "audio player for the desktop",
    "kernel module tools", "documentation for gtk", "database client", "compression utility",
    "tool to convert images", "spell checker dictionary", "version control system", "network monitoring",
    "how does the package manager work", "what is a display manager", "compare text editors",
    "explain everything about printing", "library for regular expressions", "game with puzzles",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def build_graph(limit: int, folder: Path) -> Path:
    target = folder / f"debian-{limit}.jsonl"
    with target.open("w", encoding="utf-8") as out:
        subprocess.run([sys.executable, str(TOOL), "--limit", str(limit)], stdout=out, check=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=10_000, help="entities (0 = all ~63k)")
    parser.add_argument("--model", choices=["hashing", "active"], default="active",
                        help="active: the installed ONNX model (falls back to hashing when none)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--graph", type=Path, help="an existing JSONL graph instead of building one")
    parser.add_argument("--db", type=Path, help="an existing database (copied; no import is timed)")
    args = parser.parse_args()
    embedder = HashingEmbedder()
    if args.model == "active":
        from limbic.core.embedding.onnx_embedder import load_active_embedder

        embedder = load_active_embedder() or embedder
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        import_seconds = None
        if args.db:
            shutil.copyfile(args.db, folder / "bench.db")
            service = MemoryService(open_database(folder / "bench.db"), embedder, origin="import")
        else:
            graph = args.graph or build_graph(args.limit, folder)
            service = MemoryService(open_database(folder / "bench.db"), embedder, origin="import")
            started = time.perf_counter()
            import_file(service, graph)
            import_seconds = time.perf_counter() - started
        stats = service.entities.stats()
        for query in QUERIES:
            service.search.query(query, 10, record=False)
        graph_started = time.perf_counter()
        service.search.wait_for_knn_graph()  # a large copy's HNSW graph (core/store/approximate.py)
        graph_seconds = time.perf_counter() - graph_started
        latencies, stages = [], {}
        for index in range(args.queries):
            begin = time.perf_counter()
            outcome = service.search.query(QUERIES[index % len(QUERIES)], 10, record=False)
            latencies.append((time.perf_counter() - begin) * 1000)
            for stage, ms in outcome.timings.items():
                stages.setdefault(stage, []).append(ms)
        coverage = []  # what each search reads first to decide whether KNN joins (MemoryService.search.query)
        for _ in range(50):
            begin = time.perf_counter()
            service.search.embedding_progress()
            coverage.append((time.perf_counter() - begin) * 1000)
        service.close()
    print(json.dumps({
        "entities": stats.entities, "relations": stats.relations, "observations": stats.observations,
        "model": embedder.name, "mode": outcome.mode,
        "import_seconds": import_seconds and round(import_seconds, 1),
        "import_entities_per_second": import_seconds and round(stats.entities / import_seconds, 1),
        "knn_graph_wait_seconds": round(graph_seconds, 1),
        "search_ms_p50": round(percentile(latencies, 0.5), 2), "search_ms_p95": round(percentile(latencies, 0.95), 2),
        "stage_ms_p50": {k: round(statistics.median(v), 2) for k, v in stages.items()},
        "coverage_read_ms_min_p50_max": [round(min(coverage), 2), round(statistics.median(coverage), 2),
                                         round(max(coverage), 2)],
        "cpu_count": os.cpu_count(),
    }, indent=2))


if __name__ == "__main__":
    main()
