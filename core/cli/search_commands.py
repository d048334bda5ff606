"""``limbic search QUERY [--limit K] [--preset NAME] [--project NAME] [--json]``: hybrid search with limbic re-ranking from the shell.

``--preset`` ranks with a named preset (:mod:`limbic.core.search.presets`: ``default``, ``seed``) instead
of the saved scoring parameters.

``--json`` prints ``{"query", "mode", "results": [...]}`` with each result in the ``search_semantic``
shape (name, entityType, observations, distance, rrf_score in hybrid mode, limbic_score,
final_score, routing_strategy, scoring{…}). Without it, a table. When search runs FTS-only, one
line on stderr says why and what to run.
"""

from __future__ import annotations

import argparse
import sys

from limbic.core.cli.common import open_service, print_json
from limbic.core.search.presets import PRESETS, preset

NAME_WIDTH = 48


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "search", help="hybrid search (KNN + FTS5, RRF, limbic re-ranking)",
        description="Search the memory graph. Words are plain text (no FTS syntax); put `--` before a "
        "query that starts with '-'.",
    )
    parser.add_argument("query", nargs="+", metavar="QUERY", help="the query (several words are joined with spaces)")
    parser.add_argument("--limit", "-k", type=int, default=10, metavar="K", help="number of results, 1..1000 (default 10)")
    parser.add_argument("--preset", choices=list(PRESETS), metavar="NAME",
                        help=f"rank with a named preset ({', '.join(PRESETS)}) instead of the saved parameters")
    parser.add_argument("--project", metavar="NAME",
                        help="search this project's memories and the global ones only (global ones rank ×0.8)")
    parser.add_argument("--json", action="store_true", help="print JSON in the search_semantic result shape")
    parser.set_defaults(handler=run)


def _fts_only_note(service) -> str:
    if service.embedder is None:
        return "limbic: note: no embedding model is installed, so search is FTS-only (keywords); " \
               "install one with `limbic model install`"
    return "limbic: note: the stored vectors were made by another model, so search is FTS-only; " \
           "re-embed with `limbic model reembed`"


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _print_table(query: str, outcome) -> None:
    results = outcome.results
    dates = f" · dates {', '.join(outcome.dates)}" if outcome.dates else ""
    print(f"{len(results)} result(s) for {query!r} · mode {outcome.mode} · routing {outcome.strategy}{dates} · "
          f"{outcome.timings.get('total', 0.0):.1f} ms")
    if not results:
        return
    print(f"{'#':>3}  {'final':>6}  {'limbic':>6}  {'dist':>5}  {'name':<{NAME_WIDTH}}  type")
    for r in results:
        distance = "—" if r.distance is None else f"{r.distance:.3f}"
        print(f"{r.rank:>3}  {r.final_score:6.3f}  {r.limbic_score:6.3f}  {distance:>5}  "
              f"{_shorten(r.name, NAME_WIDTH):<{NAME_WIDTH}}  {r.entity_type}")


def run(args: argparse.Namespace) -> int:
    query = " ".join(args.query)
    service = open_service(args)
    try:
        params = preset(args.preset) if args.preset else None
        outcome = service.search.query(query, args.limit, params, origin="cli", project=args.project)
        if outcome.mode == "fts_only":
            print(_fts_only_note(service), file=sys.stderr)
        elif outcome.pending_vectors:
            print(f"limbic: note: {outcome.pending_vectors:,} entities wait for their vectors (found by keyword "
                  "only until then; `limbic model reembed` computes them now)", file=sys.stderr)
    finally:
        service.close()
    if args.json:
        print_json({"query": query, "mode": outcome.mode, "pendingVectors": outcome.pending_vectors,
                    "dates": list(outcome.dates), "knn": outcome.knn or None,
                    "results": [r.to_dict() for r in outcome.results]})
    else:
        _print_table(query, outcome)
    return 0
