"""Import speed on a large real graph: seconds and entities per second.

    python tests/bench/bench_import.py [--limit 10000] [--graph FILE] [--model-dir DIR] [--variant int8]

Builds ``N`` entities from Debian's package descriptions (../shared/tools/debian_kg.py, unless
``--graph`` names an existing JSONL file), then imports the file into a fresh database with
:func:`limbic.core.io.importer.import_file`: once with the deterministic ``HashingEmbedder``, and once
with the real ONNX model when one is installed (the active model under ``LIMBIC_HOME`` /
the user cache, or ``--model-dir``). A second import of the same file into the same database is timed
too (it must add nothing). Prints one JSON object per embedder.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.io.importer import import_file
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

TOOL = Path(__file__).resolve().parents[3] / "shared" / "tools" / "debian_kg.py"


def build_graph(limit: int, folder: Path) -> Path:
    target = folder / f"debian-{limit}.jsonl"
    with target.open("w", encoding="utf-8") as out:
        subprocess.run([sys.executable, str(TOOL), "--limit", str(limit)], stdout=out, check=True)
    return target


def real_embedder(model_dir: Path | None, variant: str):
    """The ONNX embedder of ``model_dir`` or of the active installed model; None when there is none."""
    if model_dir is not None:
        from limbic.core.embedding.onnx_embedder import OnnxEmbedder

        return OnnxEmbedder(model_dir, variant=variant)
    from limbic.core.embedding.onnx_embedder import load_active_embedder

    return load_active_embedder()


def run(graph: Path, embedder, folder: Path) -> dict:
    service = MemoryService(open_database(folder / f"bench-{embedder.name}.db"), embedder, origin="import")
    try:
        started = time.perf_counter()
        report = import_file(service, graph)
        seconds = time.perf_counter() - started
        stats = service.entities.stats()
        started = time.perf_counter()
        again = import_file(service, graph)
        second = time.perf_counter() - started
    finally:
        service.close()
    return {
        "embedder": embedder.name, "file": graph.name, "entities": stats.entities, "relations": stats.relations,
        "observations": stats.observations, "vectors": stats.embedded_entities, "seconds": round(seconds, 2),
        "entities_per_second": round(stats.entities / seconds, 1), "placeholders": len(report.placeholders),
        "skipped": len(report.skipped), "reimport_seconds": round(second, 2),
        "reimport_added_nothing": again.added_nothing,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=10_000, help="entities (0 = all ~63k)")
    parser.add_argument("--graph", type=Path, help="an existing JSONL graph instead of building one")
    parser.add_argument("--model-dir", type=Path, help="an installed model directory (default: the active model)")
    parser.add_argument("--variant", default="fp32", help="model variant with --model-dir (fp32 or int8)")
    parser.add_argument("--skip-hashing", action="store_true", help="only time the real model")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="limbic-bench-import-") as tmp:
        folder = Path(tmp)
        graph = args.graph or build_graph(args.limit, folder)
        embedders = [] if args.skip_hashing else [HashingEmbedder()]
        model = real_embedder(args.model_dir, args.variant)
        if model is None:
            print("no ONNX model installed: timing the hashing embedder only", file=sys.stderr)
        else:
            embedders.append(model)
        for embedder in embedders:
            print(json.dumps(run(graph, embedder, folder)), flush=True)


if __name__ == "__main__":
    main()
