"""Every decision undoable, wherever it was made: applying a decision records it, with its edit, in one log
(docs/curation.md "Decisions and undo").

A decision applied from the app's Review view, over MCP (``resolve_conflict``, ``merge_entities``,
``set_status``, ``execute_entity_split``) or from the command line (``limbic gc --archive/--delete``) is an
:class:`~limbic.core.service.edits.Edit` wrapped in :class:`Decided`: applying it performs the edit and adds a
row to the ``decisions`` table in the same transaction — who (the change log's origin), when, what kind, a
description, its subjects and the edit itself as JSON, with the rows its revert puts back (:func:`encode`).
:func:`undo` reads a row back (:func:`decode`), reverts that very edit and marks the row undone, again in one
transaction, from any process: ``limbic undo``, the MCP tool ``undo_decision``, or the app's undo stack (which
keeps the :class:`Decided` itself; undoing it there marks the row undone too, and a decision undone in one place
cannot be undone again in another).

The JSON form names each value's class (``{"$": "limbic.core.models.Entity", "f": {…}}``); only dataclasses of
``limbic.core`` are read back, built field by field without running any code of theirs.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from limbic.core.errors import ConflictError, NotFoundError, ValidationError
from limbic.core.models import Changes
from limbic.core.service.edits import Edit
from limbic.core.service.history import origin_label
from limbic.core.service.memory import MemoryService
from limbic.core.store.decision_log import DecisionRow

_PACKAGE = "limbic.core."


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        return {"$": f"{cls.__module__}.{cls.__qualname__}",
                "f": {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)
                      if hasattr(value, f.name)}}
    if isinstance(value, tuple):
        return {"$t": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, frozenset | set):
        return {"$s": sorted((_encode(v) for v in value), key=repr)}
    if isinstance(value, dict):
        return {"$d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.generic):  # a number that came out of an array
        return value.item()
    raise ValidationError(f"a decision's edit holds a {type(value).__name__}, which the log cannot keep")


def encode(edit: Edit) -> str:
    """``edit`` (a dataclass, with the rows it recorded when performed) as JSON.

    Raises:
        ValidationError: it holds a value that is not a dataclass, tuple, list, set, dict or plain JSON value.
    """
    return json.dumps(_encode(edit), ensure_ascii=False, separators=(",", ":"))


def _class(path: str) -> type:
    module, _, name = path.rpartition(".")
    if not module.startswith(_PACKAGE):
        raise ValidationError(f"the decision log names an unknown class {path!r}")
    found = getattr(importlib.import_module(module), name, None)
    if not isinstance(found, type) or not dataclasses.is_dataclass(found):
        raise ValidationError(f"the decision log names an unknown class {path!r}")
    return found


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$t" in value:
        return tuple(_decode(v) for v in value["$t"])
    if "$s" in value:
        return frozenset(_decode(v) for v in value["$s"])
    if "$d" in value:
        return {_decode(k): _decode(v) for k, v in value["$d"]}
    cls = _class(value["$"])
    obj: Any = object.__new__(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    for key, item in value["f"].items():
        if key in names:
            object.__setattr__(obj, key, _decode(item))
    return obj


def decode(text: str) -> Edit:
    """The edit :func:`encode` wrote. Raises ValidationError when the text names a class that is not a
    dataclass of ``limbic.core`` or is not an edit."""
    edit = _decode(json.loads(text))
    if not isinstance(edit, Edit):
        raise ValidationError("the decision log holds something that is not an edit")
    return edit


@dataclass(eq=False)
class Decided(Edit):
    """A decision: ``inner`` applied and logged (``kind``, ``subjects``) in one transaction; reverting it reverts
    ``inner`` and marks its row undone. ``decision_id`` is the row of the last apply."""

    inner: Edit
    kind: str
    subjects: Sequence[str] = ()
    decision_id: int | None = field(default=None, init=False)
    origin: str | None = field(default=None, init=False, repr=False)
    op: ClassVar[str] = "decision"

    def __post_init__(self) -> None:
        self.subjects = tuple(self.subjects)

    @property
    def description(self) -> str:
        return self.inner.description

    def subject(self, *, reverted: bool = False) -> str | None:
        return self.inner.subject(reverted=reverted)

    def apply(self, service: MemoryService, *, origin: str | None = None) -> Changes:
        self.origin = origin or service.origin
        return service.snapshots.run_edit(self.inner.op, lambda: self.perform(service), origin=origin)

    def revert(self, service: MemoryService, *, origin: str | None = None) -> Changes:
        self.origin = origin or service.origin
        return service.snapshots.run_edit(f"undo_{self.inner.op}", lambda: self.reverse(service), origin=origin)

    def perform(self, service: MemoryService) -> None:
        self.inner.perform(service)
        self.decision_id = service.history.log_decision(self.kind, self.description, self.subjects, encode(self.inner),
                                                origin=self.origin or service.origin)

    def reverse(self, service: MemoryService) -> None:
        if self.decision_id is not None:
            row, _ = service.history.decision_record(self.decision_id)
            if row.undone:
                raise ConflictError(f"decision {row.id} ({row.description}) was already undone by "
                                    f"{origin_label(row.undone_by or '')}")
        self.inner.reverse(service)
        if self.decision_id is not None:
            service.history.mark_decision_undone(self.decision_id, origin=self.origin or service.origin)


def apply(service: MemoryService, edit: Edit, kind: str, subjects: Sequence[str] = (), *,
          origin: str | None = None) -> Decided:
    """Apply ``edit`` as the decision ``kind`` about ``subjects``, logged, as one transaction; returns the
    :class:`Decided` (its ``decision_id`` is the log row). Raises what the edit raises; nothing is written then."""
    decided = Decided(edit, kind, subjects)
    decided.apply(service, origin=origin)
    return decided


def undo(service: MemoryService, decision_id: int | None = None, *, origin: str | None = None,
         own: bool = False) -> DecisionRow:
    """Undo the decision ``decision_id`` (default: the newest one still standing; with ``own``, ``origin``'s
    newest) exactly, as one transaction logged as ``undo_<op>`` by ``origin``; returns its row as it is now.

    Raises:
        NotFoundError: no such decision, or none to undo.
        ValidationError: ``own`` and the decision was made by someone else.
        ConflictError: it was undone already, or the memory changed so that its rows cannot go back (an entity
            it names was deleted, a name it held was taken); nothing is written then.
    """
    by = origin or service.origin
    row, text = service.history.decision_record(decision_id, origin=by if own and decision_id is None else None)
    if own and row.origin != by:
        raise ValidationError(f"decision {row.id} was made by {origin_label(row.origin)}; "
                              "only its maker can undo it here")
    if row.undone:
        raise ConflictError(f"decision {row.id} ({row.description}) was already undone by "
                            f"{origin_label(row.undone_by or '')}")
    edit = decode(text)

    def steps() -> None:
        edit.reverse(service)
        service.history.mark_decision_undone(row.id, origin=by)

    try:
        service.snapshots.run_edit(f"undo_{edit.op}", steps, origin=by)
    except NotFoundError as exc:
        raise ConflictError(f"decision {row.id} cannot be undone: the memory changed since ({exc})") from None
    return service.history.decision_record(row.id)[0]
