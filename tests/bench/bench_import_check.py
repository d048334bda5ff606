"""What the contradiction check of an import costs and finds on a large memory: every current observation queued
again (as an import queues them) and checked in batches, as the import's landing does.

    python tests/bench/bench_import_check.py --db /path/to/debian-10k.db [--list]

``--db`` is a memory whose vectors were made by the active model (``limbic import`` of
``debian_kg.py --limit 10000``); it is copied, never written. Prints one JSON object: the observations checked,
the conflicts found, the wall and CPU seconds of the check and per observation (µs), and with ``--list`` every
conflict (reason, entity, the two texts) for reading.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from limbic.core.embedding.onnx_embedder import load_active_embedder  # noqa: E402
from limbic.core.service import conflict_checks as checks  # noqa: E402
from limbic.core.service.memory import MemoryService  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--list", action="store_true", help="list every conflict found")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "memory.db"
        shutil.copyfile(args.db, copy)
        service = MemoryService.open(copy, embedder=load_active_embedder())
        try:
            def requeue(txn):
                txn.conn.execute("DELETE FROM conflicts")
                return checks.queue_new(txn, 0)

            queued = service.write("check_conflicts", "system", requeue)
            wall, cpu = time.perf_counter(), time.process_time()
            found = service.lifecycle.check_conflicts()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            _, rows = service.lifecycle.open_conflicts()
        finally:
            service.close()
    report = {"observations": queued, "conflicts": found, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
              "per_observation_us": round(1e6 * wall / max(1, queued), 1)}
    if args.list:
        report["found"] = [{"reason": r.reason, "entity": r.entity, "old": r.other_content, "new": r.content}
                           for r in rows]
    print(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
