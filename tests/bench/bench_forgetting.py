"""What forgetting proposes on the sample memory, idle and while agents write other things, and how the
forecast spreads over the days (docs/lifecycle.md "Forget and promote").

    python tests/bench/bench_forgetting.py --corpus DIR [--labels FILE] [--blind FILE] [--days 30 90]
    python tests/bench/bench_forgetting.py --db DB [--runs 5]

The sample memory (``resources/sample``, as the app loads it on the first run) is imported as if ``max(days)``
days ago (its usage history shifted with it and the change log moved back), so that each case is the memory as it
stands that many days after the import, read at the present:

- ``idle``: nobody uses or writes anything after the import;
- ``writing``: agents write other things after the import — whole entities of real memory files in ``--corpus``
  (ten English ones, :data:`WRITERS`), up to three a day until the files run out, with their relations and then
  their observations, as agents write them, through the service, each write logged at its simulated day — and
  use none of the sample's memories.

Prints JSON lines: one per proposal of each case (``case``, ``name``, ``entityType``, ``status``, ``reason``,
``writtenMeanwhile`` true for what the agents wrote), then one summary line per case (``proposed``, of them
``writtenMeanwhile``, ``held`` by reason; ``written``: the entities the agents wrote by then) and one per
forecast (the forget candidates of the next 90 days, as the app's *Ahead* and ``limbic gc --at +90d`` list them:
per-day counts and the largest day's share). ``--labels`` writes the proposals with each entity's name, type,
status and observations, for a person to judge; ``--blind`` writes them without the reasons, in a shuffled order
(``id``, ``case``, ``name``, ``entityType``, ``status``, ``writtenByAgentLately``, ``observations``), for a person
who has not seen the rules.

``--db`` instead times, on a copy of an existing memory (e.g. 10,000 Debian packages), the review of every entity
now and the 90-day forecast (which reviews twice: then, and now for the day each is first proposed), ``--runs``
times each, in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from limbic.core.embedding.base import HashingEmbedder  # noqa: E402
from limbic.core.io.parsers import parse_file  # noqa: E402
from limbic.core.io.sample import seed_sample_graph  # noqa: E402
from limbic.core.models import EntityInput, ObservationInput, RelationInput, iso  # noqa: E402
from limbic.core.service import MemoryService  # noqa: E402
from limbic.core.service.forgetting import Forecast  # noqa: E402

DAY = 86_400.0
WRITERS = ("spideynolove__claude-code-in-action__.aim_memory.jsonl", "HankofallTrades__STRATOS__.cursor_memory.jsonl",
           "IzzatFirdaus__ictserve-031125__memory.jsonl", "smian0__dotfiles__.aim_memory.jsonl",
           "simplicianokelly52__comet_mcp__.aim_memory.jsonl", "vivan-doshi__stock-exchange-thegame__.aim_memory.jsonl",
           "nsheaps__ai-mktpl__.claude_memory.jsonl", "ai-elevate__nimcp__.aim_memory.jsonl",
           "shanehughes1990__endless-waves__.vscode_memory.jsonl", "DoofDilla__dillapoe2stat__.vscode_memory.json")
"""Real agent memory files in English whose entities the simulated agents write, in this order."""


def backdate(service: MemoryService, since_change: int, at: float) -> None:
    """Log every change after ``since_change`` at ``at`` (UTC seconds): the writes happened then."""
    with service.database.maintenance() as conn:
        conn.execute("UPDATE changes SET at = ? WHERE id > ?", (at, since_change))


def sample_memory(path: Path, imported: float) -> MemoryService:
    """The sample memory as if imported at ``imported`` (UTC seconds): its history up to then, its log moved."""
    service = MemoryService.open(str(path), embedder=HashingEmbedder())
    seed_sample_graph(service, now=imported)
    service.usage.wait_for_signals()
    backdate(service, 0, imported)
    return service


def agent_writes(corpus: Path) -> list[tuple[list[EntityInput], list[RelationInput], list[tuple[str, list[str]]]]]:
    """Writes as an agent makes them, a few entities at a time: ``(entities without observations, relations among
    the written ones, then each entity's observations)``, from the :data:`WRITERS` files in order."""
    batches = []
    for file in WRITERS:
        parsed = parse_file(corpus / file)
        entities = [e for e in parsed.entities if e.declared and e.observations]
        for start in range(0, len(entities), 3):
            group = entities[start:start + 3]
            names = {e.name for e in group}
            batches.append(([EntityInput(e.name, e.entity_type or "Unknown", ()) for e in group],
                            [RelationInput(r.source, r.target, r.relation_type) for r in parsed.relations
                             if r.source in names and r.target in names and r.source != r.target],
                            [(e.name, [o.content for o in e.observations]) for e in group]))
    return batches


def write_day(service: MemoryService, batch: tuple, at: float) -> set[str]:
    """One day of an agent's writes through the service, logged at ``at``; the names it created. A name the memory
    holds already is left out (writing to it would be using one of its memories, not writing something else)."""
    entities, relations, observations = batch
    held = {e.name.lower() for e in service.entities.read_graph().entities}
    new = {e.name for e in entities if e.name.lower() not in held}
    if not new:
        return set()
    before = service.history.last_change_id()
    created = service.entities.create_entities([EntityInput(e.name, e.entity_type, (), created_at=at) for e in entities
                                       if e.name in new], origin="mcp:agent")
    relations = [r for r in relations if r.source in new and r.target in new]
    if relations:
        service.relations.create_relations(relations, origin="mcp:agent")
    service.entities.add_observations([(name, [ObservationInput(t) for t in texts]) for name, texts in observations
                              if name in new], origin="mcp:agent")
    backdate(service, before, at)
    return {e.name for e in created}


def observations_of(service: MemoryService, name: str) -> list[str]:
    return [o.content for o in service.entities.get_entity(name).entity.live_observations]


def proposals(service: MemoryService, case: str, at: float, written: set[str]) -> tuple[list[dict], dict]:
    found = service.lifecycle.forecast(at, now=at)
    rows = [{"case": case, "name": p.retention.name, "entityType": p.retention.entity_type,
             "status": p.retention.status, "reason": p.retention.reason, "writtenMeanwhile": p.retention.name in written}
            for p in found.proposed]
    held = Counter(r.guard for r in found.held)
    summary = {"case": case, "at": iso(at), "proposed": len(rows),
               "writtenMeanwhile": sum(r["writtenMeanwhile"] for r in rows), "held": dict(held.most_common())}
    return rows, summary


def spread(found: Forecast, label: str) -> dict:
    """Per-day counts of a forecast's candidates (days after its asking; what is proposed already is left out, as
    the app's *Ahead* leaves it out) and the largest day's share; ``proposedAlready`` counts those left out."""
    ahead = [p for p in found.proposed if p.due > found.now]
    days = Counter(int((p.due - found.now) // DAY) for p in ahead)
    return {"forecast": label, "from": iso(found.now), "to": iso(found.at), "listed": len(ahead),
            "proposedAlready": len(found.proposed) - len(ahead), "perDay": dict(sorted(days.items())),
            "maxShare": round(max(days.values()) / len(ahead), 3) if ahead else 0.0}


def timings(db: Path, runs: int) -> dict:
    """Milliseconds of ``retention()`` and of ``forecast(+90 days)`` on a copy of ``db``, ``runs`` times each."""
    with tempfile.TemporaryDirectory(prefix="limbic-forgetting-") as folder:
        path = Path(folder) / db.name
        shutil.copyfile(db, path)
        service = MemoryService.open(str(path), embedder=HashingEmbedder())
        try:
            entities = len(service.lifecycle.retention())
            review, forecast = [], []
            for _ in range(runs):
                started = time.perf_counter()
                service.lifecycle.retention()
                review.append(round((time.perf_counter() - started) * 1000))
                started = time.perf_counter()
                service.lifecycle.forecast(time.time() + 90 * DAY)
                forecast.append(round((time.perf_counter() - started) * 1000))
        finally:
            service.close()
    return {"db": db.name, "entities": entities, "review_ms": review, "forecast_90d_ms": forecast}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="the folder of real memory files the agents write (required "
                        "without --db)")
    parser.add_argument("--days", type=int, nargs="+", default=[30, 90], help="days after the import (default 30 90)")
    parser.add_argument("--labels", type=Path, help="write the proposals with their observations here (JSON lines)")
    parser.add_argument("--blind", type=Path, help="write the proposals without their reasons here, shuffled (JSON "
                        "lines)")
    parser.add_argument("--db", type=Path, help="time the review and the forecast on a copy of this memory instead")
    parser.add_argument("--runs", type=int, default=5, help="with --db: runs of each (default 5)")
    args = parser.parse_args()
    if args.db is not None:
        print(json.dumps(timings(args.db, args.runs)))
        return 0
    if args.corpus is None:
        parser.error("--corpus DIR is required: the real memory files the agents write")
    horizon = max(args.days)
    now = time.time()
    imported = now - horizon * DAY
    rows: list[dict] = []
    out: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="limbic-forgetting-") as folder:
        base = Path(folder) / "sample.db"
        service = sample_memory(base, imported)
        out.append(spread(service.lifecycle.forecast(imported + 90 * DAY, now=imported), "from the import, idle"))
        for days in args.days:
            found, summary = proposals(service, f"idle +{days}", imported + days * DAY, set())
            rows += found
            out.append(summary)
        service.close()

        batches = agent_writes(args.corpus)
        path = Path(folder) / "writing.db"
        shutil.copyfile(base, path)
        service = MemoryService.open(str(path), embedder=HashingEmbedder())
        written: set[str] = set()
        for day in range(1, horizon + 1):
            at = imported + day * DAY
            if day - 1 < len(batches):
                written |= write_day(service, batches[day - 1], at)
            if day in args.days:
                found, summary = proposals(service, f"writing +{day}", at, written)
                rows += found
                out.append({**summary, "written": len(written)})
        out.append(spread(service.lifecycle.forecast(now + 90 * DAY, now=now), f"after {horizon} days of writing"))
        judged = [{**row, "observations": observations_of(service, row["name"])} for row in rows]
        if args.labels is not None:
            with args.labels.open("w", encoding="utf-8") as handle:
                for row in judged:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        if args.blind is not None:
            random.Random(horizon).shuffle(judged)
            with args.blind.open("w", encoding="utf-8") as handle:
                for n, row in enumerate(judged):
                    handle.write(json.dumps({"id": n, "case": row["case"], "name": row["name"],
                                             "entityType": row["entityType"], "status": row["status"],
                                             "writtenByAgentLately": row["writtenMeanwhile"],
                                             "observations": row["observations"]}, ensure_ascii=False) + "\n")
        service.close()
    for row in rows + out:
        print(json.dumps(row, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
