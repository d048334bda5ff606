"""Compose the authored sample memory into resources/sample/graph.jsonl and usage.jsonl.

Run from the repository root:  python packaging/tools/make_sample.py  [--check]

The content is written by hand in ``packaging/tools/sample_content/*.txt`` (read in name order);
the usage history is an authored table of topics and periods in ``sample_usage.py``. This script
only composes them, deterministically (no clock, fixed random seed), and validates the result:
every relation endpoint exists, every ``supersedes`` names an earlier observation of the same
entity, dated observations are not older than their entity (on the same day they are placed
after it), relations get the later of their endpoints' dates, counts are in the ranges the project
asks for. ``--check`` validates and compares with the committed files without writing.

Content format (one block per entity, blocks separated by blank lines, ``#`` starts a comment):

    @ Type | Entity name | YYYY-MM-DD[THH:MM] [| status]   header: the entity's createdAt (UTC; without
                                                     a time, one in working hours hashed from the name)
    plain text                                       a fact, written as a plain string
    [d] text  [p] text  [e] text  [m] text  [f] text  decision, preference, event, metadata, fact
    [e 2026-06-09] text                              any kind with its own createdAt (that day)
    [>> 2026-06-11] text  /  [>>m 2026-06-11] text   supersedes the observation on the line above
                                                     (same kind unless a letter is given); the old
                                                     one gets its entity's date if it has none
    -> relation_type Target name                     a relation from this entity
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sample_usage

HERE = Path(__file__).resolve().parent
CONTENT_DIR = HERE / "sample_content"
OUT_DIR = HERE.parent.parent / "resources" / "sample"
KINDS = {"f": "fact", "d": "decision", "p": "preference", "e": "event", "m": "metadata"}
STATUSES = ("active", "paused", "completed", "archived")
HEADER = re.compile(r"^@\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|\s*(\d{4}-\d{2}-\d{2})(?:T(\d\d):(\d\d))?\s*(?:\|\s*(\w+)\s*)?$")
TAGGED = re.compile(r"^\[(>>)?([fdpem])?(?: (\d{4}-\d{2}-\d{2}))?\] (.+)$")
RELATION = re.compile(r"^-> (\w+) (.+)$")
LIMITS = {"entities": (150, 300), "relations": (300, 10_000)}


class ContentError(Exception):
    """The authored content breaks the format or a validation rule (message names file and line)."""


@dataclass
class Obs:
    text: str
    kind: str | None  # None: a plain-string fact
    created: datetime | None = None
    supersedes: str | None = None


@dataclass
class Ent:
    name: str
    entity_type: str
    created: datetime
    status: str | None
    where: str
    observations: list[Obs] = field(default_factory=list)


def _clock(day: str, salt: str, *, start_hour: int = 8, hours: int = 10) -> datetime:
    """A deterministic time of day (working hours, UTC) for a date: hashed from ``salt``."""
    digest = int.from_bytes(hashlib.sha256(salt.encode()).digest()[:4], "big")
    minute = digest % (hours * 60)
    base = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)
    return base + timedelta(hours=start_hour, minutes=minute, seconds=(digest >> 12) % 60)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_content(paths: list[Path]) -> tuple[list[Ent], list[tuple[str, str, str, str]]]:
    """Entities in file order and relations as (source, target, relation_type, where)."""
    entities: list[Ent] = []
    relations: list[tuple[str, str, str, str]] = []
    current: Ent | None = None
    for path in paths:
        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = raw.strip()
            where = f"{path.name}:{number}"
            if not line or line.startswith("#"):
                continue
            if line.startswith("@"):
                match = HEADER.match(line)
                if not match:
                    raise ContentError(f"{where}: bad entity header {line!r}")
                entity_type, name, day, hour, minute, status = match.groups()
                if status is not None and status not in STATUSES:
                    raise ContentError(f"{where}: unknown status {status!r}")
                created = _clock(day, name)
                if hour is not None:
                    created = created.replace(hour=int(hour), minute=int(minute), second=0)
                current = Ent(name, entity_type, created, status, where)
                entities.append(current)
                continue
            if current is None:
                raise ContentError(f"{where}: text before the first entity header")
            if match := RELATION.match(line):
                relations.append((current.name, match.group(2).strip(), match.group(1), where))
            elif match := TAGGED.match(line):
                arrow, letter, day, text = match.groups()
                created = _clock(day, text, start_hour=9, hours=9) if day else None
                if created is not None and created.date() == current.created.date():
                    created = max(created, current.created + timedelta(minutes=5))
                if arrow:
                    if not current.observations or day is None:
                        raise ContentError(f"{where}: '>>' needs a date and an observation above it")
                    previous = current.observations[-1]
                    kind = KINDS[letter] if letter else (previous.kind or "fact")
                    previous.kind = previous.kind or "fact"
                    previous.created = previous.created or current.created
                    current.observations.append(Obs(text, kind, created, previous.text))
                else:
                    current.observations.append(Obs(text, KINDS[letter or "f"], created))
            else:
                current.observations.append(Obs(line, None))
    return entities, relations


def validate(entities: list[Ent], relations: list[tuple[str, str, str, str]]) -> None:
    """Raise ContentError on the first rule broken (see the module docstring)."""
    names: dict[str, Ent] = {}
    for entity in entities:
        if entity.name in names:
            raise ContentError(f"{entity.where}: duplicate entity {entity.name!r}")
        names[entity.name] = entity
        texts: dict[str, Obs] = {}
        for obs in entity.observations:
            if obs.text in texts:
                raise ContentError(f"{entity.where}: repeated observation {obs.text[:50]!r}")
            if obs.created is not None and obs.created.date() < entity.created.date():
                raise ContentError(f"{entity.where}: observation dated before {entity.name!r} was created: "
                                   f"{obs.text[:50]!r}")
            if obs.supersedes is not None:
                old = texts.get(obs.supersedes)
                if old is None:
                    raise ContentError(f"{entity.where}: supersedes an unknown text {obs.supersedes[:50]!r}")
                if old.created is not None and obs.created is not None and old.created >= obs.created:
                    raise ContentError(f"{entity.where}: {obs.text[:50]!r} is not newer than what it supersedes")
            texts[obs.text] = obs
        if not entity.observations:
            raise ContentError(f"{entity.where}: {entity.name!r} has no observation")
    seen: set[tuple[str, str, str]] = set()
    for source, target, relation_type, where in relations:
        if target not in names:
            raise ContentError(f"{where}: relation target {target!r} does not exist")
        if source == target or (source, target, relation_type) in seen:
            raise ContentError(f"{where}: self or repeated relation {source!r} -[{relation_type}]-> {target!r}")
        seen.add((source, target, relation_type))
    counts = {"entities": len(entities), "relations": len(relations)}
    for key, (low, high) in LIMITS.items():
        if not low <= counts[key] <= high:
            raise ContentError(f"{counts[key]} {key}; expected {low}-{high}")


def graph_lines(entities: list[Ent], relations: list[tuple[str, str, str, str]]) -> list[str]:
    """The reference JSONL records, with the optional extras (status, createdAt, observation objects)."""
    lines = []
    for entity in entities:
        observations: list[object] = []
        for obs in entity.observations:
            if obs.kind is None:
                observations.append(obs.text)
                continue
            item: dict[str, object] = {"text": obs.text, "kind": obs.kind}
            if obs.supersedes is not None:
                item["supersedes"] = obs.supersedes
            if obs.created is not None:
                item["createdAt"] = iso(obs.created)
            observations.append(item)
        record: dict[str, object] = {"type": "entity", "name": entity.name, "entityType": entity.entity_type,
                                     "observations": observations}
        if entity.status is not None:
            record["status"] = entity.status
        record["createdAt"] = iso(entity.created)
        lines.append(json.dumps(record, ensure_ascii=False))
    created = {e.name: e.created for e in entities}
    for source, target, relation_type, _ in relations:
        moment = max(created[source], created[target]) + timedelta(minutes=2)
        lines.append(json.dumps({"type": "relation", "from": source, "to": target,
                                 "relationType": relation_type, "createdAt": iso(moment)}, ensure_ascii=False))
    return lines


def summary(entities: list[Ent], relations: list, events: list[dict]) -> dict[str, object]:
    kinds = Counter(o.kind or "fact (plain string)" for e in entities for o in e.observations)
    access = Counter(name for event in events for name in event["accessed"])
    days: dict[str, set[str]] = {}
    for event in events:
        for name in event["accessed"]:
            days.setdefault(name, set()).add(event["at"][:10])
    return {
        "entities": len(entities),
        "entity_types": dict(Counter(e.entity_type for e in entities).most_common()),
        "statuses": dict(Counter(e.status or "active" for e in entities).most_common()),
        "relations": len(relations),
        "relation_types": len({r[2] for r in relations}),
        "observations": sum(kinds.values()),
        "observations_by_kind": dict(kinds.most_common()),
        "superseding_observations": sum(1 for e in entities for o in e.observations if o.supersedes),
        "usage_events": len(events),
        "usage_accesses": sum(access.values()),
        "usage_distinct_days": len({event["at"][:10] for event in events}),
        "entities_accessed": len(access),
        "most_accessed": access.most_common(8),
        "most_days": sorted(((len(v), k) for k, v in days.items()), reverse=True)[:8],
        "first_event": events[0]["at"], "last_event": events[-1]["at"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="validate and compare, do not write")
    args = parser.parse_args(argv)
    try:
        entities, relations = parse_content(sorted(CONTENT_DIR.glob("*.txt")))
        validate(entities, relations)
        created = {e.name: e.created for e in entities}
        events = sample_usage.generate(created)
    except (ContentError, sample_usage.UsageError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    outputs = {
        OUT_DIR / "graph.jsonl": "\n".join(graph_lines(entities, relations)) + "\n",
        OUT_DIR / "usage.jsonl": "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events),
    }
    stale = [p.name for p, text in outputs.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if args.check:
        print(json.dumps(summary(entities, relations, events), indent=1, ensure_ascii=False))
        if stale:
            print(f"out of date: {', '.join(stale)}", file=sys.stderr)
            return 1
        return 0
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
    print(json.dumps(summary(entities, relations, events), indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
