"""Learning-loop benchmarks: live quality per slider move and the auto-tuner's grid search.

    python tests/bench/bench_learning.py [--sizes 1000,10000] [--moves 40] [--grid 5]

For each size ``N`` a database gets ``N`` logged searches through the product's own log writer
(``search_log.insert_search``: event, impressions, packed candidate arrays), each a realistic random
candidate set of 30 candidates with top-10 shown and one or two used entities as feedback. Then:

- ``load``: reading the log back and unpacking it (``LearningLoop.history``), once per panel refresh;
- ``move``: one slider move in the tuning panel — NDCG@10 and Lift@10 of new ``ScoringParams`` over
  every labelled search (``ReplayHistory.evaluate``), p50/p95 wall and thread-CPU milliseconds;
- ``tune``: ``limbic tune --tune`` over a G × G grid (γ × β_sal), wall seconds (only for the largest size).

Prints one JSON line per size and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _scoring_helpers import random_candidate_set  # noqa: E402

from limbic.core.learning import codec  # noqa: E402
from limbic.core.search.params import ScoringParams  # noqa: E402
from limbic.core.search.pipeline import rerank  # noqa: E402
from limbic.core.service import MemoryService  # noqa: E402
from limbic.core.store import search_log  # noqa: E402
from limbic.core.store.backend import open_database  # noqa: E402


def fill_log(service: MemoryService, searches: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    params = ScoringParams()
    with service.database.maintenance() as conn:
        for i in range(searches):
            candidates = random_candidate_set(30, seed=seed * 1_000_000 + i, pairs_per_candidate=2, limit=10)
            shown = rerank(candidates, params)
            event = search_log.SearchEvent(i + 1, time.time() - (searches - i), f"query {i}", 10, "hybrid",
                                           candidates.strategy, "mcp", 5.0, "limbic", "default", params.to_json(),
                                           codec.pack(candidates))
            search_log.insert_search(conn, event, [
                search_log.Impression(r.entity_id, r.rank, None, None, r.limbic_score, r.final_score, None)
                for r in shown], retention=searches)
            used = rng.choice(candidates.entity_ids, size=int(rng.integers(1, 3)), replace=False)
            search_log.label_search(conn, i + 1, used.tolist(), time.time(), "mark_used")


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--grid", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            service = MemoryService(open_database(Path(folder) / f"log{size}.db"), None)
            fill_log(service, size)
            started = time.perf_counter()
            history = service.learning.history()
            load_ms = (time.perf_counter() - started) * 1000.0
            wall, cpu = [], []
            for move in range(args.moves):
                params = ScoringParams(beta_sal=0.1 + (move % 20) * 0.09)
                start, start_cpu = time.perf_counter(), time.thread_time()
                history.evaluate(params, 10)
                cpu.append((time.thread_time() - start_cpu) * 1000.0)
                wall.append((time.perf_counter() - start) * 1000.0)
            row = {"searches": size, "labelled": len(history), "load_ms": round(load_ms, 1),
                   "move_p50_ms": round(percentiles(wall)[0], 1), "move_p95_ms": round(percentiles(wall)[1], 1),
                   "move_cpu_p50_ms": round(percentiles(cpu)[0], 1)}
            if size == max(sizes):
                grid = {"gamma": tuple(np.linspace(0.0, 0.2, args.grid)),
                        "beta_sal": tuple(np.linspace(0.1, 2.0, args.grid))}
                started = time.perf_counter()
                service.learning.tune(ScoringParams(), grid, 10, history=history)
                row[f"tune_{args.grid}x{args.grid}_s"] = round(time.perf_counter() - started, 2)
            service.close()
            print(json.dumps(row))
    print(json.dumps({"loadavg": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
