"""The SQLite file: connections, pragmas, migrations, and the one write transaction.

apsw with sqlite-vec loaded into every connection (DESIGN.md §2 "SQLite driver", "vectors").
One write connection guarded by a lock; one read connection per thread (DESIGN.md §6, datasette's
shape). Every mutation runs in :meth:`Database.write`: ``BEGIN IMMEDIATE`` … append to ``changes`` …
``COMMIT``, or a rollback that leaves nothing behind. Schema versions are ``PRAGMA user_version``;
migrations are the ordered ``migrations/NNN_*.sql`` files, each applied in one transaction.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import apsw
import sqlite_vec

from limbic.core.errors import StoreBusyError

BUSY_TIMEOUT_MS = 10_000
VECTOR_TABLE = "entity_embeddings"


def _migrations() -> list[tuple[int, str, str]]:
    folder = resources.files("limbic.core.store") / "migrations"
    found = []
    for item in folder.iterdir():
        if item.name.endswith(".sql"):
            version = int(item.name.split("_", 1)[0])
            found.append((version, item.name, item.read_text(encoding="utf-8")))
    return sorted(found)


def latest_schema_version() -> int:
    """The schema version (``PRAGMA user_version``) a database has once every migration shipped is applied."""
    return _migrations()[-1][0]


def _configure(conn: apsw.Connection) -> None:
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("PRAGMA cache_size = -64000")
    # Unicode lower-casing for search_nodes (SQLite's lower() and LIKE fold ASCII only).
    conn.create_scalar_function("unicode_lower", _unicode_lower, 1, deterministic=True)


def _unicode_lower(text: str | None) -> str | None:
    return text.lower() if isinstance(text, str) else text


class WriteTransaction:
    """Handle given to the body of :meth:`Database.write`.

    ``conn`` is the write connection inside ``BEGIN IMMEDIATE``; ``touch(ids)`` records which entity
    ids the change affected (stored as JSON in the ``changes`` row and sent to subscribers). A nested
    transaction (a savepoint) passes its ids on to the outer one when it succeeds.
    """

    def __init__(self, conn: apsw.Connection, parent: WriteTransaction | None = None) -> None:
        self.conn = conn
        self.parent = parent
        self.entity_ids: set[int] = set()
        self.change_id = 0

    @property
    def nested(self) -> bool:
        return self.parent is not None

    def touch(self, entity_ids: int | Sequence[int]) -> None:
        if isinstance(entity_ids, int):
            self.entity_ids.add(entity_ids)
        else:
            self.entity_ids.update(int(i) for i in entity_ids)


class Database:
    """One SQLite database file (created and migrated on open).

    Args:
        path: file path; parent directories are created. ``":memory:"`` is refused because
            readers on other threads could not see the data — use a temporary file.
    Raises:
        StoreBusyError: the file stayed locked by another process for more than 10 s.
    """

    def __init__(self, path: str | Path) -> None:
        if str(path) == ":memory:":
            raise ValueError("Database needs a file path; use a temporary file for tests")
        self.path = Path(path).expanduser().resolve()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.RLock()
        self._open: list[WriteTransaction] = []  # the writer's open transactions, outermost first
        self._owner: int | None = None  # thread holding an open write transaction
        self._local = threading.local()
        self._readers: list[apsw.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        self._writer = self._connect()
        self._writer.execute("PRAGMA journal_mode = WAL")
        self._migrate()

    # --- connections ---------------------------------------------------------------------------

    def _connect(self) -> apsw.Connection:
        conn = apsw.Connection(str(self.path))
        _configure(conn)
        return conn

    def read(self) -> apsw.Connection:
        """This thread's read connection (created on first use, reused afterwards).

        A thread inside a write transaction gets the write connection, so it reads its own writes.
        """
        if self._closed:
            raise RuntimeError("database is closed")
        if self._owner == threading.get_ident():
            return self._writer
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection this object opened (readers of all threads, then the writer)."""
        if self._closed:
            return
        self._closed = True
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()
        with self._write_lock:
            self._writer.close()

    @property
    def closed(self) -> bool:
        return self._closed

    # --- writing -------------------------------------------------------------------------------

    @contextmanager
    def write(self, origin: str, op: str) -> Iterator[WriteTransaction]:
        """One ``BEGIN IMMEDIATE`` transaction on the write connection, logged in ``changes``.

        On normal exit the ``changes`` row is appended and the transaction commits; on any
        exception everything is rolled back and the exception propagates. Called again by the same
        thread inside an open transaction, it opens a savepoint instead: a failure undoes only that
        savepoint, and the outermost transaction writes the one ``changes`` row and commits.

        Raises:
            StoreBusyError: another process held the write lock past the busy timeout.
        """
        if self._closed:
            raise RuntimeError("database is closed")
        with self._write_lock:
            conn = self._writer
            if self._open:
                yield from self._savepoint(conn)
                return
            try:
                conn.execute("BEGIN IMMEDIATE")
            except apsw.BusyError as exc:
                raise StoreBusyError(
                    f"the database {self.path} is locked by another process; try again"
                ) from exc
            txn = WriteTransaction(conn)
            self._open.append(txn)
            self._owner = threading.get_ident()
            try:
                yield txn
                conn.execute(
                    "INSERT INTO changes(at, origin, op, entity_ids) VALUES (?, ?, ?, ?)",
                    (time.time(), origin, op, json.dumps(sorted(txn.entity_ids))),
                )
                txn.change_id = conn.last_insert_rowid()
                conn.execute("COMMIT")
            except BaseException:
                if not conn.getautocommit():
                    conn.execute("ROLLBACK")
                raise
            finally:
                self._open.clear()
                self._owner = None

    def _savepoint(self, conn: apsw.Connection) -> Iterator[WriteTransaction]:
        parent = self._open[-1]
        name = f"limbic_{len(self._open)}"
        conn.execute(f"SAVEPOINT {name}")
        txn = WriteTransaction(conn, parent)
        self._open.append(txn)
        try:
            yield txn
            conn.execute(f"RELEASE {name}")
            parent.touch(txn.entity_ids)
        except BaseException:
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
            raise
        finally:
            self._open.pop()

    @contextmanager
    def maintenance(self) -> Iterator[apsw.Connection]:
        """``BEGIN IMMEDIATE`` without a ``changes`` row: signals and logs that views need not follow.

        Inside the same thread's open write transaction it is a savepoint of that transaction.
        """
        with self._write_lock:
            conn = self._writer
            if self._open:
                for _ in self._savepoint(conn):
                    yield conn
                return
            try:
                conn.execute("BEGIN IMMEDIATE")
            except apsw.BusyError as exc:
                raise StoreBusyError(f"the database {self.path} is locked by another process") from exc
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if not conn.getautocommit():
                    conn.execute("ROLLBACK")
                raise

    def _migrate(self) -> None:
        with self._write_lock:
            conn = self._writer
            current = conn.execute("PRAGMA user_version").fetchone()[0]
            for version, name, sql in _migrations():
                if version <= current:
                    continue
                conn.execute("BEGIN IMMEDIATE")
                try:
                    # Another process may have migrated between our read and the lock.
                    if conn.execute("PRAGMA user_version").fetchone()[0] >= version:
                        conn.execute("ROLLBACK")
                        continue
                    conn.execute(sql)
                    conn.execute(f"PRAGMA user_version = {version}")
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise RuntimeError(f"migration {name} failed") from None

    @property
    def schema_version(self) -> int:
        return self.read().execute("PRAGMA user_version").fetchone()[0]

    # --- settings and vectors ------------------------------------------------------------------

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        row = self.read().execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def vector_dimension(self) -> int | None:
        """Dimension of the ``entity_embeddings`` vec0 table, or ``None`` when it does not exist."""
        value = self.get_setting("embedding_dimension")
        return int(value) if value else None

    def ensure_vector_table(self, conn: apsw.Connection, dimension: int, model: str) -> bool:
        """Create (or recreate, when the dimension differs) the vec0 table inside the caller's transaction.

        Returns True when the table was (re)created empty, so every entity needs a new vector.
        """
        row = conn.execute("SELECT value FROM settings WHERE key = 'embedding_dimension'").fetchone()
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ?", (VECTOR_TABLE,)
        ).fetchone()
        if exists and row and int(row[0]) == dimension:
            return False
        if exists:
            conn.execute(f"DROP TABLE {VECTOR_TABLE}")
        conn.execute(
            f"CREATE VIRTUAL TABLE {VECTOR_TABLE} USING vec0("
            f"embedding float[{int(dimension)}] distance_metric=cosine)"
        )
        conn.execute(
            "INSERT INTO settings(key, value) VALUES ('embedding_dimension', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (str(int(dimension)),),
        )
        conn.execute(
            "INSERT INTO settings(key, value) VALUES ('embedding_model', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (model,),
        )
        return True

    def data_version(self, conn: apsw.Connection) -> int:
        """``PRAGMA data_version`` of ``conn``: changes when another connection commits."""
        return conn.execute("PRAGMA data_version").fetchone()[0]
