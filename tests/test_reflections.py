"""Reflections: written about an entity, a relation or the whole memory, found by keyword and by paraphrase
(real model), kept through merges and exact undo, exported and imported back identically."""

from __future__ import annotations

import io
import json

import networkx as nx
import pytest
from _embedder_helpers import real_model_dir

from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.io.exporter import export_graph
from limbic.core.io.importer import import_file
from limbic.core.models import EntityInput, ObservationInput, RelationInput, iso
from limbic.core.service import MemoryService
from limbic.core.service.curation_edits import AddReflection, DeleteReflection, EditReflection
from limbic.core.service.entity_edits import DeleteEntities, MergeEntities
from limbic.core.store.backend import open_database

WORKS_ON = RelationInput("Alice", "Harbor", "works_on")


@pytest.fixture
def other_address(backend, tmp_path):
    """A second new memory on the same backend as ``memory_address``."""
    if backend == "sqlite":
        yield str(tmp_path / "other.db")
        return
    from _pg import drop_database, new_database

    address = new_database("other")
    yield address
    drop_database(address)


def seed(service: MemoryService) -> None:
    service.entities.create_entities([EntityInput("Harbor", "project", (ObservationInput("ingests buoy data"),)),
                             EntityInput("Alice", "person"), EntityInput("Al", "person")])
    service.relations.create_relations([WORKS_ON, RelationInput("Al", "Harbor", "works_on")])
    service.reflections.add_reflection("entity", "Harbor", "nolan", "The ingestion kept breaking whenever the buoys went "
                           "offline; a painful week.", "frustracion", created_at=1_700_000_000)
    service.reflections.add_reflection("relation", WORKS_ON, "sofia", "Alice joining made the project much calmer.",
                           "Satisfaccion")
    service.reflections.add_reflection("global", None, "sofia", "This memory mixes two projects and needs cleaning.", "insight")
    service.reflections.add_reflection("entity", "Al", "Sofia", "Al is probably Alice under a nickname.")


def contents(reflections) -> list[tuple]:
    """Everything about the reflections but their ids, times to the microsecond (as exported)."""
    return [(r.target_type, r.entity, r.target, r.relation_type, r.author, r.content, r.mood, iso(r.created_at),
             iso(r.updated_at)) for r in reflections]


def test_written_read_and_refused(service):
    seed(service)
    harbor = service.reflections.reflections_of("Harbor")
    assert [(r.target_type, r.author, r.mood) for r in harbor] == [("entity", "nolan", "frustracion"),
                                                                   ("relation", "sofia", "satisfaccion")]
    assert harbor[0].created_at == harbor[0].updated_at == 1_700_000_000
    assert [r.content[:8] for r in service.reflections.reflections_of("Al")] == ["Al is pr"]
    assert len(service.reflections.all_reflections()) == 4
    before = service.history.last_change_id()
    for call in (
        lambda: service.reflections.add_reflection("session", "Harbor", "x", "y"),
        lambda: service.reflections.add_reflection("entity", None, "x", "y"),
        lambda: service.reflections.add_reflection("entity", "Harbor", " ", "y"),
        lambda: service.reflections.add_reflection("entity", "Harbor", "x", ""),
        lambda: service.reflections.add_reflection("entity", "Harbor", "x\ny", "z"),
        lambda: service.reflections.add_reflection("global", "Harbor", "x", "y"),
        lambda: service.reflections.add_reflection("relation", "Harbor", "x", "y"),
        lambda: service.reflections.add_reflection("entity", "Harbor", "x", "y", "m" * 65),
        lambda: service.reflections.update_reflection(0, "x"),
    ):
        with pytest.raises(ValidationError):
            call()
    for call in (lambda: service.reflections.add_reflection("entity", "Nobody", "x", "y"),
                 lambda: service.reflections.add_reflection("relation", RelationInput("Harbor", "Alice", "works_on"), "x", "y"),
                 lambda: service.reflections.update_reflection(999, "x"), lambda: service.reflections.delete_reflection(999),
                 lambda: service.reflections.reflections_of("Nobody")):
        with pytest.raises(NotFoundError):
            call()
    assert service.history.last_change_id() == before


def test_edits_undo_exactly_and_merges_and_deletions_keep_them(service):
    seed(service)
    before = contents(service.reflections.all_reflections())
    harbor = service.reflections.reflections_of("Harbor")[0]
    for edit in (AddReflection("entity", "Alice", "me", "a new thought", "duda"),
                 EditReflection(harbor.id, "rewritten", "someone", ""), DeleteReflection(harbor.id),
                 MergeEntities(["Al"], "Alice"), DeleteEntities(["Harbor"])):
        edit.apply(service)
        assert contents(service.reflections.all_reflections()) != before, edit
        edit.revert(service)
        assert contents(service.reflections.all_reflections()) == before, edit
        assert [r.id for r in service.reflections.all_reflections()] == [r.id for r in service.reflections.reflections_of("Harbor")[:1]] + [
            r.id for r in service.reflections.all_reflections()][1:]
    merge = MergeEntities(["Al"], "Alice")
    merge.apply(service)
    assert [r.content[:8] for r in service.reflections.reflections_of("Alice")] == ["Alice jo", "Al is pr"]
    edit = EditReflection(harbor.id, "rewritten", mood="")
    edit.apply(service)
    changed = service.reflections.get_reflection(harbor.id)
    assert (changed.content, changed.author, changed.mood) == ("rewritten", "nolan", None)
    assert changed.updated_at > changed.created_at


def test_found_by_keyword_and_by_paraphrase_with_filters(memory_address):
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    service = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    try:
        seed(service)
        [(first, rank), *_] = service.reflections.search_reflections("buoys offline")
        assert first.entity == "Harbor" and rank.text_rank == 1 and rank.vector_rank == 1
        [(first, rank), *_] = service.reflections.search_reflections("sensor outages disrupted intake")
        assert first.entity == "Harbor" and rank.text_rank is None and rank.vector_rank == 1
        found = service.reflections.search_reflections("project", author="SOFIA")
        assert {r.author.lower() for r, _ in found} == {"sofia"} and len(found) == 3
        assert [r.target_type for r, _ in service.reflections.search_reflections("project", target_type="global")] == ["global"]
        assert [r.mood for r, _ in service.reflections.search_reflections("calm", mood="satisfaccion")] == ["satisfaccion"]
        assert len(service.reflections.search_reflections("anything at all", limit=2)) == 2
        with pytest.raises(ValidationError):
            service.reflections.search_reflections("  ")
        with pytest.raises(ValidationError):
            service.reflections.search_reflections("x", limit=0)
    finally:
        service.close()


def test_full_text_only_without_a_model(memory_address):
    service = MemoryService(open_database(memory_address))
    try:
        seed(service)
        [(first, rank)] = service.reflections.search_reflections("buoys")
        assert first.entity == "Harbor" and rank.vector_rank is None and rank.similarity is None
    finally:
        service.close()


@pytest.mark.parametrize("blank", ["", "   ", "\t"])
def test_a_blank_mood_filters_nothing_and_a_blank_author_or_type_is_refused(memory_address, blank):
    service = MemoryService(open_database(memory_address))
    try:
        seed(service)
        everything = [r.id for r, _ in service.reflections.search_reflections("project")]
        assert len(everything) == 2
        assert [r.id for r, _ in service.reflections.search_reflections("project", mood=blank)] == everything
        assert [r.id for r, _ in service.reflections.search_reflections("project", mood=blank, author="SOFIA")] == everything
        for filters in ({"author": blank}, {"target_type": blank}, {"author": blank, "mood": blank}):
            with pytest.raises(ValidationError) as refused:
                service.reflections.search_reflections("project", **filters)
            assert "sql" not in str(refused.value).lower()
    finally:
        service.close()


def test_exported_and_imported_back_identically(service, other_address, tmp_path):
    seed(service)
    out = io.BytesIO()
    export_graph(service, "jsonl", out)
    lines = [json.loads(line) for line in out.getvalue().decode().splitlines()]
    records = [line for line in lines if line["type"] == "reflection"]
    assert len(records) == 4 and records[1]["relation"] == {"from": "Alice", "to": "Harbor", "relationType": "works_on"}
    path = tmp_path / "export.jsonl"
    path.write_bytes(out.getvalue())
    other = MemoryService(open_database(other_address))
    try:
        report = import_file(other, path)
        assert report.reflections_added == 4 and not report.skipped
        assert contents(other.reflections.all_reflections()) == contents(service.reflections.all_reflections())
        again = import_file(other, path)
        assert again.added_nothing and len(other.reflections.all_reflections()) == 4
    finally:
        other.close()
    plain = io.BytesIO()
    export_graph(service, "jsonl", plain, extras=False)
    assert b'"reflection"' not in plain.getvalue()
    for fmt, read in (("graphml", nx.read_graphml), ("gexf", nx.read_gexf)):
        data = io.BytesIO()
        export_graph(service, fmt, data)
        data.seek(0)
        network = read(data)
        assert json.loads(network.nodes["Harbor"]["reflections"])[0]["author"] == "nolan"
        edge = next(d for _, _, d in network.edges(data=True) if d.get("reflections"))
        assert json.loads(edge["reflections"])[0]["mood"] == "satisfaccion"
        if fmt == "graphml":
            assert json.loads(network.graph["reflections"])[0]["targetType"] == "global"


def test_a_bad_reflection_record_is_skipped_and_reported(service, tmp_path):
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"type": "entity", "name": "A", "entityType": "x", "observations": []},
        {"type": "reflection", "targetType": "entity", "entityName": "A", "author": "me", "content": "fine"},
        {"type": "reflection", "targetType": "entity", "author": "me", "content": "no target"},
        {"type": "reflection", "targetType": "entity", "entityName": "Ghost", "author": "me", "content": "gone"},
        {"type": "reflection", "targetType": "relation", "relation": {"from": "A"}, "author": "me", "content": "x"},
    ]) + "\n", encoding="utf-8")
    report = import_file(service, path)
    assert report.reflections_added == 1
    assert len(report.skipped) == 3
    assert [r.content for r in service.reflections.all_reflections()] == ["fine"]


def test_stop_words_match_nothing(memory_address):
    service = MemoryService(open_database(memory_address))
    try:
        seed(service)
        # "the", "did", "why" are in other reflections too; only "memory" and "cleaning" say what is meant
        found = service.reflections.search_reflections("why did the memory need the cleaning")
        assert [r.target_type for r, _ in found] == ["global"]
        assert {r.entity for r, _ in service.reflections.search_reflections("the")} == {"Harbor", "Alice"}  # only stop words: kept
    finally:
        service.close()
