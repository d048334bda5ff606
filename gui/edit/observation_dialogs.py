"""The entity editor's dialogs for observations: add, edit, supersede, and set the terms (expiry, weight;
docs/lifecycle.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from limbic.core.errors import ValidationError
from limbic.gui.edit.forms import Field, FormDialog
from limbic.gui.edit.terms import read_terms, term_fields

if TYPE_CHECKING:
    from limbic.gui.edit.editor import EntityEditor

KINDS = ("", "fact", "decision", "preference", "event", "task", "metadata")


def ask_add_observation(editor: EntityEditor) -> None:
    """Ask for a new observation with its kind, expiry and weight, and add it."""
    answer = FormDialog.ask(editor, "Add observation", [
        Field("content", "Observation", multiline=True), Field("kind", "Kind", choices=KINDS, required=False),
        *term_fields()])
    if answer:
        _with_terms(editor, answer, lambda expires, weight: editor.add_observation(
            answer["content"], answer["kind"], expires, weight))


def ask_terms(editor: EntityEditor) -> None:
    """Ask when the selected observation expires and its weight, and set both."""
    content = editor._selected(editor.observations)
    found = [o for o in editor.detail.entity.observations if o.content == content] if editor.detail else []
    answer = FormDialog.ask(editor, "Expiry and weight", term_fields(found[0])) if found else None
    if answer:
        _with_terms(editor, answer, lambda expires, weight: editor.set_observation_terms(content, expires, weight))


def _with_terms(editor: EntityEditor, answer: dict[str, str], then: Callable[[float | None, float], None]) -> None:
    try:
        then(*read_terms(answer))
    except ValidationError as exc:
        editor.message.setText(str(exc))


def ask_edit_observation(editor: EntityEditor) -> None:
    old = editor._selected(editor.observations)
    if old is None or editor.detail is None:
        return
    kind = next((o.kind or "" for o in editor.detail.entity.observations if o.content == old), "")
    answer = FormDialog.ask(editor, "Edit observation", [
        Field("content", "Observation", old, multiline=True), Field("kind", "Kind", kind, choices=KINDS, required=False)])
    if answer and (answer["content"], answer["kind"]) != (old, kind):
        editor.edit_observation(old, answer["content"], answer["kind"])


def ask_supersede(editor: EntityEditor) -> None:
    old = editor._selected(editor.observations)
    if old is None:
        return
    answer = FormDialog.ask(editor, "Supersede observation", [
        Field("content", "Newer observation", old, multiline=True),
        Field("kind", "Kind", choices=KINDS, required=False)])
    if answer and answer["content"] != old:
        editor.supersede_observation(old, answer["content"], answer["kind"])
