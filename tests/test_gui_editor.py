"""Entity editor: every kind of edit goes to the database, Undo restores the previous state exactly
(content-wise), Redo re-applies it — through the public methods, the buttons and the shortcuts."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from _widgets_helpers import build_small_graph
from PySide6.QtCore import Qt

from limbic.core.models import ObservationInput
from limbic.gui.edit import editor as editor_module
from limbic.gui.edit.editor import EntityEditor

pytestmark = pytest.mark.gui


def content(service) -> dict:
    """The graph's content, ids left out: what undo must give back."""
    graph = service.entities.read_graph(include_ended=True)
    entities = {
        e.name: (e.entity_type, e.status, sorted((o.content, o.kind, o.live, o.weight) for o in e.observations))
        for e in graph.entities
    }
    relations = sorted((r.source, r.target, r.relation_type, r.active, r.context) for r in graph.relations)
    return {"entities": entities, "relations": relations}


@pytest.fixture
def editor(qtbot, controller, service):
    build_small_graph(service)
    widget = EntityEditor(controller)
    qtbot.addWidget(widget)
    widget.show()
    controller.select(["Alice"])
    qtbot.waitUntil(lambda: widget.detail is not None and widget.detail.entity.name == "Alice", timeout=3000)
    return widget


def settle(qtbot, editor, name: str | None = None) -> None:
    qtbot.waitUntil(lambda: not editor.queue.busy, timeout=5000)
    if name is not None:
        qtbot.waitUntil(lambda: editor.detail is not None and editor.detail.entity.name == name, timeout=3000)


def undo_redo_round_trip(qtbot, editor, service, before: dict) -> dict:
    """Undo must give ``before`` back; redo must give the edited state again. Returns the edited state."""
    after = content(service)
    assert after != before
    editor.stack.undo()
    settle(qtbot, editor)
    assert content(service) == before
    editor.stack.redo()
    settle(qtbot, editor)
    assert content(service) == after
    return after


def test_create_entity_undo_redo(qtbot, editor, service, controller):
    before = content(service)
    editor.create_entity("Kafka", "Tool", (ObservationInput("A log", "fact"),))
    settle(qtbot, editor, "Kafka")
    assert controller.selection == ["Kafka"]
    assert content(service)["entities"]["Kafka"] == ("Tool", "active", [("A log", "fact", True, 1.0)])
    undo_redo_round_trip(qtbot, editor, service, before)


def test_rename_and_merge_undo_redo(qtbot, editor, service):
    before = content(service)
    editor.rename("Alicia")
    settle(qtbot, editor, "Alicia")
    assert ("Alicia", "Harbor", "works_on", True, None) in content(service)["relations"]
    undo_redo_round_trip(qtbot, editor, service, before)

    editor.stack.undo()
    settle(qtbot, editor)
    before = content(service)
    editor.merge_into("Alice", ["Bob"])
    settle(qtbot, editor, "Alice")
    merged = content(service)
    assert "Bob" not in merged["entities"]
    assert ("Reviews pull requests", None, True, 1.0) in merged["entities"]["Alice"][2]
    undo_redo_round_trip(qtbot, editor, service, before)


def test_delete_entity_restores_observations_relations_and_history(qtbot, editor, service, controller):
    service.entities.supersede_observation("Harbor", "Ingests buoy data", ObservationInput("Ingests buoy and tide data", "fact"))
    service.relations.end_relation(editor_module.RelationInput("Legacy ETL", "Harbor", "replaced_by"))
    before = content(service)
    editor.delete_entities(["Harbor"])
    settle(qtbot, editor)
    assert "Harbor" not in content(service)["entities"]
    assert not [r for r in content(service)["relations"] if "Harbor" in r[:2]]
    undo_redo_round_trip(qtbot, editor, service, before)
    editor.stack.undo()
    settle(qtbot, editor)
    harbor = service.entities.get_entity("Harbor").entity
    newer = next(o for o in harbor.observations if o.content == "Ingests buoy and tide data")
    older = next(o for o in harbor.observations if o.content == "Ingests buoy data")
    assert newer.supersedes == older.id and older.superseded_at is not None  # the supersede chain is back


def test_observation_edits_undo_redo(qtbot, editor, service):
    before = content(service)
    editor.add_observation("Speaks Portuguese", "fact")
    settle(qtbot, editor)
    before = undo_redo_round_trip(qtbot, editor, service, before)

    editor.edit_observation("Prefers Python", "Prefers Python 3.12", "preference")
    settle(qtbot, editor)
    assert ("Prefers Python 3.12", "preference", True, 1.0) in content(service)["entities"]["Alice"][2]
    before = undo_redo_round_trip(qtbot, editor, service, before)

    editor.supersede_observation("Works on the Harbor project", "Leads the Harbor project", "fact")
    settle(qtbot, editor)
    observations = content(service)["entities"]["Alice"][2]
    assert ("Works on the Harbor project", None, False, 0.1) in observations  # kept as history, weight 0.1
    assert ("Leads the Harbor project", "fact", True, 1.0) in observations
    before = undo_redo_round_trip(qtbot, editor, service, before)

    editor.delete_observation("Works on the Harbor project")  # a superseded one: its successor stays linked
    settle(qtbot, editor)
    undo_redo_round_trip(qtbot, editor, service, before)
    editor.stack.undo()
    settle(qtbot, editor)
    alice = service.entities.get_entity("Alice").entity
    old = next(o for o in alice.observations if o.content == "Works on the Harbor project")
    new = next(o for o in alice.observations if o.content == "Leads the Harbor project")
    assert new.supersedes == old.id and not old.live


def test_relation_edits_undo_redo(qtbot, editor, service):
    before = content(service)
    editor.add_relation("Alice", "Redis", "uses", "caching")
    settle(qtbot, editor)
    assert ("Alice", "Redis", "uses", True, "caching") in content(service)["relations"]
    before = undo_redo_round_trip(qtbot, editor, service, before)

    editor.end_relation("Alice", "Harbor", "works_on")
    settle(qtbot, editor)
    assert ("Alice", "Harbor", "works_on", False, None) in content(service)["relations"]
    before = undo_redo_round_trip(qtbot, editor, service, before)

    editor.delete_relation("Alice", "Bob", "knows")
    settle(qtbot, editor)
    undo_redo_round_trip(qtbot, editor, service, before)


def test_status_combo_and_shortcuts(qtbot, editor, service):
    before = content(service)
    editor.status_box.setCurrentText("paused")
    editor.status_box.activated.emit(editor.status_box.currentIndex())  # what a user's pick emits
    settle(qtbot, editor)
    assert service.entities.get_entity("Alice").entity.status == "paused"
    after = content(service)
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    settle(qtbot, editor)
    assert content(service) == before
    qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    settle(qtbot, editor)
    assert content(service) == after
    qtbot.waitUntil(lambda: editor.status_box.currentText() == "paused", timeout=3000)


def test_button_opens_dialog_and_edits(qtbot, editor, service, monkeypatch):
    answers = {"content": "Lives in Lisbon", "kind": "fact"}
    monkeypatch.setattr(editor_module.FormDialog, "ask", classmethod(lambda cls, parent, title, fields: answers))
    add_button = editor._obs_buttons[0]
    qtbot.mouseClick(add_button, Qt.MouseButton.LeftButton)
    settle(qtbot, editor)
    assert ("Lives in Lisbon", "fact", True, 1.0) in content(service)["entities"]["Alice"][2]
    qtbot.waitUntil(lambda: any(editor.observations.item(r, 0).text() == "Lives in Lisbon"
                                for r in range(editor.observations.rowCount())), timeout=3000)


def test_failed_edit_reports_and_keeps_history(qtbot, editor, service):
    editor.add_observation("One more fact")
    settle(qtbot, editor)
    assert editor.stack.count() == 1
    before = content(service)
    editor.rename("Bob")  # taken
    settle(qtbot, editor)
    assert "already exists" in editor.message.text()
    assert editor.stack.count() == 1 and content(service) == before


def test_agent_write_shows_up_in_the_open_editor(qtbot, editor, service):
    service.entities.add_observations([("Alice", [ObservationInput("Written by an agent", "event")])], origin="mcp")
    qtbot.waitUntil(lambda: any(editor.observations.item(r, 0).text() == "Written by an agent"
                                and editor.observations.item(r, 1).text() == "event"
                                for r in range(editor.observations.rowCount())), timeout=1000)
    assert editor.stack.count() == 0  # not an edit of this window: nothing to undo


def test_neither_opening_an_entity_nor_editing_it_is_a_use(qtbot, editor, service):
    service.usage.wait_for_signals()
    alice = service.entities.get_entity("Alice").access_count  # the five seeded accesses; the opening recorded none
    harbor = service.entities.get_entity("Harbor").access_count
    editor.add_observation("reads the logs")
    settle(qtbot, editor, "Alice")
    qtbot.waitUntil(lambda: any(o.content == "reads the logs" for o in editor.detail.entity.observations),
                    timeout=3000)
    service.usage.wait_for_signals()
    assert service.entities.get_entity("Alice").access_count == alice  # the refresh after the edit is not a use
    editor.controller.select(["Harbor"])
    settle(qtbot, editor, "Harbor")
    service.usage.wait_for_signals()
    assert service.entities.get_entity("Harbor").access_count == harbor  # looking is not using
    assert alice == 5
