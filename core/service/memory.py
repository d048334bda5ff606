"""``MemoryService``: the one API of the memory graph for the GUI, the CLI and the MCP server.

This module holds its life cycle, notifications and writes; its reads and uses are in
:mod:`limbic.core.service.reads`, its search and vector state in :mod:`limbic.core.service.searching`,
its snapshots and exact restores (what undo is built on) in :mod:`limbic.core.service.restoring`.

Validation at the boundary, one ``BEGIN IMMEDIATE`` transaction per mutation (logged in ``changes``),
FTS rows and embeddings kept in step inside that transaction, and change notification to
listeners of the one change feed (:mod:`limbic.core.service.changes`) after commit (Anki's ``OpChanges`` shape). Reads use the calling
thread's read connection. Search is the pipeline of :mod:`limbic.core.search` (docs/architecture.md "The search pipeline").
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Literal, TypeVar

from limbic.core import validation as check
from limbic.core.embedding.base import Embedder
from limbic.core.errors import ConflictError, ValidationError
from limbic.core.learning.loop import PARAMS_KEY, LearningLoop
from limbic.core.models import (
    Changes,
    Entity,
    EntityInput,
    Observation,
    ObservationInput,
    Relation,
    RelationInput,
)
from limbic.core.search.params import ScoringParams
from limbic.core.service import mutations
from limbic.core.service.changes import ChangeFeed
from limbic.core.service.curating import Curating
from limbic.core.service.history import ChangeHistory
from limbic.core.service.inputs import prepare_entity, prepare_observation, prepare_relation
from limbic.core.service.lifecycle import Lifecycle
from limbic.core.service.mutations import UpsertReport
from limbic.core.service.reads import ReadsAndUses
from limbic.core.service.reflecting import Reflecting
from limbic.core.service.restoring import SnapshotsAndRestores
from limbic.core.service.searching import SearchAndVectors
from limbic.core.service.splitting import Splitting
from limbic.core.service.tokens import Tokens
from limbic.core.service.usage import SignalRecorder
from limbic.core.store import scope
from limbic.core.store.backend import open_database, shareable_address, shown_address
from limbic.core.store.database import Database, WriteTransaction
from limbic.core.store.indexing import reindex
from limbic.core.store.schema import put_setting
from limbic.core.vectors.server_graph import graph_builder
from limbic.core.vectors.upkeep import VectorUpkeep
from limbic.core.vectors.vector_index import VectorIndex

log = logging.getLogger(__name__)

class _Default(enum.Enum):
    """Sentinel of :meth:`MemoryService.open`'s ``embedder``: the active installed model."""

    ACTIVE_MODEL = "active model"


_AUTO = _Default.ACTIVE_MODEL
Result = TypeVar("Result")


class MemoryService(ReadsAndUses, SearchAndVectors, SnapshotsAndRestores, Lifecycle, Curating, Reflecting, Splitting,
                    Tokens, ChangeHistory):
    """The memory graph of one database file.

    Args:
        database: an open :class:`Database` (or PostgreSQL memory: :func:`~limbic.core.store.backend.open_database`).
        embedder: the model that embeds entities and queries; ``None`` runs search FTS-only.
        origin: default origin recorded for changes (gui, mcp, stdio, cli, import, system; ``mcp:NAME`` for a
            named MCP token, docs/mcp.md "Teams").
        background_vectors: where the vectors of a write are computed. Either way a write commits its
            text, FTS rows and pending marks first and the model never runs inside the write lock
            (:mod:`limbic.core.vectors.pending`). ``False``: the writing call then embeds its own new
            texts and lands them before it returns (one-shot commands, tests). ``True``: a background
            thread does it moments later and the call returns at once (the app, the MCP server);
            until then the entity is found by full-text search. With ``True`` the text of expired
            observations is also swept out of the indexes in the background (docs/lifecycle.md "Expiry").
    """

    def __init__(self, database: Database, embedder: Embedder | None = None, *, origin: str = "cli",
                 background_vectors: bool = False) -> None:
        self.database = database
        self.embedder = embedder
        self.origin = origin
        self.changes = ChangeFeed(database.path, address=database.listen_address)
        self._signals = SignalRecorder(database)
        self.learning = LearningLoop(database, self._write)
        self._vectors = VectorIndex(graph_builder(database))
        self._warm_up_thread: threading.Thread | None = None
        self.vectors = VectorUpkeep(database, embedder, background=background_vectors)
        self._sweeper = None
        self.vectors.after_land = self._after_land  # the contradiction check of new observations
        if background_vectors:
            self._start_sweeps()

    @classmethod
    def open(cls, path: str | Path | None = None, *, embedder: Embedder | None | Literal[_Default.ACTIVE_MODEL] = _AUTO,
             origin: str = "cli", background_vectors: bool = False) -> MemoryService:
        """Open (creating if needed) a database; ``embedder`` defaults to the active installed model, or None.
        ``background_vectors``: see the class docstring."""
        from limbic.core.paths import default_db_path

        database = open_database(path or default_db_path())  # first: nothing is made locally for a memory out of reach
        try:
            if embedder is _AUTO:
                from limbic.core.embedding.onnx_embedder import load_active_embedder

                embedder = load_active_embedder()
            return cls(database, embedder, origin=origin, background_vectors=background_vectors)
        except BaseException:
            database.close()
            raise

    def close(self) -> None:
        """Wait for a warm-up under way, stop the change feed's watcher, finish pending signal writes, then
        close every connection."""
        if self._warm_up_thread is not None:
            self._warm_up_thread.join()
        self._stop_sweeps()
        self.changes.close()
        self.vectors.close()
        self._signals.shutdown()
        self.database.close()

    def scoped(self, project: str | None) -> AbstractContextManager[None]:
        """Bind every call made inside the block (on this thread, and in worker threads started with its context)
        to ``project``: reads, searches, name lookups and writes then see and touch that project's entities and
        the global ones only; another project's entity is unknown (docs/lifecycle.md "Project scope").
        ``None`` keeps the current binding. Raises ValidationError for a bad name, or another project than the
        one the call is bound to already (a binding only narrows)."""
        return scope.bound(None if project is None else check.label(project, "project"))

    @property
    def shown_address(self) -> str:
        """What to show of the memory's address: the file path, or the URL with its password masked."""
        return shown_address(self.database)

    @property
    def shareable_address(self) -> str:
        """The memory's address for an agent's configuration: the file path, or the URL without its password."""
        return shareable_address(self.database)

    # --- notifications -------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[list[Changes]], None], *, other_processes: bool = False) -> Callable[[], None]:
        """Call ``listener(changes)`` after every committed mutation; returns the unsubscribe function.

        A shortcut for ``self.changes.subscribe`` (:class:`~limbic.core.service.changes.ChangeFeed`): each change
        is delivered once, on the writer's thread (this process) or the feed's one watcher thread
        (other processes' commits, followed while a listener passed ``other_processes=True``).
        """
        return self.changes.subscribe(listener, other_processes=other_processes)

    def _publish(self, txn: WriteTransaction, origin: str, op: str) -> Changes:
        """The change record of ``txn``, published (and the vector filler woken) when it is the outermost
        transaction; a savepoint's record (``change_id`` 0) is only returned. The write has committed: a failure
        here (the database gone meanwhile, a model error) is logged, never raised."""
        record = Changes(txn.change_id, origin, op, frozenset(txn.entity_ids), time.time())
        if not txn.nested:
            try:
                self.changes.publish(record)
                if txn.pending_vectors:
                    self.vectors.after_commit(sorted(txn.entity_ids))
            except Exception as exc:  # noqa: BLE001 - the write is stored: what follows it never makes it an error
                log.warning("change %d is stored; what follows it failed (%s), its vectors stay pending",
                            txn.change_id, exc)
        return record

    def deferred_vectors(self) -> AbstractContextManager[None]:
        """Inside the block, writes leave their vectors pending (text and FTS rows still commit at once);
        call :meth:`wait_for_vectors` after it to compute them all, e.g. with a progress bar (import)."""
        return self.vectors.deferred()

    def _write(self, op: str, origin: str | None, body: Callable[[WriteTransaction], Result],
               texts: Sequence[tuple[str, str]] | None = None) -> Result:
        """Run ``body`` in one write transaction (savepoint when nested), publish the change record
        once committed, and return what ``body`` returned. ``texts``: the ``(entity name, content)`` of the
        observations it may add, embedded first for their contradiction check (:meth:`_checked`)."""
        origin = origin or self.origin
        vectors = self._written_vectors(op, origin, texts)
        with self.database.write(origin, op) as txn:
            result = self._checked(txn, op, origin, body, vectors)
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
        return self._write("create_entities", origin, lambda txn: mutations.create_entities(txn, prepared, self._reindex),
                           [(item.name, o.content) for item in prepared for o in item.observations])

    def upsert_entities(self, items: Sequence[EntityInput], *, origin: str | None = None) -> UpsertReport:
        """Create new entities and update existing ones: type/status when given (``None`` keeps them), observations added.

        Exact duplicate observations are skipped. One transaction; bad input raises and writes nothing.
        """
        check.count(items, "entities")
        prepared = [prepare_entity(item) for item in items]
        return self._write("upsert_entities", origin, lambda txn: mutations.upsert_entities(txn, prepared, self._reindex),
                           [(item.name, o.content) for item in prepared for o in item.observations])

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
        return self._write("add_observations", origin, lambda txn: mutations.add_observations(txn, prepared, self._reindex),
                           [(name, o.content) for name, obs in prepared for o in obs])

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
            "supersede_observation", origin, lambda txn: mutations.supersede_observation(txn, entity, new, self._reindex),
            [(entity, new.content)],
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

    # --- settings ------------------------------------------------------------------------------

    def setting(self, key: str) -> str | None:
        """The stored value of setting ``key`` (None when unset); inside :meth:`transaction` it sees that
        transaction's writes."""
        return self.database.get_setting(key)

    def save_setting(self, key: str, value: str, *, origin: str | None = None) -> None:
        """Store ``value`` under setting ``key`` (one transaction, or part of the caller's)."""
        self._write("save_setting", origin, lambda txn: put_setting(txn.conn, key, value))

    # --- scoring parameters --------------------------------------------------------------------

    def save_scoring_params(self, params: ScoringParams, *, origin: str | None = None) -> None:
        """Persist ``params`` as the default for every client of this database."""
        self._write("save_scoring_params", origin, lambda txn: put_setting(txn.conn, PARAMS_KEY, params.to_json()))
