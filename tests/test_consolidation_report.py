"""The consolidation report: every kind of curation decision listed with its expected items (duplicate
observations and entities, split candidates, orphans, placeholders left by an import), each settled and undone
exactly; the same report over MCP and ``limbic report --json``."""

from __future__ import annotations

import json

import pytest
from _mcp_helpers import outcome, portal_client

from limbic.core.cli.main import main
from limbic.core.io.importer import import_file
from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.service import review

KINDS = ["duplicate", "duplicate_entity", "split", "orphan", "placeholder"]


@pytest.fixture
def memory(service, tmp_path):
    service.entities.create_entities([
        EntityInput("Widget A", "product", (ObservationInput("the blue widget is made in Ohio"),
                                            ObservationInput("the blue widget is made in Ohio by hand"))),
        EntityInput("Widget B", "product", (ObservationInput("the blue widget is made in Ohio"),)),
        EntityInput("Café Owners", "group", (ObservationInput("meet on Mondays"),)),
        EntityInput("cafe owner", "group", (ObservationInput("run small shops"),)),
        EntityInput("Big", "Thing", (ObservationInput("Big sells widgets"), *(  # two topics far apart: a split worth
            ObservationInput(f"{what} number {i}") for what in ("red apple orchard", "deep ocean whale")  # suggesting
            for i in range(10)))),
        EntityInput("Lonely", "Concept", (ObservationInput("nobody links here"),)),
        EntityInput("Acme Corp", "company", (ObservationInput("makes anvils"),)),
    ])
    service.relations.create_relations([RelationInput("Widget A", "Widget B", "variant_of"),
                              RelationInput("Café Owners", "cafe owner", "same_as"),
                              RelationInput("Big", "Widget A", "sells"), RelationInput("Big", "Widget B", "sells"),
                              RelationInput("Acme Corp", "Big", "owns")])
    path = tmp_path / "import.jsonl"
    path.write_text(json.dumps({"type": "relation", "from": "Big", "to": "Acme Corp.", "relationType": "supplied_by"})
                    + "\n", encoding="utf-8")
    report = import_file(service, path)
    assert [e.name for e in report.placeholders] == ["Acme Corp."]
    return service


def test_each_category_lists_the_expected_items(memory):
    sections = {s.kind: s for s in review.review(memory, kinds=KINDS, limit=5)}
    assert list(sections) == KINDS
    assert [s.kind for s in review.review(memory, limit=0)][-5:] == KINDS  # after the lifecycle's kinds
    assert [d.subjects for d in sections["duplicate"].items] == [("Widget A",)]  # B's copy is B's own
    assert {(d.subjects, d.evidence["reason"]) for d in sections["duplicate_entity"].items} == {
        (("Café Owners", "cafe owner"), "same name"), (("Acme Corp", "Acme Corp."), "same name"),
        (("Widget A", "Widget B"), "close vectors")}  # one observation each, the same
    assert [d.subjects for d in sections["split"].items] == [("Big",)]
    assert [d.subjects for d in sections["orphan"].items] == [("Lonely",)]
    [placeholder] = sections["placeholder"].items
    assert placeholder.subjects == ("Acme Corp.", "Acme Corp") and placeholder.options == ("merge", "keep", "delete")
    assert {k: sections[k].total for k in KINDS} == {"duplicate": 1, "duplicate_entity": 3, "split": 1, "orphan": 1,
                                                     "placeholder": 1}


@pytest.mark.parametrize(("kind", "option"), [("placeholder", "merge"), ("placeholder", "delete"),
                                              ("orphan", "delete"), ("orphan", "keep"), ("placeholder", "keep")])
def test_every_row_is_actionable_and_undone_exactly(memory, kind, option):
    before = memory.entities.read_graph(include_ended=True)
    [decision] = review.review(memory, kinds=[kind])[0].items
    edit = review.decide(memory, decision.key, option)
    assert review.review(memory, kinds=[kind])[0].total == 0
    edit.revert(memory)
    assert memory.entities.read_graph(include_ended=True) == before
    assert review.review(memory, kinds=[kind])[0].total == 1


def test_the_report_over_mcp_and_the_command_line(memory, memory_address, capsys):
    with portal_client(build_server(memory)) as (portal, client):
        got = outcome(portal.call(client.call_tool, "consolidation_report", {"limit": 3, "kinds": KINDS}))
        only = outcome(portal.call(client.call_tool, "consolidation_report", {"kinds": ["orphan"]}))
        bad = outcome(portal.call(client.call_tool, "consolidation_report", {"kinds": ["nonsense"]}))
    assert not got["error"] and got["structured"]["totals"] == {"duplicate": 1, "duplicate_entity": 3, "split": 1,
                                                                "orphan": 1, "placeholder": 1}
    item = got["structured"]["sections"][0]["items"][0]
    assert item["createdAt"].endswith("Z") and item["options"] == ["supersede", "merge", "keep"]
    assert [s["kind"] for s in only["structured"]["sections"]] == ["orphan"]
    assert bad["error"] and "unknown kind" in bad["text"]
    path = memory_address
    assert main(["--db", path, "report", "--json", "--limit", "2"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert {kind: printed["totals"][kind] for kind in KINDS} == got["structured"]["totals"]
    assert main(["--db", path, "report", "--kind", "split"]) == 0
    assert "Big holds 21 observations" in capsys.readouterr().out
    assert main(["--db", path, "split-thresholds", "Thing=30", "*=25"]) == 0
    assert "thing\t30" in capsys.readouterr().out
    assert main(["--db", path, "report", "--kind", "split", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"] == {"split": 0}
    assert main(["--db", path, "split-thresholds", "Thing"]) == 2
