"""``limbic eval locomo FILE``: ranking quality on a LoCoMo-format file, through the product's own search.

Prints Recall@1/5/10 and NDCG@10 per variant and per LoCoMo category, the number of questions
(and of those skipped for unresolvable evidence), the model and timings; ``--json`` prints one
document instead (:func:`limbic.core.eval.report.to_document`). The embedded scratch databases are
cached under the user cache dir (``--rebuild`` ignores the cache). See docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import sys

from limbic.core.cli.common import print_json
from limbic.core.eval.locomo import GRANULARITIES, load_locomo
from limbic.core.eval.report import format_text, to_document
from limbic.core.eval.runner import REPLAYS, VARIANTS, EvalOptions, known_variants, run_locomo


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("eval", help="measure ranking quality on a public benchmark",
                                   description="Measure ranking quality through the product's own search.")
    benchmarks = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    locomo = benchmarks.add_parser(
        "locomo", help="Recall@K and NDCG@10 on a LoCoMo-format file",
        description="Build one scratch memory per conversation of a LoCoMo-format file (cached), ask every "
        "question through the product's search and print R@1/R@5/R@10 and NDCG@10 per variant and category.",
    )
    locomo.add_argument("file", metavar="FILE", help="LoCoMo-format JSON (a list of conversations)")
    locomo.add_argument("--granularity", choices=GRANULARITIES, default="session",
                        help="one entity per session (default) or per turn")
    locomo.add_argument("--limit", "-k", type=int, default=10, metavar="K", help="results per search, ≥ 10 (default 10)")
    locomo.add_argument("--variant", action="append", choices=known_variants(), metavar="NAME", dest="variants",
                        help=f"a variant to score (repeatable; default all: {', '.join(VARIANTS)})")
    locomo.add_argument("--replay", choices=REPLAYS, default="none",
                        help="none: fresh signals (default); impressions: questions in order, each search records "
                        "usage as the product does; use: also use the evidence entities after each question")
    locomo.add_argument("--questions", type=int, metavar="N", help="only the first N questions of each conversation")
    locomo.add_argument("--conversations", nargs="+", metavar="ID", help="only these conversation ids (e.g. conv-26)")
    locomo.add_argument("--model", metavar="NAME", help="an installed model to embed with, NAME or NAME@int8 "
                        "(default: the active model; the active choice is left as it is)")
    locomo.add_argument("--rebuild", action="store_true", help="rebuild the cached scratch databases")
    locomo.add_argument("--json", action="store_true", help="print one JSON document")
    locomo.set_defaults(handler=run_locomo_command)


def run_locomo_command(args: argparse.Namespace) -> int:
    from limbic.core.embedding.onnx_embedder import load_active_embedder, load_named_embedder
    from limbic.core.store.backend import is_postgres

    options = EvalOptions(
        granularity=args.granularity, limit=args.limit,
        variants=tuple(dict.fromkeys(args.variants or VARIANTS)), replay=args.replay,
        questions=args.questions, conversations=tuple(args.conversations) if args.conversations else None,
        rebuild=args.rebuild, progress=sys.stderr.isatty(),
        server=args.db if args.db and is_postgres(args.db) else None,
    )
    locomo = load_locomo(args.file)
    embedder = load_named_embedder(args.model) if args.model else load_active_embedder()
    if embedder is None:
        print("limbic: note: no embedding model is installed, so search runs FTS-only; "
              "install one with `limbic model install`", file=sys.stderr)
    result = run_locomo(locomo, options, embedder)
    if args.json:
        print_json(to_document(result))
    else:
        print(format_text(result))
    return 0
