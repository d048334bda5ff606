"""A small modal form: a few labelled text fields (optionally with choices and completion)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)


@dataclass(frozen=True, slots=True)
class Field:
    """One input: ``key`` in the answer, ``label`` shown; ``choices`` make an editable combo box,
    ``completions`` a line edit with completion, ``multiline`` a plain-text box; ``required`` refuses empty."""

    key: str
    label: str
    default: str = ""
    choices: Sequence[str] = ()
    completions: Sequence[str] = ()
    multiline: bool = False
    required: bool = True


class FormDialog(QDialog):
    """Ask for the ``fields``; :meth:`values` gives ``{key: stripped text}`` after ``exec()`` accepted."""

    def __init__(self, title: str, fields: Sequence[Field], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(420)
        self._fields = list(fields)
        self._inputs: dict[str, QComboBox | QPlainTextEdit | QLineEdit] = {}
        form = QFormLayout(self)
        for f in self._fields:
            widget: QComboBox | QPlainTextEdit | QLineEdit
            if f.choices:
                choice = QComboBox()
                choice.setEditable(True)
                choice.addItems(list(f.choices))
                choice.setCurrentText(f.default)
                widget = choice
            elif f.multiline:
                text = QPlainTextEdit(f.default)
                text.setTabChangesFocus(True)
                widget = text
            else:
                line = QLineEdit(f.default)
                if f.completions:
                    completer = QCompleter(list(f.completions), line)
                    completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
                    completer.setFilterMode(Qt.MatchFlag.MatchContains)
                    line.setCompleter(completer)
                widget = line
            self._inputs[f.key] = widget
            form.addRow(f.label, widget)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept_if_complete)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self._ok = buttons.button(QDialogButtonBox.StandardButton.Ok)

    def values(self) -> dict[str, str]:
        out = {}
        for key, widget in self._inputs.items():
            if isinstance(widget, QComboBox):
                text = widget.currentText()
            elif isinstance(widget, QPlainTextEdit):
                text = widget.toPlainText()
            else:
                text = widget.text()
            out[key] = text.strip()
        return out

    def _accept_if_complete(self) -> None:
        values = self.values()
        missing = [f for f in self._fields if f.required and not values[f.key]]
        if missing:
            self._inputs[missing[0].key].setFocus()
            return
        self.accept()

    @classmethod
    def ask(cls, parent: QWidget | None, title: str, fields: Sequence[Field]) -> dict[str, str] | None:
        """Show the form; the answers, or ``None`` when cancelled."""
        dialog = cls(title, fields, parent)
        return dialog.values() if dialog.exec() == QDialog.DialogCode.Accepted else None
