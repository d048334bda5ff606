"""Two named MCP tokens' agents at work on a memory, over Streamable HTTP: the timeline's tests drive them."""

from __future__ import annotations

import time

import anyio
from _mcp_helpers import http_client, outcome

from limbic.core.mcp.http import HttpMcpServer
from limbic.core.models import EntityInput, ObservationInput

PEOPLE = [("Ada Lovelace", "person", "wrote the first program for the analytical engine"),
          ("Charles Babbage", "person", "designed the analytical engine and the difference engine"),
          ("Grace Hopper", "person", "wrote the first compiler and found a moth in the relay"),
          ("Analytical Engine", "machine", "a general purpose mechanical computer designed in 1837")]


async def _call(client, tool: str, arguments: dict) -> dict:
    return outcome(await client.call_tool(tool, arguments))


def two_agents_at_work(service) -> dict:
    """Four entities written by ``service``'s origin, then the agents of the MCP tokens alice and bob at work over
    Streamable HTTP (search, open or get, mark_used, a write); returns what they were answered (``alice_search``,
    ``bob_search``: the structured answers), what alice opened and used, and ``between``: a moment after alice's
    search and before her next step."""
    service.entities.create_entities([EntityInput(n, t, (ObservationInput(o),)) for n, t, o in PEOPLE])
    alice, bob = service.projects.add_token("alice"), service.projects.add_token("bob")
    seen: dict = {}
    with HttpMcpServer(service) as server:
        async def scenario():
            async with http_client(server.url, alice) as client:
                found = await _call(client, "search_semantic", {"query": "analytical engine program", "limit": 3})
                assert not found["error"]
                seen["alice_search"] = found["structured"]
                service.usage.wait_for_signals()  # the search's log is written off the answer's path
                seen["between"] = time.time()
                shown = [r["name"] for r in found["structured"]["results"]]
                seen["alice_opened"] = shown[0]
                assert not (await _call(client, "open_nodes", {"names": [shown[0]]}))["error"]
                seen["alice_used"] = shown[1]
                assert not (await _call(client, "mark_used", {"names": [shown[1]],
                                                              "searchId": found["structured"]["searchId"]}))["error"]
                assert not (await _call(client, "add_observations", {"observations": [
                    {"entityName": shown[0], "contents": ["her notes on the engine are the first program"]}]}))["error"]
            async with http_client(server.url, bob) as client:
                found = await _call(client, "search_semantic", {"query": "compiler", "limit": 2})
                seen["bob_search"] = found["structured"]
                assert not (await _call(client, "get_entity", {"name": "Grace Hopper"}))["error"]
                assert not (await _call(client, "create_entities", {"entities": [
                    {"name": "COBOL", "entityType": "language", "observations": ["designed after Hopper's FLOW-MATIC"]}]}))["error"]

        anyio.run(scenario)
    service.usage.wait_for_signals()
    return seen
