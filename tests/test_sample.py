"""The packaged sample graph: its content, and seeding it (import + usage replay) into a database."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path

import pytest
from _backends import BACKENDS, address_on

from limbic.core.errors import ImportFormatError
from limbic.core.io.sample import (
    WEEK,
    parse_usage,
    sample_texts,
    seed_if_empty,
    seed_sample_graph,
    shift_graph,
    week_shift,
)
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

REPO = Path(__file__).resolve().parents[1]
DAY = 86400.0


def _seconds(text: str) -> float:
    return datetime.fromisoformat(text).astimezone(UTC).timestamp()


@pytest.fixture(scope="module")
def sample():
    graph_text, usage_text = sample_texts()
    records = [json.loads(line) for line in graph_text.splitlines() if line.strip()]
    entities = [r for r in records if r["type"] == "entity"]
    relations = [r for r in records if r["type"] == "relation"]
    return entities, relations, parse_usage(usage_text)


@pytest.fixture(scope="module", params=BACKENDS)
def seeded_address(request, tmp_path_factory):
    """The memory the module's seeded service runs on, on each backend."""
    yield from address_on(request.param, tmp_path_factory.mktemp("sample") / "memory.db")


@pytest.fixture(scope="module")
def seeded(seeded_address, sample):
    """One database seeded at a fixed 'now' three days after the last session (FTS-only service)."""
    service = MemoryService(open_database(seeded_address), None)
    now = max(at for at, _ in sample[2]) + 3 * DAY
    report = seed_sample_graph(service, now=now)
    yield service, report, now
    service.close()


def test_generator_validates_and_committed_files_are_current():
    done = subprocess.run([sys.executable, str(REPO / "packaging" / "tools" / "make_sample.py"), "--check"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert 150 <= summary["entities"] <= 300 and summary["relations"] >= 300


def test_graph_content_is_coherent(sample):
    entities, relations, _ = sample
    names = {e["name"] for e in entities}
    assert 150 <= len(entities) <= 300 and len(names) == len(entities)
    assert len(relations) >= 300
    assert all(r["from"] in names and r["to"] in names for r in relations)
    assert len({e["entityType"] for e in entities}) >= 10
    assert {"paused", "completed", "archived"} <= {e.get("status", "active") for e in entities}
    kinds = Counter()
    superseding = 0
    for entity in entities:
        earlier: set[str] = set()
        for obs in entity["observations"]:
            text = obs if isinstance(obs, str) else obs["text"]
            if isinstance(obs, dict):
                kinds[obs["kind"]] += 1
                if "supersedes" in obs:
                    assert obs["supersedes"] in earlier, (entity["name"], obs["supersedes"])
                    superseding += 1
            earlier.add(text)
    assert {"fact", "decision", "preference", "event", "metadata"} <= set(kinds)
    assert superseding >= 15
    created = sorted(_seconds(e["createdAt"]) for e in entities)
    assert 500 * DAY <= created[-1] - created[0] <= 800 * DAY  # spread over about two years


def test_usage_history_spans_a_year_and_names_known_entities(sample):
    entities, _, sessions = sample
    created = {e["name"]: _seconds(e["createdAt"]) for e in entities}
    times = [at for at, _ in sessions]
    assert times == sorted(times) and len(sessions) >= 1000
    assert 330 * DAY <= times[-1] - times[0] <= 366 * DAY
    for at, names in sessions:
        assert all(name in created and created[name] <= at for name in names)
    accessed = {name for _, names in sessions for name in names}
    assert len(accessed) < len(entities)  # some entities are never looked at


def test_parse_usage_names_the_bad_line():
    with pytest.raises(ImportFormatError, match="usage line 2"):
        parse_usage('{"at": "2026-01-01T10:00:00Z", "accessed": ["A"]}\n{"at": "2026-01-01", "accessed": []}\n')
    with pytest.raises(ImportFormatError, match="usage line 1"):
        parse_usage('{"at": "yesterday", "accessed": ["A"]}\n')
    with pytest.raises(ImportFormatError):
        parse_usage("\n")


@pytest.mark.parametrize("gap_days, expected_weeks", [(0.5, 0), (3, 0), (10, 1), (400, 57), (-1, -1), (-8, -2)])
def test_week_shift_puts_the_last_session_in_the_last_week(gap_days, expected_weeks):
    last = 1_790_000_000.0
    shift = week_shift(last, last + gap_days * DAY)
    assert shift == expected_weeks * WEEK
    assert last + gap_days * DAY - WEEK < last + shift <= last + gap_days * DAY


def test_shift_graph_moves_every_timestamp():
    line = json.dumps({"type": "entity", "name": "A", "entityType": "T", "createdAt": "2025-01-01T10:00:00Z",
                       "observations": ["plain", {"text": "t", "kind": "event", "createdAt": "2025-02-01T00:00:00Z"}]})
    moved = json.loads(shift_graph(line, 14 * DAY))
    assert moved["createdAt"] == "2025-01-15T10:00:00Z"
    assert moved["observations"] == ["plain", {"text": "t", "kind": "event", "createdAt": "2025-02-15T00:00:00Z"}]


def test_seeding_imports_everything(seeded, sample):
    service, report, _ = seeded
    entities, relations, sessions = sample
    stats = service.entities.stats()
    superseding = sum(1 for e in entities for o in e["observations"] if isinstance(o, dict) and "supersedes" in o)
    total = sum(len(e["observations"]) for e in entities)
    assert (stats.entities, stats.relations) == (len(entities), len(relations))
    assert stats.superseded_observations == superseding
    assert stats.observations == total - superseding
    assert stats.statuses == dict(Counter(e.get("status", "active") for e in entities))
    assert report.entities == len(entities) and report.relations == len(relations)
    assert report.usage_events == len(sessions) and report.accesses == sum(len(n) for _, n in sessions)
    assert not report.import_report.skipped and not report.import_report.placeholders


def test_signals_match_the_usage_history(seeded, sample):
    """Access counts, distinct days and co-occurrences in the database equal those counted from the file."""
    service, report, _ = seeded
    _, _, sessions = sample
    counts, days, pairs = Counter(), {}, Counter()
    for at, names in sessions:
        counts.update(names)
        for name in names:
            days.setdefault(name, set()).add(datetime.fromtimestamp(at + report.shift_seconds, UTC).date())
        pairs.update(frozenset(p) for p in combinations(sorted(set(names)), 2))
    for name in counts:
        detail = service.entities.get_entity(name)
        assert (detail.access_count, detail.access_days) == (counts[name], len(days[name])), name
    conn = service.database.read()
    stored = {frozenset((a, b)): n for a, b, n in conn.execute(
        "SELECT ea.name, eb.name, c.co_count FROM co_occurrences c "
        "JOIN entities ea ON ea.id = c.a_id JOIN entities eb ON eb.id = c.b_id")}
    assert stored == dict(pairs)


def test_salience_decay_and_cooccurrence_differ_between_entities(seeded):
    service, _, now = seeded
    hot = service.entities.get_entity("Harbor Ingest Service")
    forgotten = service.entities.get_entity("Legacy ETL")
    burst = service.entities.get_entity("Incident: Ingest Outage 2026-06-09")
    never = service.entities.get_entity("Kelp CLI")
    assert hot.access_days > 100 and now - hot.last_access < 7 * DAY
    assert forgotten.access_count > 20 and now - forgotten.last_access > 300 * DAY
    assert burst.access_count / burst.access_days > 5 > hot.access_count / hot.access_days
    assert never.access_count == 0 and never.last_access is None
    conn = service.database.read()
    co_counts = [n for (n,) in conn.execute("SELECT co_count FROM co_occurrences")]
    assert max(co_counts) >= 30 and min(co_counts) == 1


def test_seed_shifts_timestamps_to_now(sample, memory_address):
    entities, _, sessions = sample
    now = max(at for at, _ in sessions) + 400 * DAY
    service = MemoryService(open_database(memory_address), None)
    try:
        report = seed_sample_graph(service, now=now)
        assert report.shift_seconds == 57 * WEEK
        first = entities[0]
        assert service.entities.get_entity(first["name"]).entity.created_at == _seconds(first["createdAt"]) + 57 * WEEK
        last_access = max(service.entities.get_entity(n).last_access or 0 for n in ("Harbor", "Sines Harbour Pilot"))
        assert now - WEEK < last_access <= now
    finally:
        service.close()


def test_seed_if_empty_is_idempotent_and_reports_progress(service):
    calls = []
    assert seed_if_empty(service, lambda done, total, message: calls.append((done, total))) is True
    assert calls and all(done <= total for done, total in calls) and calls[-1][0] == calls[-1][1]
    before = service.entities.stats()
    harbor = service.entities.get_entity("Harbor")
    assert seed_if_empty(service) is False
    assert service.entities.stats() == before
    again = service.entities.get_entity("Harbor")
    assert (again.access_count, again.access_days) == (harbor.access_count, harbor.access_days)


def test_seed_if_empty_leaves_a_used_database_alone(service):
    service.entities.create_entities([EntityInput("My note", "Note", (ObservationInput("kept as is"),))])
    assert seed_if_empty(service) is False
    assert service.entities.entity_names() == ["My note"]
