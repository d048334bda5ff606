"""``limbic db copy``: a whole memory, SQLite → PostgreSQL → SQLite, gives identical exports, identical search
results and the same rows in every table; a copy into a memory that is not empty is refused."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from _io_helpers import FIXTURE_FILES

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.errors import ConflictError
from limbic.core.io.exporter import export_graph
from limbic.core.io.importer import import_files
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.core.store.copying import TABLES, copy_memory

QUERIES = ("server configuration", "python tests", "memory graph", "Ada", "deploy docker", "the")


def _lived_in(service: MemoryService) -> None:
    """A memory with history: imported files, uses after searches, a reflection, a tuning setting."""
    import_files(service, FIXTURE_FILES)
    service.entities.create_entities([EntityInput("Ada", "person", (ObservationInput("writes the analytical engine notes"),))])
    outcome = service.search.query("engine notes", limit=5)
    service.usage.wait_for_signals()  # the search is logged off the caller's path
    service.usage.mark_used(["Ada"], search_id=outcome.search_id)
    service.reflections.add_reflection("entity", "Ada", "tester", "a careful writer", "insight")
    service.usage.wait_for_signals()


def _export(service: MemoryService) -> bytes:
    out = io.BytesIO()
    export_graph(service, "jsonl", out)
    return out.getvalue()


def _searches(service: MemoryService) -> list[list[tuple[str, float]]]:
    return [[(r.name, r.final_score) for r in service.search.query(q, limit=10, record=False).results] for q in QUERIES]


def _same_results(got: list[list[tuple[str, float]]], want: list[list[tuple[str, float]]]) -> bool:
    """The same names in the same order with the same scores (to 1e-6: the cosine of similar queries' feedback
    is computed in float32 by sqlite-vec on SQLite and by numpy on PostgreSQL, which may differ in the last bit)."""
    return all([n for n, _ in g] == [n for n, _ in w] and all(abs(a - b) < 1e-6 for (_, a), (_, b) in zip(g, w, strict=True))
               for g, w in zip(got, want, strict=True))


def _counts(service: MemoryService) -> dict[str, int]:
    conn = service.database.read()
    return {t: int(conn.execute(f"SELECT count(*) FROM {t}").get) for t in TABLES if t != "mcp_tokens"}


def test_sqlite_to_postgresql_to_sqlite_keeps_everything(tmp_path, pg_address):
    first = MemoryService(open_database(str(tmp_path / "first.db")), HashingEmbedder())
    _lived_in(first)
    expected = (_export(first), _searches(first), _counts(first))
    assert expected[2]["search_events"] >= 1 and expected[2]["implicit_feedback"] >= 1
    target = open_database(pg_address)
    report = copy_memory(first.database, target)
    target.close()
    first.close()
    assert report.rows["entities"] == expected[2]["entities"] and report.vectors > 0

    on_server = MemoryService(open_database(pg_address), HashingEmbedder())
    assert _export(on_server) == expected[0]
    assert _counts(on_server) == expected[2]
    assert _same_results(_searches(on_server), expected[1])
    back = open_database(str(tmp_path / "back.db"))
    copy_memory(on_server.database, back)
    back.close()
    on_server.close()

    again = MemoryService(open_database(str(tmp_path / "back.db")), HashingEmbedder())
    try:
        assert _export(again) == expected[0] and _counts(again) == expected[2]
        assert _same_results(_searches(again), expected[1])
    finally:
        again.close()


def test_a_memory_that_is_not_empty_is_refused_and_left_as_it_was(tmp_path, pg_address):
    source = MemoryService(open_database(str(tmp_path / "s.db")), HashingEmbedder())
    source.entities.create_entities([EntityInput("One", "thing")])
    target = MemoryService(open_database(pg_address), HashingEmbedder())
    target.entities.create_entities([EntityInput("Two", "thing")])
    with pytest.raises(ConflictError):
        copy_memory(source.database, target.database)
    assert [e.name for e in target.entities.read_graph().entities] == ["Two"]
    source.close()
    target.close()


def test_the_cli_copies_and_reports_counts(tmp_path, pg_address, limbic_home):
    service = MemoryService(open_database(str(tmp_path / "cli.db")), HashingEmbedder())
    service.entities.create_entities([EntityInput("Solo", "thing", (ObservationInput("alone"),))])
    service.close()
    done = subprocess.run([sys.executable, "-m", "limbic.gui.launcher", "db", "copy", str(tmp_path / "cli.db"),
                           pg_address, "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["rows"]["entities"] == 1 and report["rows"]["observations"] == 1
    same = subprocess.run([sys.executable, "-m", "limbic.gui.launcher", "db", "copy", pg_address, pg_address],
                          capture_output=True, text=True, timeout=120)
    assert same.returncode == 2 and "same memory" in same.stderr
