"""*What the agent sees* shows exactly what an agent's ``search_semantic`` returns, on the real corpus: the same
JSON as the MCP tool answers through an in-process MCP client for the same query and parameters — after the
sliders moved and were saved too — apart from the two per-call values (``timings``, ``searchId``). *Mark as
useful* moves the ranks at once (the search runs again with the new access counts)."""

from __future__ import annotations

import json
import shutil

import pytest
from _mcp_helpers import portal_client
from _widgets_helpers import open_controller

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.mcp.answers import estimate_tokens, pretty
from limbic.core.mcp.server import build_server
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.search.agent_view import AgentView

pytestmark = pytest.mark.gui
QUERY = "memory graph architecture"
PER_CALL = ("timings", "searchId")


@pytest.fixture
def corpus_service(tmp_path, corpus_db):
    path = tmp_path / "memory.db"
    shutil.copy(corpus_db, path)
    service = MemoryService(open_database(path), HashingEmbedder(), origin="gui")
    yield service
    service.close()


@pytest.fixture
def corpus_controller(qtbot, corpus_service):
    yield from open_controller(corpus_service)


def _agent_answer(service: MemoryService, arguments: dict) -> tuple[dict, str]:
    """``search_semantic(arguments)`` through the MCP SDK's in-process client: (structured answer, text sent)."""
    with portal_client(build_server(service)) as (portal, client):
        result = portal.call(client.call_tool, "search_semantic", arguments)
    assert not result.is_error, result.content
    text = "".join(getattr(c, "text", "") for c in result.content)
    return result.structured_content, text


def _without_per_call(answer: dict) -> dict:
    return {k: v for k, v in answer.items() if k not in PER_CALL}


def _search(qtbot, controller, query: str, limit: int) -> None:
    with qtbot.waitSignal(controller.search_finished, timeout=20_000):
        controller.search(query, limit)


def test_the_agent_view_is_the_json_search_semantic_answers(qtbot, corpus_controller, corpus_service):
    view = AgentView(corpus_controller)
    qtbot.addWidget(view)
    _search(qtbot, corpus_controller, QUERY, 10)
    structured, text = _agent_answer(corpus_service, {"query": QUERY, "limit": 10})
    assert json.loads(text) == structured  # the tool's text is its structured answer, as JSON
    assert view.answer is not None and len(view.answer["results"]) == 10
    assert _without_per_call(view.answer) == _without_per_call(structured)
    assert list(view.answer) == list(structured)  # the same keys in the same order
    assert set(view.answer["timings"]) == set(structured["timings"])
    shown = json.loads(view.json_text)
    assert _without_per_call(shown) == _without_per_call(json.loads(text))
    assert view.json_text == pretty(view.answer) and view.text.toPlainText() == view.json_text
    assert view.tokens == estimate_tokens(view.json_text) > 0
    assert f"limit={10}" in view.summary.text() and "tokens" in view.summary.text()

    # The sliders move: the view follows the re-ranked list at once (no SQL) ...
    moved = corpus_controller.params.replace(balanced_weight=0.95, cosine_heavy_weight=0.95,
                                             limbic_heavy_weight=0.95, relevance_fusion=0.0)
    corpus_controller.set_params(moved)
    assert [r["name"] for r in view.answer["results"]] == [r.name for r in corpus_controller.results]
    assert "differ from the saved parameters" in view.summary.text()
    # ... and once saved, an agent's call returns that very answer.
    with qtbot.waitSignal(corpus_controller.params_saved, timeout=10_000):
        corpus_controller.save_params()
    assert "differ from the saved" not in view.summary.text()
    structured, _text = _agent_answer(corpus_service, {"query": QUERY, "limit": 10})
    assert _without_per_call(view.answer) == _without_per_call(structured)

    # another top K: the agent's limit
    _search(qtbot, corpus_controller, QUERY, 3)
    structured, _text = _agent_answer(corpus_service, {"query": QUERY, "limit": 3})
    assert _without_per_call(view.answer) == _without_per_call(structured)
    assert len(view.answer["results"]) == 3

    corpus_controller.search("", 10)
    assert view.answer is None and view.json_text == ""


def test_mark_as_useful_reranks_at_once(qtbot, corpus_controller):
    _search(qtbot, corpus_controller, QUERY, 10)
    name = corpus_controller.results[-1].name
    candidates = corpus_controller.last_outcome.candidate_set
    before = int(candidates.access_count[list(candidates.names).index(name)])
    with qtbot.waitSignal(corpus_controller.search_finished, timeout=20_000) as again:
        corpus_controller.mark_useful([name])
    fresh = again.args[0].candidate_set
    assert int(fresh.access_count[list(fresh.names).index(name)]) == before + 1  # no F5 needed
    assert corpus_controller.search_id is not None  # the refresh keeps the logged search it labels
