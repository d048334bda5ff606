"""``limbic import FILE... [--json] [--project NAME]`` and ``limbic export [--format jsonl|graphml|gexf] [-o FILE]
[--plain] [--project NAME]``."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from tqdm import tqdm

from limbic.core.cli.common import open_service, print_json
from limbic.core.io.exporter import FORMATS, export_graph
from limbic.core.io.importer import import_files


def register(subparsers: argparse._SubParsersAction) -> None:
    importer = subparsers.add_parser(
        "import", help="import memory files (JSONL, JSON, graph dumps) and report what was kept",
        description="Import knowledge-graph memory files into the database. Every file shape of the "
        "reference memory server and its forks is read; the report lists per file what was created, "
        "merged, recovered and skipped, with line numbers and reasons. Importing again adds nothing.",
    )
    importer.add_argument("files", nargs="+", metavar="FILE", help="memory file(s) to import")
    importer.add_argument("--json", action="store_true", help="print the full report as JSON")
    importer.add_argument("--project", metavar="NAME", help="import into this project: entities without a project "
                          "of their own belong to it, and names resolve to its entities and the global ones")
    importer.set_defaults(handler=run_import, writes=True)

    exporter = subparsers.add_parser(
        "export", help="export the graph as JSONL (reference format), GraphML or GEXF",
        description="Export the whole graph. JSONL is the reference memory server's format with optional "
        "extra fields (status, timestamps, observation details, ended relations) that it ignores.",
    )
    exporter.add_argument("--format", choices=FORMATS, default="jsonl", help="output format (default: jsonl)")
    exporter.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: standard output)")
    exporter.add_argument("--plain", action="store_true",
                          help="JSONL without our extra fields (and without ended relations)")
    exporter.add_argument("--project", metavar="NAME",
                          help="export this project's memories and the global ones only")
    exporter.set_defaults(handler=run_export)


def run_import(args: argparse.Namespace) -> int:
    """Exit code 0 when every file was read, 1 when some file could not be read at all.

    Two phases: the text (entities, observations, relations, FTS rows: keyword-searchable as soon as a
    file's transaction commits), then the vectors of everything pending (resumed here after an
    interrupted import), after which the imported observations' contradiction check runs and its count is
    reported. On a terminal, a tqdm bar on stderr per phase shows done, rate and ETA."""
    service = open_service(args, origin="import")
    tty = sys.stderr.isatty()
    bar = tqdm(total=None, unit="rec", desc="text", file=sys.stderr, disable=not tty)

    def progress(done: int, total: int, message: str) -> None:
        bar.total = total
        bar.update(done - bar.n)
        bar.set_postfix_str(message[:40], refresh=False)

    try:
        before = service.lifecycle.newest_observation()
        with service.search.deferred_vectors():
            report = import_files(service, args.files, progress=progress, project=args.project)
        bar.close()
        vectors = tqdm(total=service.search.pending_vectors(), unit="entity", desc="vectors", file=sys.stderr,
                       disable=not tty or not service.search.pending_vectors())

        def landed(done: int, total: int) -> None:
            vectors.total = total
            vectors.update(done - vectors.n)

        service.search.wait_for_vectors(progress=landed)
        vectors.close()
        if service.embedder is not None:  # the check of the imported observations, batched once their vectors landed
            service.lifecycle.check_conflicts()
            report.contradictions = service.lifecycle.conflicts_since(before)
    finally:
        bar.close()
        service.close()
    if args.json:
        print_json(report.to_dict())
    else:
        print(report.summary())
    return 0 if report.ok else 1


def run_export(args: argparse.Namespace) -> int:
    """Write to a temporary file next to ``-o`` and rename it, so a failed export leaves nothing half-written."""
    service = open_service(args, embedder=None)
    try:
        if not args.output:
            try:
                with service.scoped(args.project):
                    export_graph(service, args.format, sys.stdout.buffer, extras=not args.plain)
                sys.stdout.buffer.flush()
            except BrokenPipeError:  # the reader (e.g. ``head``) stopped early
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return 1
            return 0
        target = Path(args.output)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
        try:
            with os.fdopen(handle, "wb") as out, service.scoped(args.project):
                summary = export_graph(service, args.format, out, extras=not args.plain)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    finally:
        service.close()
    print(f"exported {summary.entities:,} entities and {summary.relations:,} relations as "
          f"{summary.format} to {target}", file=sys.stderr)
    return 0
