"""What the contradiction check costs a write over MCP stdio: ``add_observations`` with its check against
``open_nodes``, and against the same write on a server without a model (no embedding, no check), in one run.

    LIMBIC_HOME=HOME python tests/bench/bench_write_check.py --db /path/to/debian-10k.db [--calls 200] [--pause 0]

``--db`` is a database whose vectors were made by the active model of ``HOME`` (``limbic model use --int8 …``
then ``limbic import`` of ``../shared/tools/debian_kg.py --limit 10000``); it is copied twice, never written.
Two servers run at once, each its own ``limbic mcp`` process: *checked* with the model, and *unchecked* with
``LIMBIC_HOME`` pointed at an empty home (full-text only). Their calls alternate round by round, so both meet the
same load. Each ``add_observations`` adds one new note (a sentence about the package) to a random entity.
``encode`` is the model's encoding of one such note in this process: ``query``, the query encoding of the text as
the write encodes it (``"<entity>: <note>"``; also without the entity's name, and ``embed`` of the same passage),
with the server's model and threads; ``in_process`` times the parts of the same
write on ``MemoryService``: the whole write, what precedes its transaction (its texts read, and encoded when
they may conflict), and the check inside its transaction.
With ``--changing N`` every note is a status written to one of the first N entities, so that every write may
conflict: its text is encoded and checked (without it, most notes cannot conflict with what their entity holds,
and are not encoded for the check). Prints one JSON object with p50/p95 in ms and the targets: ``add_observations`` p50 ≤ ``open_nodes`` p50 + query
encoding p50 + 2 ms over stdio, and the check ≤ 5 ms p50 on top of the write (``in_process.check``; also
``check_cost_p50_ms``: checked − unchecked over stdio, the encoding included).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _mcp_helpers import LIMBIC, stdio_client  # noqa: E402

from limbic.core.embedding.onnx_embedder import load_active_embedder  # noqa: E402
from limbic.core.store.indexing import observation_passage  # noqa: E402

NOTES = [
    "the maintainer plans to drop the {arch} build in the next upload",
    "builds reproducibly on {arch} since the last upload",
    "the upstream project moved its repository to a new forge",
    "a security fix for the parser is waiting in the {arch} queue",
    "needs a newer compiler than the one in stable",
    "its test suite is skipped on {arch} because it times out",
    "the documentation package was split out last year",
    "upstream tags a release roughly every six months",
]
ARCHES = ["amd64", "arm64", "armhf", "i386", "ppc64el", "s390x", "riscv64", "mips64el"]


def stats(latencies: list[float]) -> dict:
    ordered = sorted(latencies)
    return {"calls": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 2)}


STATES = ("Status: planned", "Status: in progress", "Status: blocked on review", "Status: done")
CHANGING = False
"""``--changing``: every note a status of a few entities, so each write may conflict and is encoded and checked."""


def note(rng: random.Random, i: int) -> str:
    if CHANGING:
        return f"{rng.choice(STATES)} (update {i})"
    return f"{rng.choice(NOTES).format(arch=rng.choice(ARCHES))} (note {i})"


def encoding(names: list[str], calls: int, pause: float = 0.0) -> dict:
    """p50 of the active model encoding one note: as a query and as the stored passage."""
    model = load_active_embedder()
    if model is None:
        raise SystemExit("no model in LIMBIC_HOME: install one, and `limbic model use --int8 all-MiniLM-L6-v2`")
    rng = random.Random(3)
    for i in range(10):
        model.embed_query(note(rng, i))
    query, alone, passage = [], [], []
    for i in range(calls):
        name, text = rng.choice(names), note(rng, i)
        time.sleep(pause)  # the rhythm of the calls: after a pause the model's threads start cold
        t0 = time.perf_counter()
        model.embed_query(observation_passage(name, text))  # what the write encodes: "<entity>: <text>"
        query.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        model.embed_query(text)
        alone.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        model.embed([observation_passage(name, text)])
        passage.append(time.perf_counter() - t0)
    return {"model": model.name, "query": stats(query), "query_without_entity_name": stats(alone),
            "passage": stats(passage)}


async def run(checked_db: Path, unchecked_db: Path, empty_home: Path, names: list[str], calls: int,
              out: Path, pause: float = 0.0) -> dict:
    from mcp.client.stdio import StdioServerParameters

    checked = StdioServerParameters(command=LIMBIC, args=["--db", str(checked_db), "mcp"], env=dict(os.environ))
    unchecked = StdioServerParameters(command=LIMBIC, args=["--db", str(unchecked_db), "mcp"],
                                      env={**os.environ, "LIMBIC_HOME": str(empty_home)})
    rng = random.Random(11)
    times: dict[str, list[float]] = {"checked open_nodes": [], "checked add_observations": [],
                                     "unchecked open_nodes": [], "unchecked add_observations": []}
    conflicts = 0
    async with stdio_client(checked, out / "checked.stderr") as a, stdio_client(unchecked, out / "unchecked.stderr") as b:
        servers = {"checked": a, "unchecked": b}
        for i in range(-10, calls):  # 10 warm-up rounds: the model loads, the vector copy fills
            entity, other = rng.choice(names), rng.sample(names, 2)
            text = note(rng, i)
            for label, client in servers.items():
                for tool, arguments in (("open_nodes", {"names": other}),
                                        ("add_observations", {"observations": [
                                            {"entityName": entity, "contents": [f"{text} [{label}]"]}]})):
                    t0 = time.perf_counter()
                    result = await client.call_tool(tool, arguments)
                    elapsed = time.perf_counter() - t0
                    if result.is_error:
                        raise RuntimeError(f"{label} {tool}: {result.content[0].text}")
                    if i >= 0:
                        times[f"{label} {tool}"].append(elapsed)
                        conflicts += len((result.structured_content or {}).get("conflicts") or [])
            await anyio.sleep(pause)
    figures = {key: stats(value) for key, value in times.items()}
    figures["conflicts_reported"] = conflicts
    return figures


def in_process(db: Path, names: list[str], calls: int, pause: float = 0.0) -> dict:
    """The parts of one ``add_observations`` on ``MemoryService`` (vectors made in the background, the vector copy
    warm, as in ``limbic mcp``): the whole write; ``before``, what precedes its transaction (the texts read
    against the entity's, and the encoding of the new text when some rule could flag it); and ``check``, the
    check inside it (vectors stored, neighbours compared, conflicts stored; or, when nothing was encoded, the
    texts read again for what other writers added). ``encoded``: the writes whose text had to be encoded."""
    from limbic.core.models import ObservationInput
    from limbic.core.service import MemoryService, conflict_checks, lifecycle
    from limbic.core.store.backend import open_database

    times: dict[str, list[float]] = {"write": [], "before": [], "check": []}
    encoded = [0]
    check_written, possible_written = conflict_checks.check_written, conflict_checks.possible_written
    written_vectors = lifecycle.Lifecycle.written_vectors

    def timed(key, function):
        def call(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                result = function(*args, **kwargs)
                if key == "before" and result:
                    encoded[0] += 1
                return result
            finally:
                times[key].append(time.perf_counter() - t0)
        return call

    conflict_checks.check_written = timed("check", check_written)  # measured where the service calls them
    conflict_checks.possible_written = timed("check", possible_written)
    lifecycle.Lifecycle.written_vectors = timed("before", written_vectors)  # type: ignore[method-assign]
    service = MemoryService(open_database(db), load_active_embedder(), origin="mcp", background_vectors=True)
    try:
        service.search.warm_up()
        rng = random.Random(5)
        for i in range(-10, calls):
            t0 = time.perf_counter()
            service.entities.add_observations([(rng.choice(names), [ObservationInput(f"{note(rng, i)} [in process]")])])
            times["write"].append(time.perf_counter() - t0)
            if i < 0:
                for values in times.values():
                    values.clear()
                encoded[0] = 0
            time.sleep(pause)
    finally:
        service.close()
        conflict_checks.check_written, conflict_checks.possible_written = check_written, possible_written
        lifecycle.Lifecycle.written_vectors = written_vectors  # type: ignore[method-assign]
    return {**{key: stats(values) for key, values in times.items() if values}, "encoded": encoded[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--changing", type=int, default=0, metavar="N",
                        help="write statuses to the first N entities only (each write may conflict: encoded and "
                             "checked) instead of notes about random ones (most need no encoding)")
    parser.add_argument("--pause", type=float, default=0.0,
                        help="seconds between rounds (0: back to back; an agent writes far less often, and the "
                             "background embedder then keeps up)")
    args = parser.parse_args()
    import apsw

    conn = apsw.Connection(str(args.db), flags=apsw.SQLITE_OPEN_READONLY)
    names = [r[0] for r in conn.execute("SELECT name FROM entities ORDER BY id")]
    if args.changing:
        global CHANGING
        CHANGING, names = True, names[: args.changing]
    counts = {"entities": len(names), "observations": conn.execute("SELECT count(*) FROM observations").get,
              "observation_vectors": conn.execute("SELECT count(*) FROM observation_embedding_meta").get}
    conn.close()
    with tempfile.TemporaryDirectory(prefix="limbic-bench-check-") as tmp:
        work = Path(tmp)
        copies = []
        for label in ("checked", "unchecked", "in-process"):
            copy = work / f"{label}.db"
            shutil.copy(args.db, copy)
            copies.append(copy)
        (work / "empty-home").mkdir()
        figures = anyio.run(run, copies[0], copies[1], work / "empty-home", names, args.calls, work, args.pause)
        encode = encoding(names, args.calls, args.pause)
        service = in_process(copies[2], names, args.calls, args.pause)
    add, opened = figures["checked add_observations"]["p50_ms"], figures["checked open_nodes"]["p50_ms"]
    report = {**counts, "pause_s": args.pause, **figures, "encode": encode, "in_process": service,
              "target_add_vs_open": {"add_p50_ms": add,
                                     "open_nodes_p50_plus_query_encoding_plus_2_ms":
                                         round(opened + encode["query"]["p50_ms"] + 2, 2)},
              "check_cost_p50_ms": round(add - figures["unchecked add_observations"]["p50_ms"], 2)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
