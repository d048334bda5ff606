"""Project scope (mememory "Scoring & Recall", "Scope Weight"): a search or read for a project sees that project's
memories (weight 1.0) and the global ones (0.8), never another project's; over the service, MCP and the CLI."""

from __future__ import annotations

import json

import pytest
from _mcp_helpers import portal_client

from limbic.core.errors import ValidationError
from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.models import RelationInput as R


@pytest.fixture
def projects(service):
    service.entities.create_entities([
        E("alpha deploy", "Note", (O("deploys run on kubernetes with helm charts"),), project="alpha"),
        E("beta deploy", "Note", (O("deploys run on kubernetes with helm charts and argo"),), project="beta"),
        E("shared deploy", "Note", (O("deploys run on kubernetes"),)),
    ])
    service.relations.create_relations([R("alpha deploy", "beta deploy", "copied_from"), R("alpha deploy", "shared deploy", "uses")])
    return service


def test_search_for_a_project_never_returns_another_projects_entity(projects):
    everything = [r.name for r in projects.search.query("kubernetes helm deploys", record=False).results]
    assert set(everything) == {"alpha deploy", "beta deploy", "shared deploy"}
    outcome = projects.search.query("kubernetes helm deploys", record=False, project="alpha")
    assert {r.name for r in outcome.results} == {"alpha deploy", "shared deploy"}
    scope = dict(zip(outcome.candidate_set.names, outcome.candidate_set.scope.tolist(), strict=True))
    assert scope == {"alpha deploy": 1.0, "shared deploy": 0.8}
    unscoped = projects.search.query("kubernetes helm deploys", record=False).candidate_set
    assert set(unscoped.scope.tolist()) == {1.0}


def test_global_memories_rank_at_eight_tenths(projects):
    plain = projects.search.query("deploys run on kubernetes", record=False)
    scoped = projects.search.query("deploys run on kubernetes", record=False, project="alpha")
    base = {r.name: r.base_relevance for r in plain.results}
    in_scope = {r.name: r.base_relevance for r in scoped.results}
    assert in_scope["shared deploy"] == pytest.approx(0.8 * base["shared deploy"])
    assert in_scope["alpha deploy"] == pytest.approx(base["alpha deploy"])


def test_reads_of_a_project_leave_the_others_out(projects):
    graph = projects.entities.read_graph(project="alpha")
    assert {e.name for e in graph.entities} == {"alpha deploy", "shared deploy"}
    assert [(r.source, r.target) for r in graph.relations] == [("alpha deploy", "shared deploy")]
    assert {e.name for e in projects.search.search_nodes("deploy", project="beta").entities} == {"beta deploy", "shared deploy"}
    opened = projects.entities.open_nodes(["alpha deploy", "beta deploy"], project="alpha", record=False)
    assert [e.name for e in opened.entities] == ["alpha deploy"]
    assert projects.entities.entity_names(project="beta") == ["beta deploy", "shared deploy"]
    assert projects.projects.names() == {"alpha": 1, "beta": 1}
    assert projects.entities.get_entity("alpha deploy").entity.project == "alpha"
    with pytest.raises(ValidationError):
        projects.entities.read_graph(project="  ")


def test_mcp_server_with_a_project(projects):
    with portal_client(build_server(projects, project="alpha")) as (portal, client):
        def ok(tool, arguments):
            result = portal.call(client.call_tool, tool, arguments)
            assert not result.is_error, result.content[0].text
            return result.structured_content

        names = {r["name"] for r in ok("search_semantic", {"query": "kubernetes helm"})["results"]}
        assert names == {"alpha deploy", "shared deploy"}
        refused = portal.call(client.call_tool, "search_semantic", {"query": "kubernetes helm", "project": "beta"})
        assert refused.is_error and "served for project 'alpha'" in refused.content[0].text
        assert {e["name"] for e in ok("read_graph", {})["entities"]} == {"alpha deploy", "shared deploy"}
        assert ok("open_nodes", {"names": ["beta deploy"]})["entities"] == []
        assert {e["name"] for e in ok("search_nodes", {"query": "deploy"})["entities"]} == {"alpha deploy", "shared deploy"}
        ok("create_entities", {"entities": [
            {"name": "alpha note", "entityType": "Note", "observations": []},
            {"name": "global note", "entityType": "Note", "observations": [], "project": ""}]})
    assert projects.entities.get_entity("alpha note").entity.project == "alpha"
    assert projects.entities.get_entity("global note").entity.project is None


def test_mcp_without_a_project_is_unchanged(projects):
    with portal_client(build_server(projects)) as (portal, client):
        graph = portal.call(client.call_tool, "read_graph", {}).structured_content
    assert len(graph["entities"]) == 3 and all(set(e) == {"name", "entityType", "observations"} for e in graph["entities"])


def test_cli_search_with_a_project(memory_address, capsys):
    from limbic.core.cli.main import main
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.service import MemoryService

    service = MemoryService.open(memory_address, embedder=HashingEmbedder())
    service.entities.create_entities([E("a", "Note", (O("tabs or spaces"),), project="one"),
                             E("b", "Note", (O("tabs or spaces"),), project="two")])
    service.close()
    assert main(["--db", memory_address, "search", "tabs", "--project", "one", "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)["results"]] == ["a"]


def test_export_and_import_keep_the_project(projects, tmp_path):
    from limbic.core.io.exporter import export_graph
    from limbic.core.io.importer import import_file

    out = tmp_path / "out.jsonl"
    with out.open("wb") as stream:
        export_graph(projects, "jsonl", stream)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r.get("project") for r in records if r["type"] == "entity"} == {"alpha", "beta", None}
    projects.entities.delete_entities(["alpha deploy"])
    import_file(projects, out)
    assert projects.entities.get_entity("alpha deploy").entity.project == "alpha"
    assert [o.content for o in projects.entities.get_entity("alpha deploy").entity.observations] == [
        "deploys run on kubernetes with helm charts"]
