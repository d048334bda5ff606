"""Re-rank latency of a cached CandidateSet (target ≤ 5 ms at 3,000, docs/performance.md).

    python tests/bench/bench_rerank.py [--repeat 300] [--sizes 300,3000]

For each size ``n`` a realistic random CandidateSet is built (a third FTS-only, 60 % with access
history, ~5 co-occurrence pairs per candidate, deboosted statuses and metadata shares) with
``limit = n / 3`` (expansion factor 3). Each timed call is a slider move: new ``ScoringParams`` (β_sal
varies), then :func:`limbic.core.search.pipeline.rerank` — limbic scoring of all ``n`` candidates, sorting and
building the top-K :class:`SearchResult` values. ``score`` times the numpy scoring alone. Prints
p50/p95 in milliseconds (wall clock, and CPU time of the thread, which a shared machine does not
inflate) and one JSON line per size.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _scoring_helpers import random_candidate_set  # noqa: E402

from limbic.core.search.params import ScoringParams  # noqa: E402
from limbic.core.search.pipeline import rerank  # noqa: E402
from limbic.core.search.scoring import score_candidates  # noqa: E402


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def _time(call, repeat: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (this thread) milliseconds per call; CPU time is not inflated when the
    machine is shared and the process waits for a core."""
    wall, cpu = [], []
    for i in range(repeat):
        params = ScoringParams(beta_sal=0.5 + (i % 10) * 0.1)
        start, start_cpu = time.perf_counter(), time.thread_time()
        call(params)
        cpu.append((time.thread_time() - start_cpu) * 1000.0)
        wall.append((time.perf_counter() - start) * 1000.0)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--sizes", default="300,3000")
    args = parser.parse_args()
    for n in (int(s) for s in args.sizes.split(",")):
        candidates = random_candidate_set(n, seed=n, pairs_per_candidate=10)
        for _ in range(20):  # warm-up
            rerank(candidates, ScoringParams())
        gc.collect()
        gc.disable()
        full, full_cpu = _time(lambda p, cs=candidates: rerank(cs, p), args.repeat)
        score, score_cpu = _time(lambda p, cs=candidates: score_candidates(cs, p), args.repeat)
        gc.enable()
        figures = {"candidates": n, "top_k": candidates.limit, "pairs": int(len(candidates.cooc_a)),
                   "repeat": args.repeat}
        for name, samples in (("rerank", full), ("rerank_cpu", full_cpu), ("score", score), ("score_cpu", score_cpu)):
            p50, p95 = _percentiles(samples)
            figures[f"{name}_p50_ms"], figures[f"{name}_p95_ms"] = round(p50, 3), round(p95, 3)
        print(f"rerank n={n:>5} (top {candidates.limit}, {figures['pairs']} co-occurrence pairs): "
              f"wall p50 {figures['rerank_p50_ms']:.3f} ms p95 {figures['rerank_p95_ms']:.3f} ms | "
              f"CPU p50 {figures['rerank_cpu_p50_ms']:.3f} ms p95 {figures['rerank_cpu_p95_ms']:.3f} ms | "
              f"scoring only: wall p50 {figures['score_p50_ms']:.3f} ms, CPU p50 {figures['score_cpu_p50_ms']:.3f} ms")
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
