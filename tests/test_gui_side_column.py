"""The side column's manners, offscreen on a small real memory: Edit ▸ Undo names the memory edit it takes back
and works wherever the focus is (a text field keeps Ctrl+Z for its own text); the wheel never changes a combo box
without the focus; an empty inspector asks for a selection; the tuning panel says which sliders change nothing on
a memory nobody has used yet, and why; the project filter says when nothing has a project; counts are plural."""

from __future__ import annotations

import pytest
from _widgets_helpers import build_small_graph, open_controller
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.edit.editor import EntityEditor
from limbic.gui.main_window import MainWindow
from limbic.gui.mcp_panel import McpPanel
from limbic.gui.review.scope import NONE_TEXT, ProjectFilter
from limbic.gui.search.inert import UNUSED
from limbic.gui.search.inspector import EMPTY_TEXT

pytestmark = pytest.mark.gui


@pytest.fixture
def small_service(tmp_path):
    service = MemoryService(open_database(tmp_path / "memory.db"), HashingEmbedder(), origin="gui")
    yield service
    service.close()


@pytest.fixture
def small_controller(qtbot, small_service):
    yield from open_controller(small_service)


@pytest.fixture
def window(qtbot, small_controller, small_service):
    build_small_graph(small_service)
    editor = EntityEditor(small_controller)
    mcp = McpPanel(small_controller)
    side = Qt.DockWidgetArea.LeftDockWidgetArea
    win = MainWindow(small_controller, extra_docks=[("Editor", "editorDock", editor, side),
                                                    ("MCP", "mcpDock", mcp, side)])
    win.add_actions("edit", [editor.undo_action, editor.redo_action])
    win.editor, win.mcp = editor, mcp
    qtbot.addWidget(win)
    win.resize(1300, 720)
    win.show()
    qtbot.waitExposed(win)
    return win


def _status(service, name: str) -> str:
    return service.entities.get_entity(name).entity.status


def test_undo_names_the_edit_and_works_wherever_the_focus_is(qtbot, window, small_service):
    editor, menu_undo = window.editor, window.edit_menu.actions()[0]
    assert menu_undo is editor.undo_action and not menu_undo.isEnabled() and menu_undo.text() == "&Undo"
    editor.set_status("archived", ["Legacy ETL", "Bob"])
    qtbot.waitUntil(lambda: editor.stack.count() == 1 and not editor.queue.busy, timeout=5000)
    assert menu_undo.isEnabled() and menu_undo.text() == "&Undo set Legacy ETL, Bob archived"
    assert editor.undo_button.toolTip() == "Undo set Legacy ETL, Bob archived"

    # Focus in the results table (not a text field): Ctrl+Z undoes the memory edit.
    table = window.search_panel.table
    table.setFocus()
    qtbot.waitUntil(table.hasFocus, timeout=2000)
    qtbot.keyClick(table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: editor.stack.index() == 0 and not editor.queue.busy, timeout=5000)
    assert _status(small_service, "Bob") == "active"
    assert window.edit_menu.actions()[1].text() == "&Redo set Legacy ETL, Bob archived"

    # Focus in the search box with typed text: Ctrl+Z is the field's own undo; the memory stays.
    query = window.search_panel.query
    query.setFocus()
    qtbot.waitUntil(query.hasFocus, timeout=2000)
    qtbot.keyClicks(query, "harbor")
    qtbot.keyClick(query, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert query.text() != "harbor" and editor.stack.index() == 0


def _wheel(widget, steps: int = -1) -> None:
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(QPoint(int(centre.x()), int(centre.y())))), QPoint(),
                        QPoint(0, 120 * steps), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_never_changes_an_unfocused_combo_box(qtbot, window):
    window.docks["mcpDock"].raise_()
    window.mcp.sections.setCurrentIndex(2)  # the client snippets, with the transport combo
    combo = window.mcp.transport_box
    qtbot.waitUntil(combo.isVisible, timeout=2000)
    window.search_panel.query.setFocus()
    assert combo.currentIndex() == 0 and not combo.hasFocus()
    assert combo.focusPolicy() == Qt.FocusPolicy.StrongFocus  # a wheel turn does not give it the focus
    _wheel(combo)
    assert combo.currentIndex() == 0 and not combo.hasFocus()  # HTTP stays HTTP
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus, timeout=2000)
    _wheel(combo)
    assert combo.currentIndex() == 1  # focused: the wheel picks, as usual


def test_the_empty_inspector_asks_for_a_selection(qtbot, window, small_controller):
    inspector = window.inspector
    assert inspector.title.text() == EMPTY_TEXT and not inspector.details.isVisible()
    with qtbot.waitSignal(small_controller.search_finished, timeout=10_000):
        small_controller.search("harbor python", 5)
    table, model = window.search_panel.table, window.search_panel.model
    assert table.textElideMode() == Qt.TextElideMode.ElideMiddle  # src/…/MoonRenderer.js, not src/render/…
    first = model.result(0)
    tip = model.data(model.index(0, 1), Qt.ItemDataRole.ToolTipRole)
    assert tip.splitlines()[0] == first.name and first.entity_type in tip  # the whole name, then the type
    assert table.horizontalHeader().length() <= table.viewport().width()  # no sideways scrolling
    small_controller.select([small_controller.results[0].name])
    window.docks["inspectorDock"].raise_()
    qtbot.waitUntil(inspector.details.isVisible, timeout=3000)
    small_controller.select([])
    assert inspector.title.text() == EMPTY_TEXT and not inspector.details.isVisible()


def test_on_an_unused_memory_the_tuning_panel_says_which_sliders_do_nothing(qtbot, small_controller, small_service):
    from limbic.core.models import EntityInput, ObservationInput
    from limbic.gui.search.tuning import TuningPanel

    small_service.entities.create_entities([EntityInput(f"Note {i}", "Note", (ObservationInput(f"harbor buoy note {i}"),))
                                   for i in range(6)])  # nobody has used any of them
    panel = TuningPanel(small_controller)
    qtbot.addWidget(panel)
    panel.show()
    with qtbot.waitSignal(small_controller.search_finished, timeout=10_000):
        small_controller.search("harbor buoy", 5)
    qtbot.waitUntil(lambda: bool(panel.inert), timeout=10_000)
    assert panel.inert["beta_sal"] == UNUSED and panel.inert["alpha_cons"] == UNUSED
    assert not panel.labels["beta_sal"].isEnabled() and "No effect on this search" in panel.labels["beta_sal"].toolTip()
    assert {name for name, label in panel.labels.items() if not label.isEnabled()} == set(panel.inert)
    assert len(panel.inert) < len(panel.labels)  # the others still move this search
    assert panel.inert_label.isVisible() and "β salience" in panel.inert_label.text()
    assert "nobody has used these memories yet" in panel.inert_label.text()


def test_the_project_filter_says_when_nothing_has_a_project(qtbot, small_controller, small_service):
    build_small_graph(small_service)
    box = ProjectFilter(small_controller)
    qtbot.addWidget(box)
    qtbot.waitUntil(lambda: box.itemText(0) == NONE_TEXT, timeout=5000)
    assert "Nothing in this memory belongs to a project" in box.toolTip()


def test_pending_vectors_are_counted_in_plain_english(qtbot, window):
    panel = window.search_panel
    panel.show_pending(1)
    assert panel.pending_label.full_text() == "1 entity is not embedded yet (found by keyword only)"
    panel.show_pending(2)
    assert panel.pending_label.full_text().startswith("2 entities are not embedded yet")
    panel.show_pending(0)
    assert not panel.pending_label.isVisible() and not panel.pending_timer.isActive()
