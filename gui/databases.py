"""Which memory the window is on, and the question an empty one is asked.

- :func:`window_title`: the window's title names the memory — its file and folder, or its PostgreSQL address
  (password masked) — so two windows on two memories are told apart.
- :func:`recent_entry`: how *File ▸ Open recent* lists an address (a file that is gone is listed, greyed).
- :class:`SampleQuestion`: an empty memory is never filled silently: the window asks whether to import the
  sample memory (to try the app) or to leave it empty (for agents to fill). The question sits on the window
  (window-modal) without holding up the start-up behind it (the MCP server, the model); the answer arrives as
  ``answered(bool)``.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

APP_NAME = "Limbic Studio"
SAMPLE_TEXT = ("Import the sample memory — a made-up team's projects, people, decisions and bugs (about 230 "
               "entities with their history of use) — to try the search, the graph and the tools? Or leave it "
               "empty for your agents to fill? Nothing is written until you choose.")


def is_file_address(address: str) -> bool:
    """Whether ``address`` is a database file (not a ``postgresql://`` URL)."""
    return not address.startswith(("postgresql://", "postgres://"))


def _home_relative(folder: Path) -> str:
    try:
        return "~/" + str(folder.relative_to(Path.home()))
    except ValueError:
        return str(folder)


def window_title(shown_address: str) -> str:
    """``"memory.db (~/notes) — Limbic Studio"`` for a file, ``"postgresql://…/team — Limbic Studio"`` for a
    PostgreSQL memory (``shown_address``: its password already masked)."""
    if not is_file_address(shown_address):
        return f"{shown_address} — {APP_NAME}"
    path = Path(shown_address).expanduser()
    return f"{path.name} ({_home_relative(path.parent)}) — {APP_NAME}"


def recent_entry(address: str) -> tuple[str, bool]:
    """``(text, can open)`` of an address in *Open recent*: a file that no longer exists is marked and greyed."""
    if is_file_address(address) and not Path(address).expanduser().exists():
        return f"{address} (not found)", False
    return address, True


class SampleQuestion(QMessageBox):
    """"This memory is empty": *Import the sample* or *Leave it empty* (show it with ``open()``: the event loop
    goes on). ``answered(True)`` for the sample, ``answered(False)`` to leave it empty (closing the box counts as
    that)."""

    answered = Signal(bool)

    def __init__(self, address: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("An empty memory")
        self.setIcon(QMessageBox.Icon.Question)
        self.setText(f"<b>{Path(address).name if is_file_address(address) else address}</b> holds no memories yet.")
        self.setInformativeText(SAMPLE_TEXT)
        self.sample_button: QPushButton = self.addButton("Import the sample", QMessageBox.ButtonRole.AcceptRole)
        self.empty_button: QPushButton = self.addButton("Leave it empty", QMessageBox.ButtonRole.RejectRole)
        self.setDefaultButton(self.sample_button)
        self.setEscapeButton(self.empty_button)
        self.buttonClicked.connect(lambda button: self.answered.emit(button is self.sample_button))
