"""Every real memory file in ../shared/corpus imports; the counts agree with MANIFEST.json up to what the
report explains; a second import adds nothing. Skipped (with the reason) when the corpus is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from limbic.core.io.importer import import_file, import_files
from limbic.core.io.parsers import parse_file

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
MANIFEST = CORPUS / "MANIFEST.json"
ENTRIES = json.loads(MANIFEST.read_text(encoding="utf-8")) if MANIFEST.is_file() else []
needs_corpus = pytest.mark.skipif(not ENTRIES, reason=f"real corpus not found at {CORPUS}")


def _counts(service) -> tuple[int, int, int]:
    stats = service.entities.stats()
    return stats.entities, stats.relations, stats.observations


@needs_corpus
@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"][:48] for e in ENTRIES])
def test_corpus_file_imports_and_the_report_explains_the_counts(service, entry):
    path = CORPUS / entry["file"]
    report = import_file(service, path)
    parsed = report.parse_stats
    entities, relations, observations = _counts(service)

    # The reader saw what the manifest counts.
    assert parsed["entity_records"] == entry["n_entities"]
    assert parsed["relation_records"] == entry["n_relations"]
    assert parsed["observations_listed"] + parsed["observations_recorded"] == entry["n_observations"]

    # Entities: the manifest's, less duplicate names folded, plus the listed placeholders.
    assert entities == entry["n_entities"] - parsed["entities_merged"] + len(report.placeholders)
    assert len(report.entities_created) == entities
    assert (parsed["entities_merged"] > 0) == any("duplicate entity" in e.reason for e in report.merged)
    declared = {e.name for e in parse_file(path).entities if e.declared}
    for placeholder in report.placeholders:
        assert placeholder.name not in declared
        assert placeholder.line is not None and "does not exist" in placeholder.reason
        assert f"{placeholder.name!r}" in placeholder.reason

    # Relations: the manifest's, less repeated ones, less those refused, less those that became
    # duplicates once an endpoint was matched ignoring case (counted as already stored).
    refused = [e for e in report.skipped if "relation" in e.reason]
    assert relations == report.relations_created
    assert relations + report.relations_existing == entry["n_relations"] - parsed["relations_duplicate"] - len(refused)
    for resolved in report.resolved:
        assert resolved.line is not None and "ignoring case" in resolved.reason

    # Observations: the manifest's plus those recovered from other shapes or derived from fields,
    # less repeated texts, plus the extra parts of over-long texts.
    expected = (entry["n_observations"] + parsed["observations_recovered"] + parsed["observations_derived"]
                - parsed["observations_duplicate"] + parsed["observations_split"])
    assert observations == report.observations_added == expected
    if parsed["observations_recovered"] or parsed["observations_derived"]:
        assert report.recovered and all(e.line is not None for e in report.recovered)

    # Everything not imported is listed with its line and a reason.
    for entry_skipped in report.skipped:
        assert entry_skipped.line is not None and entry_skipped.reason

    # A second import adds nothing.
    again = import_file(service, path)
    assert again.added_nothing
    assert _counts(service) == (entities, relations, observations)
    assert again.entities_unchanged == len({e.name for e in parse_file(path).entities if e.declared})


@needs_corpus
def test_specific_corpus_explanations(service):
    """Spot checks of what real files contain."""
    dilla = import_file(service, CORPUS / "DoofDilla__dillapoe2stat__.vscode_memory.json")
    assert [(e.line, e.name) for e in dilla.resolved] == [(20, "DillaPoE2Stat"), (21, "DillaPoE2Stat")]
    assert dilla.placeholders == []

    moved = import_file(service, CORPUS / "IzzatFirdaus__ictserve-031125__memory.jsonl")
    assert [e.line for e in moved.skipped] == [1] and "plain text" in moved.skipped[0].reason

    undefined = import_file(service, CORPUS / "dreamlx__new-api__.aim_memory.jsonl")
    assert sorted(e.name for e in undefined.placeholders) == sorted(["V2 外部系统集成 API", "外部用户系统集成", "New API 项目架构"])
    assert undefined.ignored[0].line == 1

    xml = import_file(service, CORPUS / "akankah__MCPKU__memory.jsonl")
    assert [e.line for e in xml.recovered] == [4, 5, 6, 7]
    stored = service.entities.get_entity("user-preference-allowed-dirs").entity
    assert not any("</item>" in o.content for o in stored.observations)


@needs_corpus
def test_whole_corpus_into_one_database_then_again(service):
    files = [CORPUS / e["file"] for e in ENTRIES]
    seen: list[tuple[int, int]] = []
    report = import_files(service, files, progress=lambda done, total, message: seen.append((done, total)))
    assert report.ok
    assert seen and seen[-1][0] == seen[-1][1] and all(a <= b for (a, _), (b, _) in zip(seen, seen[1:], strict=False))
    counts = _counts(service)
    again = import_files(service, files)
    assert all(f.added_nothing for f in again.files)
    assert _counts(service) == counts


@needs_corpus
def test_placeholder_gets_its_type_when_a_later_file_declares_it(service):
    import_file(service, CORPUS / "nsheaps__ai-mktpl__.claude_memory.jsonl")
    assert service.entities.get_entity("default_user").entity.entity_type == "Unknown"
    later = import_file(service, CORPUS / "crlotwhite__ucra__.vscode_memory.json")
    assert service.entities.get_entity("default_user").entity.entity_type == "person"
    [merged] = later.merged
    assert merged.name == "default_user" and "type 'Unknown' → 'person'" in merged.reason
    assert later.entities_updated == 1
