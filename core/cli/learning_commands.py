"""``limbic tune`` and ``limbic history``: the auto-tuner and the search log from the shell (mcp-memory "The Limbic System", "Usage").

- ``limbic tune --analyze``: NDCG@K and Lift@K of the saved parameters over the logged searches with
  feedback, per A/B group, beside the cosine-only and BM25-only orders.
- ``limbic tune --tune [--gamma-range 0.001,0.01,0.05,0.1] [--beta-sal-range 0.1,0.5,1.0]
  [--param NAME=V1,V2…]``: grid search by pure re-rank; the best point is applied by EMA (10 % new).
- ``limbic tune --set-gamma X --set-beta Y [--set NAME=X…]``: move the saved parameters 10 % towards these.
- ``limbic tune --undo``: restore the parameters saved before the latest application.
- ``--dry-run`` shows what would be applied and writes nothing; ``--json`` prints JSON.
- ``limbic history clear``: delete the search log and its feedback; ``limbic history show``: the counts and
  settings; ``limbic history config [--logging on|off] [--assignment hash|random]
  [--baseline-probability P] [--retention N] [--feedback-window MINUTES]``: change the settings.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from typing import Any

from limbic.core.cli.common import open_service, print_json
from limbic.core.errors import ValidationError
from limbic.core.learning.replay import Quality
from limbic.core.learning.shadow import ASSIGNMENTS
from limbic.core.learning.tuner import DEFAULT_GRID, parse_range
from limbic.core.service import MemoryService


def register(subparsers: argparse._SubParsersAction) -> None:
    tune = subparsers.add_parser(
        "tune", help="measure and tune the scoring parameters on the logged searches (NDCG@K, Lift@K)",
        description="Replay the logged searches that got feedback (later uses of what they showed) with "
        "other parameters, and apply better ones smoothly (EMA, 10 %% new).")
    action = tune.add_mutually_exclusive_group(required=True)
    action.add_argument("--analyze", action="store_true", help="quality of the saved parameters and baselines")
    action.add_argument("--tune", action="store_true", help="grid search, then apply the best point by EMA")
    action.add_argument("--undo", action="store_true", help="restore the parameters saved before the last application")
    action.add_argument("--set-gamma", type=float, metavar="X", help="move γ 10 %% towards X")
    tune.add_argument("--set-beta", type=float, metavar="Y", help="with --set-gamma: move β_sal 10 %% towards Y")
    tune.add_argument("--gamma-range", metavar="LIST", help=f"γ values (default {_csv(DEFAULT_GRID['gamma'])})")
    tune.add_argument("--beta-sal-range", metavar="LIST",
                      help=f"β_sal values (default {_csv(DEFAULT_GRID['beta_sal'])})")
    tune.add_argument("--param", action="append", default=[], metavar="NAME=LIST",
                      help="another parameter's values, e.g. lambda_hourly=0,1e-4,1e-3 (repeatable)")
    tune.add_argument("--k", type=int, default=10, metavar="K", help="cut-off of NDCG@K and Lift@K (default 10)")
    tune.add_argument("--dry-run", action="store_true", help="show what would be applied; write nothing")
    tune.add_argument("--json", action="store_true", help="print JSON")
    tune.set_defaults(handler=run_tune, writes=True)

    history = subparsers.add_parser("history", help="the search log used by the tuner, and its settings",
                                     description="show: counts and settings; clear: delete the log and its "
                                     "feedback; config: change the shadow A/B settings (only the options given)")
    history.add_argument("action", choices=("show", "clear", "config"))
    history.add_argument("--logging", choices=("on", "off"), help="config: log searches at all")
    history.add_argument("--assignment", choices=ASSIGNMENTS, help="config: A/B group by query hash or at random")
    history.add_argument("--baseline-probability", type=float, metavar="P", help="config: share labelled baseline")
    history.add_argument("--retention", type=int, metavar="N", help="config: logged searches kept")
    history.add_argument("--feedback-window", type=float, metavar="MINUTES",
                         help="config: how long after a search a use counts as its feedback")
    history.add_argument("--json", action="store_true", help="print JSON")
    history.set_defaults(handler=run_history)


def _csv(values: Any) -> str:
    return ",".join(f"{v:g}" for v in values)


def _grid(args: argparse.Namespace) -> dict[str, tuple[float, ...]]:
    grid = {"gamma": parse_range(args.gamma_range, "gamma") if args.gamma_range else DEFAULT_GRID["gamma"],
            "beta_sal": parse_range(args.beta_sal_range, "beta_sal") if args.beta_sal_range else DEFAULT_GRID["beta_sal"]}
    for item in args.param:
        name, sep, values = item.partition("=")
        if not sep:
            raise ValidationError(f"--param needs NAME=V1,V2…, got {item!r}")
        grid[name.strip()] = parse_range(values, name.strip())
    return grid


def _fmt(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.4f}"


def _print_quality(label: str, quality: Quality) -> None:
    groups = "  ".join(f"{name}: {_fmt(n)} / {_fmt(lift)} ({count})" for name, (n, lift, count) in quality.groups.items())
    print(f"{label:<22} NDCG@{quality.k} {_fmt(quality.ndcg)}  Lift@{quality.k} {_fmt(quality.lift)}"
          f"  over {quality.searches}  {groups}")


def run_tune(args: argparse.Namespace) -> int:
    if args.set_beta is not None and args.set_gamma is None:
        raise ValidationError("--set-beta goes with --set-gamma")
    if not 1 <= args.k <= 1000:
        raise ValidationError("--k must be within 1..1000")
    service = open_service(args, embedder=None)
    try:
        return _tune(service, args)
    finally:
        service.close()


def _tune(service: MemoryService, args: argparse.Namespace) -> int:
    learning = service.learning
    saved = service.search.scoring_params()
    if args.undo:
        undone = learning.undo()
        print_json({"undone": undone.id, "params": undone.old.to_dict()}) if args.json else \
            print(f"undid tuning #{undone.id} ({undone.kind}); the parameters saved before it are back")
        return 0
    history = learning.history()
    if args.analyze:
        report = learning.analyze(saved, saved, args.k, history)
        if args.json:
            print_json({"counts": learning.counts(), **{name: q.to_dict() for name, q in report.items()}})
        else:
            counts = learning.counts()
            print(f"{counts['searches']} logged searches ({counts['baseline_searches']} baseline), "
                  f"{counts['labelled_searches']} with feedback ({counts['labels']} labels)")
            _print_quality("saved parameters", report["saved"])
            _print_quality("cosine only", report["cosine"])
            _print_quality("BM25 only", report["bm25"])
        return 0
    if args.tune:
        result = learning.tune(saved, _grid(args), args.k, history=history)
        target, gain, kind = result.best_values, result.gain, "tune"
        apply = gain > 0
    else:
        target = {"gamma": args.set_gamma} | ({} if args.set_beta is None else {"beta_sal": args.set_beta})
        gain = math.nan if len(history) == 0 else history.evaluate(saved.replace(**target), args.k).ndcg - \
            history.evaluate(saved, args.k).ndcg
        kind, apply = "set", True
    applied = None
    if apply and not args.dry_run:
        applied = learning.apply(saved, target, kind=kind, gain=None if math.isnan(gain) else gain,
                                 events=len(history), origin="cli")
    if args.json:
        print_json({"target": target, "gain": None if math.isnan(gain) else gain, "events": len(history),
                    "applied": None if applied is None else applied.to_dict(), "dryRun": args.dry_run})
        return 0
    pretty = ", ".join(f"{k}={v:g}" for k, v in target.items())
    print(f"{'best' if kind == 'tune' else 'target'}: {pretty}  (NDCG@{args.k} gain {_fmt(gain)} over "
          f"{len(history)} searches with feedback)")
    if kind == "tune" and not apply:
        print("the saved parameters are already the best of this grid; nothing applied")
    elif applied is None:
        print("dry run: nothing applied")
    else:
        print("applied by EMA (10 % new): " + ", ".join(f"{k}={getattr(applied, k):.6g}" for k in target))
    return 0


def run_history(args: argparse.Namespace) -> int:
    service = open_service(args, embedder=None)
    try:
        learning = service.learning
        if args.action == "clear":
            deleted = learning.clear()
            print_json({"deleted": deleted}) if args.json else print(f"deleted {deleted} logged searches")
            return 0
        if args.action == "config":
            changes: dict[str, Any] = {
                "enabled": None if args.logging is None else args.logging == "on",
                "assignment": args.assignment, "baseline_probability": args.baseline_probability,
                "retention": args.retention,
                "feedback_window_seconds": None if args.feedback_window is None else args.feedback_window * 60.0,
            }
            learning.save_config(dataclasses.replace(learning.config(),
                                                     **{k: v for k, v in changes.items() if v is not None}))
        state = {"settings": dataclasses.asdict(learning.config()), "counts": learning.counts()}
        if args.json:
            print_json(state)
        else:
            print(", ".join(f"{k} {v}" for k, v in state["counts"].items()))
            print(", ".join(f"{k} {v}" for k, v in state["settings"].items()))
    finally:
        service.close()
    return 0
