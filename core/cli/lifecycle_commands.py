"""``limbic review`` and ``limbic gc``: the lifecycle from the command line (docs/lifecycle.md).

``review [--json] [--decide KEY OPTION]`` lists what needs a person's decision — open contradictions, expired observations, forget and
promote candidates (with how long until each would be proposed for forgetting), and every other kind registered in the queue;
``--decide`` settles one of them first, logged as a decision.
``gc`` sweeps the text of expired observations out of the indexes; with ``--archive`` or ``--delete`` it also
acts on the forget candidates, as one transaction recorded as one decision (``limbic undo`` restores every entity
with its previous status), and reports what changed (``--dry-run``: only what would — the same list, since the
sweep moves no memory's time). ``gc --at +30d`` (or a date) answers what would be proposed then if nothing is used
or written meanwhile, each with the day it is first proposed, and what is kept then although its score is low, with
the reason; it changes nothing.
Both take ``--set KEY=VALUE`` to change a forget/promote setting (saved for every client).
"""

from __future__ import annotations

import argparse
import time

from limbic.core.cli.common import open_service, print_json
from limbic.core.errors import ValidationError
from limbic.core.lifecycle.contradictions import MODES
from limbic.core.lifecycle.expiry import parse_moment
from limbic.core.lifecycle.retention import RetentionParams, duration
from limbic.core.models import iso
from limbic.core.search.decay import MODELS
from limbic.core.service import MemoryService, decision_log, review
from limbic.core.service.entity_edits import DeleteEntities, SetStatus
from limbic.core.store import expiry


def register(subparsers: argparse._SubParsersAction) -> None:
    review = subparsers.add_parser("review", help="what needs a decision: contradictions, expired, forget, promote, …")
    review.add_argument("--json", action="store_true", help="print JSON")
    review.add_argument("--kind", action="append", metavar="KIND", help="only this kind (repeatable)")
    review.add_argument("--limit", type=int, default=20, help="items listed per kind (default 20)")
    review.add_argument("--conflict-mode", choices=MODES, help="save the contradiction detector's mode")
    review.add_argument("--decide", nargs=2, metavar=("KEY", "OPTION"),
                        help="settle one listed decision with one of its options (logged: `limbic undo` takes it back)")
    _settings(review)
    review.set_defaults(handler=run_review, writes=True)

    gc = subparsers.add_parser("gc", help="sweep expired observations; archive or delete forget candidates")
    action = gc.add_mutually_exclusive_group()
    action.add_argument("--archive", action="store_true", help="archive the forget candidates")
    action.add_argument("--delete", action="store_true", help="delete the forget candidates (archived ones too)")
    gc.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
    gc.add_argument("--at", metavar="WHEN", help="what would be proposed for forgetting then, if nothing is used or "
                    "written meanwhile: +30d, +12h, +2w or a date (2027-01-15, the end of that day); changes nothing")
    gc.add_argument("--json", action="store_true", help="print JSON")
    _settings(gc)
    gc.set_defaults(handler=run_gc, writes=True)


def _settings(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="change a forget/promote setting and save it: " + ", ".join(RetentionParams.keys())
                        + " (decay_model=" + "|".join(MODELS) + "; protected_types=person,preference,…)")


def _apply_settings(service: MemoryService, pairs: list[str]) -> RetentionParams:
    params = service.lifecycle.retention_params()
    if not pairs:
        return params
    changes = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValidationError(f"--set takes KEY=VALUE, got {pair!r}")
        changes[key.strip()] = value.strip()
    params = RetentionParams.from_dict({**params.to_dict(), **changes})
    service.lifecycle.save_retention_params(params, origin="cli")
    return params


def run_review(args: argparse.Namespace) -> int:
    service = open_service(args, embedder=None)
    try:
        _apply_settings(service, args.set)
        if args.conflict_mode:
            service.lifecycle.set_conflict_mode(args.conflict_mode, origin="cli")
        decided = review.decide(service, *args.decide, origin="cli") if args.decide else None
        sections = review.review(service, args.kind, args.limit)
    finally:
        service.close()
    if args.json:
        print_json({"sections": [s.to_dict() for s in sections],
                    **({} if decided is None else {"decision": decided.decision_id})})
        return 0
    if decided is not None:
        print(f"{decided.description} (decision {decided.decision_id}; `limbic undo {decided.decision_id}` takes it back)")
    for section in sections:
        print(f"{section.kind}: {section.total:,}")
        for item in section.items:
            until = item.evidence.get("daysUntilForgotten") if item.kind == "promote" else None
            extra = f" · proposed for forgetting in {duration(until * 86_400)} without use" \
                if isinstance(until, int | float) and until > 0 else ""
            print(f"  {item.title}{extra}  [{' / '.join(item.options)}]  {item.key}")
    return 0


def run_gc(args: argparse.Namespace) -> int:
    if args.at is not None and (args.archive or args.delete or args.dry_run):
        raise ValidationError("--at only tells what would be proposed then; leave out --archive, --delete and --dry-run")
    service = open_service(args)
    try:
        params = _apply_settings(service, args.set)
        now = time.time()
        if args.at is not None:
            return _print_forecast(service, params, parse_moment(args.at, now, "--at"), now, args.json)
        if args.dry_run:
            unswept = expiry.unswept_entities(service.database.read(), now)
            swept = [e.name for e in service.entities.read_graph().entities if e.id in set(unswept)] if unswept else []
        else:
            swept = list(service.lifecycle.sweep_expired(origin="cli").entities)
        decided = None
        candidates = [p.retention for p in service.lifecycle.forecast(now, params, now=now, archived=args.delete).proposed] \
            if args.archive or args.delete else []
        names = [c.name for c in candidates]
        if names and not args.dry_run:
            edit = DeleteEntities(names) if args.delete else SetStatus(names, "archived")
            decided = decision_log.apply(service, edit, "forget", names, origin="cli")
    finally:
        service.close()
    action = "delete" if args.delete else "archive" if args.archive else None
    report = {"dryRun": args.dry_run, "swept": swept, "action": action,
              "forget": [c.to_dict() for c in candidates],
              "decision": None if decided is None else decided.decision_id}
    if args.json:
        print_json(report)
        return 0
    verb = "would be" if args.dry_run else "were"
    print(f"expired text of {len(swept):,} entities {verb} swept from the indexes")
    if action is None:
        print("forget candidates are listed by `limbic review`; add --archive or --delete to act on them")
        return 0
    print(f"{len(names):,} forget candidates {verb} {action}d" + (" (dry run: nothing changed)" if args.dry_run else "")
          + ("" if decided is None else f"; `limbic undo {decided.decision_id}` takes it back"))
    for c in candidates[:50]:
        print(f"  {c.name}: {c.reason}")
    if len(candidates) > 50:
        print(f"  … and {len(candidates) - 50:,} more (--json lists them all)")
    return 0


def _print_forecast(service: MemoryService, params: RetentionParams, at: float, now: float, as_json: bool) -> int:
    """``gc --at``: the forecast (:func:`limbic.core.service.forgetting.forecast`), as JSON or lines."""
    found = service.lifecycle.forecast(at, params, now=now)
    if as_json:
        print_json(found.to_dict())
        return 0
    day = (iso(at) or "")[:10]
    print(f"{len(found.proposed):,} forget candidates on {day} (in {(at - now) / 86_400:.0f} days), if nothing is "
          "used or written meanwhile; each from the day it is first proposed")
    for p in found.proposed[:50]:
        print(f"  {(iso(p.due) or '')[:10]}  {p.retention.name}: {p.retention.reason}")
    if len(found.proposed) > 50:
        print(f"  … and {len(found.proposed) - 50:,} more (--json lists them all)")
    if found.held:
        kinds: dict[str, int] = {}
        for r in found.held:
            kinds[r.guard] = kinds.get(r.guard, 0) + 1
        print(f"{len(found.held):,} kept although their score is low then: "
              + ", ".join(f"{count:,} {kind}" for kind, count in sorted(kinds.items(), key=lambda kv: -kv[1])))
        for r in found.held[:20]:
            print(f"  {r.name}: {r.reason}")
        if len(found.held) > 20:
            print(f"  … and {len(found.held) - 20:,} more (--json lists them all)")
    return 0
