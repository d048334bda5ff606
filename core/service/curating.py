"""Curation of :class:`~limbic.core.service.MemoryService`: duplicate observations and entities (found by
:mod:`limbic.core.curation`), what a person chose to keep apart, and the writes the curation edits need
(:mod:`limbic.core.service.curation_edits`).

A mixin of ``MemoryService``. Finding never writes and is not a use (no access is recorded). The vectors
compared are the stored ones of the attached model (of the model that wrote them when none is attached):
observations still waiting for their vectors are not compared yet (``pending`` in the report).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from limbic.core import validation as check
from limbic.core.curation import duplicates, entities
from limbic.core.embedding.base import Embedder
from limbic.core.errors import ConflictError, NotFoundError, ValidationError
from limbic.core.models import Entity, iso
from limbic.core.store import reads, scope, writes
from limbic.core.store.database import Database, WriteTransaction
from limbic.core.vectors.upkeep import VectorUpkeep

MAX_CLUSTER_SHOWN = 25  # members of one cluster listed in full; the rest are counted
MAX_LISTED = 1_000_000  # decisions one call may list (the review queue looks a decision up among all)


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
    ``best``/``lowest`` similarity of its pairs."""

    members: tuple[Member, ...]
    size: int
    pairs: tuple[tuple[int, int, float], ...]
    best: float
    lowest: float

    @property
    def entities(self) -> tuple[str, ...]:
        """The entities holding members, in order of first appearance."""
        return tuple(dict.fromkeys(m.entity for m in self.members))

    @property
    def key(self) -> str:
        return "duplicate:" + "-".join(str(m.id) for m in sorted(self.members, key=lambda m: m.id))

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "size": self.size, "best": round(self.best, 4), "lowest": round(self.lowest, 4),
                "entities": list(self.entities), "members": [m.to_dict() for m in self.members],
                "pairs": [{"a": a, "b": b, "similarity": round(s, 4)} for a, b, s in self.pairs]}


@dataclass(frozen=True, slots=True)
class DuplicateReport:
    """What :meth:`Curating.find_duplicate_observations` found: the ``threshold`` used, the number of clusters
    (``total``) and the first ``limit`` of them, the observations compared, those still ``pending`` a vector,
    the ``model`` whose vectors were compared and the ``seconds`` taken."""

    threshold: float
    total: int
    clusters: tuple[DuplicateCluster, ...]
    compared: int
    pending: int
    model: str | None
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "total": self.total, "clusters": [c.to_dict() for c in self.clusters],
                "compared": self.compared, "pendingVectors": self.pending, "model": self.model,
                "seconds": round(self.seconds, 3)}


@dataclass(frozen=True, slots=True)
class EntityDuplicate:
    """Entities that may be one thing: their ``names`` (the suggested survivor first: most observations, then
    oldest), why (``reason``), the entity vectors' ``similarity`` when that is the reason, and their ``ids``."""

    names: tuple[str, ...]
    reason: str
    similarity: float | None = None
    ids: tuple[int, ...] = field(default=(), compare=False)

    @property
    def key(self) -> str:
        return "duplicate_entity:" + "-".join(str(i) for i in sorted(self.ids))

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "names": list(self.names), "reason": self.reason,
                "similarity": None if self.similarity is None else round(self.similarity, 4)}


def pair_key(kind: str, a: int, b: int) -> str:
    """The ``curation_kept`` key of a pair kept apart: ``"<kind>:<smaller id>:<larger id>"``."""
    return f"{kind}:{min(a, b)}:{max(a, b)}"


class Curating:
    """Duplicates, kept-apart pairs and the writes of curation edits (mixed into ``MemoryService``)."""

    database: Database
    embedder: Embedder | None
    vectors: VectorUpkeep
    _duplicates: tuple[tuple[Any, ...], duplicates.ObservationRows, list[duplicates.Cluster]]
    _write: Callable[..., Any]
    _reindex: Callable[[WriteTransaction, Iterable[int]], None]

    def _stored_model(self) -> str | None:
        """The model whose stored vectors are compared: the attached one, else the one that wrote them."""
        return self.embedder.name if self.embedder is not None else self.database.get_setting("embedding_model")

    def kept_keys(self, prefix: str = "") -> frozenset[str]:
        """Keys of what a person chose to keep as it is (``curation_kept``), those starting with ``prefix``."""
        rows = self.database.read().execute("SELECT key FROM curation_kept WHERE key >= ? AND key < ?",
                                            (prefix, prefix + "\U0010ffff"))
        return frozenset(r[0] for r in rows)

    def _kept_pairs(self, kind: str) -> frozenset[tuple[int, int]]:
        out = set()
        for key in self.kept_keys(kind + ":"):
            _, a, b = key.split(":")
            out.add((int(a), int(b)))
        return frozenset(out)

    def find_duplicate_observations(self, entity_name: str | None = None, threshold: float | None = None,
                                    limit: int = 20, *, approximate: bool = False) -> DuplicateReport:
        """Clusters of live observations that repeat one another (:mod:`limbic.core.curation.duplicates`):
        across all entities, or those involving ``entity_name``'s observations (within it and with other
        entities). ``threshold``: cosine similarity, default :data:`~limbic.core.curation.duplicates.DEFAULT_THRESHOLD`.
        Most similar first; pairs kept apart by a person are left out. The last answer is kept until the memory
        changes (any logged change, vectors landing included). ``approximate`` (across all entities, from
        20,000 observations) compares each observation with its nearest part of the memory only
        (:func:`~limbic.core.curation.duplicates.approximate_pairs`): the consolidation report's quick look.

        Raises ValidationError for a threshold outside 0.5..1 or a negative limit, NotFoundError for
        an unknown entity."""
        started = time.perf_counter()
        threshold = _threshold(threshold, duplicates.DEFAULT_THRESHOLD)
        limit = check.limit(limit, low=0, high=MAX_LISTED)
        conn = self.database.read()
        model = self._stored_model()
        with conn:  # one snapshot
            only = _entity_id(conn, entity_name)
            key = (model, threshold, only, approximate, reads.last_change_id(conn), scope.current())
            cached = getattr(self, "_duplicates", None)
            if cached is not None and cached[0] == key:
                rows, found = cached[1], cached[2]
            else:
                rows = duplicates.load_observation_rows(conn, model, time.time()) if model else None
                rows = None if rows is None else _in_view(conn, rows)
                if rows is None or len(rows) == 0:
                    return DuplicateReport(threshold, 0, (), 0, self.vectors.pending(), model,
                                           time.perf_counter() - started)
                queries = None if only is None else np.flatnonzero(rows.entity == only)
                texts = dict(conn.execute("SELECT id, content FROM observations WHERE superseded_at IS NULL"))
                found = duplicates.duplicate_clusters(rows, texts, threshold, queries=queries,
                                                      kept=self._kept_pairs("observations"), approximate=approximate)
                self._duplicates = (key, rows, found)  # the same question until the memory changes: the same answer
            clusters = self._clusters(conn, rows, found[:limit])
            compared = len(rows)
        return DuplicateReport(threshold, len(found), clusters, compared, self.vectors.pending(), model,
                               time.perf_counter() - started)

    @staticmethod
    def _clusters(conn: Any, rows: duplicates.ObservationRows, found: list[duplicates.Cluster]) -> tuple[DuplicateCluster, ...]:
        """The clusters ``found`` with their members read (one query for all)."""
        wanted = np.concatenate([rows.observation[c.rows] for c in found]).tolist() if found else []
        members = {int(r[0]): Member(int(r[0]), r[1], r[2], r[3], float(r[4])) for r in conn.execute(
            "SELECT o.id, e.name, o.content, o.kind, o.created_at FROM observations o JOIN entities e "
            "ON e.id = o.entity_id WHERE o.id IN (SELECT value FROM json_each(?))", (_json(wanted),))}
        return tuple(Curating._cluster(rows, c, members) for c in found)

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
        return DuplicateCluster(members, len(ids), pairs, cluster.best, cluster.lowest)

    def find_duplicate_entities(self, threshold: float | None = None, limit: int = 20,
                                entity_name: str | None = None) -> tuple[int, list[EntityDuplicate]]:
        """Entities that may be one thing (:mod:`limbic.core.curation.entities`): same normalised name, an
        acronym and its expansion, or entity vectors at least ``threshold`` similar (default
        :data:`~limbic.core.curation.entities.ENTITY_THRESHOLD`); with ``entity_name``, those involving it.
        Returns the number found and the first ``limit``; groups kept apart are left out.

        Raises ValidationError / NotFoundError as :meth:`find_duplicate_observations`."""
        threshold = _threshold(threshold, entities.ENTITY_THRESHOLD)
        limit = check.limit(limit, low=0, high=MAX_LISTED)
        conn = self.database.read()
        model = self._stored_model()
        kept = self._kept_pairs("entities")
        with conn:
            named: list[tuple[Any, ...]] = conn.execute("SELECT id, name FROM entities ORDER BY id").fetchall()
            shown = set(scope.visible(conn, [int(r[0]) for r in named]))  # the project view of a bound call
            named = [r for r in named if int(r[0]) in shown]
            only = _entity_id(conn, entity_name)
            groups = entities.same_names((int(i), str(n)) for i, n in named)
            if only is not None:
                groups = [g for g in groups if only in g.ids]
            seen = {frozenset(g.ids) for g in groups}
            if model:
                for group in entities.close_vectors(conn, model, threshold, None if only is None else [only]):
                    if not any(group.ids[0] in s and group.ids[1] in s for s in seen):
                        groups.append(group)
            groups = [g for g in groups if not _all_kept(g.ids, kept) and shown.issuperset(g.ids)]
            found = [self._entity_duplicate(conn, g) for g in groups]
        return len(found), found[:limit]

    @staticmethod
    def _entity_duplicate(conn: Any, group: entities.NameGroup) -> EntityDuplicate:
        rows = conn.execute(
            "SELECT e.id, e.name, (SELECT count(*) FROM observations o WHERE o.entity_id = e.id "
            "AND o.superseded_at IS NULL) AS n FROM entities e WHERE e.id IN (SELECT value FROM json_each(?)) "
            "ORDER BY n DESC, e.created_at, e.id", (_json(list(group.ids)),)).fetchall()
        return EntityDuplicate(tuple(r[1] for r in rows), group.reason, group.similarity, tuple(int(r[0]) for r in rows))

    # --- writes of the curation edits -------------------------------------------------------------

    def keep_as_is(self, keys: Sequence[str], *, keep: bool = True, origin: str | None = None) -> list[str]:
        """Record (``keep``) or forget (``keep=False``) that a person chose to keep these as they are
        (``curation_kept`` keys, e.g. ``"observations:12:40"``). Returns the keys actually added or removed.
        One transaction. Raises ValidationError for an empty or malformed key."""
        check.count(keys, "keys")
        keys = list(dict.fromkeys(_key(k) for k in keys))

        def body(txn: WriteTransaction) -> list[str]:
            changed = []
            for key in keys:
                if keep:
                    txn.conn.execute("INSERT INTO curation_kept(key, at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                                     (key, time.time()))
                else:
                    txn.conn.execute("DELETE FROM curation_kept WHERE key = ?", (key,))
                if txn.conn.changes():
                    changed.append(key)
            return changed

        return self._write("keep_as_is" if keep else "forget_kept", origin, body)

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
                txn.conn.execute("UPDATE observations SET supersedes = ? WHERE id = ? AND supersedes IS NULL",
                                 (max(i for i in old_ids if i is not None), keeper))
            writes.touch_entity(txn.conn, [ids[entity]], now)
            txn.touch(ids[entity])
            self._reindex(txn, [ids[entity]])
            return reads.entities_by_ids(txn.conn, [ids[entity]])[0]

        return self._write("supersede_duplicates", origin, body)


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


def _in_view(conn: Any, rows: duplicates.ObservationRows) -> duplicates.ObservationRows:
    """``rows`` of the entities the call's project view holds (all of them when the call is unbound)."""
    if scope.current() is None:
        return rows
    keep = np.isin(rows.entity, scope.visible(conn, sorted({int(e) for e in rows.entity})))
    return duplicates.ObservationRows(rows.observation[keep], rows.entity[keep], rows.unit[keep])


def _all_kept(ids: tuple[int, ...], kept: frozenset[tuple[int, int]]) -> bool:
    return all((a, b) in kept for i, a in enumerate(ids) for b in ids[i + 1:])


def _json(ids: list[int]) -> str:
    return json.dumps([int(i) for i in ids])


def _entity_id(conn: Any, entity_name: str | None) -> int | None:
    """The id of ``entity_name`` (``None`` for none given). Raises NotFoundError for an unknown name."""
    if entity_name is None:
        return None
    name = check.name(entity_name)
    found = reads.ids_by_names(conn, [name]).get(name)
    if found is None:
        raise NotFoundError(f"unknown entity {name!r}", [name])
    return found
