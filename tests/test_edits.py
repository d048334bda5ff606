"""Undoable edits in the core (limbic.core.service.edits and entity_edits), without Qt: every kind of edit
is applied through the service and reverted, and the whole stored state of every entity — row, observations
with kinds, weights, expiry, times and supersede links, relations, usage history, ids — is compared with
the state before."""

from __future__ import annotations

import time

import pytest

from limbic.core.errors import ConflictError, NotFoundError, ValidationError
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.service import MemoryService
from limbic.core.service.edits import Compound, EditHistory
from limbic.core.service.entity_edits import (
    AddObservation,
    AddRelation,
    CreateEntity,
    DeleteEntities,
    DeleteObservation,
    DeleteRelation,
    EditObservation,
    EndRelation,
    MergeEntities,
    RenameEntity,
    SetStatus,
    SupersedeObservation,
)

DAY = 86_400.0
NOW = time.time()


def build(service: MemoryService) -> None:
    """A small graph with everything an edit can lose: kinds, weights, expiry, a supersede chain, ended
    relations, statuses, accesses over several days, co-occurrences, impressions and relevance labels."""
    service.entities.create_entities([
        EntityInput("Alice", "Person", (
            ObservationInput("Works on the Harbor project", "fact", created_at=NOW - 20 * DAY),
            ObservationInput("Prefers Python", "preference", weight=2.5, created_at=NOW - 19 * DAY),
            ObservationInput("On call this week", "event", expires_at=NOW + 3 * DAY, created_at=NOW - DAY),
        ), created_at=NOW - 30 * DAY),
        EntityInput("Bob", "Person", (ObservationInput("Reviews pull requests"),), created_at=NOW - 29 * DAY),
        EntityInput("Harbor", "Project", (
            ObservationInput("Ingests buoy data", "fact", created_at=NOW - 10 * DAY),
            ObservationInput("Written in Python"),
        ), created_at=NOW - 28 * DAY),
        EntityInput("Redis", "Tool", (ObservationInput("In-memory store", "fact"),), created_at=NOW - 27 * DAY),
        EntityInput("Legacy ETL", "Project", (ObservationInput("Old pipeline"),), status="archived"),
    ])
    service.entities.supersede_observation("Harbor", "Ingests buoy data",
                                  ObservationInput("Ingests buoy and tide data", "fact", created_at=NOW - 5 * DAY))
    service.entities.supersede_observation("Alice", "Works on the Harbor project", ObservationInput("Leads the Harbor project"))
    service.relations.create_relations([
        RelationInput("Alice", "Harbor", "works_on", "since spring", NOW - 15 * DAY),
        RelationInput("Bob", "Harbor", "reviews"),
        RelationInput("Harbor", "Redis", "uses"),
        RelationInput("Legacy ETL", "Harbor", "replaced_by"),
        RelationInput("Alice", "Bob", "knows"),
        RelationInput("Bob", "Redis", "uses"),
    ])
    service.relations.end_relation(RelationInput("Legacy ETL", "Harbor", "replaced_by"), at=NOW - 2 * DAY)
    service.relations.end_relation(RelationInput("Alice", "Bob", "knows"), at=NOW - DAY)
    service.relations.create_relations([RelationInput("Alice", "Bob", "knows", "again")])
    for day in range(4):
        service.usage.record_access(["Harbor", "Alice", "Bob"], at=NOW - day * DAY)
    service.usage.record_access(["Bob", "Redis"], at=NOW - 6 * DAY)
    outcome = service.search.query("harbor buoy data", limit=5)
    service.usage.wait_for_signals()
    service.usage.mark_used(["Harbor"], search_id=outcome.search_id)


@pytest.fixture
def graph(service):
    build(service)
    return service


def state(service: MemoryService) -> list:
    """Every entity's stored record (rows, observations, relations, usage), ids included."""
    service.usage.wait_for_signals()
    return service.snapshots.snapshot_entities(service.entities.entity_names())


def labels(service: MemoryService) -> list[tuple]:
    conn = service.database.read()
    return conn.execute("SELECT entity_id, event_id FROM implicit_feedback ORDER BY 1, 2").fetchall()


def round_trip(service: MemoryService, edit) -> list:
    """Apply ``edit``, revert it (the whole state must be back), apply it again (the same edited state)."""
    before = state(service)
    applied = edit.apply(service)
    assert applied.change_id > 0 and applied.op == edit.op
    after = state(service)
    assert after != before
    reverted = edit.revert(service)
    assert reverted.op == f"undo_{edit.op}" and reverted.change_id > applied.change_id
    assert state(service) == before
    edit.apply(service)
    assert _content(state(service)) == _content(after)
    edit.revert(service)
    assert state(service) == before
    return after


def _content(records: list) -> list:
    """Records without the times an edit sets to "now" (what a redo cannot make equal)."""
    return [(r.entity.name, r.entity.entity_type, r.entity.status,
             sorted((o.content, o.kind, o.live, o.weight) for o in r.entity.observations),
             sorted((x.source, x.target, x.relation_type, x.active, x.context) for x in r.relations), r.usage)
            for r in records]


def test_the_graph_has_what_edits_can_lose(graph):
    records = {r.entity.name: r for r in state(graph)}
    harbor = records["Harbor"]
    assert any(o.supersedes for o in harbor.entity.observations)
    assert any(not r.active for r in harbor.relations)
    assert harbor.usage.access and harbor.usage.impressions and len(harbor.usage.days) == 4
    assert {c.other_name for c in harbor.usage.co_occurrences} == {"Alice", "Bob"}
    assert labels(graph)


def test_delete_entities_revert_restores_everything(graph):
    feedback = labels(graph)
    edit = DeleteEntities(["Harbor", "Bob"])
    after = round_trip(graph, edit)
    assert {r.entity.name for r in after} == {"Alice", "Redis", "Legacy ETL"}
    assert labels(graph) == feedback  # the same ids: logged searches and labels find them again
    assert [r.name for r in graph.search.query("tide", limit=3).results][:1] == ["Harbor"]  # re-indexed
    assert (edit.description, edit.subject(), edit.subject(reverted=True)) == ("delete Harbor, Bob", None, "Harbor")


def test_merge_revert_splits_entities_and_usage_again(graph):
    edit = MergeEntities(["Bob"], "Alice")
    after = {r.entity.name: r for r in round_trip(graph, edit)}
    assert "Bob" not in after
    assert after["Alice"].usage.access[0] == 4 + 5  # summed by the merge
    assert "Reviews pull requests" in {o.content for o in after["Alice"].entity.observations}


def test_create_entity_revert_deletes_it(graph):
    edit = CreateEntity(EntityInput("Kafka", "Tool", (ObservationInput("A log", "fact"),)))
    round_trip(graph, edit)
    graph.entities.create_entities([EntityInput("Kafka")])
    with pytest.raises(ConflictError, match="already exists"):
        edit.apply(graph)


def test_rename_and_status_reverts_give_back_the_row(graph):
    round_trip(graph, RenameEntity("Alice", "Alicia"))
    round_trip(graph, SetStatus(["Alice", "Legacy ETL", "Alice"], "paused"))
    with pytest.raises(ConflictError):
        RenameEntity("Alice", "Bob").apply(graph)


def test_observation_edits_revert_exactly(graph):
    round_trip(graph, AddObservation("Alice", ObservationInput("Speaks Portuguese", "fact", weight=0.5)))
    round_trip(graph, EditObservation("Alice", "Prefers Python", "Prefers Python 3.12", "fact"))
    round_trip(graph, EditObservation("Bob", "Reviews pull requests", "Reviews every pull request", "task"))
    round_trip(graph, SupersedeObservation("Alice", "On call this week", ObservationInput("Off call", "event")))
    round_trip(graph, DeleteObservation("Harbor", "Ingests buoy data"))  # superseded: its successor's link returns
    round_trip(graph, DeleteObservation("Harbor", "Ingests buoy and tide data"))
    with pytest.raises(NotFoundError):
        DeleteObservation("Harbor", "never said").apply(graph)


def test_relation_edits_revert_exactly(graph):
    round_trip(graph, AddRelation(RelationInput("Alice", "Redis", "uses", "caching")))
    round_trip(graph, EndRelation(RelationInput("Alice", "Harbor", "works_on")))
    round_trip(graph, DeleteRelation(RelationInput("Alice", "Bob", "knows")))  # one active, one ended
    with pytest.raises(ConflictError):
        AddRelation(RelationInput("Bob", "Redis", "uses")).apply(graph)


def test_compound_edit_is_one_transaction_and_one_undo(graph):
    split = Compound("split Harbor's tide data", [
        CreateEntity(EntityInput("Tides", "Dataset", (ObservationInput("Tide tables", "fact"),))),
        AddRelation(RelationInput("Harbor", "Tides", "ingests")),
        SupersedeObservation("Harbor", "Ingests buoy and tide data", ObservationInput("Ingests buoy data again")),
    ])
    round_trip(graph, split)
    assert (split.subject(), split.subject(reverted=True)) == ("Harbor", "Harbor")
    before = state(graph)
    broken = Compound("half an edit", [AddObservation("Alice", ObservationInput("new")), RenameEntity("Bob", "Alice")])
    with pytest.raises(ConflictError):
        broken.apply(graph)
    assert state(graph) == before  # the first step was rolled back with the second


def test_edit_inside_a_caller_transaction_commits_with_it(graph):
    published = []
    graph.subscribe(published.extend)
    with graph.transaction("batch"):
        nested = AddObservation("Redis", ObservationInput("Single-threaded")).apply(graph)
        assert nested.change_id == 0 and not published
    assert [c.op for c in published] == ["batch"]
    assert "Single-threaded" in {o.content for o in graph.entities.get_entity("Redis").entity.observations}


def test_history_undoes_and_redoes_in_order(graph):
    history = EditHistory(graph, limit=3)
    start = state(graph)
    with pytest.raises(NotFoundError, match="nothing to undo"):
        history.undo()
    history.apply(AddObservation("Bob", ObservationInput("Likes tea")))
    history.apply(DeleteEntities(["Redis"]))
    changes = history.apply(MergeEntities(["Legacy ETL"], "Harbor"))
    assert changes.entity_ids and history.undo_description == "merge Legacy ETL into Harbor"
    edited = state(graph)
    with pytest.raises(ValidationError):
        history.apply(RenameEntity("Bob", ""))
    assert history.undo_description == "merge Legacy ETL into Harbor" and history.redo_description is None
    steps = [history.undo() for _ in range(3)]
    assert [s.edit.description for s in steps] == ["merge Legacy ETL into Harbor", "delete Redis",
                                                   "add observation to Bob"]
    assert state(graph) == start and history.undo_description is None
    for _ in range(3):
        history.redo()
    assert _content(state(graph)) == _content(edited)
    with pytest.raises(NotFoundError, match="nothing to redo"):
        history.redo()
    history.apply(SetStatus(["Bob"], "paused"))  # past the limit: the oldest edit is forgotten
    for _ in range(3):
        history.undo()
    assert history.undo_description is None
    assert "Likes tea" in {o.content for o in graph.entities.get_entity("Bob").entity.observations}


def test_a_revert_that_cannot_apply_writes_nothing_and_keeps_the_history(graph):
    history = EditHistory(graph)
    history.apply(DeleteEntities(["Redis"]))
    graph.entities.create_entities([EntityInput("Redis", "Database")])  # another client took the name meanwhile
    before = state(graph)
    with pytest.raises(ConflictError, match="Redis"):
        history.undo()
    assert state(graph) == before and history.undo_description == "delete Redis"
    graph.entities.delete_entities(["Redis"])
    history.undo()
    assert graph.entities.get_entity("Redis").entity.entity_type == "Tool"


def test_rows_whose_ids_were_taken_meanwhile_come_back_under_new_ids(graph):
    edit = DeleteEntities(["Legacy ETL"])  # the newest entity: SQLite gives its id to the next one
    before = {r.entity.name: r for r in state(graph)}
    edit.apply(graph)
    graph.entities.create_entities([EntityInput("Newcomer", "Concept", (ObservationInput("Takes the free ids"),))])
    assert graph.entities.get_entity("Newcomer").entity.id == before["Legacy ETL"].entity.id
    edit.revert(graph)
    after = {r.entity.name: r for r in state(graph)}
    legacy = after["Legacy ETL"]
    assert legacy.entity.id != before["Legacy ETL"].entity.id
    assert _content([legacy]) == _content([before["Legacy ETL"]])
    assert [(r.source, r.target, r.active, r.ended_at) for r in after["Harbor"].relations] == [
        (r.source, r.target, r.active, r.ended_at) for r in before["Harbor"].relations]
