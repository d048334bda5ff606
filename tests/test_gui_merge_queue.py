"""The merge queue in a real window: duplicates found at the slider's threshold, members one per row with the
reason and the text a merge keeps (or the merged text Combine writes when no member keeps every detail), both
sides of an entity pair, each action applied through the core's edits and undone exactly from the queue's undo
stack."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtWidgets import QDialog

from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.gui.curation.merge_queue import MergeQueue

pytestmark = pytest.mark.gui


@pytest.fixture
def queue(qtbot, controller, service):
    service.entities.create_entities([
        EntityInput("A", "t", (ObservationInput("the blue widget is made in Ohio"), ObservationInput("alpha beta"),
                               ObservationInput("the blue widget is made in Ohio by hand"))),
        EntityInput("B", "t", (ObservationInput("the blue widget is made in Ohio"),)),
        EntityInput("NYC", "city", (ObservationInput("big apple"),)),
        EntityInput("New York City", "city", (ObservationInput("five boroughs"),)),
    ])
    service.relations.create_relations([RelationInput("A", "NYC", "visits")])
    widget = MergeQueue(controller)
    qtbot.addWidget(widget)
    widget.show()
    widget.slider.setValue(60)
    return widget


def found(qtbot, widget) -> None:
    widget.summary.setText("")
    widget.find_duplicates()
    qtbot.waitUntil(lambda: "duplicate clusters" in widget.summary.text(), timeout=5000)


def settled(qtbot, widget) -> None:
    qtbot.waitUntil(lambda: not widget.queue.busy, timeout=5000)


def test_clusters_show_side_by_side_and_each_action_undoes_exactly(qtbot, queue, service):
    found(qtbot, queue)
    assert len(queue.clusters) == 1 and queue.threshold == 0.6
    assert queue.members.rowCount() == 2 and queue.members.columnCount() == 3  # one row per member
    assert [queue.members.item(r, 1).text() for r in range(2)] == [
        "the blue widget is made in Ohio", "the blue widget is made in Ohio by hand"]
    assert "Merging keeps: “the blue widget is made in Ohio by hand”" in queue.cluster_reason.text()
    assert "texts said alike of several entities" in queue.summary.text()  # A's and B's copies: each its own
    assert [queue.names.item(i).text() for i in range(queue.names.count())] == ["NYC", "New York City"]
    assert "initials" in queue.group_reason.text() and "keeps the name “NYC”" in queue.group_reason.text()
    assert "five boroughs" in queue.sides.toPlainText() and "big apple" in queue.sides.toPlainText()
    before = service.entities.read_graph(include_ended=True)
    for option in ("merge", "supersede", "keep"):
        queue.settle_cluster(option)
        settled(qtbot, queue)
        assert service.entities.read_graph(include_ended=True) != before or option == "keep"
        assert service.curation.find_duplicate_observations(threshold=0.6).total == 0
        queue.stack.undo()
        settled(qtbot, queue)
        assert service.entities.read_graph(include_ended=True) == before, option
        assert service.curation.find_duplicate_observations(threshold=0.6).total == 1


def test_entities_merge_into_the_chosen_name_and_undo(qtbot, queue, service):
    found(qtbot, queue)
    before = service.entities.read_graph(include_ended=True)
    queue.tabs.setCurrentIndex(1)
    queue.names.setCurrentRow(1)
    queue.settle_group("merge")
    settled(qtbot, queue)
    names = {e.name for e in service.entities.read_graph().entities}
    assert "NYC" not in names and "New York City" in names
    assert [r.target for r in service.entities.get_entity("New York City").relations] == ["New York City"]
    qtbot.waitUntil(lambda: not queue.entity_groups, timeout=5000)  # the queue looked again
    queue.stack.undo()
    settled(qtbot, queue)
    assert service.entities.read_graph(include_ended=True) == before


def test_a_cluster_without_survivor_offers_the_merged_text_and_combine_undoes(qtbot, controller, service):
    """Each member holds a detail the other lacks: no text is said to be kept; Combine writes the merged text
    shown, merge and supersede wait for a member chosen by hand; undo gives the members back exactly."""
    service.entities.create_entities([EntityInput("Widget", "product", (
        ObservationInput("the blue widget is assembled in the Ohio plant by hand"),
        ObservationInput("the blue widget is assembled in the Ohio plant with care")))])
    widget = MergeQueue(controller)
    qtbot.addWidget(widget)
    widget.show()
    widget.slider.setValue(60)
    found(qtbot, widget)
    [cluster] = widget.clusters
    assert "each with a detail of its own" in widget.cluster_list.item(0).text()
    assert "Combining writes: “the blue widget is assembled in the Ohio plant with care (by hand)”" in \
        widget.cluster_reason.text()
    assert widget.combine_button.isEnabled() and widget.keep_button.isEnabled()
    assert not widget.merge_button.isEnabled() and not widget.supersede_button.isEnabled()
    widget.members.selectRow(0)
    assert widget.merge_button.isEnabled() and widget.supersede_button.isEnabled()
    widget.members.clearSelection()
    before = service.entities.read_graph(include_ended=True)
    widget.settle_cluster("combine")
    settled(qtbot, widget)
    assert [o.content for o in service.entities.get_entity("Widget").entity.live_observations] == [cluster.merged]
    widget.stack.undo()
    settled(qtbot, widget)
    assert service.entities.read_graph(include_ended=True) == before


def test_a_higher_threshold_finds_fewer(qtbot, queue):
    queue.slider.setValue(99)
    found(qtbot, queue)
    assert queue.slider_label.text() == "0.99"
    assert queue.clusters == [] and not queue.merge_button.isEnabled()


def test_the_curation_window_opens_on_the_given_undo_stack(qtbot, controller, service):
    from PySide6.QtGui import QUndoStack

    from limbic.gui.curation.window import CurationWindow

    stack = QUndoStack()
    window = CurationWindow(controller, stack=stack)
    qtbot.addWidget(window)
    window.show()
    assert window.merge_queue.stack is stack
    qtbot.waitUntil(lambda: "duplicate clusters" in window.merge_queue.summary.text(), timeout=5000)


def test_closing_the_curation_window_while_it_looks_drops_the_answers_due(qtbot, controller, service):
    from PySide6.QtCore import Qt

    from limbic.core.models import EntityInput, ObservationInput
    from limbic.gui.curation.window import CurationWindow

    service.entities.create_entities([EntityInput("Big", "Hobby", tuple(ObservationInput(f"waters the garden on day {i}")
                                                             for i in range(24)))])
    window = CurationWindow(controller)
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    window.show()
    window.show_split()
    window.close()  # the merge queue's and the split panel's lookups still running: their widgets are gone
    qtbot.waitUntil(lambda: controller.runner.pending() == 0, timeout=10_000)
    qtbot.wait(50)  # an answer delivered to a deleted widget would raise here


def test_the_app_opens_the_curation_window_from_the_edit_menu(qtbot, tmp_path, monkeypatch):
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.gui.app import LimbicApp

    monkeypatch.setenv("LIMBIC_HOME", str(tmp_path / "home"))
    app = LimbicApp(tmp_path / "memory.db", embedder=HashingEmbedder(), mcp=False)
    with qtbot.waitSignal(app.ready, timeout=20_000):
        app.start()
    try:
        menus = {a.text().replace("&", ""): a for m in app.window.menuBar().actions() for a in m.menu().actions()}
        action = menus["Curation: duplicates and splits…"]
        assert action.shortcut().toString() == "Ctrl+Shift+M"
        action.trigger()
        window = next(w for w in app.window.findChildren(QDialog) if w.windowTitle() == "Curation")
        assert window.isVisible() and window.merge_queue.stack is app.editor.stack
        assert window.split_panel.candidates == []  # split candidates are looked for once the Split tab shows
        window.show_split()
        qtbot.waitUntil(lambda: "hold more" in window.split_panel.message.text()
                        or "topics" in window.split_panel.message.text(), timeout=10_000)
        qtbot.waitUntil(lambda: "duplicate clusters" in window.merge_queue.summary.text(), timeout=10_000)
        window.close()
    finally:
        app.window.close()
        app.shutdown()
