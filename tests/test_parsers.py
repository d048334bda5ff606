"""The tolerant reader: one authored fixture per real-world file shape (tests/fixtures/memory/)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from limbic.core.errors import ImportFormatError
from limbic.core.io.parsers import parse_bytes, parse_file, parse_text
from limbic.core.io.values import timestamp

FIXTURES = Path(__file__).parent / "fixtures" / "memory"


def utc(*parts: int) -> float:
    return datetime(*parts, tzinfo=UTC).timestamp()


def names(result) -> list[str]:
    return [e.name for e in result.entities]


def entity(result, name: str):
    return next(e for e in result.entities if e.name == name)


def observations(result, name: str) -> list[str]:
    return [o.content for o in entity(result, name).observations]


def triples(result) -> set[tuple[str, str, str]]:
    return {(r.source, r.relation_type, r.target) for r in result.relations}


def issues(result, action: str) -> list[tuple[int | None, str]]:
    return [(i.line, i.reason) for i in result.issues if i.action == action]


def test_standard_jsonl_keeps_everything_in_order():
    result = parse_file(FIXTURES / "standard.jsonl")
    assert result.format == "jsonl"
    assert names(result) == ["Ada Lovelace", "Analytical Engine", "Charles Babbage"]
    assert entity(result, "Charles Babbage").entity_type == "person"
    assert observations(result, "Analytical Engine") == ["Mechanical general-purpose computer 🛠️", "设计于1837年"]
    assert triples(result) == {("Ada Lovelace", "wrote_programs_for", "Analytical Engine"),
                               ("Charles Babbage", "designed", "Analytical Engine")}
    assert result.issues == []
    assert result.stats["observations_listed"] == 5


def test_aim_marker_is_ignored_and_reported_and_missing_final_newline_is_fine():
    result = parse_file(FIXTURES / "aim_marker.jsonl")
    assert names(result) == ["Proyecto Faro", "Проект Маяк"]
    assert triples(result) == {("Proyecto Faro", "mirrors", "Проект Маяк")}
    assert issues(result, "ignored") == [(1, 'format marker {"type": "_aim", "source": "mcp-knowledge-graph"}')]
    assert result.stats["markers"] == 1


def test_underscore_type_and_alternative_relation_keys():
    result = parse_file(FIXTURES / "underscore_type.jsonl")
    assert names(result) == ["billing-service", "postgres"]
    assert triples(result) == {("billing-service", "stores_data_in", "postgres"),
                               ("postgres", "serves", "billing-service")}
    assert result.issues == []


def test_source_target_relations_with_the_type_as_record_type():
    result = parse_file(FIXTURES / "source_target.jsonl")
    assert triples(result) == {("frontend", "calls", "api"), ("api", "notifies", "frontend")}
    calls = next(r for r in result.relations if r.relation_type == "calls")
    assert calls.context == "REST over HTTPS"
    assert calls.line == 3


def test_untyped_records_nested_relations_plain_text_and_blank_lines():
    result = parse_file(FIXTURES / "untyped_nested.jsonl")
    assert names(result) == ["Release 1.0", "Login page", "Search page"]
    assert triples(result) == {("Release 1.0", "includes", "Login page"),
                               ("Release 1.0", "related_to", "Search page")}
    skipped = issues(result, "skipped")
    assert len(skipped) == 1 and skipped[0][0] == 1 and "plain text" in skipped[0][1]
    recovered = issues(result, "recovered")
    assert recovered == [(2, "relation 'Release 1.0' → 'Search page' has no type; 'related_to' used")]


def test_observation_objects_xml_leftovers_strings_and_scalars():
    result = parse_file(FIXTURES / "observation_shapes.jsonl")
    first = entity(result, "objects").observations[0]
    assert (first.content, first.kind, first.created_at) == ("first fact", "fact", utc(2024, 5, 1, 10))
    assert observations(result, "objects") == ["first fact", "second fact", "third fact"]
    assert observations(result, "xml leftovers") == ["alpha", "beta", "gamma", "delta"]
    assert observations(result, "no observations") == []
    assert observations(result, "single string") == ["just one text"]
    assert observations(result, "scalars") == ["42", "ok"]
    assert result.stats["observations_recovered"] == 10
    assert [line for line, _ in issues(result, "recovered")] == [1, 2, 4, 5]


def test_duplicate_names_observations_and_relations_are_folded_and_explained():
    result = parse_file(FIXTURES / "duplicates.jsonl")
    assert names(result) == ["Memory Server", "Alpha", "ALPHA"]
    server = entity(result, "Memory Server")
    assert server.entity_type == "project"
    assert observations(result, "Memory Server") == ["Stores a graph", "Written in TypeScript"]
    assert result.stats["entities_merged"] == 1
    assert result.stats["observations_duplicate"] == 2
    assert result.stats["relations_duplicate"] == 1
    merged = issues(result, "merged")
    assert (2, "duplicate entity 'Memory Server' merged into the one at line 1 "
               "(type 'project' kept, 'software' dropped)") in merged
    assert any(line == 8 and "first on line 7" in reason for line, reason in merged)
    # Endpoints that differ in case are left for the importer, which sees the database too.
    assert ("Memory Server", "mentions", "alpha") in triples(result)


def test_graph_database_dump_nodes_and_edges_by_id():
    result = parse_file(FIXTURES / "graph_dump.jsonl")
    assert result.format == "jsonl+graph-dump"
    assert names(result) == ["Items not saved", "Archive tab", "8f14e45f-0003"]
    bug = entity(result, "Items not saved")
    assert bug.entity_type == "Issue"
    assert bug.created_at == utc(2025, 6, 22)
    assert observations(result, "Items not saved") == [
        "labels: Issue, Bug", "priority: critical", "affected_files: a.swift, b.swift"]
    assert observations(result, "Archive tab") == ["done: false", "estimate_hours: 3"]
    assert triples(result) == {("Items not saved", "BLOCKS", "Archive tab"),
                               ("8f14e45f-0003", "DEPENDS_ON", "Items not saved")}
    blocks = next(r for r in result.relations if r.relation_type == "BLOCKS")
    assert blocks.context == "Persistence bug blocks the archive"
    assert result.stats["graph_nodes"] == 3 and result.stats["observations_derived"] == 6


def test_bom_and_crlf():
    data = (FIXTURES / "bom_crlf.jsonl").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\r\n" in data
    result = parse_bytes(data)
    assert names(result) == ["Windows note", "Second note"]
    assert observations(result, "Windows note") == ["Saved by Notepad with a BOM and CRLF"]
    assert triples(result) == {("Windows note", "precedes", "Second note")}
    assert result.issues == []


def test_no_final_newline_and_trailing_space():
    result = parse_file(FIXTURES / "no_final_newline.jsonl")
    assert observations(result, "last line") == ["no newline after me"]
    assert result.stats["lines"] == 1 and result.issues == []


def test_single_pretty_printed_document():
    result = parse_file(FIXTURES / "pretty_document.json")
    assert result.format == "json-document"
    assert names(result) == ["Pretty A", "Pretty B"]
    assert triples(result) == {("Pretty A", "links_to", "Pretty B")}


def test_document_items_are_located_by_path_not_line():
    text = json.dumps({"entities": [{"name": "ok", "entityType": "t"}, {"entityType": "nameless"}],
                       "relations": []}, indent=2)
    result = parse_text(text)
    [issue] = result.issues
    assert issue.line is None and issue.item == "entities[1]" and issue.where() == "entities[1]"


def test_timestamps_iso_epoch_seconds_and_milliseconds_kept():
    result = parse_file(FIXTURES / "timestamps.jsonl")
    iso = entity(result, "iso")
    assert iso.created_at == pytest.approx(utc(2025, 5, 15, 7, 25, 13) + 0.613)
    assert iso.updated_at == utc(2025, 5, 16, 6)  # +02:00
    assert entity(result, "epoch seconds").created_at == 1_700_000_000
    assert entity(result, "epoch seconds").updated_at == 1_700_000_100
    assert entity(result, "epoch millis").created_at == pytest.approx(1_700_000_000.123)
    assert entity(result, "naive").created_at == utc(2024, 1, 2, 3, 4, 5)
    assert entity(result, "naive").updated_at is None
    assert issues(result, "recovered") == [(4, "unreadable timestamp 'not a date' ignored")]
    assert result.relations[0].created_at == utc(2025, 5, 15, 7, 25, 20)


@pytest.mark.parametrize(("raw", "expected"), [
    ("2024-01-01", utc(2024, 1, 1)), ("2024-01-01T00:00:00z", utc(2024, 1, 1)), (1.7e9, 1.7e9),
    (1.7e12, 1.7e9), (1.7e15, 1.7e9), (1.7e18, 1.7e9), ("1700000000000", 1.7e9),
    (None, None), (True, None), ("soon", None), (-5, None), ([], None), ("", None),
])
def test_timestamp_forms(raw, expected):
    assert timestamp(raw) == (pytest.approx(expected) if expected else None)


def test_hand_rolled_records_ids_and_observation_lines():
    result = parse_file(FIXTURES / "observation_records.jsonl")
    assert names(result) == ["Pilot Study", "Language Switcher", "knowledge_graph_system", "orphan thing"]
    assert triples(result) == {("Pilot Study", "uses", "Language Switcher")}
    assert observations(result, "Pilot Study") == [
        "Adaptive assessment study", "language: bilingual", "status: production", "Download removed"]
    event = entity(result, "Language Switcher").observations[-1]
    assert (event.content, event.created_at) == ("Event driven", utc(2025, 9, 13, 15, 30))
    system = entity(result, "knowledge_graph_system")
    assert system.entity_type == "System" and system.created_at == pytest.approx(utc(2025, 9, 13, 15, 29, 31) + 0.17)
    assert entity(result, "orphan thing").declared is False
    assert result.stats["observation_records"] == 3


def test_broken_lines_are_reported_and_the_rest_kept():
    result = parse_file(FIXTURES / "broken_lines.jsonl")
    assert names(result) == ["good", "comma", "twin one", "twin two"]
    skipped = dict(issues(result, "skipped"))
    assert sorted(skipped) == [2, 5, 6, 7]
    assert "invalid JSON" in skipped[2]
    assert "JSON array" in skipped[5]
    assert "no name" in skipped[6]
    assert skipped[7] == "relation target missing"


def test_overlong_observation_is_split_and_names_are_cleaned():
    long_text = "x" * 25_000
    line = json.dumps({"type": "entity", "name": "  two\nlines\tname ", "entityType": "t",
                       "observations": [long_text, "bell\x07 removed"]})
    result = parse_text(line)
    [item] = result.entities
    assert item.name == "two lines name"
    parts = [o.content for o in item.observations[:-1]]
    assert len(parts) == 3 and all(len(p) <= 10_000 for p in parts) and parts[0].startswith("(part 1/3) ")
    assert "".join(p.split(") ", 1)[1] for p in parts) == long_text
    assert item.observations[-1].content == "bell removed"
    assert result.stats["observations_split"] == 2
    assert any("cleaned" in reason for _, reason in issues(result, "recovered"))


def test_too_long_name_is_skipped_with_reason():
    result = parse_text(json.dumps({"type": "entity", "name": "n" * 600, "entityType": "t"}))
    assert result.entities == []
    assert issues(result, "skipped") == [(1, "entity name 600 characters long (limit 512)")]


def test_utf16_with_bom_is_read():
    text = '{"type":"entity","name":"PowerShell","entityType":"shell","observations":["saved as UTF-16"]}\r\n'
    result = parse_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    assert observations(result, "PowerShell") == ["saved as UTF-16"]


@pytest.mark.parametrize(("data", "message"), [
    (b"", "empty"), (b"  \n\n", "empty"), (b"\x00\x01binary", "binary"),
    (b'{"name":"caf\xe9"}\n', "not UTF-8 text (invalid byte at line 1)"),
])
def test_unreadable_files_raise_import_format_error(data, message):
    with pytest.raises(ImportFormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_bytes(data, "f.jsonl")


def test_missing_file_raises_import_format_error(tmp_path):
    with pytest.raises(ImportFormatError, match="cannot read"):
        parse_file(tmp_path / "absent.jsonl")


def test_our_export_extras_are_read_back():
    line = json.dumps({
        "type": "entity", "name": "E", "entityType": "t", "observations": ["new"], "status": "paused",
        "createdAt": "2024-01-01T00:00:00Z", "updatedAt": "2024-02-01T00:00:00Z",
        "observationDetails": [{"content": "new", "createdAt": "2024-01-03T00:00:00Z", "kind": "decision",
                                "weight": 2.5, "supersedes": "old"}],
        "supersededObservations": [{"content": "old", "createdAt": "2024-01-02T00:00:00Z",
                                    "supersededAt": "2024-01-03T00:00:00Z"}],
    })
    relation = json.dumps({"type": "relation", "from": "E", "to": "E", "relationType": "self",
                           "active": False, "endedAt": "2024-03-01T00:00:00Z", "context": "why"})
    result = parse_text(line + "\n" + relation + "\n")
    [item] = result.entities
    assert item.status == "paused" and item.updated_at == utc(2024, 2, 1)
    old, new = item.observations
    assert (old.content, old.superseded, old.created_at) == ("old", True, utc(2024, 1, 2))
    assert (new.content, new.kind, new.weight, new.supersedes) == ("new", "decision", 2.5, "old")
    [rel] = result.relations
    assert (rel.active, rel.ended_at, rel.context) == (False, utc(2024, 3, 1), "why")
    assert result.issues == []


def test_invalid_status_becomes_an_observation():
    result = parse_text(json.dumps({"type": "entity", "name": "E", "entityType": "t", "status": "shipped"}))
    assert observations(result, "E") == ["status: shipped"]
    assert entity(result, "E").status is None
