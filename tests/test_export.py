"""Export: JSONL round trip (export → import into an empty database → the same graph), the bare reference
shape, GraphML and GEXF read back by networkx, and the ``limbic import`` / ``limbic export`` commands."""

from __future__ import annotations

import io
import json
from pathlib import Path

import networkx as nx
import pytest
from _backends import address_on
from _io_helpers import FIXTURE_FILES, FIXTURES, fresh_service, snapshot

from limbic.core.cli.main import main
from limbic.core.errors import ValidationError
from limbic.core.io.exporter import export_graph
from limbic.core.io.importer import import_file, import_files
from limbic.core.models import ObservationInput, RelationInput

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
CORPUS_FILES = sorted(CORPUS.glob("*.json*")) if CORPUS.is_dir() else []
CORPUS_FILES = [p for p in CORPUS_FILES if p.name != "MANIFEST.json"]


def _export(service, fmt: str = "jsonl", **options) -> bytes:
    out = io.BytesIO()
    export_graph(service, fmt, out, **options)
    return out.getvalue()


@pytest.fixture
def target_address(backend, tmp_path):
    """A second empty memory on the same backend, to import an export into."""
    yield from address_on(backend, tmp_path / "target.db")


def _round_trip(source, tmp_path: Path, address: str):
    path = tmp_path / "export.jsonl"
    path.write_bytes(_export(source))
    target = fresh_service(address)
    report = import_file(target, path)
    assert report.skipped == [] and report.placeholders == [] and report.resolved == []
    return target


def _edit(service) -> None:
    """Our extras: a supersede chain with kinds and weights, an expiry, an ended relation, a status."""
    service.entities.add_observations([("Ada Lovelace", [ObservationInput("Born 1815", kind="fact", weight=2.0,
                                                                  expires_at=4_102_444_800.0)])])
    service.entities.supersede_observation("Ada Lovelace", "Born 1815", ObservationInput("Born 10 December 1815"))
    service.entities.supersede_observation("Ada Lovelace", "Born 10 December 1815",
                                  ObservationInput("Born 10 December 1815 in London", kind="fact"))
    service.relations.end_relation(RelationInput("Charles Babbage", "Analytical Engine", "designed"))
    service.entities.set_status(["Analytical Engine"], "archived")


def test_round_trip_of_every_fixture_with_our_extras(service, tmp_path, target_address):
    import_files(service, FIXTURE_FILES)
    _edit(service)
    target = _round_trip(service, tmp_path, target_address)
    assert snapshot(target) == snapshot(service)
    ada = target.entities.get_entity("Ada Lovelace").entity
    chain = {o.content: o for o in ada.observations}
    assert chain["Born 1815"].superseded_at is not None and chain["Born 1815"].weight == 0.1  # superseding sets 0.1
    assert chain["Born 10 December 1815 in London"].supersedes == chain["Born 10 December 1815"].id
    target.close()


@pytest.mark.skipif(not CORPUS_FILES, reason=f"real corpus not found at {CORPUS}")
def test_round_trip_of_the_whole_corpus(service, tmp_path, target_address):
    import_files(service, CORPUS_FILES)
    target = _round_trip(service, tmp_path, target_address)
    assert snapshot(target) == snapshot(service)
    again = import_file(target, tmp_path / "export.jsonl")
    assert again.added_nothing
    target.close()


def test_jsonl_lines_carry_the_reference_fields_first(service):
    import_file(service, FIXTURES / "standard.jsonl")
    lines = [json.loads(line) for line in _export(service).decode("utf-8").splitlines()]
    entities = [x for x in lines if x["type"] == "entity"]
    relations = [x for x in lines if x["type"] == "relation"]
    assert [list(x)[:4] for x in entities] == [["type", "name", "entityType", "observations"]] * 3
    assert [list(x)[:4] for x in relations] == [["type", "from", "to", "relationType"]] * 2
    assert all(isinstance(o, str) for x in entities for o in x["observations"])
    assert entities[0]["createdAt"].endswith("Z") and entities[0]["status"] == "active"


def test_plain_export_is_the_bare_reference_shape(service):
    import_files(service, [FIXTURES / "standard.jsonl"])
    _edit(service)
    lines = [json.loads(line) for line in _export(service, extras=False).decode("utf-8").splitlines()]
    assert {tuple(sorted(x)) for x in lines} == {("entityType", "name", "observations", "type"),
                                                 ("from", "relationType", "to", "type")}
    ada = next(x for x in lines if x.get("name") == "Ada Lovelace")
    assert "Born 1815" not in ada["observations"] and "Born 10 December 1815 in London" in ada["observations"]
    assert not any(x.get("relationType") == "designed" for x in lines)  # ended: left out


@pytest.mark.parametrize(("fmt", "reader"), [("graphml", nx.read_graphml), ("gexf", nx.read_gexf)])
def test_graphml_and_gexf_read_back_with_the_right_counts(service, fmt, reader):
    import_files(service, FIXTURE_FILES)
    stats = service.entities.stats()
    ended = len(service.entities.read_graph(include_ended=True).relations) - stats.relations
    graph = reader(io.BytesIO(_export(service, fmt)))
    assert graph.number_of_nodes() == stats.entities
    assert graph.number_of_edges() == stats.relations + ended
    assert graph.nodes["Ada Lovelace"]["entityType"] == "person"
    edge_types = {d["relationType"] for _, _, d in graph.edges(data=True)}
    assert {"wrote_programs_for", "BLOCKS", "haunted_by"} <= edge_types


@pytest.mark.skipif(not CORPUS_FILES, reason=f"real corpus not found at {CORPUS}")
def test_corpus_graphml_and_gexf(service):
    import_files(service, CORPUS_FILES)
    stats = service.entities.stats()
    for fmt, reader in (("graphml", nx.read_graphml), ("gexf", nx.read_gexf)):
        graph = reader(io.BytesIO(_export(service, fmt)))
        assert (graph.number_of_nodes(), graph.number_of_edges()) == (stats.entities, stats.relations), fmt


def test_unknown_format_is_refused(service):
    with pytest.raises(ValidationError, match="unknown export format"):
        export_graph(service, "csv", io.BytesIO())


def test_cli_import_and_export(memory_address, tmp_path, capsys):
    db = memory_address
    assert main(["--db", db, "import", str(FIXTURES / "duplicates.jsonl"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["totals"]["placeholders"] == 2 and report["files"][0]["merged"]

    assert main(["--db", db, "import", str(FIXTURES / "duplicates.jsonl")]) == 0
    text = capsys.readouterr().out
    assert "0 entities created" in text and "Total: 1 file(s)" in text

    assert main(["--db", db, "import", str(tmp_path / "missing.jsonl")]) == 1
    assert "NOT IMPORTED" in capsys.readouterr().out

    out = tmp_path / "graph.gexf"
    assert main(["--db", db, "export", "--format", "gexf", "-o", str(out)]) == 0
    assert nx.read_gexf(out).number_of_nodes() == 5
    assert "exported 5 entities" in capsys.readouterr().err

    assert main(["--db", db, "export"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum(json.loads(line)["type"] == "entity" for line in lines) == 5
