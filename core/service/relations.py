"""Relations between entities, created, deleted or ended (kept as history): :class:`Relations`, ``memory.relations``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from limbic.core import validation as check
from limbic.core.models import (
    Relation,
    RelationInput,
)
from limbic.core.service import mutations
from limbic.core.service.inputs import prepare_relation

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService


class Relations:
    """Relations between entities: create, delete, end (kept as history).

    Reached as ``memory.relations`` (:class:`~limbic.core.service.memory.MemoryService`).
    """

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def create_relations(self, items: Sequence[RelationInput], *, origin: str | None = None) -> list[Relation]:
        """Create relations between existing entities; duplicates of an active relation are skipped.

        Returns only the new relations. Unknown endpoints raise one NotFoundError naming all of them
        (nothing written) — unlike the reference server, which stores dangling relations.
        """
        check.count(items, "relations")
        prepared = [prepare_relation(item) for item in items]
        return self.memory.write("create_relations", origin, lambda txn: mutations.create_relations(txn, prepared))

    def delete_relations(self, items: Sequence[RelationInput], *, origin: str | None = None) -> int:
        """Delete relations (active or ended) matching source, target and type; unknown ones are ignored."""
        check.count(items, "relations")
        prepared = [prepare_relation(item) for item in items]
        return self.memory.write("delete_relations", origin, lambda txn: mutations.delete_relations(txn, prepared))

    def end_relation(self, item: RelationInput, *, at: float | None = None, origin: str | None = None) -> Relation:
        """Mark an active relation as ended at ``at`` (UTC seconds, default now), kept as history.

        Raises NotFoundError when no such relation is active."""
        relation = prepare_relation(item)
        at = check.timestamp(at, "endedAt") or time.time()
        return self.memory.write("end_relation", origin, lambda txn: mutations.end_relation(txn, relation, at))
