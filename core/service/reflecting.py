"""Reflections of :class:`~limbic.core.service.MemoryService`: prose about an entity, a relation or the whole
memory, written, edited, put back and searched (:mod:`limbic.core.curation.reflections`).

The manager :class:`Reflections` (``memory.reflections``). Each write is one transaction; a reflection's vector is computed before the
transaction opens (the model never runs inside the write lock) and stored with it. Reflections whose vector is
missing (written without a model, or by another model) get one at their first search.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from limbic.core import validation as check
from limbic.core.curation import reflections as rules
from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.models import Reflection, RelationInput
from limbic.core.search.full_text import fts_terms, match_expression
from limbic.core.store import reads, scope, text_search, writes
from limbic.core.store import reflections as rows
from limbic.core.store.connection import Connection
from limbic.core.store.database import WriteTransaction

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService

CANDIDATES_PER_RESULT = 3  # each ranking offers 3 × limit candidates to the fusion (mcp-memory "Hybrid search")


class Reflections:
    """Reflections: notes by people or agents about an entity, a relation or the memory, searchable.

    Reached as ``memory.reflections`` (:class:`~limbic.core.service.memory.MemoryService`).
    """

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def _embed(self, text: str) -> np.ndarray | None:
        return None if self.memory.embedder is None else self.memory.embedder.embed([text])[0]

    def _target(self, conn: Connection, kind: str, target: str | RelationInput | None) -> tuple[int | None, int | None, str | None]:
        """``(entity id, other id, relation type)`` of a reflection's target. Raises NotFoundError/ValidationError."""
        if kind == "global":
            if target is not None:
                raise ValidationError("a global reflection has no target")
            return None, None, None
        if kind == "entity":
            if not isinstance(target, str):
                raise ValidationError("an entity reflection needs the entity's name as its target")
            name = check.name(target)
            return writes.require_ids(conn, [name])[name], None, None
        if not isinstance(target, RelationInput):
            raise ValidationError("a relation reflection needs the relation (from, to, relationType) as its target")
        source, other = check.name(target.source), check.name(target.target)
        relation_type = check.label(target.relation_type, "relation type")
        ids = writes.require_ids(conn, [source, other], "relation endpoints")
        if not reads.find_relation(conn, ids[source], ids[other], relation_type, active_only=False):
            raise NotFoundError(f"no relation {source!r} -[{relation_type}]-> {other!r}")
        return ids[source], ids[other], relation_type

    def add_reflection(self, target_type: str, target: str | RelationInput | None, author: str, content: str,
                       mood: str | None = None, *, created_at: float | None = None,
                       updated_at: float | None = None, origin: str | None = None) -> Reflection:
        """Write a reflection about an entity (``target`` its name), a relation (``target`` a
        :class:`RelationInput`) or the whole memory (``global``, no target). ``author`` free text, ``mood``
        any word (suggestions: mcp-memory's ``frustracion``, ``satisfaccion``, ``curiosidad``, ``duda``,
        ``insight``). ``created_at``/``updated_at`` (UTC seconds, default now) keep an imported reflection's times.
        One transaction. Raises ValidationError for bad input, NotFoundError for a missing target."""
        kind = rules.target_type(target_type)
        who, text, feeling = rules.author(author), check.observation(content), rules.mood(mood)
        at = check.timestamp(created_at, "createdAt") or time.time()
        changed = check.timestamp(updated_at, "updatedAt") or at
        vector = self._embed(text)

        def body(txn: WriteTransaction) -> Reflection:
            entity, other, relation_type = self._target(txn.conn, kind, target)
            rid = rows.insert(txn.conn, kind, entity, other, relation_type, who, text, feeling, at, changed)
            if vector is not None and self.memory.embedder is not None:
                rows.put_vectors(txn.conn, self.memory.embedder.name, {rid: vector})
            txn.touch([i for i in (entity, other) if i is not None])
            return rows.by_ids(txn.conn, [rid])[0]

        return self.memory.write("add_reflection", origin, body)

    def update_reflection(self, reflection_id: int, content: str, *, author: str | None = None,
                          mood: str | None = None, origin: str | None = None) -> Reflection:
        """Rewrite reflection ``reflection_id``'s text, and its author and mood when given (``mood=""``
        clears it). Raises NotFoundError for an unknown id, ValidationError for bad input."""
        rid = check.limit(reflection_id, low=1, high=2**62, what="reflection id")
        text = check.observation(content)
        vector = self._embed(text)

        def body(txn: WriteTransaction) -> Reflection:
            old = self._reflection(txn.conn, rid)
            who = old.author if author is None else rules.author(author)
            feeling = old.mood if mood is None else rules.mood(mood)
            rows.update(txn.conn, rid, who, text, feeling, time.time())
            if vector is not None and self.memory.embedder is not None:
                rows.put_vectors(txn.conn, self.memory.embedder.name, {rid: vector})
            txn.touch([i for i in (old.entity_id, old.target_id) if i is not None])
            return rows.by_ids(txn.conn, [rid])[0]

        return self.memory.write("update_reflection", origin, body)

    def delete_reflection(self, reflection_id: int, *, origin: str | None = None) -> Reflection:
        """Delete reflection ``reflection_id``; returns it as it was. Raises NotFoundError for an unknown id."""
        rid = check.limit(reflection_id, low=1, high=2**62, what="reflection id")

        def body(txn: WriteTransaction) -> Reflection:
            old = self._reflection(txn.conn, rid)
            rows.delete(txn.conn, rid)
            txn.touch([i for i in (old.entity_id, old.target_id) if i is not None])
            return old

        return self.memory.write("delete_reflection", origin, body)

    def restore_reflection(self, before: Reflection, *, origin: str | None = None) -> Reflection:
        """Make ``before`` stored exactly again (id when free, author, text, mood, times), replacing the row of
        that id. Raises NotFoundError when an entity it is about no longer exists."""

        def body(txn: WriteTransaction) -> Reflection:
            rows.delete(txn.conn, before.id)
            ids = [i for i in (before.entity_id, before.target_id) if i is not None]
            if len(reads.entities_by_ids(txn.conn, ids)) < len(set(ids)):
                raise NotFoundError("the entity this reflection is about no longer exists")
            rid = rows.insert(txn.conn, before.target_type, before.entity_id, before.target_id, before.relation_type,
                              before.author, before.content, before.mood, before.created_at, before.updated_at,
                              before.id)
            txn.touch(ids)
            return rows.by_ids(txn.conn, [rid])[0]

        return self.memory.write("restore_reflection", origin, body)

    def get_reflection(self, reflection_id: int) -> Reflection:
        """Reflection ``reflection_id``. Raises NotFoundError for an unknown id, ValidationError for a bad one."""
        return self._reflection(self.memory.database.read(), check.limit(reflection_id, low=1, high=2**62,
                                                                  what="reflection id"))

    @staticmethod
    def _reflection(conn: Connection, rid: int) -> Reflection:
        found = rows.by_ids(conn, [rid])
        if not found:
            raise NotFoundError(f"no reflection {rid}", [str(rid)])
        return found[0]

    def reflections_of(self, name: str) -> list[Reflection]:
        """The reflections about entity ``name`` and about its relations, oldest first (reading is not a use); in a
        call bound to a project, not those about a relation to an entity it does not see. Raises NotFoundError
        for an unknown name."""
        name = check.name(name)
        conn = self.memory.database.read()
        found = reads.ids_by_names(conn, [name]).get(name)
        if found is None:
            raise NotFoundError(f"unknown entity {name!r}", [name])
        return _in_view(conn, rows.touching(conn, [found]))

    def all_reflections(self) -> list[Reflection]:
        """Every reflection, oldest first (in a call bound to a project: the global ones and those about the
        entities it sees)."""
        conn = self.memory.database.read()
        return _in_view(conn, rows.every(conn))

    def search_reflections(self, query: str, *, author: str | None = None, mood: str | None = None,
                           target_type: str | None = None, limit: int = 10) -> list[tuple[Reflection, rules.Ranked]]:
        """Reflections matching ``query``'s content words (stop words left out) by keyword (FTS5, BM25) and by meaning (cosine of the vectors), the two
        rankings fused by RRF with the saved ``rrf_k`` (:func:`limbic.core.curation.reflections.fuse`); only those
        of ``author`` and ``mood`` (case-insensitive) and ``target_type`` when given (an empty or blank ``mood``
        filters nothing). Full text only without a model. Raises ValidationError for an empty or too long query,
        an empty, blank or too long author, a mood over 64 characters, an unknown target type or a limit outside
        1..1000."""
        text = check.query(query)
        if not text:
            raise ValidationError("query must not be empty")
        limit = check.limit(limit)
        wanted = self._filtered(author, mood, target_type)
        count = CANDIDATES_PER_RESULT * limit
        conn = self.memory.database.read()
        expression = match_expression(rules.content_terms(fts_terms(text)))
        found_text = [] if expression is None else [r for r, _ in text_search.matches(conn, "reflection_fts", expression)]
        ranking = [i for i in found_text if wanted is None or i in wanted][:count]
        similarities = self._similarities(text, wanted, count)
        ranked = rules.fuse(ranking, similarities, self.memory.search.scoring_params().rrf_k, limit)
        found = {r.id: r for r in _in_view(conn, rows.by_ids(conn, [r.id for r in ranked]))}
        return [(found[r.id], r) for r in ranked if r.id in found]

    def _filtered(self, author: str | None, mood: str | None, target_type: str | None) -> set[int] | None:
        """Ids of the reflections passing the filters (None when there are none). Each filter is checked as
        :func:`limbic.core.curation.reflections.author`, ``mood`` and ``target_type`` check it, so an empty or
        blank mood is no mood filter, as it is no mood when writing. Raises ValidationError for a bad author or
        target type."""
        wanted_author = None if author is None else rules.author(author)
        wanted_mood = rules.mood(mood)
        wanted_type = None if target_type is None else rules.target_type(target_type)
        if wanted_author is None and wanted_mood is None and wanted_type is None:
            return None
        return rows.filtered(self.memory.database.read(), wanted_author, wanted_mood, wanted_type)

    def _similarities(self, query: str, wanted: set[int] | None, count: int) -> dict[int, float]:
        """The ``count`` best cosine similarities of the reflections (those ``wanted``) to ``query``; vectors
        missing for the attached model are computed and stored first."""
        if self.memory.embedder is None:
            return {}
        conn = self.memory.database.read()
        stored = rows.vectors(conn, self.memory.embedder.name)
        missing = [(int(i), c) for i, c in rows.texts(conn) if int(i) not in stored]
        if missing:
            made = dict(zip([i for i, _ in missing], self.memory.embedder.embed([c for _, c in missing]), strict=True))
            with self.memory.database.maintenance() as writer:
                rows.put_vectors(writer, self.memory.embedder.name, made)
            stored.update(made)
        ids = [i for i in stored if wanted is None or i in wanted]
        if not ids:
            return {}
        matrix = np.stack([stored[i] for i in ids]).astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        sims = matrix @ self.memory.embedder.embed_query(query)
        best = np.argsort(-sims, kind="stable")[:count]
        return {ids[k]: float(sims[k]) for k in best}

    def reflections_by_entity(self, names: Sequence[str]) -> dict[str, list[Reflection]]:
        """``{name: reflections about it or its relations}`` for the names that exist (for ``open_nodes``); in a
        call bound to a project, not those about a relation to an entity it does not see."""
        conn = self.memory.database.read()
        ids = reads.ids_by_names(conn, list(names))
        found = _in_view(conn, rows.touching(conn, list(ids.values())))
        return {name: [r for r in found if eid in (r.entity_id, r.target_id)] for name, eid in ids.items()}


def _in_view(conn: Connection, found: list[Reflection]) -> list[Reflection]:
    """``found`` without the reflections about an entity the call's project view does not hold."""
    ends = [i for r in found for i in (r.entity_id, r.target_id) if i is not None]
    shown = set(scope.visible(conn, ends))
    return [r for r in found if all(i is None or i in shown for i in (r.entity_id, r.target_id))]
