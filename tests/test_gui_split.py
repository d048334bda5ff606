"""The split panel in a real window: a candidate's proposal reviewed (a part renamed, an observation moved),
split as one undoable edit, and undone exactly."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from limbic.core.models import EntityInput, ObservationInput
from limbic.gui.curation.split_panel import SplitPanel

pytestmark = pytest.mark.gui

GARDEN = [f"waters the tomato garden on day {i}" for i in range(8)]
SKY = [f"points the telescope at a galaxy on night {i}" for i in range(8)]
BREAD = [f"bakes sourdough bread with rye flour batch {i}" for i in range(8)]


def test_a_reviewed_split_is_executed_and_undone(qtbot, controller, service):
    service.entities.create_entities([EntityInput("Big", "Hobby", tuple(ObservationInput(t) for t in GARDEN + SKY + BREAD))])
    panel = SplitPanel(controller)
    qtbot.addWidget(panel)
    panel.show()
    panel.find_candidates()
    qtbot.waitUntil(lambda: panel.proposal is not None and panel.split_button.isEnabled(), timeout=10_000)
    assert [c.name for c in panel.candidates] == ["Big"]
    assert panel.message.text().endswith("then Split." if panel.proposal.suggested else "split only if you see them.")
    groups = panel.tree.topLevelItemCount()
    assert groups == len(panel.proposal.parts) + 1 >= 3
    panel.rename_part(0, "Big - first")
    moved = panel.tree.topLevelItem(1).child(0)
    moved_text = moved.text(0)
    moved.setSelected(True)
    panel.move_selected(0)
    parts = panel.parts()
    assert parts[0].name == "Big - first" and moved_text in parts[0].observations
    before = service.entities.read_graph(include_ended=True)
    panel.split()
    qtbot.waitUntil(lambda: not panel.queue.busy and panel.stack.count() == 1, timeout=10_000)
    assert moved_text in [o.content for o in service.entities.get_entity("Big - first").entity.observations]
    assert [o.content for o in service.entities.get_entity("Big").entity.live_observations] == GARDEN[:1]  # what Big is
    panel.stack.undo()
    qtbot.waitUntil(lambda: not panel.queue.busy, timeout=10_000)
    assert service.entities.read_graph(include_ended=True) == before


def test_keep_whole_is_undoable(qtbot, controller, service):
    service.entities.create_entities([EntityInput("Big", "Hobby", tuple(ObservationInput(t) for t in GARDEN + SKY + BREAD))])
    panel = SplitPanel(controller)
    qtbot.addWidget(panel)
    panel.find_candidates()
    qtbot.waitUntil(lambda: panel.keep_button.isEnabled(), timeout=10_000)
    panel.keep_whole()
    qtbot.waitUntil(lambda: not panel.queue.busy and panel.stack.count() == 1, timeout=10_000)
    assert service.splits.find_split_candidates()[0] == 0
    panel.stack.undo()
    qtbot.waitUntil(lambda: not panel.queue.busy, timeout=10_000)
    assert service.splits.find_split_candidates()[0] == 1


def test_each_candidate_is_proposed_once(qtbot, controller, service, monkeypatch):
    service.entities.create_entities([
        EntityInput(name, "Hobby", tuple(ObservationInput(f"{t} ({name})") for t in GARDEN + SKY + BREAD))
        for name in ("Big", "Bigger")])
    proposed: list[str] = []
    propose = service.splits.propose_entity_split

    def counted(name: str, *args, **kwargs):
        proposed.append(name)
        return propose(name, *args, **kwargs)

    monkeypatch.setattr(service.splits, "propose_entity_split", counted)
    panel = SplitPanel(controller)
    qtbot.addWidget(panel)
    panel.find_candidates()
    qtbot.waitUntil(lambda: panel.proposal is not None, timeout=10_000)
    controller.runner.wait()
    first = panel.candidates[0].name
    assert proposed == [first]
    panel.candidate_list.setCurrentRow(1)
    qtbot.waitUntil(lambda: panel.proposal is not None and panel.proposal.entity != first, timeout=10_000)
    panel.find_candidates()  # again: the first candidate is proposed once more, once
    qtbot.waitUntil(lambda: len(proposed) == 3, timeout=10_000)
    controller.runner.wait()
    qtbot.wait(50)
    assert proposed == [first, panel.candidates[1].name, first]
