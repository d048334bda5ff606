"""A memory's database as the code above the store sees it, whichever engine holds it: :class:`Database`.

:func:`~limbic.core.store.backend.open_database` opens one from its address: a SQLite file
(:class:`~limbic.core.store.sqlite.database.SqliteDatabase`) or a PostgreSQL URL
(:class:`~limbic.core.store.postgres.database.PgDatabase`). Nothing above the store names those classes or
asks which one it holds; what differs between the engines is behind this interface, behind the connections'
``ops`` (:class:`~limbic.core.store.operations.Operations`) and in the store's modules (docs/architecture.md
"Storage backends").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

import numpy as np

from limbic.core.models import Changes
from limbic.core.store.connection import Connection
from limbic.core.store.transactions import WriteTransaction

__all__ = ["Database", "Follower", "NearestIndex", "WriteTransaction"]


class Follower(Protocol):
    """A started follower of other processes' commits (:meth:`Database.follow`)."""

    def stop(self) -> None:
        """Stop following and wait for the follower's thread (idempotent)."""
        ...


class NearestIndex(Protocol):
    """Approximate nearest neighbours kept by the database server over the vector tables (pgvector's HNSW
    indexes), shared by every process on every machine: proposals of which rows to score exactly, never
    similarities (core/vectors/server_graph.py)."""

    def ready(self) -> bool:
        """Whether the indexes are built and valid; when not, their build starts in the background (each call
        before they are ready costs one read)."""
        ...

    def nearest(self, tables: Sequence[str], vector: np.ndarray, count: int) -> list[list[int]]:
        """For each of ``tables``, the rowids of its ``count`` rows nearest ``vector`` ``(d,) float32`` by cosine
        distance, nearest first (approximate; at most as many as the index can give, pgvector's 1,000)."""
        ...

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a build of the indexes under way (tests, benchmarks)."""
        ...


class Database(Protocol):
    """One open memory (created and migrated when opened).

    Every mutation runs in :meth:`write` (one transaction, logged in ``changes``) or :meth:`maintenance`;
    reads run on :meth:`read`'s connection, ``with conn:`` holding one consistent snapshot.
    """

    @property
    def path(self) -> Path:
        """The memory's file, or (a memory on a server) this machine's place for the memory's local files
        (the KNN graph, the embedder's turn locks): files next to it belong to this memory."""
        ...

    @property
    def closed(self) -> bool: ...

    @property
    def writing(self) -> bool:
        """Whether the calling thread holds an open write transaction (a write now would be a savepoint of it)."""
        ...

    @property
    def schema_version(self) -> int:
        """The number of the last migration applied (:func:`~limbic.core.store.schema.latest_schema_version`)."""
        ...

    @property
    def shown_address(self) -> str:
        """What to show of the address: the file path, or the URL with its password masked."""
        ...

    @property
    def shareable_address(self) -> str:
        """The address to put in an agent's configuration: the file path, or the URL without its password."""
        ...

    def follow(self, deliver: Callable[[list[Changes]], None], *, interval: float) -> Follower:
        """Start following the commits of other processes: ``deliver`` is called on the follower's own thread with
        the new change records, oldest first, from now on. SQLite polls the file every ``interval`` seconds
        (:class:`~limbic.core.store.sqlite.watcher.ChangeWatcher`); PostgreSQL listens for the ``NOTIFY`` of each
        commit (:class:`~limbic.core.store.postgres.listen.ChangeListener`, ``interval`` its safety net)."""
        ...

    @property
    def nearest_index(self) -> NearestIndex | None:
        """The server's approximate nearest-neighbour index over the vector tables, or None when the engine keeps
        none (each process then builds its own graph of a large vector copy: core/vectors/approximate.py)."""
        ...

    def read(self) -> Connection:
        """This thread's (or this request's) read connection; the write connection inside this thread's write
        transaction, so a writer reads its own writes.

        Raises:
            DatabaseClosedError: :meth:`close` was called.
            DatabaseUnavailableError: the server does not answer.
            StoreBusyError: every connection stayed in use past the engine's wait.
        """
        ...

    def write(self, origin: str, op: str) -> AbstractContextManager[WriteTransaction]:
        """One transaction logged in ``changes`` (:meth:`~limbic.core.store.transactions.Transactions.write`)."""
        ...

    def maintenance(self) -> AbstractContextManager[Connection]:
        """One transaction without a ``changes`` row
        (:meth:`~limbic.core.store.transactions.Transactions.maintenance`)."""
        ...

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        """The ``settings`` value of ``key``, or ``default``."""
        ...

    def open_read_connections(self) -> int:
        """Read connections held now (the pool's, leased or idle)."""
        ...

    def release_cache(self) -> None:
        """Give back the cache this thread's read connection holds, after a one-off bulk read whose pages will
        not be read again soon (SQLite's page cache; nothing on a server)."""
        ...

    def close(self) -> None:
        """Close every connection (idempotent)."""
        ...
