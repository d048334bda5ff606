"""Importer behaviour on the authored fixtures: resolution, placeholders, reports, batching, idempotency."""

from __future__ import annotations

import json

import pytest
from _io_helpers import FIXTURE_FILES, FIXTURES, snapshot

from limbic.core.errors import ImportFormatError
from limbic.core.io.importer import import_file, import_files
from limbic.core.io.parsers import parse_file


def test_every_fixture_imports_and_a_second_import_adds_nothing(service):
    report = import_files(service, FIXTURE_FILES)
    assert report.ok
    before = snapshot(service)
    again = import_files(service, FIXTURE_FILES)
    assert all(f.added_nothing for f in again.files)
    assert snapshot(service) == before
    assert again.totals()["entities_created"] == 0


def test_case_insensitive_match_when_unique_placeholder_otherwise(service):
    report = import_file(service, FIXTURES / "duplicates.jsonl")
    assert [(e.line, e.name) for e in report.resolved] == [(5, "memory server")]
    placeholders = {e.name: e for e in report.placeholders}
    assert sorted(placeholders) == ["Ghost", "alpha"]
    assert "several entities match ignoring case: ALPHA, Alpha" in placeholders["alpha"].reason
    assert placeholders["Ghost"].line == 7
    assert service.entities.get_entity("Ghost").entity.entity_type == "Unknown"
    relations = {(r.source, r.relation_type, r.target) for r in service.entities.read_graph().relations}
    assert relations == {("Memory Server", "is", "Memory Server"), ("Memory Server", "mentions", "alpha"),
                         ("Memory Server", "haunted_by", "Ghost")}
    assert sorted(report.entities_created) == ["ALPHA", "Alpha", "Ghost", "Memory Server", "alpha"]


def test_observation_records_attach_or_make_a_placeholder(service):
    report = import_file(service, FIXTURES / "observation_records.jsonl")
    [orphan] = report.placeholders
    assert orphan.name == "orphan thing" and orphan.line == 6
    stored = service.entities.get_entity("orphan thing").entity
    assert [o.content for o in stored.observations] == ["Nobody declared me"]
    switcher = service.entities.get_entity("Language Switcher").entity
    assert "Event driven" in [o.content for o in switcher.observations]
    relation = service.entities.read_graph().relations[0]
    assert (relation.source, relation.target, relation.context) == (
        "Pilot Study", "Language Switcher", "the study uses the switcher")


def test_timestamps_reach_the_store(service):
    import_file(service, FIXTURES / "timestamps.jsonl")
    parsed = {e.name: e for e in parse_file(FIXTURES / "timestamps.jsonl").entities}
    for name in ("iso", "epoch seconds", "epoch millis", "naive"):
        stored = service.entities.get_entity(name).entity
        assert stored.created_at == pytest.approx(parsed[name].created_at)
    assert service.entities.get_entity("iso").entity.updated_at == pytest.approx(parsed["iso"].updated_at)
    relation = service.entities.read_graph().relations[0]
    assert relation.created_at == pytest.approx(parse_file(FIXTURES / "timestamps.jsonl").relations[0].created_at)


def test_progress_reaches_the_total(service):
    calls = []
    import_files(service, [FIXTURES / "standard.jsonl", FIXTURES / "graph_dump.jsonl"],
                 progress=lambda done, total, message: calls.append((done, total, message)))
    assert calls[-1][0] == calls[-1][1] == 3 + 2 + 3 + 2
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)
    assert any("graph_dump.jsonl" in c[2] for c in calls)


def test_an_unreadable_file_is_reported_and_the_others_imported(service, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x00\x00binary")
    report = import_files(service, [bad, FIXTURES / "standard.jsonl"])
    assert not report.ok
    assert "binary" in report.files[0].error
    assert len(report.files[1].entities_created) == 3
    assert "NOT IMPORTED" in report.summary()
    with pytest.raises(ImportFormatError):
        import_file(service, bad)


def test_large_batches_stay_within_the_service_limits(service, tmp_path):
    lines = [{"type": "entity", "name": f"node {i}", "entityType": "n", "observations": [f"fact {i}"]}
             for i in range(1_100)]
    lines.append({"type": "entity", "name": "hub", "entityType": "n",
                  "observations": [f"hub fact {i}" for i in range(1_050)]})
    lines += [{"type": "relation", "from": "hub", "to": f"node {i}", "relationType": "links"} for i in range(1_050)]
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    report = import_file(service, path)
    stats = service.entities.stats()
    assert (stats.entities, stats.relations, stats.observations) == (1_101, 1_050, 2_150)
    assert report.observations_added == 2_150 and report.relations_created == 1_050
    assert import_file(service, path).added_nothing


def test_a_refused_entity_is_reported_and_the_rest_of_its_batch_kept(service, tmp_path):
    lines = [
        {"type": "entity", "name": "fine", "entityType": "t", "observations": ["ok"]},
        {"type": "entity", "name": "broken chain", "entityType": "t", "observations": ["new"],
         "observationDetails": [{"content": "new", "supersedes": "a text that is not there"}]},
        {"type": "entity", "name": "also fine", "entityType": "t", "observations": ["ok too"]},
    ]
    path = tmp_path / "refused.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    report = import_file(service, path)
    assert sorted(report.entities_created) == ["also fine", "fine"]
    [refused] = report.skipped
    assert refused.line == 2 and refused.name == "broken chain" and "refused by the store" in refused.reason


def test_ended_relations_are_imported_once(service, tmp_path):
    lines = [
        {"type": "entity", "name": "a", "entityType": "t"}, {"type": "entity", "name": "b", "entityType": "t"},
        {"type": "relation", "from": "a", "to": "b", "relationType": "was", "active": False,
         "endedAt": "2024-01-01T00:00:00Z"},
    ]
    path = tmp_path / "ended.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    first = import_file(service, path)
    second = import_file(service, path)
    relations = service.entities.read_graph(include_ended=True).relations
    assert [(r.source, r.target, r.active) for r in relations] == [("a", "b", False)]
    assert first.relations_created == 1 and second.relations_created == 0 and second.relations_existing == 1


def test_report_to_dict_is_json_and_lists_lines(service):
    report = import_files(service, [FIXTURES / "untyped_nested.jsonl"])
    data = json.loads(json.dumps(report.to_dict()))
    [file_report] = data["files"]
    assert file_report["skipped"][0]["line"] == 1
    assert file_report["recovered"][0]["line"] == 2
    assert data["totals"]["entities_created"] == 3 and data["ok"] is True


def test_observation_records_for_one_unknown_name_in_two_cases_share_one_placeholder(service, tmp_path):
    lines = [{"type": "observation", "entity": "orphan", "observation": "first"},
             {"type": "observation", "entity": "Orphan", "observation": "second"}]
    path = tmp_path / "orphans.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    report = import_file(service, path)
    assert [e.name for e in report.placeholders] == ["orphan"]
    assert [(e.line, e.name) for e in report.resolved] == [(2, "Orphan")]
    stored = service.entities.get_entity("orphan").entity
    assert sorted(o.content for o in stored.observations) == ["first", "second"]
    assert import_file(service, path).added_nothing


def test_a_crash_part_way_leaves_nothing_of_the_file(memory_address, tmp_path, monkeypatch):
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.io import importer
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    path = tmp_path / "graph.jsonl"
    path.write_text(
        '{"type":"entity","name":"A","entityType":"T","observations":["a"]}\n'
        '{"type":"entity","name":"B","entityType":"T","observations":["b"]}\n'
        '{"type":"relation","from":"A","to":"B","relationType":"knows"}\n',
        encoding="utf-8",
    )
    service = MemoryService(open_database(memory_address), HashingEmbedder())
    try:
        def crash(self, relations):
            raise OSError("disk full")

        monkeypatch.setattr(importer._Importer, "_apply_relations", crash)
        with pytest.raises(OSError):
            importer.import_file(service, path)
        assert service.entities.stats().entities == 0 and service.history.changes_since(0) == []
        monkeypatch.undo()
        importer.import_file(service, path)
        assert (service.entities.stats().entities, service.entities.stats().relations) == (2, 1)
        assert [c.op for c in service.history.changes_since(0)] == ["import_file"]
    finally:
        service.close()


def test_an_ended_relation_keeps_its_end_time(memory_address, tmp_path):
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.io.importer import import_file
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    path = tmp_path / "graph.jsonl"
    path.write_text(
        '{"type":"entity","name":"A","entityType":"T","observations":[]}\n'
        '{"type":"entity","name":"B","entityType":"T","observations":[]}\n'
        '{"type":"relation","from":"A","to":"B","relationType":"worked_with","active":false,'
        '"endedAt":"2024-03-01T12:00:00Z"}\n',
        encoding="utf-8",
    )
    service = MemoryService(open_database(memory_address), HashingEmbedder())
    try:
        import_file(service, path)
        (relation,) = service.entities.get_entity("A").relations
        assert not relation.active and relation.ended_at == 1709294400.0
    finally:
        service.close()
