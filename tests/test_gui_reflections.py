"""The entity editor's reflections: shown for the selected entity, added, edited and deleted, each undone
exactly from the editor's undo stack."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from _widgets_helpers import build_small_graph

from limbic.core.models import RelationInput
from limbic.gui.edit.editor import EntityEditor

pytestmark = pytest.mark.gui


def thoughts(service) -> list[tuple]:
    return [(r.target_type, r.entity, r.author, r.content, r.mood) for r in service.reflections.all_reflections()]


def test_reflections_are_shown_edited_and_undone(qtbot, controller, service):
    build_small_graph(service)
    service.reflections.add_reflection("relation", RelationInput("Alice", "Harbor", "works_on"), "sofia", "good fit", "insight")
    editor = EntityEditor(controller)
    qtbot.addWidget(editor)
    editor.show()
    controller.select(["Alice"])
    panel = editor.reflections
    qtbot.waitUntil(lambda: panel.entity == "Alice" and panel.table.rowCount() == 1, timeout=3000)
    assert panel.table.item(0, 3).text() == "Alice → works_on → Harbor"

    def settle(rows: int) -> None:
        qtbot.waitUntil(lambda: not editor.queue.busy and panel.table.rowCount() == rows, timeout=5000)

    before = thoughts(service)
    panel.add("nolan", "Alice should lead the next release", "curiosidad")
    settle(2)
    assert thoughts(service)[-1] == ("entity", "Alice", "nolan", "Alice should lead the next release", "curiosidad")
    added = thoughts(service)
    panel.table.selectRow(1)
    chosen = panel.selected()
    panel.edit(chosen.id, "Alice could lead the next release", "nolan", "")
    settle(2)
    assert thoughts(service)[-1][3:] == ("Alice could lead the next release", None)
    edited = thoughts(service)
    panel.delete(chosen.id)
    settle(1)
    editor.stack.undo()  # the deletion
    settle(2)
    assert thoughts(service) == edited
    editor.stack.undo()  # the edit
    qtbot.waitUntil(lambda: not editor.queue.busy, timeout=5000)
    assert thoughts(service) == added
    editor.stack.undo()  # the addition
    settle(1)
    assert thoughts(service) == before
    editor.stack.redo()
    settle(2)
    assert thoughts(service) == added
