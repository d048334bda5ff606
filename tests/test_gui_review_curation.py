"""Curation decisions in the Review view (a real window, offscreen): a family of alike duplicate clusters under
one row settled by one click and undone by one undo, and a decision's evidence in plain words (no JSON, no ids)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from _widgets_helpers import shown_review

from limbic.core.models import EntityInput, ObservationInput

pytestmark = pytest.mark.gui

TEXT = "Step {n}: the importer reads the whole memory file before parsing its records"


@pytest.fixture
def review(qtbot, controller, service):
    service.entities.create_entities([EntityInput(f"Task {n}", "task", (
        ObservationInput(TEXT.format(n=n)), ObservationInput(TEXT.format(n=n) + " line by line"))) for n in range(3)]
        + [EntityInput("NYC", "city", (ObservationInput("big apple"),)),
           EntityInput("New York City", "city", (ObservationInput("five boroughs"),))])
    return shown_review(qtbot, controller)


def test_a_family_is_one_row_settled_at_once_and_undone_at_once(qtbot, review, service):
    view, editor = review
    [section] = [s for s in view.sections if s.kind == "duplicate"]
    [top] = [view.tree.topLevelItem(i) for i in range(view.tree.topLevelItemCount())
             if view.tree.topLevelItem(i).text(0).startswith("duplicate (")]
    family = top.child(0)
    assert family.text(0).startswith("3 facts said twice in entities of type task — e.g. Task ") and family.childCount() == 3
    view.tree.clearSelection()
    family.setSelected(True)
    assert len(view.selected()) == 3
    assert [b.text() for b in view.option_buttons()] == ["supersede (3)", "merge (3)", "keep (3)"]
    before = service.entities.read_graph(include_ended=True)
    view.option_buttons()[0].click()
    qtbot.waitUntil(lambda: not editor.queue.busy and editor.stack.count() == 1, timeout=5000)
    assert all(len(e.live_observations) == 1 for e in service.entities.read_graph().entities if e.name.startswith("Task"))
    editor.stack.undo()
    qtbot.waitUntil(lambda: not editor.queue.busy and service.entities.read_graph(include_ended=True) == before, timeout=5000)


def test_evidence_reads_as_words(qtbot, review):
    view, _ = review
    [cluster] = view.decisions("duplicate")[:1]
    view.select([cluster.key])
    text = view.evidence.toPlainText()
    assert text.startswith("2 observations say the same fact in one entity, with the same values.")
    assert "Merging keeps: “Step" in text and "  • Step" in text
    assert "{" not in text and cluster.key not in text
    [pair] = view.decisions("duplicate_entity")
    view.select([pair.key])
    text = view.evidence.toPlainText()
    assert "“NYC” is the initials of “New York City”" in text and "keeps the name" in text
    assert "NYC (city, 1 observation)\n  • big apple" in text and "  • five boroughs" in text
