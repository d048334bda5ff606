"""Where an ``add_observations`` spends its time on PostgreSQL against SQLite, in process and without a model.

No model means no encoding and no contradiction check: what is left is the store's own work, the part that makes
the two backends differ. Each call adds one new note to a random entity, then reads its conflicts (as the MCP
tool answers), on ``MemoryService``:

    python tests/bench/bench_pg_write.py --sqlite DB10K --pg-memory ADDRESS [--calls 150]

``--sqlite`` is copied to a temporary folder (the file given is never written); ``--pg-memory`` is a PostgreSQL
copy of it (``limbic db copy DB10K postgresql://…``), written to. Besides the whole call (p50 / p95, ms), the
phases of the PostgreSQL write are timed by wrapping them: ``BEGIN`` with the writers' lock, the rewrite of the
entity's full-text document, the text queue flushed before the commit, and the change row with ``NOTIFY`` and
``COMMIT``; and a round trip (``SELECT 1``) on its own. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_write_check import note  # noqa: E402

from limbic.core.models import ObservationInput  # noqa: E402
from limbic.core.service import MemoryService  # noqa: E402
from limbic.core.store import indexing  # noqa: E402
from limbic.core.store.backend import open_database  # noqa: E402
from limbic.core.store.postgres.database import PgDatabase  # noqa: E402

PHASES: dict[str, tuple[Any, str]] = {
    "begin_and_lock": (PgDatabase, "_begin"),
    "entity_text": (indexing, "write_entity_text"),
    "text_queue_flush": (PgDatabase, "_before_commit"),
    "change_notify_commit": (PgDatabase, "_commit"),
}


def ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 2)}


def timed(owner: Any, attr: str, into: list[float]) -> Callable[[], None]:
    """Wrap ``owner.attr`` so that each call's seconds go to ``into``; returns the function that undoes it."""
    original = getattr(owner, attr)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            into.append(time.perf_counter() - started)

    setattr(owner, attr, wrapper)
    return lambda: setattr(owner, attr, original)


def writes(address: str, calls: int, seed: int) -> tuple[list[float], dict[str, list[float]]]:
    service = MemoryService(open_database(address), None, origin="bench")
    phases: dict[str, list[float]] = defaultdict(list)
    undo = [timed(owner, attr, phases[label]) for label, (owner, attr) in PHASES.items()]
    try:
        names = [r[0] for r in service.database.read().execute("SELECT name FROM entities")]
        rng = random.Random(seed)
        totals = []
        for i in range(calls + 10):
            text = f"{note(rng, i)} ({seed}.{i})"
            started = time.perf_counter()
            added = service.entities.add_observations([(rng.choice(names), [ObservationInput(text)])])
            service.lifecycle.conflicts_of(added)
            if i >= 10:  # the first ten warm the caches
                totals.append(time.perf_counter() - started)
            time.sleep(0.01)
        for values in phases.values():
            del values[:len(values) - calls]
        return totals, phases
    finally:
        for restore in undo:
            restore()
        service.close()


def round_trip(address: str, calls: int = 300) -> float:
    import psycopg

    with psycopg.connect(address, autocommit=True) as conn:
        seconds = []
        for _ in range(calls):
            started = time.perf_counter()
            conn.execute("SELECT 1").fetchall()
            seconds.append(time.perf_counter() - started)
    return round(statistics.median(seconds) * 1000, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sqlite", type=Path, required=True, help="the SQLite memory (copied, never written)")
    parser.add_argument("--pg-memory", required=True, help="a PostgreSQL copy of it (written to)")
    parser.add_argument("--calls", type=int, default=150)
    args = parser.parse_args()
    seed = int(time.time())
    with tempfile.TemporaryDirectory() as work:
        copy = Path(work) / "memory.db"
        shutil.copyfile(args.sqlite, copy)
        sqlite_totals, sqlite_phases = writes(str(copy), args.calls, seed)
    pg_totals, pg_phases = writes(args.pg_memory, args.calls, seed)
    report = {
        "calls": args.calls,
        "sqlite": {"add_observations": ms(sqlite_totals), "entity_text": ms(sqlite_phases["entity_text"])},
        "postgresql": {"add_observations": ms(pg_totals),
                       **{label: ms(values) for label, values in pg_phases.items() if values}},
        "round_trip_p50_ms": round_trip(args.pg_memory),
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
