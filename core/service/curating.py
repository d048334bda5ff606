"""Curation of :class:`~limbic.core.service.MemoryService`: duplicate observations and entities (found by
:mod:`limbic.core.curation`), what a person chose to keep apart, and the writes the curation edits need
(:mod:`limbic.core.service.curation_edits`).

The manager :class:`Curation` (``memory.curation``). Finding is not a use (no access is recorded) and changes no text. The vectors
compared are the stored ones of the attached model (of the model that wrote them when none is attached). What
was written a moment ago is compared too: before finding, the vectors still pending for the entities in scope
are computed and stored (at most :data:`INLINE_ENTITIES` entities, one step of the vector upkeep); when more
are pending, the report says the comparison is incomplete (``complete: false``) instead of "none found".
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from limbic.core import validation as check
from limbic.core.curation import duplicates, entities, statements, survivors
from limbic.core.embedding.onnx_embedder import release_free_memory
from limbic.core.errors import ConflictError, NotFoundError, ValidationError
from limbic.core.models import Entity, iso
from limbic.core.service.entity_duplicates import (
    EntityDuplicate,
    entity_duplicates,
    name_groups,
    shared_evidence,
    supported,
)
from limbic.core.store import curation_reads, reads, scope, writes
from limbic.core.store import kept as kept_rows
from limbic.core.store.connection import Connection
from limbic.core.store.database import WriteTransaction
from limbic.core.store.pending_vectors import pending_entities
from limbic.core.vectors.pending import fill_step

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService

MAX_CLUSTER_SHOWN = 25  # members of one cluster listed in full; the rest are counted
MAX_LISTED = 1_000_000  # decisions one call may list (the review queue looks a decision up among all)
INLINE_ENTITIES = 64
"""Entities whose pending vectors a finding call computes first (one step of the upkeep, a few hundred ms)."""
SHARED_SHOWN = 10  # entities listed per shared fact


@dataclass(frozen=True, slots=True)
class Member:
    """One observation of a duplicate cluster: its id, entity, text, kind and creation time (UTC seconds)."""

    id: int
    entity: str
    content: str
    kind: str | None
    created_at: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "entityName": self.entity, "content": self.content, "kind": self.kind,
                "createdAt": iso(self.created_at)}


@dataclass(frozen=True, slots=True)
class DuplicateCluster:
    """Observations that repeat one another. ``members`` (oldest first, at most 25 listed), ``size`` (all of
    them), ``pairs`` ``(id, id, similarity)`` most similar first (those among the listed members),
    ``best``/``lowest`` similarity of its pairs, ``relation``: ``"duplicate"`` (each says one fact) or
    ``"more specific"`` (the longer adds facts to the other's: keep both is suggested). ``survivor``: the member
    that keeps every detail of the others (:func:`~limbic.core.curation.survivors.survivor`), None when none
    does; then ``merged`` is one text that keeps them all (:func:`~limbic.core.curation.survivors.merged_text`),
    shown for approval. Build one with :func:`duplicate_cluster`."""

    members: tuple[Member, ...]
    size: int
    pairs: tuple[tuple[int, int, float], ...]
    best: float
    lowest: float
    relation: str = duplicates.DUPLICATE
    survivor: Member | None = None
    merged: str | None = None

    @property
    def options(self) -> tuple[str, ...]:
        """The ways to settle it, the suggested one first: with a survivor ``supersede`` (it stays live, the others
        become its history), ``merge`` (the others are deleted) and ``keep`` (a more specific pair: ``keep``,
        then ``supersede``); without one ``keep`` first, then ``combine`` (the merged text is written and the
        members become its history)."""
        if self.survivor is None:
            return ("keep", "combine")
        return ("keep", "supersede") if self.relation == duplicates.MORE_SPECIFIC else ("supersede", "merge", "keep")

    @property
    def reason(self) -> str:
        """Why these are proposed, in plain words."""
        where = "in one entity" if len(self.entities) == 1 else f"in {len(self.entities)} entities of one name"
        if self.relation == duplicates.MORE_SPECIFIC:
            return f"one says more than the other {where} — keep both, or keep the more specific one"
        said = f"{self.size} observations say the same fact {where}, with the same values"
        if self.survivor is None:
            return said + " — but each adds a detail the others lack: keep both, or combine them into one text"
        return said

    @property
    def entities(self) -> tuple[str, ...]:
        """The entities holding members, in order of first appearance."""
        return tuple(dict.fromkeys(m.entity for m in self.members))

    @property
    def key(self) -> str:
        return "duplicate:" + "-".join(str(m.id) for m in sorted(self.members, key=lambda m: m.id))

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "relation": self.relation, "reason": self.reason, "size": self.size,
                "best": round(self.best, 4), "lowest": round(self.lowest, 4), "entities": list(self.entities),
                "keeps": None if self.survivor is None else self.survivor.content, "merged": self.merged,
                "options": list(self.options), "members": [m.to_dict() for m in self.members],
                "pairs": [{"a": a, "b": b, "similarity": round(s, 4)} for a, b, s in self.pairs]}


def duplicate_cluster(members: Sequence[Member], size: int, pairs: tuple[tuple[int, int, float], ...], best: float,
                      lowest: float, relation: str = duplicates.DUPLICATE) -> DuplicateCluster:
    """A :class:`DuplicateCluster` of ``members`` with its survivor, or its merged text when none keeps every
    detail of the others (:mod:`limbic.core.curation.survivors`)."""
    texts = [survivors.Text(m.id, m.content, m.created_at) for m in members]
    found = survivors.survivor(texts) if len(texts) > 1 else None
    keeper = None if found is None else next(m for m in members if m.id == found.id)
    merged = survivors.merged_text(texts) if keeper is None and len(texts) > 1 else None
    return DuplicateCluster(tuple(members), size, pairs, best, lowest, relation, keeper, merged)


@dataclass(frozen=True, slots=True)
class SharedFact:
    """One text said alike of several entities (``entities``: the first :data:`SHARED_SHOWN`, ``count``: all):
    each entity's own field or fact, never merged."""

    text: str
    entities: tuple[str, ...]
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "entities": list(self.entities), "entityCount": self.count,
                "reason": f"the same text on {self.count} entities — each entity's own, not duplicates"}


@dataclass(frozen=True, slots=True)
class DuplicateReport:
    """What :meth:`Curation.find_duplicate_observations` found: the ``threshold`` used, the number of clusters
    (``total``: duplicates and more specific ones) and the first ``limit`` of them, the texts said alike of
    several entities (``shared``, the first ``limit``; ``shared_total``), the observations compared, the
    entities still ``pending`` a vector (``complete`` when none is), the ``model`` whose vectors were compared,
    the ``seconds`` taken and ``pairs``: the pairs of one entity (or name) at or above the threshold, every one
    of them compared by its words — those not in a cluster differ in a field, a value, a state or wording."""

    threshold: float
    total: int
    clusters: tuple[DuplicateCluster, ...]
    compared: int
    pending: int
    model: str | None
    seconds: float
    shared: tuple[SharedFact, ...] = ()
    shared_total: int = 0
    pairs: int = 0

    @property
    def complete(self) -> bool:
        return self.pending == 0 and self.model is not None

    @property
    def note(self) -> str | None:
        """Why the answer may miss something, in plain words (None when it does not)."""
        if self.model is None:
            return "no embedding model: observations were not compared"
        if self.pending:
            return (f"incomplete: {self.pending} entities have observations whose vectors are still being computed; "
                    "they were not compared yet — ask again in a moment")
        return None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "threshold": self.threshold, "total": self.total, "complete": self.complete,
            "clusters": [c.to_dict() for c in self.clusters],
            "sharedFacts": {"total": self.shared_total, "items": [f.to_dict() for f in self.shared]},
            "compared": self.compared, "pairsAtThreshold": self.pairs, "pendingVectors": self.pending,
            "model": self.model,
            "seconds": round(self.seconds, 3)}
        if self.note:
            out["note"] = self.note
        return out


def pair_key(kind: str, a: int, b: int) -> str:
    """The ``curation_kept`` key of a pair kept apart: ``"<kind>:<smaller id>:<larger id>"``."""
    return f"{kind}:{min(a, b)}:{max(a, b)}"


class Curation:
    """Duplicate observations and entities, what a person chose to keep apart, and the writes the curation
    edits need.

    Reached as ``memory.curation`` (:class:`~limbic.core.service.memory.MemoryService`).
    """

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory
        self._duplicates: tuple[tuple[Any, ...], duplicates.ObservationRows, list[duplicates.Cluster], list[np.ndarray], int] | None = None

    def stored_model(self) -> str | None:
        """The model whose stored vectors are compared: the attached one, else the one that wrote them."""
        return self.memory.embedder.name if self.memory.embedder is not None else self.memory.database.get_setting("embedding_model")

    def kept_keys(self, prefix: str = "") -> frozenset[str]:
        """Keys of what a person chose to keep as it is (``curation_kept``), those starting with ``prefix``."""
        return kept_rows.keys(self.memory.database.read(), prefix)

    def _kept_pairs(self, kind: str) -> frozenset[tuple[int, int]]:
        out = set()
        for key in self.kept_keys(kind + ":"):
            _, a, b = key.split(":")
            out.add((int(a), int(b)))
        return frozenset(out)

    def find_duplicate_observations(self, entity_name: str | None = None, threshold: float | None = None,
                                    limit: int = 20) -> DuplicateReport:
        """Clusters of live observations that say one fact (:mod:`limbic.core.curation.duplicates`): observations
        of one entity (or of entities whose names are equal once normalised) only — the same text on two
        different entities is reported as a shared fact, never as a duplicate. With ``entity_name``, those
        involving its observations. ``threshold``: the lowest cosine similarity of a pair's stored vectors, default
        :data:`~limbic.core.curation.duplicates.DEFAULT_THRESHOLD`; every pair at or above it is compared by its
        words (the report counts them, ``pairs``), none below it. Duplicates most similar first, then the
        *more specific* pairs; pairs kept apart by a person are left out. Vectors pending for the entities in
        scope are computed first (at most :data:`INLINE_ENTITIES`; see the module). The last answer is kept until
        the memory changes.

        Raises ValidationError for a threshold outside 0.5..1 or a negative limit, NotFoundError for
        an unknown entity."""
        started = time.perf_counter()
        threshold = _threshold(threshold, duplicates.DEFAULT_THRESHOLD)
        limit = check.limit(limit, low=0, high=MAX_LISTED)
        conn = self.memory.database.read()
        model = self.stored_model()
        only = _entity_id(conn, entity_name)
        self._land_pending(only)
        conn = self.memory.database.read()
        with conn:  # one snapshot
            key = (model, threshold, only, reads.last_change_id(conn), scope.current())
            cached = getattr(self, "_duplicates", None)
            fresh = cached is None or cached[0] != key
            if cached is not None and not fresh:
                rows, found, shared, pairs = cached[1], cached[2], cached[3], cached[4]
            else:
                rows = duplicates.load_observation_rows(conn, model, time.time()) if model else None
                rows = None if rows is None else _in_view(conn, rows)
                if rows is None or len(rows) == 0:
                    return DuplicateReport(threshold, 0, (), 0, self.memory.vectors.pending(), model,
                                           time.perf_counter() - started)
                queries = None if only is None else np.flatnonzero(rows.entity == only)
                texts = reads.live_texts(conn)
                owners = _owners(conn, rows.entity)
                found, pairs = duplicates.duplicate_clusters(rows, texts, threshold, owners=owners, queries=queries,
                                                             kept=self._kept_pairs("observations"))
                shared = duplicates.shared_texts(rows, texts, owners, queries)
                # the same question until the memory changes: the same answer, kept without the vectors
                # (4 bytes × dimension a row: 77 MB at 50,000 observations), which only the clustering reads
                rows = duplicates.ObservationRows(rows.observation, rows.entity, np.empty((0, rows.unit.shape[1]), np.float32))
                self._duplicates = (key, rows, found, shared, pairs)
            clusters = self._clusters(conn, rows, found[:limit])
            facts = _shared_facts(conn, rows, shared[:limit])
            compared = len(rows)
        if fresh:
            self.release_memory()
        return DuplicateReport(threshold, len(found), clusters, compared, self.memory.vectors.pending(), model,
                               time.perf_counter() - started, facts, len(shared), pairs)

    def _land_pending(self, only: int | None) -> None:
        """Compute and store the pending vectors of the entities in scope (``only``, else any), at most
        :data:`INLINE_ENTITIES`: what was written a moment ago is then compared too."""
        if self.memory.embedder is None:
            return
        scope = None if only is None else [only]
        if pending_entities(self.memory.database.read(), 1, scope):
            fill_step(self.memory.database, self.memory.embedder, self.memory.vectors.land, INLINE_ENTITIES, scope)

    @staticmethod
    def _clusters(conn: Connection, rows: duplicates.ObservationRows, found: list[duplicates.Cluster]) -> tuple[DuplicateCluster, ...]:
        """The clusters ``found`` with their members read (one query for all)."""
        wanted = np.concatenate([rows.observation[c.rows] for c in found]).tolist() if found else []
        members = {int(r[0]): Member(int(r[0]), r[1], r[2], r[3], float(r[4]))
                   for r in curation_reads.members(conn, wanted)}
        return tuple(Curation._cluster(rows, c, members) for c in found if c.rows.size)

    @staticmethod
    def _cluster(rows: duplicates.ObservationRows, cluster: duplicates.Cluster,
                 known: dict[int, Member]) -> DuplicateCluster:
        ids = rows.observation[cluster.rows].tolist()
        found = sorted((known[i] for i in ids if i in known), key=lambda m: (m.created_at, m.id))
        members = tuple(found[:MAX_CLUSTER_SHOWN])
        shown = np.array(sorted(m.id for m in members), dtype=np.int64)
        left, right = rows.observation[cluster.a], rows.observation[cluster.b]
        listed = np.flatnonzero(np.isin(left, shown) & np.isin(right, shown))
        pairs = tuple((int(left[k]), int(right[k]), float(cluster.sims[k])) for k in listed)
        return duplicate_cluster(members, len(ids), pairs, cluster.best, cluster.lowest, cluster.relation)

    def find_duplicate_entities(self, threshold: float | None = None, limit: int = 20,
                                entity_name: str | None = None) -> tuple[int, list[EntityDuplicate]]:
        """Entities that may be one thing (:mod:`limbic.core.curation.entities`): same normalised name (case,
        CamelCase, snake_case, kebab-case, spaces, plurals) with some evidence
        (:func:`~limbic.core.service.entity_duplicates.name_supported`), an acronym and its expansion, or entity
        vectors at least ``threshold`` similar (default
        :data:`~limbic.core.curation.entities.ENTITY_THRESHOLD`) that also share an observation said alike and a
        neighbour (or neither has relations) and are not siblings (two different identifiers); with
        ``entity_name``, those involving it. Returns the number found and the first ``limit``; groups kept apart
        are left out. Pending vectors in scope are computed first, as by :meth:`find_duplicate_observations`.

        Raises ValidationError / NotFoundError as :meth:`find_duplicate_observations`."""
        threshold = _threshold(threshold, entities.ENTITY_THRESHOLD)
        limit = check.limit(limit, low=0, high=MAX_LISTED)
        self._land_pending(_entity_id(self.memory.database.read(), entity_name))
        conn = self.memory.database.read()
        model = self.stored_model()
        kept = self._kept_pairs("entities")
        with conn:
            named = reads.id_names(conn)
            shown = set(scope.visible(conn, [int(r[0]) for r in named]))  # the project view of a bound call
            named = [r for r in named if int(r[0]) in shown]
            names = {int(i): str(n) for i, n in named}
            only = _entity_id(conn, entity_name)
            groups = entities.same_names(names.items())
            if only is not None:
                groups = [g for g in groups if only in g.ids]
            groups = name_groups(conn, model, groups)
            seen = {frozenset(g.ids) for g in groups}
            evidence: dict[tuple[int, ...], tuple[int, int]] = {}
            if model:
                close = [g for g in entities.close_vectors(conn, model, threshold, None if only is None else [only])
                         if not any(g.ids[0] in s and g.ids[1] in s for s in seen)
                         and not (entities.identifier(names[g.ids[0]]) and entities.identifier(names[g.ids[1]]))]
                evidence = shared_evidence(conn, [g.ids for g in close])
                groups += [g for g in close if supported(*evidence[g.ids])]
            groups = [g for g in groups if not _all_kept(g.ids, kept) and shown.issuperset(g.ids)]
            found = entity_duplicates(conn, groups, evidence)
        if model:
            self.release_memory()
        return len(found), found[:limit]

    def release_memory(self) -> None:
        """After reading a whole vector table, or when the curation lists close: empty this thread's read page
        cache (SQLite; up to 64 MB of pages not read again soon), forget the stems read
        (:func:`~limbic.core.curation.statements.clear_stem_cache`) and give the C heap's free pages back (the
        rows read, the texts and statements compared; docs/performance.md "The app's memory, where it goes")."""
        self.memory.database.release_cache()
        statements.clear_stem_cache()
        release_free_memory()

    def keep_as_is(self, keys: Sequence[str], *, keep: bool = True, origin: str | None = None) -> list[str]:
        """Record (``keep``) or forget (``keep=False``) that a person chose to keep these as they are
        (``curation_kept`` keys, e.g. ``"observations:12:40"``). Returns the keys actually added or removed.
        One transaction. Raises ValidationError for an empty or malformed key."""
        check.count(keys, "keys")
        keys = list(dict.fromkeys(_key(k) for k in keys))

        def body(txn: WriteTransaction) -> list[str]:
            changed = []
            for key in keys:
                done = kept_rows.keep(txn.conn, key, time.time()) if keep else kept_rows.forget(txn.conn, key)
                if done:
                    changed.append(key)
            return changed

        return self.memory.write("keep_as_is" if keep else "forget_kept", origin, body)

    def supersede_by(self, entity: str, olds: Sequence[str], survivor_entity: str, survivor: str, *,
                     origin: str | None = None) -> Entity:
        """Mark the live observations ``olds`` of ``entity`` superseded by the live observation ``survivor`` of
        ``survivor_entity`` (which stays live): they are kept as history. When both are of one entity and
        ``survivor`` supersedes nothing yet, it is linked to the newest of ``olds``. One transaction; returns
        ``entity``. Raises NotFoundError for an unknown entity or text, ConflictError when ``survivor`` is
        among ``olds``."""
        entity, survivor_entity = check.name(entity), check.name(survivor_entity)
        olds = [check.observation(o) for o in olds]
        survivor = check.observation(survivor)
        if not olds:
            raise ValidationError("name at least one observation to supersede")
        if entity == survivor_entity and survivor in olds:
            raise ConflictError("an observation cannot supersede itself")

        def body(txn: WriteTransaction) -> Entity:
            ids = writes.require_ids(txn.conn, [entity, survivor_entity])
            keeper = writes.observation_id(txn.conn, ids[survivor_entity], survivor)
            old_ids = [writes.observation_id(txn.conn, ids[entity], o) for o in olds]
            missing = [o for o, i in zip(olds, old_ids, strict=True) if i is None] + ([survivor] if keeper is None else [])
            if missing:
                raise NotFoundError(f"no live observation {missing[0][:80]!r}", missing)
            now = time.time()
            for oid in old_ids:
                writes.mark_superseded(txn.conn, int(oid), now)  # type: ignore[arg-type]
            if entity == survivor_entity:
                writes.link_supersedes(txn.conn, keeper, max(i for i in old_ids if i is not None))  # type: ignore[arg-type]
            writes.touch_entity(txn.conn, [ids[entity]], now)
            txn.touch(ids[entity])
            self.memory.reindex(txn, [ids[entity]])
            return reads.entities_by_ids(txn.conn, [ids[entity]])[0]

        return self.memory.write("supersede_duplicates", origin, body)


def _threshold(value: float | None, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.5 <= float(value) <= 1.0:
        raise ValidationError(f"threshold must be a number between 0.5 and 1, got {value!r}")
    return float(value)


def _key(value: object) -> str:
    key = check.name(value, "key")
    if ":" not in key:
        raise ValidationError(f"malformed key {key!r}")
    return key


def _in_view(conn: Connection, rows: duplicates.ObservationRows) -> duplicates.ObservationRows:
    """``rows`` of the entities the call's project view holds (all of them when the call is unbound)."""
    if scope.current() is None:
        return rows
    keep = np.isin(rows.entity, scope.visible(conn, sorted({int(e) for e in rows.entity})))
    return duplicates.ObservationRows(rows.observation[keep], rows.entity[keep], rows.unit[keep])


def _all_kept(ids: tuple[int, ...], kept: frozenset[tuple[int, int]]) -> bool:
    return all((a, b) in kept for i, a in enumerate(ids) for b in ids[i + 1:])


def _owners(conn: Connection, entity: np.ndarray) -> np.ndarray:
    """Each row's owner ``(n,) int64``: the smallest id among the entities whose names are one with its
    entity's once normalised (:func:`~limbic.core.curation.entities.same_name_owners`)."""
    owner_of = entities.same_name_owners((int(i), str(n)) for i, n in reads.id_names(conn))
    return np.array([owner_of.get(int(e), int(e)) for e in entity.tolist()], dtype=np.int64)


def _shared_facts(conn: Connection, rows: duplicates.ObservationRows, groups: list[np.ndarray]) -> tuple[SharedFact, ...]:
    """The shared texts ``groups`` (rows) with their text and entity names read."""
    wanted = sorted({int(e) for g in groups for e in rows.entity[g].tolist()})
    names = reads.names_of(conn, wanted) if wanted else {}
    ids = [int(rows.observation[g[0]]) for g in groups]
    texts = reads.texts_of(conn, ids) if ids else {}
    out = []
    for group, first in zip(groups, ids, strict=True):
        holders = list(dict.fromkeys(names.get(int(e), "?") for e in rows.entity[group].tolist()))
        out.append(SharedFact(texts.get(first, ""), tuple(holders[:SHARED_SHOWN]), len(holders)))
    return tuple(out)


def _entity_id(conn: Connection, entity_name: str | None) -> int | None:
    """The id of ``entity_name`` (``None`` for none given). Raises NotFoundError for an unknown name."""
    if entity_name is None:
        return None
    name = check.name(entity_name)
    found = reads.ids_by_names(conn, [name]).get(name)
    if found is None:
        raise NotFoundError(f"unknown entity {name!r}", [name])
    return found
