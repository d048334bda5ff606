"""The project filter: limits searches and Review to one project's memories and the global ones, as an agent
bound to the project sees them (docs/lifecycle.md "Project scope"), and the graph view to the project's
memories and the global ones linked to them — so choosing a project shows that project, not every global
memory beside it. The projects and each entity's project are read off the UI thread."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QWidget

from limbic.core.service.graph_arrays import GraphArrays
from limbic.gui.controller import AppController

EVERY = "All projects"
NONE_TEXT = "No projects"
TIP = ("Show one project: the graph draws its memories and the global ones linked to them; search and Review "
       "cover its memories and every global one, as an agent bound to the project sees them. Other projects are "
       "hidden.")
NONE_TIP = ("Nothing in this memory belongs to a project yet: every memory is global, so there is nothing to "
            "filter. A project is set by an agent whose MCP server is bound to one (the MCP panel's Project, "
            "limbic mcp --project) or on import.")


class ProjectFilter(QComboBox):
    """A choice of project; choosing one calls ``controller.set_project`` (searches) and emits ``filter_changed``
    with :meth:`keep` (the graph's filter), or ``None`` for every memory."""

    filter_changed = Signal(object)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setToolTip(TIP)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # "weather (57)" whole, never cut
        self._projects: dict[int, str] = {}
        self.addItem(EVERY, None)
        self.activated.connect(lambda _i: self.choose(self.currentData()))
        controller.graph_changed.connect(lambda _c: self.reload())
        self.reload()

    def reload(self) -> None:
        """Read the projects and each entity's project again (off the UI thread)."""
        service = self.controller.service
        self.controller.run(lambda: (service.projects.names(), service.projects.entity_projects()), on_success=self._loaded,
                            channel=f"projects-{id(self)}")

    def _loaded(self, answer: tuple[dict[str, int], dict[int, str]]) -> None:
        projects, self._projects = answer
        current = self.controller.project
        self.blockSignals(True)
        self.clear()
        self.addItem(EVERY if projects else NONE_TEXT, None)
        self.setToolTip(TIP if projects else NONE_TIP)
        for name, count in projects.items():
            self.addItem(f"{name} ({count:,})", name)
        self.setCurrentIndex(max(0, self.findData(current)) if current else 0)
        self.blockSignals(False)
        if current is not None:
            self.filter_changed.emit(self.keep)

    def choose(self, project: str | None) -> None:
        """Limit searches and the graph to ``project`` (``None``: every memory)."""
        self.setCurrentIndex(max(0, self.findData(project)) if project else 0)
        self.controller.set_project(project)
        self.filter_changed.emit(None if project is None else self.keep)

    def keep(self, arrays: GraphArrays) -> np.ndarray:
        """``(N,) bool``: the entities of the chosen project and the global entities related to one of them."""
        project = self.controller.project
        owned = np.array(list(self._projects), dtype=np.int64)
        mine = np.isin(arrays.ids, np.array([i for i, p in self._projects.items() if p == project], dtype=np.int64))
        linked = np.zeros(len(arrays), dtype=bool)
        edges = np.asarray(arrays.edges, dtype=np.int64).reshape(-1, 2)
        touching = edges[mine[edges[:, 0]] | mine[edges[:, 1]]]
        linked[touching.ravel()] = True
        return mine | (linked & ~np.isin(arrays.ids, owned))
