"""Curation at scale: the duplicate finders (observations, entities) and the consolidation report, with seconds,
peak memory and what they propose (duplicate clusters, entity pairs, and how many of those are between two identifiers: siblings);
and the duplicate finder's precision and recall on the hand-labelled pairs from real agent memory.

    python tests/bench/bench_curation.py --db <database with vectors> [--corpus DIR] [--pairs]

``--db``: a database whose observations have vectors of the active model (e.g. Debian's packages as a graph
of 10,000 entities imported with ``limbic import``); it is copied first. ``--corpus DIR``: the memory files of
DIR are imported into a fresh database with the active model and measured the same way. ``--pairs``: precision
and recall (with TP/FP/FN) on ``tests/fixtures/duplicate_pairs_corpus.jsonl`` at thresholds 0.70..0.90.
Each timing runs in its own process (the peak resident memory ``peak_rss_mb`` is that process's, its
interpreter and libraries included); ``cpu_seconds`` is its CPU time (both cores) during the call, a steadier
figure than the wall clock on a shared machine. One JSON object is printed, with the load average when it
started and when it ended.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
MEASURES = ("duplicate_observations", "duplicate_entities", "consolidation_report")
sys.path.insert(0, str(HERE.parents[1]))


def measure(name: str, db: Path) -> dict:
    """One timing, in this process (run by :func:`in_process`)."""
    from limbic.core.curation.entities import identifier
    from limbic.core.service import MemoryService, review
    from limbic.core.store.database import Database

    service = MemoryService(Database(db), None)
    out: dict = {}
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    if name == "duplicate_observations":
        report = service.find_duplicate_observations(limit=20)
        out = {"clusters": report.total, "duplicate": sum(c.relation == "duplicate" for c in report.clusters),
               "observations": report.compared, "shared_facts": report.shared_total,
               "largest_shared": report.shared[0].count if report.shared else 0}
    elif name == "duplicate_entities":
        total, found = service.find_duplicate_entities(limit=100_000)
        out = {"pairs": total, "by_reason": {r: sum(g.reason == r for g in found) for r in {g.reason for g in found}},
               "between_identifiers": sum(g.reason == "close vectors" and all(identifier(n) for n in g.names)
                                          for g in found)}
    elif name == "consolidation_report":
        sections = review.review(service, limit=10)
        out = {"totals": {s.kind: s.total for s in sections}, "rows": {s.kind: s.rows for s in sections}}
    seconds = time.perf_counter() - started
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu_seconds = used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime
    service.close()
    return {**out, "seconds": round(seconds, 2), "cpu_seconds": round(cpu_seconds, 2), "peak_rss_mb": peak_mb()}


def peak_mb() -> int:
    """This process's peak resident memory (``VmHWM``: since its start, not inherited like ``ru_maxrss``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def in_process(name: str, db: Path) -> dict:
    done = subprocess.run([sys.executable, str(HERE), "--measure", name, "--db", str(db)], capture_output=True,
                          text=True, check=True, env=os.environ | {"OMP_NUM_THREADS": "2"})
    return json.loads(done.stdout)


def pair_scores() -> dict:
    """Precision and recall (with counts) on the hand-labelled pairs from real agent memory, each pair's
    observations stored as the finder sees them (tests/_duplicate_pairs.py)."""
    from _duplicate_pairs import load_pairs, score, store_pairs

    from limbic.core.embedding.onnx_embedder import load_active_embedder
    from limbic.core.service import MemoryService
    from limbic.core.store.database import Database

    pairs = load_pairs()
    with tempfile.TemporaryDirectory() as tmp:
        service = MemoryService(Database(Path(tmp) / "pairs.db"), load_active_embedder())
        ids = store_pairs(service, pairs)
        out = {f"{t:.2f}": score(service, pairs, ids, t).to_dict() for t in (0.70, 0.74, 0.77, 0.80, 0.85, 0.90)}
        out["default"] = score(service, pairs, ids).to_dict()
        service.close()
    labels = [p["label"] for p in pairs]
    return {"pairs": len(pairs), "labels": {k: labels.count(k) for k in dict.fromkeys(labels)}, "by_threshold": out}


def corpus_db(folder: Path, target: Path) -> Path:
    from limbic.core.embedding.onnx_embedder import load_active_embedder
    from limbic.core.io.importer import import_files
    from limbic.core.service import MemoryService
    from limbic.core.store.database import Database

    service = MemoryService(Database(target), load_active_embedder(), origin="import")
    import_files(service, sorted(p for p in folder.glob("*.json*") if p.name != "MANIFEST.json"))
    service.wait_for_vectors()
    service.close()
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="a database with vectors of the active model (copied)")
    parser.add_argument("--corpus", type=Path, help="a folder of memory files to import and measure")
    parser.add_argument("--pairs", action="store_true", help="precision and recall on the labelled pairs")
    parser.add_argument("--measure", choices=MEASURES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.db)))
        return
    out: dict = {"load_average": [round(x, 2) for x in os.getloadavg()], "cores": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="limbic-bench-curation-") as tmp:
        for label, source in (("db", args.db), ("corpus", args.corpus)):
            if source is None:
                continue
            db = Path(tmp) / f"{label}.db"
            if label == "db":
                shutil.copyfile(source, db)
            else:
                corpus_db(source, db)
            out[label] = {name: in_process(name, db) for name in MEASURES}
    if args.pairs:
        out["pairs"] = pair_scores()
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
