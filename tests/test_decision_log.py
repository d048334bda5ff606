"""Every decision undoable, wherever it was made: ``resolve_conflict``, ``set_status`` and ``execute_entity_split``
over MCP, ``limbic gc --archive`` and ``limbic review --decide`` from the command line, the app's Review edits —
each is one row of the decision log, and ``undo_decision`` / ``limbic undo`` take it back exactly (every row, ids
and statuses included), on SQLite and PostgreSQL. A conflict that cannot be settled is refused with the reason."""

from __future__ import annotations

import json
import time

import pytest
from _lifecycle_helpers import written_ago
from _mcp_helpers import outcome, portal_client
from _scoring_helpers import DAY

from limbic.core.cli.main import main
from limbic.core.embedding.base import HashingEmbedder
from limbic.core.errors import ConflictError
from limbic.core.lifecycle.retention import RetentionParams
from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.models import RelationInput as R
from limbic.core.models import iso
from limbic.core.service import MemoryService, decision_log, review
from limbic.core.service.entity_edits import MergeEntities
from limbic.core.store.backend import open_database


def state(service: MemoryService) -> tuple:
    """Every stored row of every entity (observations, relations, usage, reflections, conflicts) and the open
    conflicts: what an exact undo must give back."""
    names = sorted(e.name for e in service.entities.read_graph().entities)
    return service.snapshots.snapshot_entities(names), service.lifecycle.open_conflicts()


def call(portal, client, tool: str, **arguments) -> dict:
    return outcome(portal.call(client.call_tool, tool, arguments))


def test_resolve_conflict_over_mcp_is_undone_exactly(model, memory_address):
    service = MemoryService(open_database(memory_address), model)
    try:
        service.entities.create_entities([E("deploys", "Fact", (O("Production deploys go to AWS region us-east-1"),)),
                                 E("infra", "Team", (O("owns the deploy pipeline"),))])
        service.relations.create_relations([R("infra", "deploys", "owns")])
        service.entities.add_observations([("deploys", [O("Production deploys go to AWS region us-west-2")])])
        service.search.wait_for_vectors()
        before = state(service)
        [conflict] = before[1][1]
        with portal_client(build_server(service)) as (portal, client):
            settled = call(portal, client, "resolve_conflict", key=f"contradiction:{conflict.id}", option="supersede")
            assert not settled["error"] and settled["structured"]["settled"]
            assert state(service) != before and service.lifecycle.open_conflicts()[0] == 0
            [row] = service.history.decisions()
            assert (row.id, row.kind, row.origin, row.undone) == (settled["structured"]["decision"], "contradiction",
                                                                  "mcp", False)
            undone = call(portal, client, "undo_decision")
            assert not undone["error"] and undone["structured"]["undone"]
            assert state(service) == before  # the old observation live again, weight 1.0, the conflict open
            again = call(portal, client, "undo_decision")
            assert again["error"] and "no decision to undo" in again["text"]
        assert service.history.decisions()[0].undone_by == "mcp"
    finally:
        service.close()


def test_a_split_over_mcp_is_undone_exactly_from_the_command_line(service, memory_address, capsys):
    service.entities.create_entities([E("Harbor", "Project", tuple(O(t) for t in (
        "ingests buoy telemetry over Kafka", "Kafka consumer lag alerts at 5 minutes",
        "the dashboard is built with Grafana", "Grafana panels show wave height")), status="paused"),
        E("Kafka", "Tool", (O("event streaming"),))])
    service.relations.create_relations([R("Harbor", "Kafka", "uses")])
    service.usage.mark_used(["Harbor"])
    service.usage.wait_for_signals()
    before = state(service)
    parts = [{"name": "Harbor ingestion", "observations": ["ingests buoy telemetry over Kafka",
                                                            "Kafka consumer lag alerts at 5 minutes"],
              "relations": [{"from": "Harbor", "to": "Kafka", "relationType": "uses"}]},
             {"name": "Harbor dashboards", "observations": ["the dashboard is built with Grafana",
                                                             "Grafana panels show wave height"]}]
    with portal_client(build_server(service)) as (portal, client):
        done = call(portal, client, "execute_entity_split", entityName="Harbor", parts=parts)
    assert not done["error"] and done["structured"]["created"] == ["Harbor ingestion", "Harbor dashboards"]
    assert main(["--db", memory_address, "decisions", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["kind"] == "split" and listed["id"] == done["structured"]["decision"] and not listed["undone"]
    assert main(["--db", memory_address, "undo", str(listed["id"])]) == 0
    assert "undone: split: split Harbor into 2 parts" in capsys.readouterr().out
    assert state(service) == before  # the parts gone, Harbor whole again: ids, status, relation, usage
    assert main(["--db", memory_address, "undo", str(listed["id"])]) == 2
    assert "already undone by cli" in capsys.readouterr().err


def test_gc_archive_keeps_each_status_and_is_undone_exactly(service, memory_address, capsys):
    old = time.time() - 200 * DAY
    service.entities.create_entities([E("done task", "Task", (O("shipped"),), status="completed", created_at=old),
                             E("paused task", "Task", (O("on hold"),), status="paused", created_at=old),
                             E("old note", "Note", (O("a note"),), created_at=old),
                             E("Sofia", "Person", (O("lives in Lisbon"),), created_at=old)])
    written_ago(service, 200)
    service.lifecycle.save_retention_params(RetentionParams(grace_days=0))
    before = state(service)
    assert main(["--db", memory_address, "gc", "--archive", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(c["name"] for c in report["forget"]) == ["done task", "old note", "paused task"]
    assert {e.name: e.status for e in service.entities.read_graph().entities} == {
        "done task": "archived", "paused task": "archived", "old note": "archived", "Sofia": "active"}
    assert main(["--db", memory_address, "undo"]) == 0
    assert f"(decision {report['decision']}, made by cli)" in capsys.readouterr().out
    assert state(service) == before
    assert {e.name: e.status for e in service.entities.read_graph().entities}["done task"] == "completed"


def test_undo_decision_refuses_another_callers_decision(service):
    service.entities.create_entities([E("a", "Note", (O("one"),)), E("b", "Note", (O("two"),)), E("c", "Note", (O("three"),))])
    made = decision_log.apply(service, MergeEntities(["a"], "b"), "merge", ["a", "b"], origin="cli")
    before = state(service)
    with portal_client(build_server(service)) as (portal, client):
        merged = call(portal, client, "merge_entities", sourceNames=["c"], targetName="b")
        assert not merged["error"] and service.history.decisions()[0].kind == "merge"
        assert not call(portal, client, "undo_decision")["error"]  # the caller's own merge
        assert state(service) == before
        refused = call(portal, client, "undo_decision", decision=made.decision_id)
        assert refused["error"] and "made by cli" in refused["text"]
        mine = call(portal, client, "undo_decision")
        assert mine["error"] and "no decision to undo made by agent (MCP)" in mine["text"]
    assert sorted(e.name for e in service.entities.read_graph().entities) == ["b", "c"]  # the cli's merge stands
    assert [d.undone for d in service.history.decisions() if d.origin == "cli"] == [False]


def test_the_apps_undo_stack_and_the_log_agree(service):
    service.entities.create_entities([E("stale", "Note", (O("x"),), created_at=time.time() - 90 * DAY)])
    written_ago(service, 90)
    service.lifecycle.save_retention_params(RetentionParams(grace_days=0))
    [section] = review.review(service, ["forget"])
    edit = review.edit_for(service, section.items[0], "archive")  # what the Review view pushes on its stack
    edit.apply(service, origin="gui")
    [row] = service.history.decisions()
    assert (row.kind, row.origin, row.subjects, row.description) == ("forget", "gui", ("stale",), "set stale archived")
    decision_log.undo(service, row.id, origin="cli")  # undone elsewhere …
    assert service.entities.get_entity("stale").entity.status == "active"
    with pytest.raises(ConflictError, match="already undone by cli"):
        edit.revert(service)  # … the app's undo does not undo it twice
    assert service.entities.get_entity("stale").entity.status == "active"


def test_review_decide_from_the_command_line_is_logged(memory_address, capsys):
    service = MemoryService(open_database(memory_address), HashingEmbedder())
    try:
        service.entities.create_entities([E("stale", "Note", (O("x"),), created_at=time.time() - 90 * DAY)])
        written_ago(service, 90)
        service.lifecycle.save_retention_params(RetentionParams(grace_days=0))
        key = review.review(service, ["forget"])[0].items[0].key
        before = state(service)
    finally:
        service.close()
    assert main(["--db", memory_address, "review", "--kind", "forget", "--decide", key, "delete"]) == 0
    assert "delete stale (decision 1;" in capsys.readouterr().out
    assert main(["--db", memory_address, "undo", "1"]) == 0
    service = MemoryService(open_database(memory_address), HashingEmbedder())
    try:
        assert state(service) == before
    finally:
        service.close()


@pytest.mark.parametrize("how", ["supersede", "merge"])
def test_a_duplicate_decision_read_back_from_the_log_is_undone_exactly(service, how):
    from limbic.core.service.curating import Member
    from limbic.core.service.curation_edits import SupersedeDuplicates, merge_duplicates

    service.entities.create_entities([E("Harbor", "Project", (O("Ingest uses Kafka"), O("Ingest uses Apache Kafka"),
                                                    O("Owned by the data team")))])
    before = state(service)
    members = [Member(o.id, "Harbor", o.content, o.kind, o.created_at)
               for o in service.entities.get_entity("Harbor").entity.observations[:2]]
    edit = SupersedeDuplicates(members) if how == "supersede" else merge_duplicates(members)
    made = decision_log.apply(service, edit, "duplicate", ["Harbor"], origin="gui")
    assert state(service) != before
    decision_log.undo(service, made.decision_id, origin="cli")  # the edit as the log keeps it, not the object
    assert state(service) == before


def test_set_status_over_mcp_is_a_decision_undone_exactly(service, memory_address, capsys):
    service.entities.create_entities([E("done task", "Task", (O("shipped"),), status="completed"),
                             E("paused task", "Task", (O("on hold"),), status="paused"),
                             E("old note", "Note", (O("a note"),)), E("Sofia", "Person", (O("lives in Lisbon"),))])
    service.usage.mark_used(["old note"])
    service.usage.wait_for_signals()
    before = state(service)
    with portal_client(build_server(service)) as (portal, client):
        archived = call(portal, client, "set_status", entityNames=["done task", "paused task", "old note", "old note"],
                        status="archived")
        assert not archived["error"]
        assert [(e["name"], e["status"]) for e in archived["structured"]["entities"]] == [
            ("done task", "archived"), ("paused task", "archived"), ("old note", "archived")]
        [row] = service.history.decisions()
        assert (row.id, row.kind, row.origin, row.subjects, row.description) == (
            archived["structured"]["decision"], "status", "mcp", ("done task", "paused task", "old note"),
            "set done task, paused task, old note archived")
        assert state(service) != before
        undone = call(portal, client, "undo_decision")
        assert not undone["error"] and undone["structured"]["decision"] == row.id and undone["structured"]["undone"]
        assert state(service) == before  # each status and updated time back, usage untouched
        again = call(portal, client, "set_status", entityNames=["Sofia"], status="paused")
        assert again["structured"]["decision"] == row.id + 1
        refused = call(portal, client, "set_status", entityNames=["Sofia", "Nobody"], status="archived")
        assert refused["error"] and "Nobody" in refused["text"]
        assert call(portal, client, "set_status", entityNames=[], status="archived")["error"]
    assert [d.id for d in service.history.decisions()] == [row.id + 1, row.id]  # a refused call logs nothing
    assert main(["--db", memory_address, "undo"]) == 0  # the command line undoes it as well
    assert f"(decision {row.id + 1}, made by agent (MCP))" in capsys.readouterr().out
    assert state(service) == before


def test_resolve_conflict_says_why_a_conflict_is_not_open(model, memory_address):
    service = MemoryService(open_database(memory_address), model)
    old, new = "Production deploys go to AWS region us-east-1", "Production deploys go to AWS region us-west-2"
    try:
        service.entities.create_entities([E("deploys", "Fact", (O(old),)), E("infra", "Team", (O("owns the deploy pipeline"),))])
        service.relations.create_relations([R("infra", "deploys", "owns")])
        with portal_client(build_server(service, tools="all")) as (portal, client):
            def refusal(key: str) -> str:
                answer = call(portal, client, "resolve_conflict", key=key, option="supersede")
                assert answer["error"]
                return answer["text"].split(f"no open decision {key!r}: ", 1)[1]

            written = call(portal, client, "add_observations", observations=[{"entityName": "deploys",
                                                                              "contents": [new]}])
            service.search.wait_for_vectors()
            [key] = [c["key"] for c in written["structured"]["conflicts"]]
            kept = call(portal, client, "resolve_conflict", key=key, option="keep_both")["structured"]
            settled = service.lifecycle.conflict(int(key.split(":")[1])).resolved_at
            assert refusal(key) == (f"it was settled already (keep both) at {iso(float(int(settled)))} by agent (MCP) "
                                    f"(decision {kept['decision']})")
            assert not call(portal, client, "undo_decision")["error"]  # open again
            service.lifecycle.set_observation_terms("deploys", new, expires_at=time.time() - 1, weight=1.0)
            assert refusal(key) == f"the observation “{new}” of 'deploys' has expired"
            service.lifecycle.set_observation_terms("deploys", new, expires_at=None, weight=1.0)
            service.entities.add_observations([("deploys", [O("Production deploys go to AWS region eu-west-1", supersedes=old)])])
            assert refusal(key) == f"the observation “{old}” of 'deploys' was superseded since"
            service.entities.delete_observations([("deploys", [new])])
            assert refusal(key) == ("this memory has no such conflict (never reported, or one of its observations "
                                    "was deleted since)")
            assert refusal("contradiction:" + "9" * 40) == "it was settled or the memory changed"
    finally:
        service.close()
