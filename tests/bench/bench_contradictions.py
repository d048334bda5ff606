"""Precision and recall of the contradiction detector on labelled pairs, per split and per mode, with counts.

    python tests/bench/bench_contradictions.py [--pairs tests/fixtures/contradiction_pairs_realistic.jsonl]
                                               [--split dev|test|all] [--errors] [--model NAME[@int8]]

Each pair is embedded as the product embeds observations (``"<entity>: <text>"``) with the active model, or the
installed model ``--model`` names (``limbic model install``), and judged old → new (``a`` written first). ``--errors`` lists the false alarms
and the misses of the default mode (read them on the dev split only: the test split is held out). Prints one
JSON object: for each split and mode ``tp``, ``fp``, ``fn``, ``tn``, ``precision``, ``recall``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from limbic.core.embedding.onnx_embedder import load_active_embedder, load_named_embedder  # noqa: E402
from limbic.core.lifecycle import contradictions as c  # noqa: E402
from limbic.core.store.indexing import observation_passage  # noqa: E402

REALISTIC = HERE.parent / "fixtures" / "contradiction_pairs_realistic.jsonl"


def similarities(pairs: list[dict], spec: str | None = None) -> np.ndarray:
    """Cosine similarity of each pair's two observations, ``(n,) float32``, with the model ``spec`` (NAME or
    NAME@int8; default the active one)."""
    model = load_named_embedder(spec) if spec else load_active_embedder()
    if model is None:
        raise SystemExit("no embedding model installed: run `limbic model install`")
    a = np.asarray(model.embed([observation_passage(p["entity"], p["a"]) for p in pairs]), dtype=np.float32)
    b = np.asarray(model.embed([observation_passage(p["entity"], p["b"]) for p in pairs]), dtype=np.float32)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def score(pairs: list[dict], sims: np.ndarray, mode: str) -> tuple[dict, list[tuple[str, dict, float, str | None]]]:
    """Counts, precision and recall of ``mode`` on ``pairs``; and the errors ``(fp|fn, pair, similarity, reason)``."""
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    errors = []
    for pair, sim in zip(pairs, sims.tolist(), strict=True):
        reason = c.judge(pair["a"], pair["b"], sim, mode)
        truth = pair["label"] == "contradiction"
        key = ("tp" if truth else "fp") if reason is not None else ("fn" if truth else "tn")
        counts[key] += 1
        if key in ("fp", "fn"):
            errors.append((key, pair, sim, reason))
    flagged, positive = counts["tp"] + counts["fp"], counts["tp"] + counts["fn"]
    return {**counts, "precision": round(counts["tp"] / flagged, 3) if flagged else 0.0,
            "recall": round(counts["tp"] / positive, 3) if positive else 0.0}, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=REALISTIC)
    parser.add_argument("--split", default=None,
                        help="one split only (default: each split present, and all)")
    parser.add_argument("--errors", action="store_true", help="list the default mode's errors")
    parser.add_argument("--model", metavar="NAME", help="an installed model, NAME or NAME@int8 (default: the active one)")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in args.pairs.read_text(encoding="utf-8").splitlines() if line.strip()]
    sims = similarities(pairs, args.model)
    splits = sorted({p.get("split", "all") for p in pairs}) + (["all"] if any("split" in p for p in pairs) else [])
    if args.split:
        splits = [args.split]
    report: dict = {"pairs": str(args.pairs.name), "model": args.model or "active"}
    for split in splits:
        chosen = [i for i, p in enumerate(pairs) if split == "all" or p.get("split", "all") == split]
        subset, subsims = [pairs[i] for i in chosen], sims[chosen]
        report[split] = {"pairs": len(subset)}
        for mode in c.MODES:
            report[split][mode], errors = score(subset, subsims, mode)
            if args.errors and mode == c.CHECKABLE:
                for key, pair, sim, reason in errors:
                    print(f"{key} {sim:.2f} [{pair.get('class', pair['entity'])}] {pair['a']!r} -> {pair['b']!r}: {reason}", file=sys.stderr)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
