"""Undoable edits of the memory graph: values with a description, ``apply`` and ``revert``; and a history.

An :class:`Edit` is applied through :class:`~limbic.core.service.MemoryService` as one transaction
(:meth:`~limbic.core.service.restoring.Snapshots.run_edit`) and returns that transaction's
change record, as Anki's collection operations return ``OpChanges``; :meth:`Edit.revert` undoes it,
also as one transaction, and ``apply`` again redoes it. Just before it writes, an edit records the rows
its revert needs; the revert puts them back exactly (:mod:`limbic.core.store.snapshots`): ids when
free, names, types, statuses, created and updated times, observations with kind, weight, expiry,
times and supersede links, relations with context, state and times, and — for an entity deleted or
merged away — its usage history (accesses, access days, impressions, co-occurrences).

:class:`Compound` makes several edits one (one transaction, one undo). :class:`EditHistory` keeps
undo and redo stacks for a caller without its own (the app keeps a ``QUndoStack`` of these edits,
``gui/edit/undo.py``). The edits of entities, observations and relations are in
:mod:`limbic.core.service.entity_edits`; to add one, subclass :class:`Edit` with a ``description``, a
``perform`` and a ``reverse``. Nothing here knows about Qt.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from limbic.core.errors import NotFoundError
from limbic.core.models import Changes
from limbic.core.service.memory import MemoryService


class Edit(ABC):
    """One undoable change: ``apply`` makes it, ``revert`` undoes it, each as one transaction.

    Subclasses define :attr:`description`, :meth:`perform` and :meth:`reverse` (and may narrow
    :meth:`subject`); ``op`` names the change in the change log (``undo_<op>`` for a revert).
    """

    op: ClassVar[str] = "edit"

    @property
    @abstractmethod
    def description(self) -> str:
        """What the edit does, for an undo menu: ``"merge Bob into Alice"``."""

    def subject(self, *, reverted: bool = False) -> str | None:
        """The entity to show once the edit is applied (or ``reverted``); None when there is none."""
        return None

    @abstractmethod
    def perform(self, service: MemoryService) -> None:
        """Make the change inside the open transaction, first recording what :meth:`reverse` needs."""

    @abstractmethod
    def reverse(self, service: MemoryService) -> None:
        """Undo the last :meth:`perform` inside the open transaction."""

    def apply(self, service: MemoryService, *, origin: str | None = None) -> Changes:
        """Make the change as one transaction; returns its change record. Raises what the service raises
        (``ValidationError``, ``NotFoundError``, ``ConflictError``); nothing is written then."""
        return service.snapshots.run_edit(self.op, lambda: self.perform(service), origin=origin)

    def revert(self, service: MemoryService, *, origin: str | None = None) -> Changes:
        """Undo the last :meth:`apply` as one transaction; returns its change record. Raises ``NotFoundError``
        or ``ConflictError`` when the graph changed in a way the recorded rows cannot go back into (an
        entity they name was deleted, their name was taken); nothing is written then."""
        return service.snapshots.run_edit(f"undo_{self.op}", lambda: self.reverse(service), origin=origin)


# --- several as one ------------------------------------------------------------------------------


@dataclass(eq=False)
class Compound(Edit):
    """Several edits as one: ``steps`` performed in order and reversed in the opposite order, in one
    transaction each way, so one undo takes back all of them. Each step sees the writes of those before."""

    text: str
    steps: Sequence[Edit]
    op: ClassVar[str] = "compound_edit"

    def __post_init__(self) -> None:
        self.steps = tuple(self.steps)

    @property
    def description(self) -> str:
        return self.text

    def subject(self, *, reverted: bool = False) -> str | None:
        order = self.steps if reverted else tuple(reversed(self.steps))
        return next((s for s in (step.subject(reverted=reverted) for step in order) if s is not None), None)

    def perform(self, service: MemoryService) -> None:
        for step in self.steps:
            step.perform(service)

    def reverse(self, service: MemoryService) -> None:
        for step in reversed(self.steps):
            step.reverse(service)


# --- history -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HistoryStep:
    """What :meth:`EditHistory.undo` or :meth:`EditHistory.redo` did: the edit, and the change record of
    the transaction that reverted or re-applied it."""

    edit: Edit
    changes: Changes


class EditHistory:
    """Undo and redo stacks of the edits applied to one service: the core's undo (as Anki's ``col.undo()``).

    Args:
        service: the service the edits are applied to.
        limit: edits kept for undo (the oldest are forgotten past it).
        origin: origin recorded for the changes (default: the service's).

    Applying an edit empties the redo stack. A failed apply, undo or redo writes nothing and leaves both
    stacks as they were (the error propagates). Not thread-safe: use it from one thread at a time.
    """

    def __init__(self, service: MemoryService, *, limit: int = 100, origin: str | None = None) -> None:
        self.service = service
        self.limit = limit
        self.origin = origin
        self._undo: list[Edit] = []
        self._redo: list[Edit] = []

    @property
    def undo_description(self) -> str | None:
        """The description of the edit :meth:`undo` would revert (None when there is none)."""
        return self._undo[-1].description if self._undo else None

    @property
    def redo_description(self) -> str | None:
        """The description of the edit :meth:`redo` would apply again (None when there is none)."""
        return self._redo[-1].description if self._redo else None

    def apply(self, edit: Edit) -> Changes:
        """Apply ``edit`` (one transaction) and keep it for undo; returns its change record."""
        changes = edit.apply(self.service, origin=self.origin)
        self._undo = [*self._undo, edit][-self.limit:]
        self._redo.clear()
        return changes

    def undo(self) -> HistoryStep:
        """Revert the latest applied edit. Raises NotFoundError when there is nothing to undo."""
        if not self._undo:
            raise NotFoundError("nothing to undo")
        edit = self._undo[-1]
        changes = edit.revert(self.service, origin=self.origin)
        self._redo.append(self._undo.pop())
        return HistoryStep(edit, changes)

    def redo(self) -> HistoryStep:
        """Apply the latest undone edit again. Raises NotFoundError when there is nothing to redo."""
        if not self._redo:
            raise NotFoundError("nothing to redo")
        edit = self._redo[-1]
        changes = edit.apply(self.service, origin=self.origin)
        self._undo.append(self._redo.pop())
        return HistoryStep(edit, changes)

    def clear(self) -> None:
        """Forget every edit (after the graph changed under them in a way they cannot undo)."""
        self._undo.clear()
        self._redo.clear()
