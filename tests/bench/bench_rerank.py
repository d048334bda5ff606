"""Re-rank latency of a cached CandidateSet (issue 2 benchmark; DESIGN §9 target ≤ 5 ms at 3,000).

    python tests/bench/bench_rerank.py [--repeat 300] [--sizes 300,3000]

For each size ``n`` a realistic random CandidateSet is built (a third FTS-only, 60 % with access
history, ~5 co-occurrence pairs per candidate, deboosted statuses and metadata shares) with
``limit = n / 3`` (expansion factor 3). Each timed call is a slider move: new ``ScoringParams`` (β_sal
varies), then :func:`limbic.core.search.rerank` — limbic scoring of all ``n`` candidates, sorting and
building the top-K :class:`SearchResult` values. ``score`` times the numpy scoring alone. Prints
p50/p95 in milliseconds and one JSON line per size.
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

from limbic.core.params import ScoringParams  # noqa: E402
from limbic.core.scoring import score_candidates  # noqa: E402
from limbic.core.search import rerank  # noqa: E402


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def _time(call, repeat: int) -> list[float]:
    samples = []
    for i in range(repeat):
        params = ScoringParams(beta_sal=0.5 + (i % 10) * 0.1)
        start = time.perf_counter()
        call(params)
        samples.append((time.perf_counter() - start) * 1000.0)
    return samples


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
        full = _time(lambda p, cs=candidates: rerank(cs, p), args.repeat)
        score = _time(lambda p, cs=candidates: score_candidates(cs, p), args.repeat)
        gc.enable()
        full_p50, full_p95 = _percentiles(full)
        score_p50, score_p95 = _percentiles(score)
        print(f"rerank n={n:>5} (top {candidates.limit}, {len(candidates.cooc_a)} co-occurrence pairs): "
              f"p50 {full_p50:.3f} ms  p95 {full_p95:.3f} ms  | scoring only p50 {score_p50:.3f} ms  "
              f"p95 {score_p95:.3f} ms")
        print(json.dumps({"candidates": n, "top_k": candidates.limit, "pairs": int(len(candidates.cooc_a)),
                          "repeat": args.repeat, "rerank_p50_ms": round(full_p50, 3),
                          "rerank_p95_ms": round(full_p95, 3), "score_p50_ms": round(score_p50, 3),
                          "score_p95_ms": round(score_p95, 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
