"""The *Agents* panel: what each agent retrieved before answering — its searches with the entities each showed
(by rank), what it opened or marked used (after a search or not), and what it wrote, newest first
(:meth:`~limbic.core.service.history.History.timeline`, from the search log, the use log and the change log).

The agent filter lists every origin that searched, used an entity or wrote (``alice (MCP)`` for the MCP token ``alice``); the time
filter keeps the last hour, day, week or everything. Selecting a step selects its entities in the graph (a search:
every entity it showed; a search's shown entity: that one). The list reads again after the memory changed and
after each MCP call the app's server answered — while it is shown; a hidden tab reads when it is shown next.
Reading it records nothing.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from limbic.core.models import TimelineEvent, iso
from limbic.core.service.history import STEP_VERBS, origin_label
from limbic.gui.controller import AppController
from limbic.gui.widgets import plural, single_shot_timer

LIMIT = 300  # steps listed
RELOAD_MS = 400  # after a change or an MCP call, the list reads again once
PERIODS = (("last hour", 3600.0), ("last 24 hours", 86_400.0), ("last 7 days", 7 * 86_400.0), ("all time", None))
ROLE = Qt.ItemDataRole.UserRole


def when(at: float, now: float) -> str:
    """A step's time as listed (UTC): ``13:36:41`` on the day of ``now``, ``2026-11-28 13:36`` before it."""
    stamp = (iso(at) or "")[:19].replace("T", " ")
    return stamp[11:] if stamp[:10] == (iso(now) or "")[:10] else stamp[:16]


def step_text(event: TimelineEvent) -> str:
    """What a step says in the list: ``searched “query” (hybrid) → 5 shown``, ``opened Ada``, ``wrote: add observations
    → Ada``."""
    names = ", ".join(event.entities)
    if event.kind == "search":
        return f"searched “{event.detail}” ({event.mode.replace('_', ' ')}) → {len(event.entities)} shown"
    if event.kind == "wrote":
        return f"{event.detail.replace('_', ' ')}" + (f" → {names}" if names else "")
    return f"{STEP_VERBS[event.kind]} {names}"


class AgentTimeline(QWidget):
    """See the module docstring. ``events`` holds the steps listed, newest first."""

    COLUMNS = ("when (UTC)", "who", "what")

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.events: list[TimelineEvent] = []
        self.agent = QComboBox()
        self.agent.setToolTip("Whose steps: every agent, or one origin (an MCP token's name, stdio, the app…)")
        self.agent.addItem("Every agent", None)
        self.period = QComboBox()
        for text, seconds in PERIODS:
            self.period.addItem(text, seconds)
        self.period.setCurrentIndex(1)
        refresh = QPushButton("Refresh")
        refresh.setToolTip("Read the search log and the change log again")
        refresh.clicked.connect(self.reload)
        head = QHBoxLayout()
        head.addWidget(self.agent, 1)
        head.addWidget(self.period)
        head.addWidget(refresh)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(self.COLUMNS))
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.tree.itemSelectionChanged.connect(self._selected)
        self.summary = QLabel("Nothing read yet", wordWrap=True)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.summary)
        self.agent.currentIndexChanged.connect(lambda _i: self.reload())
        self.period.currentIndexChanged.connect(lambda _i: self.reload())
        self._stale = True  # read again when next shown (changes that came while it was hidden)
        self._reload_timer = single_shot_timer(self, RELOAD_MS, self.reload)
        controller.graph_changed.connect(lambda _c: self._changed())
        controller.mcp_call.connect(lambda _r: self._changed())

    def _changed(self) -> None:
        """The memory changed or an MCP call was answered: read again soon when shown, else once shown."""
        if self.isVisible():
            self._reload_timer.start()
        else:
            self._stale = True

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._stale:
            self.reload()

    # --- reading --------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the agents and the chosen agent's steps again (off the UI thread)."""
        self._stale = False
        history, origin, seconds = self.controller.service.history, self.agent.currentData(), self.period.currentData()
        since = None if seconds is None else time.time() - seconds

        def read() -> tuple[list[str], list[TimelineEvent]]:
            return history.timeline_origins(), history.timeline(origin=origin, since=since, limit=LIMIT)

        self.controller.run(read, on_success=self._loaded, channel=f"agent-timeline-{id(self)}")

    def _loaded(self, answer: tuple[list[str], list[TimelineEvent]]) -> None:
        origins, events = answer
        self._fill_agents(origins)
        self.events = events
        self.tree.blockSignals(True)
        self.tree.clear()
        now = time.time()
        for event in events:
            item = QTreeWidgetItem([when(event.at, now), origin_label(event.origin), step_text(event)])
            item.setData(0, ROLE, event)
            item.setToolTip(0, iso(event.at) or "")
            item.setToolTip(2, step_text(event) if event.kind != "search" else
                            f"search #{event.searches[0]}: “{event.detail}”")
            if event.kind == "search":
                for rank, (name, entity_id) in enumerate(zip(event.entities, event.entity_ids, strict=True), 1):
                    child = QTreeWidgetItem(["", "", f"{rank}. {name}"])
                    child.setData(0, ROLE, (name, entity_id))
                    item.addChild(child)
            elif event.searches:  # a use that answered logged searches
                item.setToolTip(2, f"{step_text(event)} — shown by search " + ", ".join(f"#{i}" for i in event.searches))
            self.tree.addTopLevelItem(item)
        self.tree.blockSignals(False)
        searches = sum(e.kind == "search" for e in events)
        self.summary.setText(f"{plural(len(events), 'step')}: {plural(searches, 'search')}, "
                             f"{plural(sum(e.kind in ('opened', 'used') for e in events), 'use')}, "
                             f"{plural(sum(e.kind == 'wrote' for e in events), 'write')}" if events else
                             "No search, use or write in this period.")

    def _fill_agents(self, origins: list[str]) -> None:
        chosen = self.agent.currentData()
        known = {self.agent.itemData(i) for i in range(self.agent.count())}
        self.agent.blockSignals(True)
        for origin in origins:
            if origin not in known:
                self.agent.addItem(origin_label(origin), origin)
        self.agent.setCurrentIndex(max(0, self.agent.findData(chosen)))
        self.agent.blockSignals(False)

    def choose_agent(self, origin: str | None) -> None:
        """Show ``origin``'s steps (``None``: every agent's); an origin not listed yet is added."""
        if self.agent.findData(origin) < 0:
            self.agent.addItem(origin_label(origin) if origin else "Every agent", origin)
        self.agent.setCurrentIndex(self.agent.findData(origin))

    # --- selecting ------------------------------------------------------------------------------

    def _selected(self) -> None:
        items = self.tree.selectedItems()
        if not items:
            return
        data: Any = items[0].data(0, ROLE)
        if isinstance(data, TimelineEvent):
            pairs = list(zip(data.entities, data.entity_ids, strict=True))
        else:
            pairs = [data]
        names = [name for name, entity_id in pairs if name != f"#{entity_id}"]  # a deleted one has no node
        if names:
            self.controller.select(names)

    def rows(self) -> list[tuple[str, ...]]:
        """The top-level rows' text (what a person reads), newest first."""
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [tuple(item.text(c) for c in range(len(self.COLUMNS))) for item in items if item is not None]
