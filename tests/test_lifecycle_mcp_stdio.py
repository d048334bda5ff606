"""Over MCP stdio with the real model, as an agent writes: add_observations returns its conflicts."""

from __future__ import annotations

import json

import anyio
import pytest
from _embedder_helpers import real_model_dir
from _mcp_helpers import limbic_params, outcome, stdio_client

pytestmark = pytest.mark.model


def _home_with_the_model(home):
    """``home`` as LIMBIC_HOME with the installed all-MiniLM-L6-v2 linked in and active."""
    model = real_model_dir()
    (home / "cache" / "models").mkdir(parents=True, exist_ok=True)
    (home / "cache" / "models" / model.name).symlink_to(model)
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "active_model.json").write_text(json.dumps({"name": model.name, "variant": "fp32"}))
    return home


def test_a_contradiction_comes_back_in_the_write_over_stdio(tmp_path, memory_address):
    home = _home_with_the_model(tmp_path / "home")

    async def run():
        async with stdio_client(limbic_params(memory_address, home)) as client:
            await client.call_tool("create_entities", {"entities": [
                {"name": "deploys", "entityType": "practice",
                 "observations": ["Production deploys go to AWS region us-east-1"]},
                {"name": "cache", "entityType": "component", "observations": ["the cache is enabled"]}]})
            contradicting = outcome(await client.call_tool("add_observations", {"observations": [
                {"entityName": "deploys", "contents": ["Production deploys go to AWS region us-west-2"]}]}))
            paraphrase = outcome(await client.call_tool("add_observations", {"observations": [
                {"entityName": "cache", "contents": ["caching is turned on"]}]}))
            return contradicting, paraphrase

    contradicting, paraphrase = anyio.run(run)
    contradicting, paraphrase = contradicting["structured"], paraphrase["structured"]
    [conflict] = contradicting["conflicts"]
    assert conflict["conflictsWith"]["observation"] == "Production deploys go to AWS region us-east-1"
    assert conflict["reason"].startswith("region:")
    assert "conflicts" not in paraphrase and "pendingConflictChecks" not in paraphrase
