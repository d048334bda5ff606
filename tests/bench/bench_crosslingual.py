"""Cross-lingual search on LoCoMo: questions translated into other languages, asked of the English conversations.

    python tests/bench/bench_crosslingual.py LOCOMO.json --translations DIR [--granularity session|turn]
                                             [--model NAME[@int8]] [--json]

``DIR`` holds one ``questions_<lang>.jsonl`` per language (``es``, ``zh``, ``ko``…): one JSON object a line,
``{"id": "<sample_id>:<index of the question in its conversation's qa list>", "question": "<the translation>"}``,
the same ids in every file. For English and each language a LoCoMo-format copy of the file is written to a
temporary directory — the same conversations, only the questions of those ids, worded in that language — and
scored by ``limbic eval locomo`` (fresh signals, the ``default`` variant): R@1/R@5/R@10 and NDCG@10 per language,
and each language's R@5 as a share of the English one on the same questions. The translations are derived from
the LoCoMo file (CC BY-NC 4.0, evaluation only): they are kept beside it, never in this repository.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

METRICS = ("R@1", "R@5", "R@10", "NDCG@10")


def read_translations(folder: Path) -> dict[str, dict[str, str]]:
    """``{lang: {id: question}}`` of every ``questions_<lang>.jsonl`` in ``folder``.

    Raises:
        SystemExit: no such file, or two files that do not hold the same ids.
    """
    found = {}
    for path in sorted(folder.glob("questions_*.jsonl")):
        lang = path.stem.split("_", 1)[1]
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        found[lang] = {str(r["id"]): str(r["question"]) for r in rows}
    if not found:
        raise SystemExit(f"no questions_<lang>.jsonl in {folder}")
    ids = {frozenset(q) for q in found.values()}
    if len(ids) != 1:
        raise SystemExit("the translation files do not hold the same question ids")
    return found


def localised(conversations: list[dict], questions: dict[str, str]) -> list[dict]:
    """The conversations with only the questions ``questions`` names (``sample_id:index``), in its wording."""
    out = []
    for conversation in conversations:
        qa = [{**q, "question": questions[f"{conversation['sample_id']}:{i}"]}
              for i, q in enumerate(conversation["qa"]) if f"{conversation['sample_id']}:{i}" in questions]
        if qa:
            out.append({**conversation, "qa": qa})
    return out


def evaluate(path: Path, granularity: str, model: str | None) -> dict[str, float]:
    """``limbic eval locomo`` on ``path`` (the ``default`` variant, fresh signals): its overall figures."""
    command = [sys.executable, "-m", "limbic.gui.launcher", "eval", "locomo", str(path), "--granularity", granularity,
               "--variant", "default", "--json"] + (["--model", model] if model else [])
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=os.environ.copy())
    document = json.loads(done.stdout)
    overall = document["variants"]["default"]
    return {m: float(overall[m]) for m in METRICS} | {"questions": int(overall["questions"])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("--translations", type=Path, required=True, help="the folder of questions_<lang>.jsonl")
    parser.add_argument("--granularity", choices=("session", "turn"), default="session")
    parser.add_argument("--model", help="an installed model, NAME or NAME@int8 (default: the active one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    conversations = json.loads(args.file.read_text(encoding="utf-8"))
    translations = read_translations(args.translations)
    ids = next(iter(translations.values())).keys()
    english = {}
    for conversation in conversations:
        for i, q in enumerate(conversation["qa"]):
            if f"{conversation['sample_id']}:{i}" in ids:
                english[f"{conversation['sample_id']}:{i}"] = q["question"]
    if len(english) != len(ids):
        raise SystemExit("some ids name no question of the file")
    figures = {}
    with tempfile.TemporaryDirectory(prefix="limbic-crosslingual-") as scratch:
        for lang, questions in {"en": english, **translations}.items():
            path = Path(scratch) / f"locomo-{lang}.json"
            path.write_text(json.dumps(localised(conversations, questions), ensure_ascii=False), encoding="utf-8")
            figures[lang] = evaluate(path, args.granularity, args.model)
    base = figures["en"]["R@5"]
    for row in figures.values():
        row["share_of_english_R@5"] = round(row["R@5"] / base, 3) if base else 0.0
    if args.json:
        print(json.dumps({"granularity": args.granularity, "model": args.model or "active", "languages": figures},
                         indent=2))
        return 0
    print(f"{args.granularity} granularity, {figures['en']['questions']} questions, model {args.model or 'active'}")
    for lang, row in figures.items():
        print(f"{lang:4} " + "  ".join(f"{m} {row[m]:.4f}" for m in METRICS)
              + f"  R@5 / English {row['share_of_english_R@5']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
