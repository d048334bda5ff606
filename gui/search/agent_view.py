"""*What the agent sees*: the exact ``search_semantic`` answer an agent would get for the shown search.

The answer is built by the MCP tool's own code (:func:`limbic.core.mcp.answers.search_answer`) from the shown
search and its results as ranked now — the sliders included, so a person tuning them sees the agent's context
change — and shown as the JSON text the tool sends, with its size in bytes and in (estimated) tokens, and how it
changed since the last answer of the same query. The agent's call is ``search_semantic(query, limit)`` with the
search panel's *top K* as ``limit``; an agent that names none gets :data:`DEFAULT_SEARCH_LIMIT` results, and the
MCP server uses the scoring parameters saved as default (*Save parameters as default*), so the panel says when the
sliders differ from them. The per-call values (``timings``, ``searchId``) are this search's own.
"""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from limbic.core.mcp.answers import DEFAULT_SEARCH_LIMIT, estimate_tokens, pretty, search_answer
from limbic.gui.controller import AppController
from limbic.gui.widgets import plural

EMPTY_TEXT = "Search for something: this shows the JSON an agent's search_semantic call gets back for it."


class AgentView(QWidget):
    """The ``search_semantic`` JSON of the shown search (``text``), its cost (``summary``) and the change since the
    previous answer of the same query (``change``). ``answer`` is the structured answer (``None``: no search)."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.answer: dict[str, Any] | None = None
        self.json_text = ""
        self.tokens = 0
        self._previous: tuple[str, list[str], int] | None = None  # query, result names, tokens of the last answer
        self.summary = QLabel(EMPTY_TEXT, wordWrap=True)
        self.change = QLabel(wordWrap=True)
        self.change.setVisible(False)
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text.setPlaceholderText("search_semantic's answer")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.change)
        layout.addWidget(self.text, 1)
        controller.search_finished.connect(lambda _outcome: self.refresh())
        controller.results_reranked.connect(lambda _results: self.refresh())
        controller.params_saved.connect(lambda _params: self.refresh())

    def refresh(self) -> None:
        """Build the answer again from the shown search and its current ranking."""
        controller = self.controller
        outcome = controller.last_outcome
        if outcome is None:
            self.answer, self.json_text, self.tokens, self._previous = None, "", 0, None
            self.text.clear()
            self.summary.setText(EMPTY_TEXT)
            self.change.setVisible(False)
            return
        query = outcome.candidate_set.query
        embedder = controller.service.embedder
        results = controller.results
        self.answer = search_answer(outcome, query, getattr(embedder, "name", None), results=results)
        text = pretty(self.answer)
        self.tokens = estimate_tokens(text)
        if text != self.json_text:
            bar = self.text.verticalScrollBar()
            at = bar.value()
            self.json_text = text
            self.text.setPlainText(text)
            bar.setValue(at)
        size = len(text.encode("utf-8"))
        call = escape(f"search_semantic(query={query!r}, limit={outcome.candidate_set.limit})")
        saved = "" if controller.params == controller.saved_params else (
            "<br><i>The sliders differ from the saved parameters the MCP server uses: save them as default "
            "(Ctrl+Shift+S) for agents to get this answer.</i>")
        self.summary.setText(
            f"<code>{call}</code> → {plural(len(results), 'result')} · {size:,} bytes · "
            f"≈ {plural(self.tokens, 'token')} of the agent's context. An agent that names no limit gets "
            f"{DEFAULT_SEARCH_LIMIT}.{saved}")
        self._show_change(query, [r.name for r in results])

    def _show_change(self, query: str, names: list[str]) -> None:
        previous, self._previous = self._previous, (query, names, self.tokens)
        if previous is None or previous[0] != query or (previous[1] == names and previous[2] == self.tokens):
            self.change.setVisible(previous is not None and previous[0] == query and self.change.isVisibleTo(self))
            return
        before = previous[1]
        entered = [n for n in names if n not in before]
        left = [n for n in before if n not in names]
        moved = sum(1 for n in names if n in before and before.index(n) != names.index(n))
        parts = []
        if entered:
            parts.append("in: " + ", ".join(entered))
        if left:
            parts.append("out: " + ", ".join(left))
        if moved:
            parts.append(f"{plural(moved, 'result')} moved")
        delta = self.tokens - previous[2]
        parts.append(f"{'+' if delta >= 0 else '−'}{plural(abs(delta), 'token')}")
        self.change.setText("Since the last answer: " + " · ".join(parts))
        self.change.setToolTip(self.change.text())
        self.change.setVisible(True)
