"""*Help ▸ Getting started*: a short tour of the window's five areas, shown on the first run and from the Help menu
at any time. Text only; nothing is read or written."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

AREAS = (
    ("The graph (centre)",
     "Entities as dots, relations as lines; colour is the community (or the type), size is how often a memory was "
     "used. <i>Focus</i> shows the neighbourhood of the search hits, <i>Global map</i> the whole memory. Click a "
     "dot to select it; the time slider below replays the memory as it was."),
    ("Search (top left)",
     "Type what you are looking for: the ranked list is what an agent's <code>search_semantic</code> gets. "
     "<i>Mark as useful</i> (Ctrl+U) records a use, as an agent's <code>mark_used</code> does; looking records "
     "nothing. The tab <i>What the agent sees</i> shows the exact answer an agent receives and what it costs."),
    ("The tools (below the search)",
     "<i>Inspector</i>: how the selected result was scored, factor by factor. <i>Tuning</i>: the sliders of the "
     "ranking, live; <i>Save as default</i> makes agents use them. <i>Decay</i>: how fast unused memories fade. "
     "<i>Why not?</i>: pin any entity to see where it ranks and what keeps it down."),
    ("Editor and Review",
     "<i>Editor</i>: the selected entity's observations, relations and history; every edit is undoable "
     "(Edit ▸ Undo names it). <i>Review</i>: what needs a decision — contradictions, expired facts, forget "
     "candidates, duplicates — one click each, undoable too."),
    ("MCP (agents)",
     "The app serves the memory to agents over MCP while it runs. The <i>MCP</i> tab gives the address, the "
     "token and a ready-made snippet for Claude Code, Claude Desktop, Cursor or VS Code, and logs every call."),
)


def tour_html() -> str:
    """The tour as rich text: one numbered heading and paragraph per area."""
    parts = [f"<h3>{n}. {title}</h3><p>{text}</p>" for n, (title, text) in enumerate(AREAS, start=1)]
    more = ("<p>Memory files from other tools: <i>File ▸ Import memory files…</i>. Another memory: "
            "<i>File ▸ Open database…</i>. Search by meaning needs the embedding model: <i>Install model</i> in the "
            "status bar when none is installed; for a memory written mostly in another language than English, the "
            "status bar names its languages and the multilingual model to install. Keyboard shortcuts: F1.</p>")
    return "<h2>Limbic Studio in five areas</h2>" + "".join(parts) + more


class GettingStarted(QDialog):
    """The tour (:func:`tour_html`) in a small window that does not block the app."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Getting started")
        self.resize(560, 560)
        self.text = QTextBrowser()
        self.text.setOpenExternalLinks(False)
        self.text.setHtml(tour_html())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
