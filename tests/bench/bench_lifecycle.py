"""The lifecycle's costs at 10k Debian entities: the contradiction check a written observation adds, and an
``asOf`` read of a 300-entity focus.

    python tests/bench/bench_lifecycle.py --db /path/to/debian-10k.db [--calls 200]

``--db`` is an existing database with vectors by the installed model (copied first, never written), e.g.
``limbic import`` of ``../shared/tools/debian_kg.py --limit 10000`` (tests/bench/bench_search.py builds one).
Run with the model installed (``limbic model install``). Prints one JSON object:

- ``check``: the contradiction check of one queued observation once its vector has landed (the landing path;
  docs/lifecycle.md "Contradictions"): neighbours read, compared, conflicts stored. A write's own check, inside
  its transaction, is measured by ``tests/bench/bench_write_check.py``.
- ``add_observations``: the whole write with the model embedding on the writing thread (one-shot mode), without
  and with the check, for scale.
- ``as_of``: ``open_nodes`` of a 300-entity focus (an entity and its neighbourhood) as of a date, and without.
- ``mcp_add_observations``: the tool in process, vectors landing in the background as in ``limbic mcp``: not
  waiting for the contradiction check (``--conflict-wait 0``, the default) and waiting up to 1 s for it.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from limbic.core.embedding.onnx_embedder import load_active_embedder  # noqa: E402
from limbic.core.models import ObservationInput  # noqa: E402
from limbic.core.service import MemoryService  # noqa: E402
from limbic.core.store.backend import open_database  # noqa: E402


def summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {"calls": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2)}


def variant(text: str, rng: random.Random) -> str:
    """A text like ``text`` with one number changed, or a negation added (the kind of write the check is for)."""
    numbers = re.findall(r"\d+", text)
    if numbers:
        number = rng.choice(numbers)
        return text.replace(number, str(int(number) + 1), 1)
    return "not " + text


def focus(service: MemoryService, size: int, rng: random.Random) -> list[str]:
    """About ``size`` names: a well-connected entity and its neighbours, then theirs."""
    conn = service.database.read()
    seed = conn.execute("SELECT from_id FROM relations GROUP BY from_id ORDER BY count(*) DESC LIMIT 50").fetchall()
    ids, frontier = set(), [rng.choice(seed)[0]]
    while frontier and len(ids) < size:
        current = frontier.pop(0)
        ids.add(current)
        frontier += [r[0] for r in conn.execute(
            "SELECT to_id FROM relations WHERE from_id = ?1 UNION SELECT from_id FROM relations WHERE to_id = ?1",
            (current,)) if r[0] not in ids]
    return [r[0] for r in conn.execute(
        "SELECT name FROM entities WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(sorted(ids)[:size]),))]


def mcp_writes(path: Path, embedder, rows: list, rng: random.Random) -> list[float]:
    """Latencies of ``add_observations`` through the MCP tool (in process, vectors made in the background), the
    write's own contradiction check included (its text embedded at once)."""
    from _mcp_helpers import portal_client

    from limbic.core.mcp.server import build_server

    service = MemoryService(open_database(path), embedder, origin="mcp", background_vectors=True)
    service.search.warm_up()
    seconds = []
    with portal_client(build_server(service)) as (portal, client):
        for name, content in rows[:60]:
            arguments = {"observations": [{"entityName": name, "contents": [variant(content, rng) + " (mcp)"]}]}
            started = time.perf_counter()
            portal.call(client.call_tool, "add_observations", arguments)
            seconds.append(time.perf_counter() - started)
            service.search.wait_for_vectors()  # one write at a time, as a single agent
    service.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    embedder = load_active_embedder()
    if embedder is None:
        raise SystemExit("install the model first: limbic model install")
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        shutil.copyfile(args.db, path)
        service = MemoryService(open_database(path), embedder, origin="mcp")
        service.search.warm_up()  # as limbic mcp does at start: the model and the in-memory vector copy
        conn = service.database.read()
        rows = conn.execute("SELECT e.name, o.content FROM observations o JOIN entities e ON e.id = o.entity_id "
                            "WHERE e.id IN (SELECT from_id FROM relations) AND length(o.content) < 300 "
                            "ORDER BY random() LIMIT ?", (2 * args.calls,)).fetchall()
        check, plain, checked, found = [], [], [], 0
        for name, content in rows[:args.calls]:
            service.vectors.after_land = None  # the vector lands first; the check is timed on its own
            started = time.perf_counter()
            with service.search.deferred_vectors():  # queued, as a write whose texts were not encoded first
                service.entities.add_observations([(name, [ObservationInput(variant(content, rng))])])
            plain.append(time.perf_counter() - started)
            service.search.wait_for_vectors()
            started = time.perf_counter()
            found += service.lifecycle.check_conflicts()
            check.append(time.perf_counter() - started)
        service.vectors.after_land = service.lifecycle.after_land
        for name, content in rows[args.calls:]:
            started = time.perf_counter()
            service.entities.add_observations([(name, [ObservationInput(variant(content, rng) + " (again)")])])
            checked.append(time.perf_counter() - started)
        names = focus(service, 300, rng)
        # as of the moment half of the graph had been written
        at = conn.execute("SELECT created_at FROM entities ORDER BY created_at LIMIT 1 OFFSET "
                          "(SELECT count(*) / 2 FROM entities)").get
        as_of = []
        now = []
        for _ in range(30):
            started = time.perf_counter()
            service.entities.open_nodes(names, record=False, as_of=at)
            as_of.append(time.perf_counter() - started)
            started = time.perf_counter()
            service.entities.open_nodes(names, record=False)
            now.append(time.perf_counter() - started)
        entities = service.entities.stats().entities
        then = len(service.entities.open_nodes(names, record=False, as_of=at).entities)
        service.close()
        mcp = summary(mcp_writes(path, embedder, rows, rng))
        print(json.dumps({
            "entities": entities, "model": embedder.name,
            "check": summary(check), "conflicts_found": found,
            "add_observations": {"without_check": summary(plain), "with_check": summary(checked)},
            "as_of": {"focus": len(names), "entities_then": then,
                      "open_nodes_as_of": summary(as_of), "open_nodes_now": summary(now)},
            "mcp_add_observations": mcp,
        }, indent=2))


if __name__ == "__main__":
    main()
