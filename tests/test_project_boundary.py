"""A project is a boundary (docs/lifecycle.md "Project scope"): a call bound to project beta (``limbic mcp
--project beta``, a token bound to beta, ``--project beta`` on the command line) never reads or changes alpha's
entities, and names are unique per project, so beta writing a name alpha holds makes beta's own entity."""

from __future__ import annotations

import json
import os

import anyio
import apsw
import pytest
from _mcp_helpers import http_client, outcome, portal_client
from _store_helpers import database_at_version, project_files

from limbic.core.cli.main import main
from limbic.core.errors import ConflictError, NotFoundError, ValidationError
from limbic.core.mcp.http import HttpMcpServer
from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.models import RelationInput as R
from limbic.core.service import MemoryService
from limbic.core.service.review import review
from limbic.core.store.backend import open_database


@pytest.fixture
def memory(service):
    """alpha's "Backend" (related to the global "Postgres"), beta's "Frontend", and the global "Postgres"."""
    service.entities.create_entities([
        E("Backend", "service", (O("alpha's backend is written in Go"),), project="alpha"),
        E("Frontend", "service", (O("beta's frontend is written in Elm"),), project="beta"),
        E("Postgres", "database", (O("the shared database server"),)),
    ])
    service.relations.create_relations([R("Backend", "Postgres", "stores_in")])
    return service


def alpha_backend(service: MemoryService):
    with service.scoped("alpha"):
        return service.entities.get_entity("Backend")


def test_a_beta_server_cannot_read_or_change_alphas_entity(memory):
    before = alpha_backend(memory)
    with portal_client(build_server(memory, project="beta")) as (portal, client):
        def call(tool, arguments):
            return outcome(portal.call(client.call_tool, tool, arguments))

        def refused(tool, arguments, words="Backend"):
            answer = call(tool, arguments)
            assert answer["error"] and words in str(answer["text"]), (tool, answer)

        refused("get_entity", {"name": "Backend"})
        assert call("open_nodes", {"names": ["Backend"]})["structured"]["entities"] == []
        refused("add_observations", {"observations": [{"entityName": "Backend", "contents": ["beta was here"]}]})
        refused("rename_entity", {"oldName": "Backend", "newName": "Beta backend"})
        refused("merge_entities", {"sourceNames": ["Backend"], "targetName": "Frontend"})
        refused("merge_entities", {"sourceNames": ["Frontend"], "targetName": "Backend"})
        refused("set_status", {"entityNames": ["Backend"], "status": "archived"})
        refused("create_relations", {"relations": [{"from": "Frontend", "to": "Backend", "relationType": "calls"}]})
        refused("end_relation", {"relation": {"from": "Backend", "to": "Postgres", "relationType": "stores_in"}})
        outside = "'Backend' belongs to another project (this memory is served for project 'beta')"
        assert call("delete_observations", {"deletions": [
            {"entityName": "Backend", "observations": ["alpha's backend is written in Go"]}]})["text"] == (
            f"No observations deleted: {outside}")
        assert call("delete_relations", {"relations": [
            {"from": "Backend", "to": "Postgres", "relationType": "stores_in"}]})["text"] == (
            f"No relations deleted: {outside}")
        assert call("delete_entities", {"entityNames": ["Backend"]})["text"] == f"No entities deleted: {outside}"
        refused("search_nodes", {"query": "backend", "project": "alpha"}, "out of its scope")
        refused("search_semantic", {"query": "backend written in Go", "project": "alpha"}, "out of its scope")
        refused("read_graph", {"project": "alpha"}, "out of its scope")
        refused("create_entities", {"entities": [{"name": "Sneaky", "entityType": "x", "observations": [], "project": "alpha"}]},
                "cannot be placed in project 'alpha'")
        assert call("search_nodes", {"query": "backend"})["structured"]["entities"] == []
        found = call("search_semantic", {"query": "backend written in Go"})["structured"]["results"]
        assert "Backend" not in {r["name"] for r in found}
        assert {e["name"] for e in call("read_graph", {})["structured"]["entities"]} == {"Frontend", "Postgres"}
        assert call("read_graph", {"mode": "names"})["structured"]["names"] == ["Frontend", "Postgres"]
        summary = call("read_graph", {"mode": "summary"})["structured"]["summary"]
        assert (summary["entities"], summary["relations"], summary["observations"]) == (2, 0, 2)
        assert summary["entityTypes"] == {"service": 1, "database": 1} and summary["embeddedEntities"] == 2
    after = alpha_backend(memory)
    assert after.entity == before.entity and after.relations == before.relations


TABLES = [f"postgres keeps the orders table partitioned by month {i}" for i in range(6)]
BACKUPS = [f"postgres backups run nightly to cold storage copy {i}" for i in range(6)]


def test_a_global_entity_shows_no_relation_to_another_projects_entity(memory):
    memory.entities.add_observations([("Postgres", [O(t) for t in TABLES + BACKUPS])])
    memory.relations.create_relations([R("Frontend", "Postgres", "reads_from")])
    memory.reflections.add_reflection("relation", R("Backend", "Postgres", "stores_in"), "nolan", "alpha's orders live in Postgres")
    memory.reflections.add_reflection("entity", "Postgres", "sofia", "the shared database needs a bigger disk")
    with memory.scoped("beta"):
        detail = memory.entities.get_entity("Postgres")
        assert [(r.source, r.target) for r in detail.relations] == [("Frontend", "Postgres")] and detail.degree == 1
        assert [r.content for r in memory.reflections.reflections_of("Postgres")] == ["the shared database needs a bigger disk"]
        assert [r.content for r in memory.reflections.reflections_by_entity(["Postgres"])["Postgres"]] == [
            "the shared database needs a bigger disk"]
    with portal_client(build_server(memory, project="beta")) as (portal, client):
        def call(tool, arguments):
            answer = outcome(portal.call(client.call_tool, tool, arguments))
            assert "Backend" not in json.dumps(answer) and "alpha" not in json.dumps(answer), (tool, answer)
            return answer

        entity = call("get_entity", {"name": "Postgres"})["structured"]
        assert [(r["from"], r["to"]) for r in entity["relations"]] == [("Frontend", "Postgres")]
        assert entity["degree"] == 1 and [i["to"] for i in entity["inverseRelations"]] == ["Frontend"]
        assert [r["content"] for r in entity["reflections"]] == ["the shared database needs a bigger disk"]
        [node] = call("open_nodes", {"names": ["Postgres"], "includeReflections": True})["structured"]["entities"]
        assert [r["content"] for r in node["reflections"]] == ["the shared database needs a bigger disk"]
        call("read_graph", {})
        call("read_graph", {"mode": "page", "limit": 10})
        call("search_nodes", {"query": "postgres"})
        call("search_semantic", {"query": "orders table partitioned"})
        call("search_reflections", {"query": "orders postgres"})
        call("analyze_entity_split", {"entityName": "Postgres", "method": "tfidf"})
        proposal = call("propose_entity_split", {"entityName": "Postgres", "method": "tfidf"})["structured"]
        assert len(proposal["parts"]) == 2
        assert [(r["from"], r["to"]) for part in proposal["parts"] for r in part["relations"]] + [
            (r["from"], r["to"]) for r in proposal["stayingRelations"]] == [("Frontend", "Postgres")]
        refused = outcome(portal.call(client.call_tool, "execute_entity_split", {"entityName": "Postgres", "parts": [
            {"name": "Postgres - backups", "observations": BACKUPS,
             "relations": [{"from": "Backend", "to": "Postgres", "relationType": "stores_in"}]}]}))
        assert refused["error"] and "'Postgres' has no active relation 'Backend'" in refused["text"]
    with memory.scoped("alpha"):  # alpha's relation and its reflection are as they were
        assert [(r.source, r.target) for r in memory.entities.get_entity("Postgres").relations] == [("Backend", "Postgres")]
        assert len(memory.reflections.reflections_of("Postgres")) == 2
    assert [(r.source, r.target) for r in memory.entities.get_entity("Postgres").relations] == [
        ("Backend", "Postgres"), ("Frontend", "Postgres")]
    assert len(memory.reflections.reflections_of("Postgres")) == 2


def test_a_beta_servers_deletes_name_what_they_left_in_another_project(memory):
    memory.entities.create_entities([E("Cache", "service", (O("beta caches sessions in Redis"), O("beta's cache holds 1 GB")),
                              project="beta"), E("Queue", "service", (O("alpha queues jobs"),), project="alpha")])
    memory.relations.create_relations([R("Frontend", "Postgres", "reads_from"), R("Cache", "Postgres", "warms_from")])
    before = alpha_backend(memory)
    with portal_client(build_server(memory, project="beta")) as (portal, client):
        def call(tool, arguments):
            answer = outcome(portal.call(client.call_tool, tool, arguments))
            assert not answer["error"] and answer["structured"] == {"success": True, "message": answer["text"]}
            return answer["text"]

        why = "(this memory is served for project 'beta')"
        assert call("delete_observations", {"deletions": [
            {"entityName": "Cache", "observations": ["beta's cache holds 1 GB"]},
            {"entityName": "Backend", "observations": ["alpha's backend is written in Go"]}]}) == (
            f"Observations deleted successfully, but nothing was deleted for 'Backend': 'Backend' belongs to another "
            f"project {why}")
        assert call("delete_relations", {"relations": [
            {"from": "Frontend", "to": "Postgres", "relationType": "reads_from"},
            {"from": "Backend", "to": "Postgres", "relationType": "stores_in"},
            {"from": "Queue", "to": "Backend", "relationType": "feeds"}]}) == (
            "Relations deleted successfully, but nothing was deleted for 'Backend' -[stores_in]-> 'Postgres', "
            f"'Queue' -[feeds]-> 'Backend': 'Backend', 'Queue' belong to another project {why}")
        assert call("delete_entities", {"entityNames": ["Cache", "Queue", "No such thing"]}) == (
            f"Entities deleted successfully, but nothing was deleted for 'Queue': 'Queue' belongs to another project "
            f"{why}")
        # what no project holds is answered as the reference server answers it: the memory holds none of it
        assert call("delete_entities", {"entityNames": ["No such thing"]}) == "Entities deleted successfully"
        assert call("delete_observations", {"deletions": [
            {"entityName": "Frontend", "observations": ["never said"]}]}) == "Observations deleted successfully"
        assert call("delete_relations", {"relations": [
            {"from": "Frontend", "to": "Postgres", "relationType": "never_related"}]}) == "Relations deleted successfully"
    with memory.scoped("beta"):
        assert sorted(e.name for e in memory.entities.read_graph().entities) == ["Frontend", "Postgres"]
        assert memory.entities.read_graph().relations == ()
    after = alpha_backend(memory)
    assert after.entity == before.entity and after.relations == before.relations
    with memory.scoped("alpha"):
        assert [o.content for o in memory.entities.get_entity("Queue").entity.observations] == ["alpha queues jobs"]
    with portal_client(build_server(memory)) as (portal, client):  # unbound: alpha's entity is seen, and deleted
        answer = outcome(portal.call(client.call_tool, "delete_entities", {"entityNames": ["Queue"]}))
        assert answer["text"] == "Entities deleted successfully"
    assert memory.projects.names() == {"alpha": 1, "beta": 1}


def test_beta_writing_a_name_alpha_holds_makes_betas_own_entity(memory):
    with portal_client(build_server(memory, project="beta")) as (portal, client):
        def ok(tool, arguments):
            answer = outcome(portal.call(client.call_tool, tool, arguments))
            assert not answer["error"], answer["text"]
            return answer["structured"]

        created = ok("create_entities", {"entities": [
            {"name": "Backend", "entityType": "service", "observations": ["beta's backend is written in Rust"]}]})
        assert [e["name"] for e in created["entities"]] == ["Backend"]
        ok("add_observations", {"observations": [{"entityName": "Backend", "contents": ["beta deploys on Fridays"]}]})
        ok("create_relations", {"relations": [{"from": "Frontend", "to": "Backend", "relationType": "calls"},
                                              {"from": "Backend", "to": "Postgres", "relationType": "stores_in"}]})
        seen = ok("get_entity", {"name": "Backend"})
        assert seen["project"] == "beta"
        assert [o["content"] for o in seen["observations"]] == [
            "beta's backend is written in Rust", "beta deploys on Fridays"]
        ok("rename_entity", {"oldName": "Backend", "newName": "Beta API"})
        ok("rename_entity", {"oldName": "Beta API", "newName": "Backend"})
    alpha = alpha_backend(memory).entity
    assert [o.content for o in alpha.observations] == ["alpha's backend is written in Go"]
    with memory.scoped("beta"):
        beta = memory.entities.get_entity("Backend")
    assert beta.entity.project == "beta" and beta.entity.id != alpha.id
    assert {(r.source, r.target) for r in beta.relations} == {("Frontend", "Backend"), ("Backend", "Postgres")}
    assert {(r.source_id, r.target_id) for r in beta.relations} == {
        (memory.entities.get_entity("Frontend").entity.id, beta.entity.id), (beta.entity.id, memory.entities.get_entity("Postgres").entity.id)}
    with pytest.raises(ConflictError, match="'Backend' is held by projects 'alpha', 'beta'"):
        memory.entities.get_entity("Backend")  # unbound, the name is ambiguous: never a silent pick
    assert memory.projects.names() == {"alpha": 1, "beta": 2}
    opened = memory.entities.open_nodes(["Backend"], project="alpha", record=False).entities  # a read may name the project
    assert [(e.name, e.project) for e in opened] == [("Backend", "alpha")]


def test_names_are_unique_per_project_and_the_projects_own_wins(service):
    service.entities.create_entities([E("Backend", "service", (O("alpha's backend"),), project="alpha"),
                             E("Core", "service", (O("the company-wide backend"),))])
    service.entities.rename_entity("Core", "Backend")  # the global name is free: alpha's "Backend" is alpha's
    assert service.entities.create_entities([E("Backend", "service", (O("a name alpha sees already"),), project="alpha")]) == []
    with service.scoped("alpha"):
        assert service.entities.get_entity("Backend").entity.project == "alpha"
        service.entities.add_observations([("Backend", [O("alpha adds a fact")])])
    with service.scoped("beta"):
        assert service.entities.get_entity("Backend").entity.project is None  # beta has none: the global one
    assert service.entities.get_entity("Backend").entity.project is None  # unbound: the global one
    assert [o.content for o in service.entities.get_entity("Backend").entity.observations] == ["the company-wide backend"]
    service.entities.create_entities([E("Gateway", "service", project="alpha")])
    with service.scoped("alpha"), pytest.raises(ConflictError, match="in project 'alpha'"):
        service.entities.rename_entity("Gateway", "Backend")


def test_a_binding_only_narrows(memory):
    with memory.scoped("beta"):
        with pytest.raises(ValidationError, match="out of its scope"):
            memory.entities.read_graph(project="alpha")
        with pytest.raises(ValidationError, match="out of its scope"):
            with memory.scoped("alpha"):
                pass
        with memory.scoped("beta"):
            assert {e.name for e in memory.entities.read_graph().entities} == {"Frontend", "Postgres"}
        with pytest.raises(NotFoundError):
            memory.entities.merge_entities(["Backend"], "Frontend")
        assert memory.entities.delete_entities(["Backend"]) == 0
    memory.entities.add_observations([("Backend", [O("alpha's backend has a cache")])])
    memory.entities.add_observations([("Frontend", [O("beta's frontend has a router")])])
    assert {c.name for c in memory.splits.find_split_candidates(thresholds={"*": 1})[1]} == {"Backend", "Frontend"}
    with memory.scoped("beta"):
        assert [c.name for c in memory.splits.find_split_candidates(thresholds={"*": 1})[1]] == ["Frontend"]
        assert [r.name for r in memory.lifecycle.retention()] == ["Frontend", "Postgres"]
        assert memory.reflections.add_reflection("global", None, "me", "projects are kept apart")
        assert {r.entity for r in memory.reflections.all_reflections()} == {None}
    memory.reflections.add_reflection("entity", "Backend", "me", "alpha's backend needs love")
    with memory.scoped("beta"):
        assert [r.content for r in memory.reflections.all_reflections()] == ["projects are kept apart"]
        assert [r.content for r, _ in memory.reflections.search_reflections("backend love")] == ["projects are kept apart"]
        [orphans] = review(memory, ["orphan"], 10)
        assert [d.subjects for d in orphans.items] == [("Frontend",)]
    memory.entities.add_observations([("Backend", [O("alpha's secret expired", expires_at=1.0)]),
                             ("Frontend", [O("beta's secret expired", expires_at=1.0)])])
    with memory.scoped("beta"):
        [expired] = review(memory, ["expired"], 10)
        assert (expired.total, [d.subjects for d in expired.items]) == (1, [("Frontend",)])
    assert {e.name for e in memory.entities.read_graph(project="beta").entities} == {"Frontend", "Postgres"}


def test_a_token_bound_to_a_project_binds_its_calls(memory):
    secret = memory.projects.add_token("beta-bot", project="beta")
    assert [(t.name, t.project) for t in memory.projects.list_tokens()] == [("beta-bot", "beta")]
    with HttpMcpServer(memory) as server:
        async def scenario():
            async with http_client(server.url, secret) as client:
                assert outcome(await client.call_tool("get_entity", {"name": "Backend"}))["error"]
                answer = outcome(await client.call_tool("read_graph", {}))
                assert {e["name"] for e in answer["structured"]["entities"]} == {"Frontend", "Postgres"}
            async with http_client(server.url, server.token) as client:  # the machine's token: unbound
                answer = outcome(await client.call_tool("read_graph", {"mode": "names"}))
                assert answer["structured"]["names"] == ["Backend", "Frontend", "Postgres"]

        anyio.run(scenario)


def test_cli_import_and_export_for_a_project(memory_address, tmp_path, capsys):
    service = MemoryService.open(memory_address, embedder=None)
    service.entities.create_entities([E("Backend", "service", (O("alpha's backend is written in Go"),), project="alpha")])
    service.close()
    source = tmp_path / "beta.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in [
        {"type": "entity", "name": "Backend", "entityType": "service", "observations": ["beta's backend is Rust"]},
        {"type": "entity", "name": "Frontend", "entityType": "service", "observations": ["written in Elm"]},
        {"type": "relation", "from": "Frontend", "to": "Backend", "relationType": "calls"},
    ]) + "\n")
    assert main(["--db", memory_address, "import", str(source), "--project", "beta"]) == 0
    assert main(["--db", memory_address, "import", str(source), "--project", "beta"]) == 0  # again: nothing added
    capsys.readouterr()
    service = MemoryService.open(memory_address, embedder=None)
    try:
        with service.scoped("beta"):
            beta = service.entities.get_entity("Backend")
        assert beta.entity.project == "beta"
        assert [o.content for o in beta.entity.observations] == ["beta's backend is Rust"]
        assert [(r.source, r.target) for r in beta.relations] == [("Frontend", "Backend")]
        assert [o.content for o in alpha_backend(service).entity.observations] == ["alpha's backend is written in Go"]
    finally:
        service.close()
    assert main(["--db", memory_address, "--project", "alpha", "search", "backend", "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)["results"]] == ["Backend"]
    assert main(["--db", memory_address, "--project", "beta", "search", "backend", "--project", "alpha"]) == 2
    assert "out of its scope" in capsys.readouterr().err
    assert main(["--db", memory_address, "export"]) == 2  # two projects hold "Backend": one at a time
    assert "export one project at a time" in capsys.readouterr().err
    assert main(["--db", memory_address, "export", "--project", "beta"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {(r["name"], r.get("project")) for r in records if r["type"] == "entity"} == {
        ("Backend", "beta"), ("Frontend", "beta")}


def test_the_import_dialog_functions_take_a_project_per_file(service, tmp_path):
    from limbic.core.io.importer import import_files

    paths = project_files(tmp_path)
    report = import_files(service, paths, project=["alpha", "beta"])
    assert report.ok
    for project in ("alpha", "beta"):
        with service.scoped(project):
            entity = service.entities.get_entity("Notes").entity
        assert entity.project == project and [o.content for o in entity.observations] == [f"{project} notes"]
    with pytest.raises(ValidationError, match="one per file"):
        import_files(service, paths, project=["alpha"])


def test_an_old_file_migrates_to_names_per_project(tmp_path):  # SQLite only: the file's own migration
    path = tmp_path / "memory.db"
    conn = database_at_version(path, 13)
    conn.execute("INSERT INTO entities(id, name, entity_type, created_at, updated_at, project) VALUES "
                 "(1, 'Backend', 'service', 1, 1, 'alpha'), (2, 'Postgres', 'database', 1, 1, NULL)")
    conn.execute("INSERT INTO observations(entity_id, content, created_at) VALUES (1, 'written in Go', 1)")
    conn.execute("INSERT INTO relations(from_id, to_id, relation_type, created_at) VALUES (1, 2, 'stores_in', 1)")
    conn.execute("INSERT INTO entity_access(entity_id, access_count, last_access) VALUES (1, 3, 1)")
    conn.execute("INSERT INTO mcp_tokens(name, token_hash, created_at) VALUES ('alice', 'x', 1)")
    conn.close()
    service = MemoryService(open_database(path), None)
    try:
        backend = service.entities.get_entity("Backend")
        assert (backend.entity.id, backend.entity.project, backend.access_count) == (1, "alpha", 3)
        assert [o.content for o in backend.entity.observations] == ["written in Go"]
        assert [(r.source, r.target) for r in backend.relations] == [("Backend", "Postgres")]
        assert [(t.name, t.project) for t in service.projects.list_tokens()] == [("alice", None)]
        service.entities.create_entities([E("Backend", "service", (O("written in Rust"),), project="beta")])
        with service.scoped("beta"):
            assert [o.content for o in service.entities.get_entity("Backend").entity.observations] == ["written in Rust"]
        service.entities.rename_entity("Postgres", "PostgreSQL")  # the rename trigger of the observation index is back
        assert [e.name for e in service.search.query("Rust", record=False).results] == ["Backend"]
        service.entities.delete_entities(["PostgreSQL"])  # deletes still cascade
        assert alpha_backend(service).relations == ()
        conn = service.database.read()
        assert conn.execute("PRAGMA user_version").get >= 14
        assert conn.execute("PRAGMA foreign_keys").get == 1
    finally:
        service.close()
    with pytest.raises(apsw.ConstraintError):
        raw = apsw.Connection(str(path))
        raw.execute("INSERT INTO entities(name, created_at, updated_at, project) VALUES ('Backend', 1, 1, 'alpha')")


def test_a_beta_server_cannot_settle_alphas_contradiction(memory):
    from limbic.core.store import conflicts

    memory.entities.add_observations([("Backend", [O("alpha's backend runs in eu-west-1"), O("alpha's backend runs in us-east-1")])])
    ids = [o.id for o in alpha_backend(memory).entity.observations][-2:]
    with memory.database.maintenance() as conn:
        conflicts.insert(conn, [(ids[1], ids[0], 0.9, "region: eu-west-1 → us-east-1")], "checkable", 1.0)
    total, rows = memory.lifecycle.open_conflicts()  # the one inserted, and any the check found on the write
    row = rows[0]
    with memory.scoped("beta"):
        assert memory.lifecycle.open_conflicts() == (0, [])
        with pytest.raises(NotFoundError):
            memory.lifecycle.conflict(row.id)
        with pytest.raises(NotFoundError):
            memory.lifecycle.settle_conflict(row.id, "delete_old")
    with portal_client(build_server(memory, project="beta")) as (portal, client):
        answer = outcome(portal.call(client.call_tool, "resolve_conflict", {"key": f"contradiction:{row.id}",
                                                                            "option": "delete_old"}))
        assert answer["error"] and answer["text"].endswith(
            f"no open decision 'contradiction:{row.id}': it is about another project's memories (this memory is "
            "served for project 'beta')")
    assert memory.lifecycle.open_conflicts()[0] == total >= 1
    assert len(alpha_backend(memory).entity.observations) == 3


@pytest.fixture
def empty_pg_address():
    """A new PostgreSQL database without any schema (not made from the migrated template); skips without a
    server."""
    import psycopg
    from _pg import _with_database, drop_database, server_dsn

    try:
        dsn = server_dsn()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    name = f"limbic_schema_13_{os.getpid()}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    address = _with_database(dsn, name)
    yield address
    drop_database(address)


def test_an_old_postgresql_memory_migrates_to_names_per_project(empty_pg_address, monkeypatch):
    from limbic.core.store.postgres import schema as pg_schema

    pg_address = empty_pg_address
    shipped = pg_schema.shipped_migrations()
    monkeypatch.setattr(pg_schema, "shipped_migrations", lambda: [m for m in shipped if m[0] <= 13])
    old = MemoryService(open_database(pg_address), None)  # the memory as schema 13 left it
    old.entities.create_entities([E("Backend", "service", (O("written in Go"),), project="alpha")])
    assert old.database.read().execute("SELECT max(version) FROM limbic_schema").get == 13
    old.close()
    monkeypatch.setattr(pg_schema, "shipped_migrations", lambda: shipped)
    service = MemoryService(open_database(pg_address), None)
    try:
        assert service.database.read().execute("SELECT max(version) FROM limbic_schema").get == shipped[-1][0]
        service.entities.create_entities([E("Backend", "service", (O("written in Rust"),), project="beta")])
        for project, text in (("alpha", "written in Go"), ("beta", "written in Rust")):
            with service.scoped(project):
                assert [o.content for o in service.entities.get_entity("Backend").entity.observations] == [text]
        service.projects.add_token("ci", project="beta")
        assert service.projects.token_project("ci") == "beta"
        with pytest.raises(ConflictError):
            service.entities.rename_entity("Backend", "Other")  # unbound: two projects hold the name
    finally:
        service.close()
