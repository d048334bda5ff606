"""``MemoryService``: the one API of the memory graph for the GUI, the CLI and the MCP server.

Validation at the boundary, one ``BEGIN IMMEDIATE`` transaction per mutation (logged in ``changes``),
FTS rows and embeddings kept in step inside that transaction, and change notification to
listeners of the one change feed (:mod:`limbic.core.changes`) after commit (DESIGN.md §6; Anki's ``OpChanges`` shape, STYLE.md). Reads use the calling
thread's read connection. Search is the pipeline of :mod:`limbic.core.search` (DESIGN.md §4).
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Literal, TypeVar

from limbic.core import mutations
from limbic.core import validation as check
from limbic.core.changes import ChangeFeed
from limbic.core.embedding.base import Embedder
from limbic.core.errors import ConflictError, NotFoundError, ValidationError
from limbic.core.graph_data import GraphArrays, build_graph_arrays, patch_graph_arrays
from limbic.core.inputs import prepare_entity, prepare_observation, prepare_relation
from limbic.core.learning.loop import PARAMS_KEY, LearningLoop
from limbic.core.models import (
    Changes,
    Entity,
    EntityDetail,
    EntityInput,
    Graph,
    GraphPage,
    GraphStats,
    Observation,
    ObservationInput,
    Relation,
    RelationInput,
)
from limbic.core.mutations import UpsertReport
from limbic.core.search.params import ScoringParams
from limbic.core.search.presets import preset
from limbic.core.store import graph, reads, writes
from limbic.core.store.database import Database, WriteTransaction, put_setting, vector_dimension
from limbic.core.store.indexing import reindex
from limbic.core.store.pending import LANDED_OP
from limbic.core.store.search_log import impression_stats
from limbic.core.store.upkeep import VectorUpkeep
from limbic.core.store.vector_index import VectorIndex
from limbic.core.usage import SignalRecorder, record_use

log = logging.getLogger(__name__)

class _Default(enum.Enum):
    """Sentinel of :meth:`MemoryService.open`'s ``embedder``: the active installed model."""

    ACTIVE_MODEL = "active model"


_AUTO = _Default.ACTIVE_MODEL
Result = TypeVar("Result")


class MemoryService:
    """The memory graph of one database file.

    Args:
        database: an open :class:`Database`.
        embedder: the model that embeds entities and queries; ``None`` runs search FTS-only.
        origin: default origin recorded for changes (gui, mcp, cli, import, system).
        background_vectors: where the vectors of a write are computed. Either way a write commits its
            text, FTS rows and pending marks first and the model never runs inside the write lock
            (:mod:`limbic.core.store.pending`). ``False``: the writing call then embeds its own new
            texts and lands them before it returns (one-shot commands, tests). ``True``: a background
            thread does it moments later and the call returns at once (the app, the MCP server);
            until then the entity is found by full-text search.
    """

    def __init__(self, database: Database, embedder: Embedder | None = None, *, origin: str = "cli",
                 background_vectors: bool = False) -> None:
        self.database = database
        self.embedder = embedder
        self.origin = origin
        self.changes = ChangeFeed(database.path)
        self._signals = SignalRecorder(database)
        self.learning = LearningLoop(database, self._write)
        self._vectors = VectorIndex()
        self.vectors = VectorUpkeep(database, embedder, background=background_vectors)

    @classmethod
    def open(cls, path: str | Path | None = None, *, embedder: Embedder | None | Literal[_Default.ACTIVE_MODEL] = _AUTO,
             origin: str = "cli", background_vectors: bool = False) -> MemoryService:
        """Open (creating if needed) a database; ``embedder`` defaults to the active installed model, or None.
        ``background_vectors``: see the class docstring."""
        from limbic.core.paths import default_db_path

        if embedder is _AUTO:
            from limbic.core.embedding.onnx_embedder import load_active_embedder

            embedder = load_active_embedder()
        return cls(Database(path or default_db_path()), embedder, origin=origin, background_vectors=background_vectors)

    def close(self) -> None:
        """Stop the change feed's watcher, finish pending signal writes, then close every connection."""
        self.changes.close()
        self.vectors.close()
        self._signals.shutdown()
        self.database.close()

    # --- notifications -------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[list[Changes]], None], *, other_processes: bool = False) -> Callable[[], None]:
        """Call ``listener(changes)`` after every committed mutation; returns the unsubscribe function.

        A shortcut for ``self.changes.subscribe`` (:class:`~limbic.core.changes.ChangeFeed`): each change
        is delivered once, on the writer's thread (this process) or the feed's one watcher thread
        (other processes' commits, followed while a listener passed ``other_processes=True``).
        """
        return self.changes.subscribe(listener, other_processes=other_processes)

    def _publish(self, txn: WriteTransaction, origin: str, op: str) -> None:
        if not txn.nested:
            self.changes.publish(Changes(txn.change_id, origin, op, frozenset(txn.entity_ids), time.time()))
            if txn.pending_vectors:
                self.vectors.after_commit(sorted(txn.entity_ids))

    def deferred_vectors(self) -> AbstractContextManager[None]:
        """Inside the block, writes leave their vectors pending (text and FTS rows still commit at once);
        call :meth:`wait_for_vectors` after it to compute them all, e.g. with a progress bar (import)."""
        return self.vectors.deferred()

    def _write(self, op: str, origin: str | None, body: Callable[[WriteTransaction], Result]) -> Result:
        """Run ``body`` in one write transaction (savepoint when nested), publish the change record
        once committed, and return what ``body`` returned."""
        origin = origin or self.origin
        with self.database.write(origin, op) as txn:
            result = body(txn)
        self._publish(txn, origin, op)
        return result

    @contextmanager
    def transaction(self, op: str, *, origin: str | None = None) -> Iterator[None]:
        """Run several mutations as one transaction: all are kept or none (one ``changes`` row).

        Each mutation inside still validates and fails on its own (a savepoint), so a caller may
        catch its error and go on. Subscribers are notified once, after the final commit. Reads
        made by this thread inside the block see the uncommitted writes.
        """
        origin = origin or self.origin
        with self.database.write(origin, op) as txn:
            yield
        self._publish(txn, origin, op)

    def _reindex(self, txn: WriteTransaction, entity_ids: Iterable[int]) -> None:
        reindex(txn.conn, list(entity_ids), time.time())
        txn.mark_pending_vectors()

    # --- entities ------------------------------------------------------------------------------

    def create_entities(self, items: Sequence[EntityInput], *, origin: str | None = None) -> list[Entity]:
        """Create entities whose names do not exist yet; existing names are skipped (reference server semantics).

        Returns the created entities only. Raises :class:`ValidationError` for bad input (nothing written).
        """
        check.count(items, "entities")
        prepared = [prepare_entity(item) for item in items]
        return self._write("create_entities", origin, lambda txn: mutations.create_entities(txn, prepared, self._reindex))

    def upsert_entities(self, items: Sequence[EntityInput], *, origin: str | None = None) -> UpsertReport:
        """Create new entities and update existing ones: type/status when given (``None`` keeps them), observations added.

        Exact duplicate observations are skipped. One transaction; bad input raises and writes nothing.
        """
        check.count(items, "entities")
        prepared = [prepare_entity(item) for item in items]
        return self._write("upsert_entities", origin, lambda txn: mutations.upsert_entities(txn, prepared, self._reindex))

    def delete_entities(self, names: Sequence[str], *, origin: str | None = None) -> int:
        """Delete entities with their observations and relations; unknown names are ignored. Returns the count deleted."""
        check.count(names, "entity names")
        names = [check.name(n) for n in names]
        return self._write("delete_entities", origin, lambda txn: mutations.delete_entities(txn, names))

    def rename_entity(self, old: str, new: str, *, origin: str | None = None) -> Entity:
        """Rename an entity; relations follow. Raises NotFoundError, or ConflictError when ``new`` exists."""
        old, new = check.name(old), check.name(new)
        return self._write("rename_entity", origin, lambda txn: mutations.rename_entity(txn, old, new, self._reindex))

    def merge_entities(self, sources: Sequence[str], target: str, *, origin: str | None = None) -> Entity:
        """Merge ``sources`` into ``target``: observations, relations and usage signals move, sources are deleted.

        Duplicate observations and relations are dropped, as are relations between merged entities.
        Raises NotFoundError for unknown names, ConflictError when ``target`` is among ``sources``.
        """
        check.count(sources, "entities to merge")
        sources = list(dict.fromkeys(check.name(s) for s in sources))
        target = check.name(target)
        if not sources:
            raise ValidationError("name at least one entity to merge")
        if target in sources:
            raise ConflictError(f"cannot merge {target!r} into itself")
        return self._write(
            "merge_entities", origin, lambda txn: mutations.merge_entities(txn, sources, target, self._reindex)
        )

    def set_status(self, names: Sequence[str], status: str, *, origin: str | None = None) -> list[Entity]:
        """Set the status (active/paused/completed/archived or a Spanish alias) of existing entities."""
        check.count(names, "entity names")
        names = [check.name(n) for n in names]
        status = check.status(status)
        return self._write("set_status", origin, lambda txn: mutations.set_status(txn, names, status, self._reindex))

    # --- observations --------------------------------------------------------------------------

    def add_observations(
        self, items: Sequence[tuple[str, Sequence[ObservationInput]]], *, origin: str | None = None
    ) -> list[tuple[str, list[str]]]:
        """Add observations to existing entities; returns ``(entity name, contents actually added)`` per item.

        Exact duplicates are skipped. Raises NotFoundError naming every unknown entity (nothing written).
        """
        check.count(items, "observation groups")
        prepared = [(check.name(n), [prepare_observation(o) for o in obs]) for n, obs in items]
        check.count([o for _, obs in prepared for o in obs], "observations")
        return self._write("add_observations", origin, lambda txn: mutations.add_observations(txn, prepared, self._reindex))

    def delete_observations(self, items: Sequence[tuple[str, Sequence[str]]], *, origin: str | None = None) -> int:
        """Delete observations by exact text; unknown entities and texts are ignored. Returns the count deleted."""
        check.count(items, "observation groups")
        prepared = [(check.name(n), [check.observation(c) for c in contents]) for n, contents in items]
        return self._write(
            "delete_observations", origin, lambda txn: mutations.delete_observations(txn, prepared, self._reindex)
        )

    def update_observation(
        self, entity: str, old_content: str, new_content: str, kind: str | None = None, *, origin: str | None = None
    ) -> Observation:
        """Edit an observation's text (and kind, when given) in place. Raises NotFoundError / ConflictError."""
        entity, old_content, new_content = check.name(entity), check.observation(old_content), check.observation(new_content)
        kind = check.kind(kind)
        return self._write(
            "update_observation", origin,
            lambda txn: mutations.update_observation(txn, entity, old_content, new_content, kind, self._reindex),
        )

    def supersede_observation(
        self, entity: str, old_content: str, new: ObservationInput, *, origin: str | None = None
    ) -> Observation:
        """Add ``new`` as the successor of the live observation ``old_content`` (which stays, marked superseded)."""
        entity = check.name(entity)
        new = prepare_observation(ObservationInput(new.content, new.kind, check.observation(old_content),
                                                    new.created_at, new.expires_at, new.weight))
        return self._write(
            "supersede_observation", origin, lambda txn: mutations.supersede_observation(txn, entity, new, self._reindex)
        )

    # --- relations -----------------------------------------------------------------------------

    def create_relations(self, items: Sequence[RelationInput], *, origin: str | None = None) -> list[Relation]:
        """Create relations between existing entities; duplicates of an active relation are skipped.

        Returns only the new relations. Unknown endpoints raise one NotFoundError naming all of them
        (nothing written) — unlike the reference server, which stores dangling relations.
        """
        check.count(items, "relations")
        prepared = [prepare_relation(item) for item in items]
        return self._write("create_relations", origin, lambda txn: mutations.create_relations(txn, prepared))

    def delete_relations(self, items: Sequence[RelationInput], *, origin: str | None = None) -> int:
        """Delete relations (active or ended) matching source, target and type; unknown ones are ignored."""
        check.count(items, "relations")
        prepared = [prepare_relation(item) for item in items]
        return self._write("delete_relations", origin, lambda txn: mutations.delete_relations(txn, prepared))

    def end_relation(self, item: RelationInput, *, at: float | None = None, origin: str | None = None) -> Relation:
        """Mark an active relation as ended at ``at`` (UTC seconds, default now), kept as history.

        Raises NotFoundError when no such relation is active."""
        relation = prepare_relation(item)
        at = check.timestamp(at, "endedAt") or time.time()
        return self._write("end_relation", origin, lambda txn: mutations.end_relation(txn, relation, at))

    # --- reads ---------------------------------------------------------------------------------

    def read_graph(self, *, include_ended: bool = False) -> Graph:
        """The whole graph: every entity with its observations, and the active relations (ended ones on request)."""
        conn = self.database.read()
        return Graph(tuple(reads.all_entities(conn)), tuple(reads.all_relations(conn, include_ended=include_ended)))

    def entity_names(self) -> list[str]:
        """All entity names, by id."""
        return [r[0] for r in self.database.read().execute("SELECT name FROM entities ORDER BY id")]

    def read_graph_page(self, offset: int = 0, limit: int = 100) -> GraphPage:
        """Entities ``offset .. offset+limit`` by id, with the active relations touching them."""
        offset = check.limit(offset, low=0, high=10**9, what="offset")
        limit = check.limit(limit)
        conn = self.database.read()
        entities = reads.all_entities(conn, offset=offset, limit=limit)
        relations = reads.relations_touching(conn, [e.id for e in entities])
        total = conn.execute("SELECT count(*) FROM entities").get
        return GraphPage(tuple(entities), tuple(relations), offset, limit, total)

    def stats(self) -> GraphStats:
        """Counts of entities, active relations, live and superseded observations, types, statuses, vectors."""
        return reads.stats(self.database.read())

    def search_nodes(self, query: str) -> Graph:
        """Entities whose name, type or a live observation contains ``query`` (ASCII case-insensitive), and the
        active relations with at least one endpoint among them (reference server semantics)."""
        text = check.query(query)
        conn = self.database.read()
        ids = reads.search_substring(conn, text)
        return Graph(tuple(reads.entities_by_ids(conn, ids)), tuple(reads.relations_touching(conn, ids)))

    def search_nodes_page(self, query: str, offset: int = 0, limit: int = 100) -> GraphPage:
        """Matches ``offset .. offset+limit`` of :meth:`search_nodes` (same order: by entity id), with the active
        relations touching them; ``total_entities`` counts every match. Raises ``ValidationError`` on a bad
        query, offset or limit."""
        text = check.query(query)
        offset = check.limit(offset, low=0, high=10**9, what="offset")
        limit = check.limit(limit)
        conn = self.database.read()
        ids = reads.search_substring(conn, text)
        page = ids[offset:offset + limit]
        return GraphPage(tuple(reads.entities_by_ids(conn, page)), tuple(reads.relations_touching(conn, page)),
                         offset, limit, len(ids))

    def open_nodes(self, names: Sequence[str], *, record: bool = True, origin: str | None = None) -> Graph:
        """The named entities (unknown names ignored) and the active relations touching them.

        Opening is a use: with ``record`` each opened entity gets an access (count, last access, access
        day) and each pair opened together a co-occurrence, written off the caller's path (seed 000
        "Tracking scope"; DESIGN.md §10), and each opened entity that a search by the same ``origin``
        showed shortly before is a relevance label for that search. Internal reads (import) pass
        ``record=False``.
        """
        check.count(names, "entity names")
        conn = self.database.read()
        entities = reads.entities_by_names(conn, [check.name(n) for n in names])
        ids = [e.id for e in entities]
        if record and ids:
            self._record_use(ids, origin, "open_nodes")
        return Graph(tuple(entities), tuple(reads.relations_touching(conn, ids)))

    def get_entity(self, name: str, *, record: bool = False, origin: str | None = None) -> EntityDetail:
        """One entity with access and impression statistics, degree and all its relations (ended ones included).

        With ``record`` the read is a use (MCP ``get_entity``, the GUI opening the entity): one access is
        recorded off the caller's path, after the statistics returned here were read. Internal reads
        (undo snapshots, import, refreshes after a change) keep the default ``False``.
        Raises NotFoundError for an unknown name.
        """
        name = check.name(name)
        conn = self.database.read()
        found = reads.entities_by_names(conn, [name])
        if not found:
            raise NotFoundError(f"unknown entity {name!r}", [name])
        entity = found[0]
        relations = reads.relations_touching(conn, [entity.id], include_ended=True)
        count, last, days = reads.access_stats(conn, entity.id)
        impressions, last_impression = impression_stats(conn, entity.id)
        degree = sum(1 for r in relations if r.active)
        if record:
            self._record_use([entity.id], origin, "get_entity")
        return EntityDetail(entity, count, last, days, degree, tuple(relations), impressions, last_impression)

    def graph_arrays(self, previous: GraphArrays | None = None) -> GraphArrays:
        """The graph as arrays for drawing (:class:`~limbic.core.graph_data.GraphArrays`), from one read snapshot.

        With ``previous``, only the entities the ``changes`` log names after ``previous.change_id`` are
        read again and patched in; the whole graph is read when they exceed
        :data:`~limbic.core.store.graph.FULL_RELOAD_SHARE` of it. Returns ``previous`` itself when nothing changed.
        """
        conn = self.database.read()
        with conn:  # one consistent snapshot
            if previous is None:
                rows = graph.graph_rows(conn)
            else:
                rows = graph.graph_rows_since(conn, previous.change_id, len(previous))
        if previous is None:
            return build_graph_arrays(rows.entities, rows.relations, rows.change_id)
        return previous if rows.change_id == previous.change_id else patch_graph_arrays(previous, rows)

    def last_change_id(self) -> int:
        return reads.last_change_id(self.database.read())

    def changes_since(self, change_id: int) -> list[Changes]:
        """Logged changes of the data with an id above ``change_id``, oldest first (from any process);
        the steps that only landed computed vectors are left out."""
        return [c for c in reads.changes_since(self.database.read(), change_id) if c.op != LANDED_OP]

    # --- usage signals -------------------------------------------------------------------------

    def record_access(self, names: Sequence[str], *, at: float | None = None, co_occurrence: bool = True) -> None:
        """Record one access of each named entity at ``at`` (UTC seconds, default now) and their co-occurrences.

        For replaying or seeding usage history (the sample graph); agents and the GUI use
        :meth:`mark_used`, :meth:`open_nodes` or :meth:`get_entity`. Raises NotFoundError for unknown
        names. Signals are not logged in ``changes``.
        """
        check.count(names, "entity names")
        at = check.timestamp(at, "access time") or time.time()
        names = [check.name(n) for n in names]
        with self.database.maintenance() as conn:
            ids = writes.require_ids(conn, names)
            writes.record_access(conn, list(ids.values()), at, co_occurrence=co_occurrence)

    def mark_used(self, names: Sequence[str], *, search_id: int | None = None,
                  origin: str | None = None) -> list[str]:
        """Say that these entities were used (they helped): one access each and a co-occurrence per pair.

        The explicit form of a use for agents (MCP ``mark_used``), written before returning. With
        ``search_id`` (a ``SearchOutcome.search_id``) each entity is a relevance label for that search
        only; without it, the searches by the same ``origin`` in the feedback window that showed them.
        Returns the names, without duplicates. Raises ValidationError for an empty or too long list and
        NotFoundError naming every unknown entity or an unknown ``search_id`` (nothing is recorded then).
        """
        check.count(names, "entity names")
        unique = list(dict.fromkeys(check.name(n) for n in names))
        if not unique:
            raise ValidationError("name at least one entity that was used")
        origin = origin or self.origin
        with self.database.maintenance() as conn:
            ids = list(writes.require_ids(conn, unique).values())
            if search_id is not None:
                self.learning.require_search(conn, search_id)
            record_use(conn, ids, time.time(), origin=origin, source="mark_used", search_id=search_id,
                       feedback_window=self.learning.config().feedback_window_seconds)
        return unique

    def _record_use(self, entity_ids: list[int], origin: str | None, source: str) -> None:
        self._signals.record_access(entity_ids, time.time(), origin=origin or self.origin, source=source,
                                    feedback_window=self.learning.config().feedback_window_seconds)

    def wait_for_signals(self, timeout: float = 10.0) -> None:
        """Block until access/co-occurrence recordings queued so far are written (tests, shutdown)."""
        self._signals.wait(timeout)

    # --- settings ------------------------------------------------------------------------------

    def setting(self, key: str) -> str | None:
        """The stored value of setting ``key`` (None when unset); inside :meth:`transaction` it sees that
        transaction's writes."""
        return self.database.get_setting(key)

    def save_setting(self, key: str, value: str, *, origin: str | None = None) -> None:
        """Store ``value`` under setting ``key`` (one transaction, or part of the caller's)."""
        self._write("save_setting", origin, lambda txn: put_setting(txn.conn, key, value))

    # --- scoring parameters --------------------------------------------------------------------

    def scoring_params(self) -> ScoringParams:
        """The saved scoring parameters (defaults when none were saved); what MCP ``search_semantic`` uses."""
        text = self.database.get_setting(PARAMS_KEY)
        return ScoringParams.from_json(text) if text else preset("default")

    def save_scoring_params(self, params: ScoringParams, *, origin: str | None = None) -> None:
        """Persist ``params`` as the default for every client of this database."""
        self._write("save_scoring_params", origin, lambda txn: put_setting(txn.conn, PARAMS_KEY, params.to_json()))

    # --- search --------------------------------------------------------------------------------

    def search(
        self, query: str, limit: int = 10, params: ScoringParams | None = None, *,
        record: bool = True, origin: str | None = None,
    ):
        """Hybrid search with limbic re-ranking (DESIGN.md §4); returns a :class:`~limbic.core.search.SearchOutcome`.

        ``params`` defaults to the saved scoring parameters. Runs FTS-only when no embedder is attached
        or when the stored vectors have another dimension (until ``limbic model reembed``); vectors of
        another model with the same dimension are left out of KNN, so entities not yet re-embedded are
        found by the full-text branch only. With
        ``record`` (and shadow logging enabled), the search gets a ``search_id`` and is logged
        (``search_events``, with its A/B group) with the returned top-K as impressions
        (``search_results``, ``entity_impressions``) and its candidate arrays, off the caller's path.
        Being returned is not a use: no access, access day or co-occurrence is recorded (DESIGN.md §10).
        ``pending_vectors`` says how many entities still wait for vectors (found by full-text only meanwhile).
        Raises ValidationError for an empty or too long query or a limit outside 1..1000.
        """
        from limbic.core.search.pipeline import run_search

        params = params or self.scoring_params()
        embedder = self._search_embedder()
        outcome = run_search(self.database.read(), embedder, query, limit, params, vector_index=self._vectors)
        pending = self.pending_vectors() if embedder is not None else 0
        if pending:
            outcome = dataclasses.replace(outcome, pending_vectors=pending)
        config = self.learning.config()
        if record and config.enabled and outcome.results:
            search_id = self.learning.new_search_id()
            outcome = dataclasses.replace(outcome, search_id=search_id)
            self._signals.record_search(outcome, search_id, origin or self.origin,
                                        self.learning.treatment(outcome.candidate_set.query), params.to_json(),
                                        self.learning.preset_name(params), config.retention)
        return outcome

    def rerank(self, candidate_set, params: ScoringParams):
        """Re-score a cached candidate set with other parameters: no SQL, no model call."""
        from limbic.core.search.pipeline import rerank

        return rerank(candidate_set, params)

    def stale_vectors(self) -> int:
        """Vectors that are missing or were made by another model than the attached embedder: entities
        without a current entity vector plus live observations without a current observation vector.

        Search still runs hybrid: KNN covers the current vectors and the full-text branch finds the
        rest, until ``limbic model reembed`` (:meth:`reembed`) fills them in.
        """
        return self.vectors.stale()

    def pending_vectors(self) -> int:
        """Entities whose new or changed texts wait for their vectors (0 without an embedding model).

        A write commits its text at once and its vectors land shortly after, computed outside the write
        lock (:mod:`limbic.core.store.upkeep`); until then the entity is found by full-text search.
        """
        return self.vectors.pending()

    def wait_for_vectors(self, timeout: float | None = None,
                         progress: Callable[[int, int], None] | None = None) -> bool:
        """Compute every pending vector (by the background embedder, or on this thread without one) and
        wait (``timeout`` seconds, ``None`` = no limit; only with ``background_vectors``).
        ``progress(done, total)`` counts entities. Returns True when none is pending (True without a model)."""
        return self.vectors.wait(timeout, progress)

    def reembed(self, progress: Callable[[int, int], None] | None = None, batch_size: int = 64):
        """Re-embed every entity whose vector is stale (resumable); returns the
        :class:`~limbic.core.store.reembed.ReembedReport` (model, embedded, stale, recreated_table, seconds).

        Raises ModelNotInstalledError when no embedder is attached."""
        return self.vectors.reembed(progress, batch_size)

    def _search_embedder(self) -> Embedder | None:
        """The query encoder, or ``None`` (FTS-only) when the stored vectors have another dimension."""
        if self.embedder is None:
            return None
        stored = vector_dimension(self.database.read())
        return self.embedder if stored in (None, self.embedder.dimension) else None
