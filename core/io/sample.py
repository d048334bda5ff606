"""The sample memory graph shipped in ``limbic.resources/sample/``: load it into an empty database.

``graph.jsonl`` is a reference-format memory file (entities, relations, observations with kinds,
supersede chains, statuses, ``createdAt`` timestamps); ``usage.jsonl`` is one year of simulated
usage, one session per line: ``{"at": ISO 8601 UTC, "accessed": [entity names]}``. Both are
composed by ``packaging/tools/make_sample.py`` from authored content.

Seeding imports the graph through :func:`limbic.core.io.importer.import_file` and replays every
session through ``MemoryService.usage.record_access(names, at=…, co_occurrence=True)``, which produces
access counts, distinct access days and co-occurrences. All timestamps are first moved forward by
whole weeks so that the last session falls within the week before "now": the history stays recent
(decay, mcp-memory "The Limbic System", "temporal_factor") and keeps its weekdays, whenever the sample is seeded.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from limbic.core.errors import ImportFormatError
from limbic.core.io.importer import import_file
from limbic.core.io.report import FileReport

WEEK = 7 * 24 * 3600.0
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True, slots=True)
class SampleReport:
    """What seeding did.

    ``import_report``: the importer's report for graph.jsonl; ``entities``, ``relations``,
    ``observations``: what the import created; ``usage_events``: sessions replayed; ``accesses``:
    entity accesses recorded (sum of session sizes); ``shift_seconds``: how far every timestamp of
    the files was moved (a whole number of weeks, seconds, may be negative).
    """

    import_report: FileReport
    entities: int
    relations: int
    observations: int
    usage_events: int
    accesses: int
    shift_seconds: float


def sample_texts() -> tuple[str, str]:
    """The text of ``graph.jsonl`` and ``usage.jsonl`` from the installed package resources."""
    folder = resources.files("limbic.resources") / "sample"
    return ((folder / "graph.jsonl").read_text(encoding="utf-8"),
            (folder / "usage.jsonl").read_text(encoding="utf-8"))


def _seconds(value: object, where: str) -> float:
    if not isinstance(value, str):
        raise ImportFormatError(f"{where}: 'at' must be an ISO 8601 string, got {value!r}")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ImportFormatError(f"{where}: 'at' is not ISO 8601: {value!r}") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def parse_usage(text: str) -> list[tuple[float, list[str]]]:
    """Sessions ``(UTC seconds, names)`` of a usage file, in file order.

    Raises ImportFormatError naming the line when a line is not ``{"at": ISO, "accessed": [str, …]}``.
    """
    sessions = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"usage line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(f"{where}: not JSON ({exc.msg})") from exc
        names = record.get("accessed") if isinstance(record, dict) else None
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
            raise ImportFormatError(f"{where}: 'accessed' must be a non-empty list of entity names")
        sessions.append((_seconds(record.get("at"), where), names))
    if not sessions:
        raise ImportFormatError("the usage file holds no session")
    return sessions


def week_shift(last_event: float, now: float) -> float:
    """Whole weeks (in seconds) to add so that ``last_event`` lands in the week up to ``now``."""
    return math.floor((now - last_event) / WEEK) * WEEK


def _shift_iso(value: object, shift: float) -> object:
    if not isinstance(value, str) or not shift:
        return value
    moment = datetime.fromtimestamp(_seconds(value, "createdAt") + shift, UTC)
    return moment.isoformat().replace("+00:00", "Z")


def shift_graph(text: str, shift: float) -> str:
    """The graph file with every ``createdAt`` (entities, observation objects, relations) moved by ``shift`` seconds."""
    lines = []
    for line in text.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if "createdAt" in record:
            record["createdAt"] = _shift_iso(record["createdAt"], shift)
        for observation in record.get("observations", ()):
            if isinstance(observation, dict) and "createdAt" in observation:
                observation["createdAt"] = _shift_iso(observation["createdAt"], shift)
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def seed_sample_graph(service, progress: Progress | None = None, *, now: float | None = None) -> SampleReport:
    """Import the sample graph into ``service`` and replay its usage history.

    ``progress(done, total, message)`` is called during the import and every 100 sessions.
    ``now`` (UTC seconds, default the current time) anchors the week shift. Meant for an empty
    database: on a non-empty one the import merges (see the importer) and accesses add up.
    Raises ImportFormatError if the packaged files are damaged (the import skipped something or
    made placeholders); NotFoundError from ``record_access`` if a session names a missing entity.
    """
    graph_text, usage_text = sample_texts()
    sessions = parse_usage(usage_text)
    shift = week_shift(max(at for at, _ in sessions), time.time() if now is None else now)
    records = sum(1 for line in graph_text.splitlines() if line.strip())
    total = records + len(sessions)

    def report_import(done: int, _total: int, message: str) -> None:
        if progress is not None:
            progress(done, total, message)

    with tempfile.TemporaryDirectory(prefix="limbic-sample-") as folder:
        path = Path(folder) / "graph.jsonl"
        path.write_text(shift_graph(graph_text, shift), encoding="utf-8")
        report = import_file(service, path, report_import)
    if report.error or report.skipped or report.placeholders:
        problems = report.error or "; ".join(e.reason for e in (report.skipped + report.placeholders)[:3])
        raise ImportFormatError(f"the packaged sample graph did not import cleanly: {problems}")
    accesses = 0
    for index, (at, names) in enumerate(sessions, 1):
        service.usage.record_access(names, at=at + shift, co_occurrence=True)
        accesses += len(names)
        if progress is not None and (index % 100 == 0 or index == len(sessions)):
            progress(records + index, total, f"usage history: {index:,} of {len(sessions):,} sessions")
    return SampleReport(
        import_report=report,
        entities=len(report.entities_created),
        relations=report.relations_created,
        observations=report.observations_added,
        usage_events=len(sessions),
        accesses=accesses,
        shift_seconds=shift,
    )


def seed_if_empty(service, progress: Progress | None = None) -> bool:
    """Seed the sample graph when the database has no entity; True if it did, False if left alone."""
    if service.entities.stats().entities:
        return False
    seed_sample_graph(service, progress)
    return True
