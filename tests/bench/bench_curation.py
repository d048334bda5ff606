"""Curation at scale: the duplicate finders (observations, entities) and the consolidation report, with seconds,
peak memory and what they propose (duplicate clusters, entity pairs, and how many of those are between two identifiers: siblings);
the duplicate finder's precision and recall on hand-labelled pairs from real agent memory; and every duplicate
suggestion on a folder of memory files with what settling it keeps, for a person to read.

    python tests/bench/bench_curation.py [--db <database with vectors>] [--corpus DIR [--suggestions]]
                                         [--pairs [FILE]] [--model NAME[@int8]]

``--db``: a database whose observations have vectors of the active model (e.g. Debian's packages as a graph
of 10,000 entities imported with ``limbic import``); it is copied first. ``--corpus DIR``: the memory files of
DIR are imported into a fresh database with the active model and measured the same way; with
``--suggestions``, every duplicate cluster found there is listed with the text a merge keeps (or the merged text
and "keep both" first), each member's state and the words of each member the kept text does not hold, and the
count of suggestions whose kept text lacks a word of a member or joins two states. ``--pairs [FILE]``:
precision and recall (with TP/FP/FN, the false positives and the duplicates missed) at the default threshold and
at 0.65..0.90 on a file of labelled pairs (default ``tests/fixtures/duplicate_pairs_corpus.jsonl``; any file of
its format: one JSON object a line with ``text_a``, ``text_b``, ``entity_a``, ``entity_b``, ``label`` one of
duplicate / specific / shared / different, optionally ``type_a``, ``type_b``), each pair's texts stored under
their entities as the finder meets them.
``--model``: embed the corpus and the pairs with that installed model instead of the active one.
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
    from limbic.core.store.backend import open_database

    service = MemoryService(open_database(db), None)
    out: dict = {}
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    if name == "duplicate_observations":
        report = service.curation.find_duplicate_observations(limit=20)
        out = {"clusters": report.total, "duplicate": sum(c.relation == "duplicate" for c in report.clusters),
               "observations": report.compared, "shared_facts": report.shared_total,
               "largest_shared": report.shared[0].count if report.shared else 0}
    elif name == "duplicate_entities":
        total, found = service.curation.find_duplicate_entities(limit=100_000)
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


def embedder_for(spec: str | None):
    """The installed model ``spec`` (NAME or NAME@int8), else the active one (``None`` when none is installed)."""
    from limbic.core.embedding.onnx_embedder import load_active_embedder, load_named_embedder

    return load_named_embedder(spec) if spec else load_active_embedder()


def pair_scores(path: Path, spec: str | None = None) -> dict:
    """Precision and recall (with counts, the false positives and the duplicates missed) on the labelled pairs
    of ``path``, each pair's observations stored as the finder sees them (tests/_duplicate_pairs.py)."""
    from _duplicate_pairs import load_pairs, score, store_pairs

    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    pairs = load_pairs(path)
    embedder = embedder_for(spec)
    with tempfile.TemporaryDirectory() as tmp:
        service = MemoryService(open_database(Path(tmp) / "pairs.db"), embedder)
        ids = store_pairs(service, pairs)
        out = {f"{t:.2f}": score(service, pairs, ids, t).to_dict() for t in (0.65, 0.70, 0.73, 0.77, 0.80, 0.85, 0.90)}
        found = score(service, pairs, ids)
        service.close()
    labels = [p["label"] for p in pairs]
    return {"file": str(path), "model": None if embedder is None else embedder.name, "pairs": len(pairs),
            "labels": {k: labels.count(k) for k in dict.fromkeys(labels)},
            "default": {**found.to_dict(), "false_positives": list(found.false_positives),
                        "missed": list(found.missed)}, "by_threshold": out}


def suggestions(db: Path) -> dict:
    """Every duplicate cluster of the database ``db`` with what settling it keeps, each member's state
    (:func:`~limbic.core.curation.states.state`) and the words of each member (lower-cased, stemmed, stop words
    aside but qualifiers such as "only" or "all", restating words such as "prefers" included; an opening "This
    package provides" left out) that the kept text — the survivor, else the merged text — does not hold; counted: suggestions whose survivor
    lacks such a word, and clusters joining two different states."""
    import re

    from limbic.core.curation import statements, states
    from limbic.core.curation.stop_words import STOP_WORDS
    from limbic.core.curation.survivors import QUALIFIERS
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    def words(text: str) -> set[str]:
        return {statements.stem(w) for w in re.findall(r"[^\W_]+", statements.without_boilerplate(text).casefold())
                if w not in STOP_WORDS or w in QUALIFIERS}

    service = MemoryService(open_database(db), None)
    report = service.curation.find_duplicate_observations(limit=100_000)
    service.close()
    listed, lacking, joined = [], 0, 0
    for cluster in report.clusters:
        kept = cluster.survivor.content if cluster.survivor is not None else cluster.merged or ""
        held = words(kept)
        others = {m.content: sorted(words(m.content) - held) for m in cluster.members}
        found_states = {states.state(m.content) for m in cluster.members} - {None}
        lacking += cluster.survivor is not None and any(others.values())
        joined += len(found_states) > 1
        listed.append({"relation": cluster.relation, "entities": list(cluster.entities), "options": list(cluster.options),
                       "keeps": None if cluster.survivor is None else cluster.survivor.content, "merged": cluster.merged,
                       "members": [{"text": m.content, "state": states.state(m.content), "not_kept": others[m.content]}
                                   for m in cluster.members]})
    return {"clusters": len(report.clusters), "with_survivor": sum(c.survivor is not None for c in report.clusters),
            "survivor_lacks_a_word": lacking, "joins_two_states": joined, "suggestions": listed}


def corpus_db(folder: Path, target: Path, spec: str | None = None) -> Path:
    from limbic.core.io.importer import import_files
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    service = MemoryService(open_database(target), embedder_for(spec), origin="import")
    import_files(service, sorted(p for p in folder.glob("*.json*") if p.name != "MANIFEST.json"))
    service.search.wait_for_vectors()
    service.close()
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="a database with vectors of the active model (copied)")
    parser.add_argument("--corpus", type=Path, help="a folder of memory files to import and measure")
    parser.add_argument("--suggestions", action="store_true",
                        help="with --corpus: list every duplicate suggestion with what it keeps")
    parser.add_argument("--pairs", nargs="?", type=Path, const=HERE.parents[1] / "fixtures" / "duplicate_pairs_corpus.jsonl",
                        metavar="FILE", help="precision and recall on a file of labelled pairs (default: the fixture)")
    parser.add_argument("--model", metavar="NAME", help="an installed model, NAME or NAME@int8 (default: the active one)")
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
                corpus_db(source, db, args.model)
            out[label] = {name: in_process(name, db) for name in MEASURES}
            if label == "corpus" and args.suggestions:
                out[label]["suggestions"] = suggestions(db)
    if args.pairs:
        out["pairs"] = pair_scores(args.pairs, args.model)
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
