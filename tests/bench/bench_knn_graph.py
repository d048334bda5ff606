"""What the HNSW graph of a large vector copy changes (core/store/approximate.py): build time, KNN time,
and how often its results differ from the exact scan's.

    python tests/bench/bench_knn_graph.py --db <database> [--queries 300]

Copies the database, then runs the same searches through an exact copy of the vectors and through one
with its graph: the fixed queries of bench_search.py plus observation texts sampled from the graph
(seeded). Prints one JSON object: the graph's build seconds, KNN stage p50 for both, the recall of the
exact KNN pool (``limit × expansion_factor`` entities), the same
recall counting a missed entity tied with the pool's last one as found (thousands of Debian packages
share an observation, so ties are common), and the share of searches whose top 10 is the
same, in the same order.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench_search import QUERIES

from limbic.core.embedding.onnx_embedder import load_active_embedder
from limbic.core.search.pipeline import run_search
from limbic.core.search.presets import preset
from limbic.core.store.backend import open_database
from limbic.core.vectors.approximate import GraphBuilder
from limbic.core.vectors.vector_index import VectorIndex


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="a database with vectors (copied)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--limit", type=int, default=10)
    args = parser.parse_args()
    embedder = load_active_embedder()
    if embedder is None:
        raise SystemExit("no model installed: limbic model install")
    params = preset("default")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        shutil.copyfile(args.db, path)
        database = open_database(path)
        conn = database.read()
        texts = [r[0] for r in conn.execute("SELECT content FROM observations ORDER BY id")]
        queries = list(QUERIES) + random.Random(7).sample(texts, max(0, args.queries - len(QUERIES)))
        exact, graphed = VectorIndex(), VectorIndex(GraphBuilder(path))
        run_search(conn, embedder, QUERIES[0], args.limit, params, vectors=exact)
        run_search(conn, embedder, QUERIES[0], args.limit, params, vectors=graphed)
        started = time.perf_counter()
        assert graphed.graphs is not None
        graphed.graphs.wait()
        build_seconds = time.perf_counter() - started
        knn = {"exact": [], "graph": []}
        pool_recall, tie_recall, same_top = [], [], 0
        per_branch = args.limit * int(params.expansion_factor)
        for query in queries:
            outcomes = {}
            for name, index in (("exact", exact), ("graph", graphed)):
                outcome = run_search(conn, embedder, query, args.limit, params, vectors=index)
                knn[name].append(outcome.timings["knn"])
                outcomes[name] = outcome
            vector = outcomes["exact"].query_vector
            with conn:
                now = time.time()
                truth_ids, truth = exact.similarities(conn, embedder.name, vector, now).nearest(per_branch)
                found_ids, found = graphed.similarities(conn, embedder.name, vector, now).nearest(per_branch)
            pool_recall.append(len(set(truth_ids) & set(found_ids)) / max(len(truth_ids), 1))
            # a missed entity tied with the pool's last one is as good as the one taken instead
            boundary = max(truth.values(), default=0.0) - 1e-6
            missed = [e for e in set(truth_ids) - set(found_ids) if truth[e] < boundary]
            tie_recall.append(1 - len(missed) / max(len(truth_ids), 1))
            same_top += [r.entity_id for r in outcomes["exact"].results] == [r.entity_id for r in outcomes["graph"].results]
        vectors = len(graphed)
        database.close()
    print(json.dumps({
        "vectors": vectors, "queries": len(queries), "model": embedder.name,
        "graph_build_or_read_seconds": round(build_seconds, 1),
        "knn_ms_p50": {name: round(statistics.median(v), 2) for name, v in knn.items()},
        "knn_pool_recall_mean": round(statistics.mean(pool_recall), 4),
        "knn_pool_recall_min": round(min(pool_recall), 4),
        "knn_pool_recall_ties_mean": round(statistics.mean(tie_recall), 4),
        "knn_pool_recall_ties_min": round(min(tie_recall), 4),
        "same_top10_share": round(same_top / len(queries), 4),
    }, indent=2))


if __name__ == "__main__":
    main()
