"""Feedback from similar queries on a heavily used memory: the time of ``feedback_similarity`` (search
step 4) as the search log fills with labelled searches (docs/scoring.md "Feedback from similar queries").

    python tests/bench/bench_feedback.py --db /path/to/debian-10k.db [--searches 2000,20000]

``--db`` is an existing database (copied first, never written). For each size, a copy gets that many
logged searches, each with a random unit query vector and two uses drawn from 500 memories with Zipf
weights (the most used memory gets about a tenth of all uses). Then 30 candidate sets of up to 100
entities (30 among the 100 most used, 70 at random) are timed. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from limbic.core.search import feedback
from limbic.core.store.backend import open_database
from limbic.core.store.database import Database

MODEL = "bench-model"
DIMENSION = 384
POPULAR = 500


def fill_log(db: Database, searches: int, rng: np.random.Generator) -> tuple[list[int], np.ndarray]:
    """``searches`` logged searches with query vectors and two uses each; returns every entity id and
    the popular ones, most used first."""
    ids = [row[0] for row in db.read().execute("SELECT id FROM entities ORDER BY id")]
    popular = np.array(ids[:POPULAR], dtype=np.int64)
    weights = 1.0 / np.arange(1, POPULAR + 1)
    weights /= weights.sum()
    now = time.time()
    with db.maintenance() as conn:
        for i in range(searches):
            event = conn.execute(
                "INSERT INTO search_events(at, query, k_limit, mode, strategy, origin, duration_ms) "
                "VALUES (?, ?, 10, 'hybrid', 'hybrid_balanced', 'mcp', 1) RETURNING id", (now - i, f"query {i}")).get
            vector = rng.standard_normal(DIMENSION).astype(np.float32)
            conn.execute("INSERT INTO search_query_vectors(event_id, model, vector) VALUES (?, ?, ?)",
                         (event, MODEL, (vector / np.linalg.norm(vector)).tobytes()))
            for entity in rng.choice(popular, size=2, replace=False, p=weights).tolist():
                conn.execute("INSERT INTO implicit_feedback(entity_id, event_id, at, source) "
                             "VALUES (?, ?, ?, 'mark_used')", (entity, event, now))
    return ids, popular


def measure(db_path: Path, searches: int, repeats: int) -> dict:
    rng = np.random.default_rng(0)
    db = open_database(db_path)
    try:
        ids, popular = fill_log(db, searches, rng)
        conn = db.read()
        most = conn.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM implicit_feedback GROUP BY entity_id)").get
        latencies = []
        for _ in range(repeats):
            chosen = rng.choice(popular[:100], 30, replace=False).tolist() + rng.choice(ids, 70, replace=False).tolist()
            candidates = list(dict.fromkeys(int(c) for c in chosen))
            index = {entity: i for i, entity in enumerate(candidates)}
            query = rng.standard_normal(DIMENSION).astype(np.float32)
            started = time.perf_counter()
            feedback.feedback_similarity(conn, index, MODEL, query)
            latencies.append((time.perf_counter() - started) * 1000)
        return {"labelled_searches": searches, "uses_of_the_most_used_memory": most,
                "p50_ms": round(statistics.median(latencies), 2), "max_ms": round(max(latencies), 2)}
    finally:
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="an existing database with at least 500 entities")
    parser.add_argument("--searches", default="2000,20000", help="comma-separated log sizes")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    rows = []
    for searches in (int(s) for s in args.searches.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "bench.db"
            shutil.copyfile(args.db, copy)
            rows.append(measure(copy, searches, args.repeats))
    print(json.dumps({"labels_per_memory": feedback.LABELS_PER_MEMORY, "runs": rows}, indent=2))


if __name__ == "__main__":
    main()
