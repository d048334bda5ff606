"""The application controller: the one object every widget talks to.

It holds the :class:`~limbic.core.service.MemoryService`, the current and default
:class:`~limbic.core.search.params.ScoringParams`, the selection and the last search outcome, and turns
everything that happens into Qt signals (emitted on the UI thread only):

- ``graph_changed(list[Changes])`` — after any committed change, made here, by the embedded MCP
  server or by another process on the same database file;
- ``selection_changed(list[str])`` — entity names;
- ``search_finished(SearchOutcome)`` — a search answered (stale answers are dropped);
- ``results_reranked(list[SearchResult])`` — the cached candidate set re-ranked with new params;
- ``params_changed(ScoringParams)``; ``params_saved(ScoringParams)`` — saved as default; ``mcp_call(record)`` — one MCP tool call record;
- ``status_message(str)`` — a short text for the status bar;
- ``feedback_recorded(list[str])`` — a person marked results as useful (*Mark as useful*).

Looking is not using: selecting, inspecting or opening an entity records nothing; a search logs its
top-K as impressions; only :meth:`mark_useful` records a use and labels the search (as MCP ``mark_used``).

Core work goes through :meth:`run` (a :class:`~limbic.gui.workers.TaskRunner`), never on the UI
thread — except :meth:`set_params`, whose re-rank is pure numpy over the cached candidate arrays
(no SQL, no model call; docs/architecture.md "The search pipeline").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from limbic.core.search.params import ScoringParams
from limbic.core.search.presets import preset
from limbic.core.service import MemoryService
from limbic.gui.dialogs.failure import describe_failure
from limbic.gui.widgets import plural
from limbic.gui.workers import TaskRunner

REFRESH_DELAY_MS = 200  # after a burst of changes, the shown search is run again once
# Changes that do not alter what a search can find (the params are applied by the GUI itself).
_NO_RESEARCH_OPS = frozenset({"save_scoring_params"})


class AppController(QObject):
    """Shared state and signals of the main window (see the module docstring).

    ``service`` is a ``MemoryService``; ``params`` defaults to ``service.search.scoring_params()`` (the saved
    parameters) when not given. Create on the UI thread.
    """

    graph_changed = Signal(object)
    selection_changed = Signal(list)
    search_finished = Signal(object)
    results_reranked = Signal(object)
    params_changed = Signal(object)
    params_saved = Signal(object)  # the parameters were saved as default (MCP search_semantic uses them)
    project_changed = Signal(object)  # the project searches and the graph are limited to (None: every memory)
    mcp_call = Signal(object)
    status_message = Signal(str)
    model_attached = Signal(str)  # an embedding model was loaded into the running session (its name)
    feedback_recorded = Signal(list)
    task_failed = Signal(str, str, str)  # title, message, details (see gui/dialogs/failure.py)
    # Carries MCP call records posted from server threads to the UI thread (queued connection).
    _mcp_call_posted = Signal(object)

    def __init__(
        self,
        service: MemoryService,
        parent: QObject | None = None,
        *,
        params: ScoringParams | None = None,
        runner: TaskRunner | None = None,
    ) -> None:
        super().__init__(parent)
        self.service = service
        self.runner = runner if runner is not None else TaskRunner(self)
        self._default_params = preset("default")
        self._params = params if params is not None else self._default_params
        self.saved_params = self._params  # the parameters saved as default: what MCP search_semantic uses
        self._selection: list[str] = []
        self._last_outcome: Any = None
        self._results: list = []
        self._last_query: str | None = None
        self._search_id: int | None = None  # the logged search whose results are shown (its refreshes included)
        self._last_limit = 10
        self.project: str | None = None
        self._mcp_call_posted.connect(self._emit_mcp_call)
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_DELAY_MS)
        self._refresh_timer.timeout.connect(lambda: self.refresh_search(record=False))

    # --- state ----------------------------------------------------------------------------------

    @property
    def params(self) -> ScoringParams:
        """The scoring parameters in use by the GUI (may differ from the saved ones until saved)."""
        return self._params

    @property
    def default_params(self) -> ScoringParams:
        """The built-in ``default`` preset (:mod:`limbic.core.search.presets`), the reference for Δrank."""
        return self._default_params

    @property
    def last_outcome(self) -> Any:
        """The last ``SearchOutcome`` delivered by :meth:`search` (``None`` before the first)."""
        return self._last_outcome

    @property
    def results(self) -> list:
        """The results shown now: the last outcome's, re-ranked with the current params."""
        return list(self._results)

    @property
    def selection(self) -> list[str]:
        return list(self._selection)

    # --- actions --------------------------------------------------------------------------------

    def run(
        self,
        fn: Callable[..., Any],
        *args: Any,
        on_success: Callable[[Any], None] | None = None,
        on_failure: Callable[[BaseException], None] | None = None,
        channel: str | None = None,
    ) -> int:
        """Run ``fn(*args)`` off the UI thread; callbacks run on the UI thread (see ``TaskRunner.run``).

        Without ``on_failure`` the failure is reported (:meth:`report_failure`).
        """
        if on_failure is None:
            on_failure = self.report_failure
        return self.runner.run(fn, *args, on_success=on_success, on_failure=on_failure, channel=channel)

    def select(self, names: Sequence[str]) -> None:
        """Set the selected entity names (order kept, duplicates removed); emits ``selection_changed``."""
        unique = list(dict.fromkeys(names))
        if unique == self._selection:
            return
        self._selection = unique
        self.selection_changed.emit(list(unique))

    def search(self, query: str, limit: int = 10, *, record: bool = True) -> int:
        """Search off the UI thread with the current params; ``search_finished`` follows.

        An empty query clears the results. ``record`` logs the search and its top-K as impressions
        (false for automatic refreshes); a search never records an access. Returns the task id (−1 when nothing was started).
        """
        query = query.strip()
        self._last_query = query or None
        self._last_limit = limit
        if not query:
            self.runner.cancel_channel("search")
            self._last_outcome = None
            self._search_id = None
            self._results = []
            self.search_finished.emit(None)
            return -1
        if record:  # automatic refreshes run quietly (the status bar keeps what it says)
            self.status_message.emit(f"Searching “{query}”…")
        params = self._params
        return self.run(
            partial(self.service.search.query, query, limit, params, record=record, project=self.project),
            on_success=lambda outcome: self._search_done(outcome, params), channel="search",
        )

    def set_project(self, project: str | None) -> None:
        """Limit searches (and, through ``project_changed``, the graph) to ``project`` and the global memories
        (docs/lifecycle.md "Project scope"); ``None``: every memory. The shown search runs again."""
        if project == self.project:
            return
        self.project = project
        self.project_changed.emit(project)
        self.refresh_search(record=False)
    @property
    def search_id(self) -> int | None:
        """The id of the logged search whose results are shown (``None`` when it was not logged)."""
        return self._search_id

    def mark_useful(self, names: Sequence[str]) -> int:
        """A person's explicit "this result helped": ``service.usage.mark_used(names, search_id=…)`` off the UI
        thread — one access per entity and a relevance label for the shown search (the same as MCP
        ``mark_used``); ``feedback_recorded(names)`` follows. Returns the task id (−1 for no names)."""
        names = list(dict.fromkeys(names))
        if not names:
            return -1
        query, search_id = self._last_query, self._search_id
        return self.run(partial(self.service.usage.mark_used, names, search_id=search_id),
                        on_success=lambda used: self._marked(used, query))

    def _marked(self, names: list[str], query: str | None) -> None:
        shown = ", ".join(f"“{n}”" for n in names)
        self.status_message.emit(f"{shown} marked as useful" + (f" for “{query}”" if query else ""))
        self.feedback_recorded.emit(list(names))
        if query is not None and query == self._last_query:
            # the cached candidates hold the access counts of before: fetch them again, so the ranks move now
            self.refresh_search(record=False)

    def save_params(self) -> int:
        """Save the current parameters as default (off the UI thread): MCP ``search_semantic`` and the CLI
        use them from then on; ``saved_params`` follows. Returns the task id."""
        params = self._params

        def saved(_: Any) -> None:
            self.saved_params = params
            self.status_message.emit("Scoring parameters saved as default")
            self.params_saved.emit(params)

        return self.run(self.service.search.save_scoring_params, params, on_success=saved)

    def refresh_search(self, *, record: bool = True) -> int:
        """Run the last query again; −1 when there is none."""
        if not self._last_query:
            return -1
        return self.search(self._last_query, self._last_limit, record=record)

    def set_params(self, params: ScoringParams) -> None:
        """Use new scoring params: emits ``params_changed``, then re-ranks the cached candidate set
        with ``service.search.rerank`` (pure numpy, no SQL) and emits ``results_reranked``.

        A new ``expansion_factor`` changes how many candidates are fetched, so it searches again.
        """
        if params == self._params:
            return
        previous, self._params = self._params, params
        self.params_changed.emit(params)
        outcome = self._last_outcome
        if outcome is None:
            return
        self._results = self.service.search.rerank(outcome.candidate_set, params)
        self.results_reranked.emit(self._results)
        if params.expansion_factor != previous.expansion_factor:
            self.refresh_search()

    def post_mcp_call(self, record: Any) -> None:
        """Thread-safe: hand an MCP call record (from a server thread) to the UI thread → ``mcp_call``."""
        self._mcp_call_posted.emit(record)

    def notify_changes(self, changes: list) -> None:
        """Emit ``graph_changed`` on the UI thread (the bridge calls this; see ``gui/bridge.py``);
        the shown search runs again shortly after, so new or edited entities show up in it."""
        if not changes:
            return
        self.graph_changed.emit(list(changes))
        if self._last_query and any(c.op not in _NO_RESEARCH_OPS for c in changes):
            self._refresh_timer.start()

    def shutdown(self) -> None:
        """Stop accepting work and wait for running tasks (called on quit)."""
        self._refresh_timer.stop()
        self.runner.shutdown()

    # --- callbacks ------------------------------------------------------------------------------

    def _search_done(self, outcome: Any, params: ScoringParams) -> None:
        previous = self._last_outcome
        if outcome.search_id is not None:
            self._search_id = outcome.search_id
        elif previous is None or previous.candidate_set.query != outcome.candidate_set.query:
            self._search_id = None  # a refresh of the same query keeps the logged search it refreshes
        self._last_outcome = outcome
        self._results = list(outcome.results)
        self.search_finished.emit(outcome)
        if params != self._params:  # the sliders moved while the search ran
            self._results = self.service.search.rerank(outcome.candidate_set, self._params)
            self.results_reranked.emit(self._results)
        if outcome.search_id is not None or previous is None or previous.candidate_set.query != outcome.candidate_set.query:
            n = len(outcome.results)
            self.status_message.emit(f"{plural(n, 'result')} for “{outcome.candidate_set.query}”")

    def report_failure(self, error: BaseException, title: str = "A background task failed") -> None:
        """Tell the user a task failed: ``status_message`` and ``task_failed(title, message, details)``
        (the main window shows a dialog with the traceback behind "Show Details…")."""
        message, details = describe_failure(error)
        self.status_message.emit(f"Error: {message}")
        self.task_failed.emit(title, message, details)

    @Slot(object)
    def _emit_mcp_call(self, record: Any) -> None:
        self.mcp_call.emit(record)
