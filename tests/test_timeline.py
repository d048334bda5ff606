"""An agent's timeline: what each MCP token's agent searched and was shown, what it then opened or marked used, and
what it wrote — from the search log and the change log, filtered by agent and time. Two named tokens call the
tools over Streamable HTTP; each backend; ``limbic timeline`` prints the same."""

from __future__ import annotations

import json

import pytest
from _timeline_helpers import two_agents_at_work

from limbic.core.cli.main import main
from limbic.core.errors import ValidationError


@pytest.fixture
def agents(service):
    return two_agents_at_work(service)


def test_each_agent_sees_what_it_was_shown_then_opened_used_and_wrote(service, agents):
    events = service.history.timeline("alice")
    assert [e.kind for e in events] == ["wrote", "used", "opened", "search"]  # newest first
    assert {e.origin for e in events} == {"mcp:alice"}
    wrote, used, opened, search = events
    shown = [r["name"] for r in agents["alice_search"]["results"]]
    assert search.detail == "analytical engine program" and list(search.entities) == shown
    assert search.searches == (agents["alice_search"]["searchId"],) and search.mode == agents["alice_search"]["mode"]
    assert opened.entities == (agents["alice_opened"],) and opened.searches == search.searches
    assert used.entities == (agents["alice_used"],) and used.searches == search.searches
    assert wrote.detail == "add_observations" and wrote.entities == (agents["alice_opened"],)
    assert search.at <= opened.at <= used.at <= wrote.at

    bob = service.history.timeline("bob")
    assert [(e.kind, e.entities) for e in bob] == [
        ("wrote", ("COBOL",)), ("opened", ("Grace Hopper",)),
        ("search", tuple(r["name"] for r in agents["bob_search"]["results"]))]
    assert "Grace Hopper" in bob[-1].entities

    everyone = service.history.timeline()
    assert {e.origin for e in everyone} == {"cli", "mcp:alice", "mcp:bob"}  # the CLI wrote the first entities
    assert service.history.timeline_origins() == ["cli", "mcp:alice", "mcp:bob"]
    later = service.history.timeline("alice", since=agents["between"])
    assert [e.kind for e in later] == ["wrote", "used", "opened"]  # the search came before
    earlier = service.history.timeline(origin="mcp:alice", until=agents["between"])
    assert [e.kind for e in earlier] == ["search"]
    assert [e.kind for e in service.history.timeline("alice", limit=2)] == ["wrote", "used"]
    assert service.history.timeline("carol") == []


def test_a_deleted_entity_keeps_its_place_by_id(service, agents):
    opened = agents["alice_opened"]
    entity_id = service.entities.get_entity(opened).entity.id
    service.entities.delete_entities([opened])
    search = service.history.timeline("alice")[-1]
    assert f"#{entity_id}" in search.entities and opened not in search.entities


@pytest.mark.parametrize("arguments, message", [
    ({"agent": "alice", "origin": "mcp:alice"}, "not both"),
    ({"agent": ""}, "agent"),
    ({"since": 10.0, "until": 5.0}, "since must not be after until"),
    ({"limit": 0}, "limit"),
    ({"since": -1}, "since"),
])
def test_bad_filters_are_refused(service, arguments, message):
    with pytest.raises(ValidationError, match=message):
        service.history.timeline(**arguments)


def test_cli_timeline(service, agents, memory_address, capsys):
    assert main(["--db", memory_address, "timeline", "--agent", "alice", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [e["kind"] for e in printed] == ["wrote", "used", "opened", "search"]
    assert printed[-1]["query"] == "analytical engine program" and printed[-1]["origin"] == "mcp:alice"
    assert main(["--db", memory_address, "timeline", "--agent", "alice"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and all("alice (MCP)" in line for line in lines)
    assert "searched “analytical engine program”" in lines[-1] and agents["alice_opened"] in lines[-2]
    assert main(["--db", memory_address, "timeline", "--agent", "bob", "--since", "1h"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3
    assert main(["--db", memory_address, "timeline", "--since", "yesterday-ish"]) == 2
    assert "since" in capsys.readouterr().err
