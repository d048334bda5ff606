"""Curation at scale: the duplicate finder (exact blocked product, faiss flat range search, the report's
approximate scan and its recall), the consolidation report, with seconds and peak memory; and the duplicate
threshold on the labelled pairs.

    python tests/bench/bench_curation.py --db <database with vectors> [--corpus DIR] [--pairs]

``--db``: a database whose observations have vectors of the active model (e.g. ``debian_kg.py --limit
10000`` imported with ``limbic import``); it is copied first. ``--corpus DIR``: the memory files of DIR are
imported into a fresh database with the active model and measured the same way. ``--pairs``: precision and
recall of the duplicate finder on ``tests/fixtures/duplicate_pairs.json`` at thresholds 0.75..0.90.
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

import numpy as np

HERE = Path(__file__).resolve()
PAIRS = HERE.parents[1] / "fixtures" / "duplicate_pairs.json"
MEASURES = ("duplicates_exact", "duplicates_faiss_flat", "duplicates_approximate", "consolidation_report")


def measure(name: str, db: Path) -> dict:
    """One timing, in this process (run by :func:`in_process`)."""
    from limbic.core.curation import duplicates
    from limbic.core.service import MemoryService, review
    from limbic.core.store.database import Database

    service = MemoryService(Database(db), None)
    out: dict = {}
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    if name == "duplicates_exact":
        report = service.find_duplicate_observations(limit=20)
        out = {"clusters": report.total, "observations": report.compared}
    elif name == "duplicates_approximate":
        report = service.find_duplicate_observations(limit=20, approximate=True)
        out = {"clusters": report.total, "observations": report.compared}
    elif name == "duplicates_faiss_flat":
        import faiss

        conn = service.database.read()
        rows = duplicates.load_observation_rows(conn, service._stored_model() or "", time.time())
        index = faiss.IndexFlatIP(rows.unit.shape[1])
        index.add(np.ascontiguousarray(rows.unit))
        limits, _, _ = index.range_search(np.ascontiguousarray(rows.unit), duplicates.DEFAULT_THRESHOLD)
        out = {"pairs_both_ways": int(limits[-1]), "observations": len(rows)}
    elif name == "consolidation_report":
        sections = review.review(service, limit=10)
        out = {"totals": {s.kind: s.total for s in sections}}
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


def recall(db: Path) -> dict:
    """Pairs the report's approximate scan finds among those of the exact scan."""
    from limbic.core.curation import duplicates
    from limbic.core.store.database import Database

    database = Database(db)
    model = database.get_setting("embedding_model") or ""
    rows = duplicates.load_observation_rows(database.read(), model, time.time())
    exact = duplicates.similar_pairs(rows.unit, duplicates.DEFAULT_THRESHOLD)
    found = duplicates.approximate_pairs(rows.unit, duplicates.DEFAULT_THRESHOLD)
    database.close()
    n = len(rows) + 1
    exact_keys, found_keys = exact[0] * n + exact[1], found[0] * n + found[1]
    return {"exact_pairs": len(exact_keys), "approximate_pairs": len(found_keys),
            "recall": round(float(np.isin(exact_keys, found_keys).mean()) if len(exact_keys) else 1.0, 4)}


def pair_scores() -> dict:
    """Precision and recall on the labelled pairs, each pair's observations stored as the finder sees them."""
    from limbic.core.embedding.onnx_embedder import load_active_embedder
    from limbic.core.models import EntityInput, ObservationInput
    from limbic.core.service import MemoryService
    from limbic.core.store.database import Database

    pairs = json.loads(PAIRS.read_text(encoding="utf-8"))["pairs"]
    texts: dict[str, list[str]] = {}
    for pair in pairs:
        for entity, text in (pair["a"], pair["b"]):
            texts.setdefault(entity, [])
            if text not in texts[entity]:
                texts[entity].append(text)
    with tempfile.TemporaryDirectory() as tmp:
        service = MemoryService(Database(Path(tmp) / "pairs.db"), load_active_embedder())
        service.create_entities([EntityInput(n, "Thing", tuple(ObservationInput(t) for t in found))
                                 for n, found in texts.items()])
        ids = {(e.name, o.content): o.id for e in service.read_graph().entities for o in e.observations}
        out = {}
        for threshold in (0.75, 0.78, 0.80, 0.82, 0.85, 0.90):
            report = service.find_duplicate_observations(threshold=threshold, limit=1000)
            found_pairs = {frozenset((a, b)) for c in report.clusters for a, b, _ in c.pairs}
            predicted = [frozenset((ids[tuple(p["a"])], ids[tuple(p["b"])])) in found_pairs for p in pairs]
            truth = [p["duplicate"] for p in pairs]
            hits = sum(p and t for p, t in zip(predicted, truth, strict=True))
            out[f"{threshold:.2f}"] = {"precision": round(hits / max(sum(predicted), 1), 3),
                                       "recall": round(hits / sum(truth), 3)}
        service.close()
    return {"pairs": len(pairs), "duplicates": sum(p["duplicate"] for p in pairs), "by_threshold": out}


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
            out[label]["approximate_recall"] = recall(db)
    if args.pairs:
        out["pairs"] = pair_scores()
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
