"""The *Agents* panel: two MCP tokens' agents at work over HTTP, their steps listed newest first (a search with what
it showed, by rank; what was then opened or marked used; each write), filtered by agent and period; selecting a
step selects its entities (the graph follows the controller's selection)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from _timeline_helpers import two_agents_at_work

from limbic.gui.agent_timeline import AgentTimeline

pytestmark = pytest.mark.gui


def test_agents_steps_filters_and_selection(qtbot, service, controller):
    seen = two_agents_at_work(service)
    panel = AgentTimeline(controller)
    qtbot.addWidget(panel)
    panel.reload()
    qtbot.waitUntil(lambda: len(panel.events) == 8, timeout=10_000)  # alice's 4 steps, bob's 3, the CLI's write
    assert [e.detail for e in panel.events if e.origin == "cli"] == ["create_entities"]  # not its tokens: housekeeping
    labels = [panel.agent.itemText(i) for i in range(panel.agent.count())]
    assert labels == ["Every agent", "cli", "alice (MCP)", "bob (MCP)"]

    panel.choose_agent("mcp:alice")
    qtbot.waitUntil(lambda: [e.kind for e in panel.events] == ["wrote", "used", "opened", "search"], timeout=10_000)
    rows = panel.rows()
    assert all(who == "alice (MCP)" for _when, who, _what in rows)
    shown = [r["name"] for r in seen["alice_search"]["results"]]
    assert rows[3][2].startswith("searched “analytical engine program”") and rows[3][2].endswith(f"→ {len(shown)} shown")
    search_item = panel.tree.topLevelItem(3)
    assert [search_item.child(i).text(2) for i in range(search_item.childCount())] == \
        [f"{rank}. {name}" for rank, name in enumerate(shown, 1)]
    assert rows[2][2] == f"opened {seen['alice_opened']}" and rows[1][2] == f"marked used {seen['alice_used']}"
    assert rows[0][2] == f"add observations → {seen['alice_opened']}"

    with qtbot.waitSignal(controller.selection_changed) as selected:
        panel.tree.setCurrentItem(search_item)  # a search: everything it showed
    assert selected.args == [shown]
    with qtbot.waitSignal(controller.selection_changed) as selected:
        panel.tree.setCurrentItem(search_item.child(1))  # one shown entity
    assert selected.args == [[shown[1]]]

    panel.period.setCurrentIndex(0)  # the last hour: all of it
    panel.choose_agent("mcp:bob")
    qtbot.waitUntil(lambda: [e.kind for e in panel.events] == ["wrote", "opened", "search"], timeout=10_000)
    assert panel.summary.text() == "3 steps: 1 search, 1 use, 1 write"
