"""The graph as of a date: observations live then, relations active then, superseded ones as they stood,
entities created later left out; over the service and MCP (``asOf``)."""

from __future__ import annotations

import pytest
from _mcp_helpers import portal_client

from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.models import RelationInput as R
from limbic.core.models import iso

DAY = 86_400.0
T0 = 1_750_000_000.0  # the history below happens over days after this (UTC seconds)


@pytest.fixture
def history(service):
    service.entities.create_entities([
        E("deploys", "Fact", (O("deploys go to us-east-1", created_at=T0),), created_at=T0),
        E("cache", "Component", (O("the cache is enabled", created_at=T0),), created_at=T0),
        E("late", "Note", (O("written on day five", created_at=T0 + 5 * DAY),), created_at=T0 + 5 * DAY),
    ])
    service.relations.create_relations([R("deploys", "cache", "uses", created_at=T0 + DAY)])
    service.entities.supersede_observation("deploys", "deploys go to us-east-1",
                                  O("deploys go to us-west-2", created_at=T0 + 3 * DAY))
    service.relations.end_relation(R("deploys", "cache", "uses"), at=T0 + 4 * DAY)
    return service


def _live(entity, now):
    return [o.content for o in entity.observations if o.current(now)]


def test_before_a_supersede_the_old_observation_is_live(history):
    before = history.entities.open_nodes(["deploys"], as_of=T0 + 2 * DAY, record=False).entities[0]
    after = history.entities.open_nodes(["deploys"], as_of=T0 + 3.5 * DAY, record=False).entities[0]
    assert _live(before, T0 + 2 * DAY) == ["deploys go to us-east-1"]
    assert _live(after, T0 + 3.5 * DAY) == ["deploys go to us-west-2"]
    assert [o.content for o in after.observations] == ["deploys go to us-east-1", "deploys go to us-west-2"]


def test_before_a_relation_ended_it_is_active(history):
    assert history.entities.read_graph(as_of=T0 + 0.5 * DAY).relations == ()
    active = history.entities.read_graph(as_of=T0 + 2 * DAY).relations
    assert [(r.source, r.target, r.active) for r in active] == [("deploys", "cache", True)]
    assert history.entities.read_graph(as_of=T0 + 4.5 * DAY).relations == ()
    ended = history.entities.read_graph(as_of=T0 + 4.5 * DAY, include_ended=True).relations
    assert [r.active for r in ended] == [False]


def test_before_an_entity_was_created_it_is_left_out(history):
    assert {e.name for e in history.entities.read_graph(as_of=T0 + 2 * DAY).entities} == {"deploys", "cache"}
    assert history.search.search_nodes("day five", as_of=T0 + 2 * DAY).entities == ()
    assert [e.name for e in history.search.search_nodes("day five", as_of=T0 + 6 * DAY).entities] == ["late"]
    assert history.search.search_nodes("us-east-1", as_of=T0 + 2 * DAY).entities[0].name == "deploys"
    assert history.search.search_nodes("us-east-1", as_of=T0 + 4 * DAY).entities == ()


def test_reading_the_past_is_not_a_use(history):
    history.entities.open_nodes(["deploys"], as_of=T0 + DAY)
    history.usage.wait_for_signals()
    assert history.entities.get_entity("deploys").access_count == 0


def test_mcp_as_of(history):
    with portal_client(build_server(history)) as (portal, client):
        def ok(tool, arguments):
            result = portal.call(client.call_tool, tool, arguments)
            assert not result.is_error, result.content[0].text
            return result.structured_content

        then = iso(T0 + 2 * DAY)
        graph = ok("read_graph", {"asOf": then})
        assert {e["name"]: e["observations"] for e in graph["entities"]} == {
            "deploys": ["deploys go to us-east-1"], "cache": ["the cache is enabled"]}
        assert graph["relations"] == [{"from": "deploys", "to": "cache", "relationType": "uses"}]
        opened = ok("open_nodes", {"names": ["deploys", "late"], "asOf": then})
        assert [e["name"] for e in opened["entities"]] == ["deploys"]
        found = ok("search_nodes", {"query": "us-east-1", "asOf": then})
        assert [e["name"] for e in found["entities"]] == ["deploys"]
        now = ok("search_nodes", {"query": "us-east-1"})
        assert now["entities"] == []
        day_five = iso(T0 + 5 * DAY)[:10]  # a date alone is that day as it ended: day five's write is in it
        assert "late" in [e["name"] for e in ok("read_graph", {"asOf": day_five})["entities"]]
        assert "late" not in [e["name"] for e in ok("read_graph", {"asOf": iso(T0 + 4 * DAY)[:10]})["entities"]]
        refused = portal.call(client.call_tool, "read_graph", {"asOf": "yesterday"})
        assert refused.is_error and "ISO 8601" in refused.content[0].text
