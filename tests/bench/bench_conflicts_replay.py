"""The contradiction check the way it runs: whole real memory files written through MCP as agents write them, every
warning collected and scored against hand labels.

    python tests/bench/bench_conflicts_replay.py --corpus DIR [--labels tests/fixtures/contradictions_corpus.jsonl]
        [--split dev|held_out|all] [--variant separate|inline|import] [--files NAME,...] [--errors] [--out FILE]

``DIR`` is a folder of real agent memory files (JSONL or JSON, as agents' memory servers write them). For each file
a new memory is made and a ``limbic --db … mcp`` server started over stdio with the active model
(``limbic model install``); the file is written the way an agent writes it:

- ``separate`` (default): ``create_entities`` with names and types only, ``create_relations``, then one
  ``add_observations`` call per entity with all of its observations;
- ``inline``: ``create_entities`` with the observations inside, then ``create_relations``;
- ``import``: ``limbic import`` of the whole file (the check then runs batched after the import's vectors land).

Every conflict stored is a warning (those in the write's answer and those found once the vectors landed). The
labels (``--labels``) are pairs of observations a person marked ``clear`` or ``unclear`` by the rule "a person
would want to be told: the two cannot both be true now" (docs/lifecycle.md "Measuring the check"), made by
people who never saw the detector, with the warnings nobody listed that another person, as blind to it, judged
right under the same rule (``"source": "judged"``). A warning is right when its pair is labelled (either way round);
recall counts the ``clear`` labels found. ``--split`` keeps the files of one side of the split the labellers chose (the labels'
``split`` file): the held-out files are for measuring only. Prints one JSON object: per variant, per language
and in all, the observations written, warnings, right, wrong, ``precision``, ``recall`` of the clear ones with
counts, and warnings per 25 observations written; ``--errors`` lists the wrong warnings and the misses (read them
on the dev files only); ``--out`` writes every warning as JSONL (for labelling).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _mcp_helpers import LIMBIC, outcome, stdio_client  # noqa: E402

from limbic.core.io.parsers import parse_file  # noqa: E402
from limbic.core.service.memory import MemoryService  # noqa: E402

LABELS = HERE.parent / "fixtures" / "contradictions_corpus.jsonl"
SPLIT = HERE.parent / "fixtures" / "contradictions_corpus_split.json"
BATCH = 50


def _params(db: Path):
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "LIMBIC_HOME", "PYTHONPATH", "LANG")}
    return StdioServerParameters(command=LIMBIC, args=["--db", str(db), "mcp"], env=env)


async def _write(path: Path, db: Path, variant: str) -> int:
    """Write ``path`` into ``db`` through MCP; returns the observations written."""
    parsed = parse_file(path)
    entities = [e for e in parsed.entities if e.name.strip()]
    names = {e.name for e in entities}
    relations = [{"from": r.source, "to": r.target, "relationType": r.relation_type}
                 for r in parsed.relations if r.source in names and r.target in names]
    written = 0
    async with stdio_client(_params(db)) as client:
        async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            answer = outcome(await client.call_tool(tool, arguments))
            if answer["error"]:
                raise RuntimeError(f"{path.name}: {tool} failed: {answer['text']}")
            return answer

        for start in range(0, len(entities), BATCH):
            chunk = entities[start:start + BATCH]
            await call("create_entities", {"entities": [
                {"name": e.name, "entityType": e.entity_type or "entity",
                 "observations": [o.content for o in e.observations] if variant == "inline" else []}
                for e in chunk]})
            if variant == "inline":
                written += sum(len(e.observations) for e in chunk)
        for start in range(0, len(relations), BATCH):
            await call("create_relations", {"relations": relations[start:start + BATCH]})
        if variant == "separate":
            for e in entities:
                if e.observations:
                    await call("add_observations", {"observations": [
                        {"entityName": e.name, "contents": [o.content for o in e.observations]}]})
                    written += len(e.observations)
    return written


def _import(path: Path, db: Path) -> int:
    done = subprocess.run([LIMBIC, "--db", str(db), "import", str(path), "--json"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{path.name}: import failed: {done.stderr[-500:]}")
    return sum(len(e.observations) for e in parse_file(path).entities)


def warnings_of(db: Path) -> list[dict[str, str]]:
    """Every conflict stored in ``db`` once the checks still queued have run."""
    service = MemoryService.open(db)
    try:
        service.lifecycle.check_conflicts()
        _, rows = service.lifecycle.open_conflicts()
        return [{"entity_a": r.other_entity, "text_a": r.other_content, "entity_b": r.entity, "text_b": r.content,
                 "reason": r.reason, "similarity": round(r.similarity, 3)} for r in rows]
    finally:
        service.close()


def _key(entity_a: str, text_a: str, entity_b: str, text_b: str) -> frozenset:
    return frozenset(((entity_a, text_a), (entity_b, text_b)))


def language(text: str) -> str:
    """The script a file's text is mostly written in: ``ko``, ``zh``, ``ru`` or ``latin``."""
    counts = Counter("ko" if "\uac00" <= ch <= "\ud7af" else "zh" if "\u4e00" <= ch <= "\u9fff"
                     else "ru" if "\u0400" <= ch <= "\u04ff" else "latin" for ch in text if ch.isalpha())
    foreign = {k: v for k, v in counts.items() if k != "latin"}
    if foreign and max(foreign.values()) >= 0.2 * sum(counts.values()):
        return max(foreign, key=lambda k: foreign[k])
    return "latin"


def score(rows: list[tuple[str, int, list[dict]]], labels: list[dict]) -> tuple[dict, list[str]]:
    """Counts per language and in all for ``(file, observations written, warnings)`` rows."""
    by_file: dict[str, dict[frozenset, dict]] = defaultdict(dict)
    for label in labels:
        by_file[label["file"]][_key(label["entity_a"], label["text_a"], label["entity_b"], label["text_b"])] = label
    totals: dict[str, Counter] = defaultdict(Counter)
    errors = []
    for name, written, found in rows:
        lang = language(" ".join(w["text_b"] for w in found) + " ".join(
            label["text_a"] for label in by_file[name].values()) + name)
        keys = set()
        for w in found:
            key = _key(w["entity_a"], w["text_a"], w["entity_b"], w["text_b"])
            keys.add(key)
            right = key in by_file[name]
            for group in (lang, "all"):
                totals[group]["warnings"] += 1
                totals[group]["right" if right else "wrong"] += 1
            if not right:
                errors.append(f"wrong  {name} [{w['entity_a']}|{w['entity_b']}] {w['text_a']!r} / {w['text_b']!r}: "
                              f"{w['reason']}")
        for key, label in by_file[name].items():
            if label["label"] == "clear":
                hit = key in keys
                for group in (lang, "all"):
                    totals[group]["clear"] += 1
                    totals[group]["clear_found"] += hit
                if not hit:
                    errors.append(f"missed {name} [{label['entity_a']}|{label['entity_b']}] {label['text_a']!r} / "
                                  f"{label['text_b']!r} ({label.get('kind', '')})")
        for group in (lang, "all"):
            totals[group]["files"] += 1
            totals[group]["observations"] += written
    report = {}
    for group, c in sorted(totals.items()):
        report[group] = {**c, "precision": round(c["right"] / c["warnings"], 3) if c["warnings"] else None,
                         "recall": round(c["clear_found"] / c["clear"], 3) if c["clear"] else None,
                         "per_25_observations": round(25 * c["warnings"] / c["observations"], 3)
                         if c["observations"] else None}
    return report, errors


def run(files: list[Path], variant: str) -> list[tuple[str, int, list[dict]]]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for path in files:
            db = Path(folder) / f"{path.stem}-{variant}.db"
            written = _import(path, db) if variant == "import" else anyio.run(_write, path, db, variant)
            rows.append((path.name, written, warnings_of(db)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--split", choices=("dev", "held_out", "all"), default="dev")
    parser.add_argument("--variant", choices=("separate", "inline", "import"), action="append")
    parser.add_argument("--files", default="", help="comma-separated file names (default: the split's)")
    parser.add_argument("--errors", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    labels = [json.loads(line) for line in args.labels.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if args.labels.exists() else []
    split = json.loads(SPLIT.read_text(encoding="utf-8")) if SPLIT.exists() else {}
    if args.files:
        chosen = args.files.split(",")
    elif args.split == "all" or not split:
        chosen = sorted(p.name for p in args.corpus.iterdir() if p.suffix in (".json", ".jsonl")
                        and p.name != "MANIFEST.json")
    else:
        chosen = split[args.split]
    files = [args.corpus / name for name in chosen]
    report: dict[str, Any] = {"files": len(files), "split": args.split}
    out = args.out.open("w", encoding="utf-8") if args.out else None
    for variant in args.variant or ["separate"]:
        rows = run(files, variant)
        report[variant], errors = score(rows, labels)
        if out:
            for name, _, found in rows:
                for w in found:
                    out.write(json.dumps({"file": name, "variant": variant, **w}, ensure_ascii=False) + "\n")
        if args.errors:
            print("\n".join(errors), file=sys.stderr)
    if out:
        out.close()
    print(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
