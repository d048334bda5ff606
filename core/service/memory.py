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
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from limbic.core import validation as check
from limbic.core.embedding.base import Embedder
from limbic.core.learning.loop import LearningLoop
from limbic.core.models import (
    Changes,
)
from limbic.core.service.changes import ChangeFeed
from limbic.core.service.curating import Curation
from limbic.core.service.entities import Entities
from limbic.core.service.history import History
from limbic.core.service.lifecycle import Lifecycle
from limbic.core.service.projects import Projects
from limbic.core.service.reflecting import Reflections
from limbic.core.service.relations import Relations
from limbic.core.service.restoring import Snapshots
from limbic.core.service.searching import Search
from limbic.core.service.splitting import Splits
from limbic.core.service.usage import Usage
from limbic.core.store import scope
from limbic.core.store.backend import open_database
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


def _inline(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, here: :attr:`MemoryService.offload`'s default."""
    return fn(*args)


class MemoryService:
    """The memory graph of one database: the context every manager shares, and the managers.

    It owns what is shared — the database, the embedder, the default origin, the change feed (:attr:`changes`),
    the vectors' upkeep (:attr:`vectors`), the KNN index (:attr:`index`) and the write path (:meth:`write`, one
    logged transaction whose change record is published after commit) — and reaches each concern through one
    manager, Anki-style (docs/architecture.md "The service"):

    - :attr:`entities` (:class:`~limbic.core.service.entities.Entities`): entities and observations, writes and reads;
    - :attr:`relations` (:class:`~limbic.core.service.relations.Relations`);
    - :attr:`search` (:class:`~limbic.core.service.searching.Search`): ranked search, scoring parameters, vectors' state;
    - :attr:`usage` (:class:`~limbic.core.service.usage.Usage`): implicit feedback (access, *mark as used*);
    - :attr:`learning` (:class:`~limbic.core.learning.loop.LearningLoop`): tuning from that feedback;
    - :attr:`curation` (:class:`~limbic.core.service.curating.Curation`): duplicates and what was kept apart;
    - :attr:`splits` (:class:`~limbic.core.service.splitting.Splits`): entities that grew too large;
    - :attr:`reflections` (:class:`~limbic.core.service.reflecting.Reflections`);
    - :attr:`lifecycle` (:class:`~limbic.core.service.lifecycle.Lifecycle`): expiry, retention, contradictions;
    - :attr:`history` (:class:`~limbic.core.service.history.History`): the change log and the decision log;
    - :attr:`snapshots` (:class:`~limbic.core.service.restoring.Snapshots`): exact restores, what undo is built on;
    - :attr:`projects` (:class:`~limbic.core.service.projects.Projects`): projects and agents' tokens.

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

    :attr:`offload` runs the CPU-heavy pure steps (a split's clustering and its topics' names): ``offload(fn,
    *args)`` returns ``fn(*args)``; by default here, and the app passes its worker process's runner, so that
    scikit-learn (about 70 MB) and the clustering's arrays stay out of the app's process (docs/performance.md
    "Memory"). ``fn`` is then a module-level function and its arguments and result can be pickled.
    """

    def __init__(self, database: Database, embedder: Embedder | None = None, *, origin: str = "cli",
                 background_vectors: bool = False) -> None:
        self.database = database
        self.embedder = embedder
        self.offload: Callable[..., Any] = _inline
        self.origin = origin
        self.changes = ChangeFeed(database)
        self.learning = LearningLoop(database, self.write)
        self.index = VectorIndex(graph_builder(database))
        self.vectors = VectorUpkeep(database, embedder, background=background_vectors)
        self.entities = Entities(self)
        self.relations = Relations(self)
        self.search = Search(self)
        self.usage = Usage(self)
        self.curation = Curation(self)
        self.splits = Splits(self)
        self.reflections = Reflections(self)
        self.lifecycle = Lifecycle(self)
        self.history = History(self)
        self.snapshots = Snapshots(self)
        self.projects = Projects(self)
        self.vectors.after_land = self.lifecycle.after_land  # the contradiction check of new observations
        if background_vectors:
            self.lifecycle.start_sweeps()



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

    def attach_embedder(self, embedder: Embedder) -> None:
        """Search and embed with ``embedder`` from now on, without opening the memory again (a model installed
        while the app runs): the vectors that wait for it are computed (in the background with
        ``background_vectors``), and search ranks on full text alone until they cover the memory
        (:meth:`Search.query <limbic.core.service.searching.Search.query>`). Raises ValueError when a model is
        attached already."""
        if self.embedder is not None:
            raise ValueError(f"the model {self.embedder.name!r} is attached already")
        self.vectors.attach(embedder)
        self.embedder = embedder

    def close(self) -> None:
        """Wait for a warm-up under way, stop the change feed's watcher, finish pending signal writes, then
        close every connection."""
        self.search.wait_for_warm_up()
        self.lifecycle.stop_sweeps()
        self.changes.close()
        self.vectors.close()
        self.usage.signals.shutdown()
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
        return self.database.shown_address

    @property
    def shareable_address(self) -> str:
        """The memory's address for an agent's configuration: the file path, or the URL without its password."""
        return self.database.shareable_address

    # --- notifications -------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[list[Changes]], None], *, other_processes: bool = False) -> Callable[[], None]:
        """Call ``listener(changes)`` after every committed mutation; returns the unsubscribe function.

        A shortcut for ``self.changes.subscribe`` (:class:`~limbic.core.service.changes.ChangeFeed`): each change
        is delivered once, on the writer's thread (this process) or the feed's one watcher thread
        (other processes' commits, followed while a listener passed ``other_processes=True``).
        """
        return self.changes.subscribe(listener, other_processes=other_processes)

    def publish(self, txn: WriteTransaction, origin: str, op: str) -> Changes:
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

    def write(self, op: str, origin: str | None, body: Callable[[WriteTransaction], Result],
               texts: Sequence[tuple[str, str]] | None = None) -> Result:
        """Run ``body`` in one write transaction (savepoint when nested), publish the change record
        once committed, and return what ``body`` returned. ``texts``: the ``(entity name, content)`` of the
        observations it may add, embedded first for their contradiction check (:meth:`Lifecycle.checked <limbic.core.service.lifecycle.Lifecycle.checked>`)."""
        origin = origin or self.origin
        vectors = self.lifecycle.written_vectors(op, origin, texts)
        with self.database.write(origin, op) as txn:
            result = self.lifecycle.checked(txn, op, origin, body, vectors)
        self.publish(txn, origin, op)
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
        self.publish(txn, origin, op)

    def reindex(self, txn: WriteTransaction, entity_ids: Iterable[int]) -> None:
        reindex(txn.conn, list(entity_ids), time.time())
        txn.mark_pending_vectors()

















    # --- settings ------------------------------------------------------------------------------

    def setting(self, key: str) -> str | None:
        """The stored value of setting ``key`` (None when unset); inside :meth:`transaction` it sees that
        transaction's writes."""
        return self.database.get_setting(key)

    def save_setting(self, key: str, value: str, *, origin: str | None = None) -> None:
        """Store ``value`` under setting ``key`` (one transaction, or part of the caller's)."""
        self.write("save_setting", origin, lambda txn: put_setting(txn.conn, key, value))


