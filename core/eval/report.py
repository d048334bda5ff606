"""The outcome of ``limbic eval locomo`` as one JSON document or as plain-text tables."""

from __future__ import annotations

from typing import Any

import numpy as np

from limbic.core.eval.locomo import CATEGORY_NAMES
from limbic.core.eval.metrics import NDCG_K, RECALL_KS, summarize, summarize_by_category
from limbic.core.eval.runner import EvalResult


def _p50(values: tuple[float, ...]) -> float | None:
    return float(np.median(values)) if values else None


def _categories(result: EvalResult) -> list[str]:
    """Category names present in the run, in LoCoMo's table order (single-hop first), unknown ones last."""
    present = {s.category for scores in result.scores.values() for s in scores}
    known = [CATEGORY_NAMES[n] for n in (4, 1, 2, 3, 5) if CATEGORY_NAMES[n] in present]
    return known + sorted(present - set(known))


def to_document(result: EvalResult) -> dict[str, Any]:
    """Everything measured, as a JSON-ready dict (figures rounded to 4 decimals, times in seconds / ms)."""
    options = result.options
    p50 = _p50(result.search_ms)
    return {
        "file": str(result.path),
        "sha256": result.sha256,
        "granularity": options.granularity,
        "limit": options.limit,
        "replay": options.replay,
        "model": result.model,
        "search_modes": result.modes,
        "conversations": list(result.conversations),
        "questions": result.asked,
        "skipped_questions": [
            {"conversation": s.conversation, "question": s.index, "evidence": list(s.evidence)} for s in result.skipped
        ],
        "unresolved_evidence": [
            {"conversation": c, "question": q, "evidence_id": e} for c, q, e in result.unresolved
        ],
        "variants": {
            name: {
                **summarize(scores).to_dict(),
                "categories": {c: s.to_dict() for c, s in summarize_by_category(scores).items()},
            }
            for name, scores in result.scores.items()
        },
        "timings": {
            "total_s": round(result.seconds, 2),
            "build_s": round(result.scratch.seconds, 2),
            "databases_built": result.scratch.built,
            "databases_cached": len(result.scratch.databases) - result.scratch.built,
            "search_ms_p50": None if p50 is None else round(p50, 2),
        },
        "cache": str(result.scratch.directory),
    }


def format_text(result: EvalResult) -> str:
    """Header lines, the figures of every variant, then R@5 and NDCG@10 per LoCoMo category."""
    options = result.options
    p50 = _p50(result.search_ms)
    cached = len(result.scratch.databases) - result.scratch.built
    lines = [
        f"LoCoMo {result.path.name} · {options.granularity} granularity · replay {options.replay} · "
        f"top {options.limit} · model {result.model}",
        f"{result.asked} questions in {len(result.conversations)} conversation(s); "
        f"{len(result.skipped)} skipped (no resolvable evidence), {len(result.unresolved)} evidence id(s) unresolved",
        f"build {result.scratch.seconds:.1f} s ({result.scratch.built} built, {cached} cached) · "
        f"search p50 {0.0 if p50 is None else p50:.1f} ms/question · total {result.seconds:.1f} s",
    ]
    if result.modes.get("fts_only"):
        lines.append(f"note: {result.modes['fts_only']} search(es) ran FTS-only (no usable embedding model)")
    headers = [f"R@{k}" for k in RECALL_KS] + [f"NDCG@{NDCG_K}"]
    width = max(len(n) for n in result.scores) + 2
    lines += ["", f"{'variant':<{width}}" + "".join(f"{h:>9}" for h in headers)]
    for name, scores in result.scores.items():
        summary = summarize(scores)
        figures = [summary.recall[k] for k in RECALL_KS] + [summary.ndcg]
        lines.append(f"{name:<{width}}" + "".join(f"{f:>9.3f}" for f in figures))
    categories = _categories(result)
    counts = summarize_by_category(next(iter(result.scores.values()), []))
    column = max([12, *(len(c) + 2 for c in categories)])
    for title, pick in (("R@5", lambda s: s.recall[5]), (f"NDCG@{NDCG_K}", lambda s: s.ndcg)):
        lines += ["", f"{title} by category".ljust(width) + "".join(
            f"{f'{c} ({counts[c].questions})':>{column + 5}}" for c in categories)]
        for name, scores in result.scores.items():
            by = summarize_by_category(scores)
            lines.append(f"{name:<{width}}" + "".join(f"{pick(by[c]):>{column + 5}.3f}" for c in categories))
    return "\n".join(lines)
