"""Fixtures shared by the graph view, editor, import/export and MCP panel tests (helper "gui-widgets").

A real :class:`MemoryService` on a temporary file with the deterministic :class:`HashingEmbedder`, an
:class:`AppController`, and a :class:`ChangeBridge` so that writes reach ``graph_changed`` as in the app.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.service import MemoryService
from limbic.gui.bridge import ChangeBridge
from limbic.gui.controller import AppController

DAY = 86_400.0

# name, type, observations
SMALL_GRAPH = (
    ("Alice", "Person", ("Works on the Harbor project", "Prefers Python")),
    ("Bob", "Person", ("Reviews pull requests",)),
    ("Harbor", "Project", ("Ingests buoy data", "Written in Python")),
    ("Python", "Tool", ("A programming language",)),
    ("Redis", "Tool", ("In-memory store",)),
    ("Legacy ETL", "Project", ("Old pipeline, replaced by Harbor",)),
    ("Lonely", "Concept", ("Nobody links here",)),
)
SMALL_RELATIONS = (
    ("Alice", "Harbor", "works_on"),
    ("Bob", "Harbor", "reviews"),
    ("Harbor", "Python", "uses"),
    ("Harbor", "Redis", "uses"),
    ("Legacy ETL", "Harbor", "replaced_by"),
    ("Alice", "Bob", "knows"),
)


def build_small_graph(service: MemoryService) -> None:
    """Seven entities of four types, six relations, an archived project, uneven access history."""
    now = time.time()
    service.entities.create_entities([
        EntityInput(name, kind, tuple(ObservationInput(o) for o in obs), created_at=now - 30 * DAY)
        for name, kind, obs in SMALL_GRAPH
    ])
    service.relations.create_relations([RelationInput(a, b, t) for a, b, t in SMALL_RELATIONS])
    service.entities.set_status(["Legacy ETL"], "archived")
    for day in range(5):
        service.usage.record_access(["Harbor", "Alice"], at=now - day * DAY)
    service.usage.record_access(["Python"], at=now - 2 * DAY)
    service.usage.wait_for_signals()


def open_controller(service: MemoryService) -> Iterator[AppController]:
    """Generator for a ``controller`` fixture: AppController + ChangeBridge (in-process changes)."""
    ctrl = AppController(service)
    bridge = ChangeBridge(service, other_processes=False)
    bridge.changes_arrived.connect(ctrl.notify_changes)
    bridge.start()
    yield ctrl
    bridge.stop()
    ctrl.shutdown()


def shown_review(qtbot, controller: AppController):
    """A Review view and the entity editor whose undo stack it uses, shown once its sections are read:
    ``(view, editor)``."""
    from limbic.gui.edit.editor import EntityEditor
    from limbic.gui.review.view import ReviewView

    editor = EntityEditor(controller)
    view = ReviewView(controller, editor.execute)
    for widget in (editor, view):
        qtbot.addWidget(widget)
    view.show()
    qtbot.waitUntil(lambda: bool(view.sections), timeout=5000)
    return view, editor
