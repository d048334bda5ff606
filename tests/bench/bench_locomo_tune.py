"""End-to-end check of the learning loop on a LoCoMo-format file.

    python tests/bench/bench_locomo_tune.py ../shared/eval/locomo/locomo-dev.json [--granularity session]

1. **Use**: every question is asked in order through the product's search with the ``default`` preset on
   a copy of each conversation's scratch memory (the ``limbic eval locomo`` cache), and its evidence
   entities are then marked used with the search's ``searchId`` (``--replay use``): the search log
   fills with labelled searches.
2. **Tune**: the logged searches of all conversations are pooled and ``limbic tune --tune``'s grid search
   (default γ × β_sal grid, or ``--param NAME=V1,V2…``) picks the best point by NDCG@10 on that log;
   the EMA step (10 % towards it) is what ``--tune`` would save.
3. **Evaluate**: ``limbic eval locomo`` again for ``default``, the EMA step and the grid's best point:
   R@1/R@5/R@10 and NDCG@10 against the labelled evidence, with fresh signals and with ``--replay use``
   (usage-dependent parameters such as β_sal and γ only matter once there is usage).

The tuned parameters are chosen on the same questions they are evaluated on (the dev file): this says
whether the loop can move the ranking the right way, not how it generalises. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from limbic.core.embedding.onnx_embedder import load_active_embedder
from limbic.core.eval import scratch
from limbic.core.eval.locomo import load_locomo
from limbic.core.eval.metrics import summarize
from limbic.core.eval.runner import EvalOptions, SearchPass, ask_questions, questions_to_ask
from limbic.core.learning.replay import ReplayHistory
from limbic.core.learning.tuner import DEFAULT_GRID, blend, grid_search, parse_range
from limbic.core.search.presets import PRESETS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--granularity", default="session", choices=("session", "turn"))
    parser.add_argument("--param", action="append", default=[], metavar="NAME=LIST")
    args = parser.parse_args()
    started = time.perf_counter()
    locomo = load_locomo(args.file)
    embedder = load_active_embedder()
    conversations = list(locomo.conversations)
    built = scratch.prepare(locomo.sha256, conversations, args.granularity, embedder)
    skipped: list = []
    unresolved: list = []
    asked = {c.sample_id: questions_to_ask(c, args.granularity, None, skipped, unresolved) for c in conversations}
    default = PRESETS["default"]

    def run(passes: list[SearchPass], replay: str) -> tuple[dict[str, list], list[ReplayHistory]]:
        options = EvalOptions(granularity=args.granularity, replay=replay)
        scores: dict[str, list] = {name: [] for one in passes for name in one.presets}
        histories = []
        for conversation in conversations:
            with scratch.open_copy(built.databases[conversation.sample_id], embedder) as service:
                ask_questions(service, asked[conversation.sample_id], passes, options, scores, [], {})
                if replay == "use":
                    histories.append(service.learning.history())
        return scores, histories

    used, histories = run([SearchPass(default, ["default"])], "use")
    pooled = ReplayHistory(item for history in histories for item in history.items)
    grid = dict(DEFAULT_GRID)
    for item in args.param:
        name, _, values = item.partition("=")
        grid[name] = parse_range(values, name)
    tuned = grid_search(pooled, default, grid, k=10)
    ema = blend(default, tuned.best_values)
    fresh, _ = run([SearchPass(default, ["default"]), SearchPass(ema, ["ema"]),
                    SearchPass(tuned.best_params, ["best"])], "none")
    replayed = {"default": used["default"]}
    for name, params in (("ema", ema), ("best", tuned.best_params)):
        replayed.update(run([SearchPass(params, [name])], "use")[0])
    report = {
        "file": os.path.basename(args.file), "granularity": args.granularity, "model": scratch.model_name(embedder),
        "questions": len(fresh["default"]), "labelled_searches": len(pooled),
        "replay_use_default": summarize(used["default"]).to_dict(),
        "grid": {k: list(v) for k, v in grid.items()}, "best": tuned.best_values,
        "log_ndcg10": {"default": round(tuned.current.ndcg, 4), "best": round(tuned.best.ndcg, 4)},
        "ema_params": {k: getattr(ema, k) for k in tuned.best_values},
        "fresh": {name: summarize(values).to_dict() for name, values in fresh.items()},
        "replay_use": {name: summarize(values).to_dict() for name, values in replayed.items()},
        "seconds": round(time.perf_counter() - started, 1),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
