"""Community colours after writes: the worker's time to find the whole graph's communities again and match them
to the old ones (``limbic.gui.graph.colouring.find_communities``: Leiden from the groups found before, then the
Jaccard/Hungarian matching), and how many entities keep their colour.

    python tests/bench/bench_communities.py [--nodes 10000] [--edges 62000] [--groups 600]

A seeded planted-partition graph (85 % of the edges inside a group) stands in for a large memory; fifteen new
entities are then written, each linked to two random entities. Prints one JSON object: the first grouping's
seconds, the grouping again after the writes (seconds; the first time also imports SciPy's solver, once per
run of the app), the matching alone (seconds) and the share of entities that kept their colour.
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=62_000)
    parser.add_argument("--groups", type=int, default=600)
    args = parser.parse_args()
    import numpy as np

    from limbic.gui.graph.colouring import community_colours, find_communities

    rng = np.random.default_rng(0)
    n = args.nodes
    group = rng.integers(0, args.groups, n)
    members = [np.flatnonzero(group == g) for g in range(args.groups)]
    ends = rng.integers(0, n, args.edges)
    inside = rng.random(args.edges) < 0.85
    others = np.array([rng.choice(members[group[a]]) if keep else rng.integers(0, n) for a, keep in zip(ends, inside, strict=True)])
    edges = np.stack([ends, others], axis=1)
    edges = edges[edges[:, 0] != edges[:, 1]]
    ids = np.arange(n, dtype=np.int64) * 3
    started = time.perf_counter()
    first = find_communities(ids, edges)
    first_s = time.perf_counter() - started
    grown = np.append(ids, ids.max() + np.arange(1, 16))
    written = np.array([[n + k, rng.integers(0, n)] for k in range(15) for _ in range(2)])
    grown_edges = np.vstack([edges, written])
    started = time.perf_counter()
    again = find_communities(grown, grown_edges, first)
    with_import_s = time.perf_counter() - started  # the first matching imports SciPy's solver
    started = time.perf_counter()
    again = find_communities(grown, grown_edges, first)
    again_s = time.perf_counter() - started
    started = time.perf_counter()
    community_colours(again.membership, grown, first)
    matching_s = time.perf_counter() - started
    print(json.dumps({"nodes": n, "edges": len(edges), "communities": len(np.unique(first.membership)),
                      "first_s": round(first_s, 3), "again_s": round(again_s, 3),
                      "again_with_scipy_import_s": round(with_import_s, 3), "matching_s": round(matching_s, 4),
                      "kept_colour": round(float((first.codes == again.codes[:n]).mean()), 4)}))


if __name__ == "__main__":
    main()
