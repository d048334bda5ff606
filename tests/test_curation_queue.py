"""The queue of curation decisions: sibling names (a language, an architecture, a version apart) never proposed
as one entity, close entities proposed only with shared evidence, decisions ranked by what they are worth,
families of alike decisions settled with one undoable edit, and the evidence in plain words."""

from __future__ import annotations

import pytest

from limbic.core.curation.entities import identifier
from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.service import review
from limbic.core.service.decisions import Decision, describe

PACKAGES = ["libreoffice-l10n-lt", "libreoffice-l10n-pl", "libgcc-12-dev-mips64-cross", "libgcc-12-dev-sh4-cross",
            "libflac++-dev", "libflac-dev"]


@pytest.mark.parametrize(("name", "written_as_identifier"), [
    ("libreoffice-l10n-lt", True), ("libgcc-12-dev-sh4-cross", True), ("python3.11-dev", True),
    ("libflac++", True), ("soapdenovo2", True), ("jellyfish", True), ("NIMCP_Project", True),
    ("NIMCP Project", False), ("New York City", False), ("Alice", False), ("NYC", False), ("", False),
])
def test_names_written_as_identifiers(name, written_as_identifier):
    assert identifier(name) is written_as_identifier


def test_sibling_packages_are_never_one_entity_but_one_name_spelled_twice_is(service):
    """Each pair of sibling packages shares its description, its section and what it depends on, and their
    vectors are close: still not one entity."""
    descriptions = ["Description: localised user interface and help for the office suite",
                    "Description: GCC support library, development files for cross compiling",
                    "Description: Free Lossless Audio Codec, development headers"]
    service.entities.create_entities([EntityInput(name, "package", (ObservationInput(descriptions[n // 2]),
                                                           ObservationInput("Section: misc")))
                             for n, name in enumerate(PACKAGES)]
                            + [EntityInput(f"base-{n}", "package", (ObservationInput("Section: libs"),)) for n in range(3)]
                            + [EntityInput("NIMCP Project", "project", (ObservationInput("C-based neural library"),)),
                               EntityInput("NIMCP_Project", "software_project", (ObservationInput("Build: make"),))])
    service.relations.create_relations([RelationInput(name, f"base-{n // 2}", "depends_on") for n, name in enumerate(PACKAGES)])
    total, found = service.curation.find_duplicate_entities(threshold=0.5)
    assert [(g.names, g.reason) for g in found] == [(("NIMCP Project", "NIMCP_Project"), "same name")]
    assert total == 1
    [group] = found
    assert group.merge_note == "keeps the name “NIMCP Project”; the observations and relations of “NIMCP_Project” move to it"
    assert [(s.name, s.entity_type, s.first) for s in group.sides] == [
        ("NIMCP Project", "project", ("C-based neural library",)), ("NIMCP_Project", "software_project", ("Build: make",))]
    report = service.curation.find_duplicate_observations(threshold=0.5)
    assert report.total == 0  # the same description on two packages: each package's own
    assert [(f.text, f.count) for f in report.shared][0] == ("Section: misc", 6) and report.shared_total == 5


def test_close_entities_need_shared_evidence(service):
    service.entities.create_entities([
        EntityInput("Widget A", "product", (ObservationInput("the blue widget is made in Ohio"),)),
        EntityInput("Widget B", "product", (ObservationInput("the blue widget is made in Ohio"),)),
        EntityInput("Gadget", "product", (ObservationInput("the blue gadget is made in Ohio"),)),
        EntityInput("Shop", "company", (ObservationInput("sells things"),))])
    service.relations.create_relations([RelationInput("Shop", "Widget A", "sells"), RelationInput("Shop", "Widget B", "sells")])
    total, found = service.curation.find_duplicate_entities(threshold=0.6)
    assert [g.names for g in found] == [("Widget A", "Widget B")] and total == 1  # Gadget shares no observation
    assert found[0].why.endswith("with 1 observation and 1 related entity in common")


def test_families_of_alike_decisions_are_settled_by_one_undoable_edit(service):
    service.entities.create_entities([EntityInput(f"Task {n}", "task", (
        ObservationInput(f"Step {n}: the importer reads the whole memory file before parsing its records"),
        ObservationInput(f"Step {n}: the importer reads the whole memory file before parsing its records line by "
                         "line"))) for n in range(4)])
    service.usage.mark_used(["Task 2"])
    [section] = review.review(service, kinds=["duplicate"], limit=3)
    assert section.total == 4 and len(section.items) == 3
    assert section.items[0].subjects == ("Task 2",)  # the used entity's decision is worth the most
    assert [d.worth for d in section.items] == sorted((d.worth for d in section.items), reverse=True)
    [alike] = section.families
    assert alike.count == 4 and alike.options == ("supersede", "merge", "keep") and len(alike.keys) == 4
    before = service.entities.read_graph(include_ended=True)
    edit = review.decide_all(service, alike.keys, "supersede")
    live = {e.name: [o.content for o in e.live_observations] for e in service.entities.read_graph().entities}
    assert live["Task 1"] == ["Step 1: the importer reads the whole memory file before parsing its records line by "
                              "line"]  # the one that says the most
    assert review.review(service, kinds=["duplicate"])[0].total == 0
    edit.revert(service)
    assert service.entities.read_graph(include_ended=True) == before
    with pytest.raises(ValidationError):
        review.decide_all(service, alike.keys, "explode")
    with pytest.raises(ValidationError):
        review.decide_all(service, [alike.keys[0], "orphan:1"], "keep")
    with pytest.raises(NotFoundError):
        review.decide_all(service, ["duplicate:1-999"], "keep")


def test_evidence_is_described_in_plain_words():
    cluster = Decision("duplicate", "duplicate:1-2", "t", ("Task 3",), {
        "key": "duplicate:1-2", "relation": "duplicate", "reason": "2 observations say the same fact in one entity",
        "keeps": "Database is already compatible", "size": 2, "best": 0.93,
        "members": [{"id": 1, "entityName": "Task 3", "content": "Database is already compatible"},
                    {"id": 2, "entityName": "Task 3", "content": "No migration needed"}]}, ("supersede",))
    text = describe(cluster)
    assert text.splitlines()[:2] == ["2 observations say the same fact in one entity.",
                                     "Merging keeps: “Database is already compatible”"]
    assert "In Task 3:" in text and "  • No migration needed" in text
    assert "{" not in text and "duplicate:1-2" not in text and "id" not in text.split()
    combined = Decision("duplicate", "duplicate:1-2", "t", ("Task 3",), {**cluster.evidence, "keeps": None,
                        "merged": "Database is already compatible (no migration needed)"}, ("keep", "combine"))
    assert describe(combined).splitlines()[1] == "Combining writes: “Database is already compatible (no migration needed)”"
    forget = Decision("forget", "forget:5", "t", ("X",), {"score": 7e-61, "entityId": 5, "threshold": 0.05,
                                                          "reason": "never used since it was imported"})
    assert describe(forget) == "Never used since it was imported.\nScore: 0\nThreshold: 0.05"


def test_an_agent_that_writes_and_asks_at_once_is_told_about_its_duplicates(memory_address):
    """Over MCP, with vectors computed in the background as the server does: two rewordings written in one call
    and asked about at once are found (their pending vectors are computed first), and the report says it is
    complete."""
    from _mcp_helpers import outcome, portal_client

    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.mcp.server import build_server
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    service = MemoryService(open_database(memory_address), HashingEmbedder(), background_vectors=True)
    try:
        with portal_client(build_server(service)) as (portal, client):
            created = outcome(portal.call(client.call_tool, "create_entities", {"entities": [{
                "name": "Deploy", "entityType": "task", "observations": [
                    "The staging database is already compatible with the new schema",
                    "The staging database is already compatible with the new schema of the game"]}]}))
            assert not created["error"]
            found = outcome(portal.call(client.call_tool, "find_duplicate_observations", {"threshold": 0.6}))
            report = outcome(portal.call(client.call_tool, "consolidation_report", {"kinds": ["duplicate"]}))
        answer = found["structured"]
        assert answer["complete"] and answer["total"] == 1 and answer["compared"] == 2 and "note" not in answer
        [cluster] = answer["clusters"]
        assert cluster["keeps"] == "The staging database is already compatible with the new schema of the game"
        assert cluster["merged"] is None and cluster["options"] == ["supersede", "merge", "keep"]
        assert answer["pairsAtThreshold"] == 1
        assert report["structured"]["complete"] and report["structured"]["sections"][0]["rows"] >= 0
    finally:
        service.close()


def test_the_survivor_keeps_every_detail_of_every_other_member():
    """However long, a member that lacks a detail of another (a path, a name) is never the survivor: keeping it
    would lose a fact. Then the suggestion is to keep both, and the merged text holds every member's details."""
    from limbic.core.service.curating import Member, duplicate_cluster

    centre = Member(1, "Dotfiles", "~/.aim directory now managed via stow symlink", None, 1.0)
    general = Member(2, "Dotfiles", "Uses GNU Stow for symlink management of every package", None, 2.0)
    aim = Member(3, "Dotfiles", "Aim package configured for GNU Stow management", None, 3.0)
    cluster = duplicate_cluster((centre, general, aim), 3, ((1, 2, 0.79), (1, 3, 0.80), (2, 3, 0.9)), 0.9, 0.79)
    assert cluster.survivor is None and cluster.options == ("keep", "combine")
    assert cluster.merged == ("Uses GNU Stow for symlink management of every package (Aim package configured; "
                              "~/.aim directory)")
    whole = duplicate_cluster((aim, Member(4, "Dotfiles", "The aim package is configured for GNU Stow management "
                                                          "of dotfiles", None, 4.0)), 2, ((3, 4, 0.9),), 0.9, 0.9)
    assert whole.survivor is not None and whole.survivor.id == 4
