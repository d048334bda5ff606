"""The schema: migrations, the vec0 vector tables, settings rows and the change log's op names.

Schema versions are ``PRAGMA user_version``; migrations are the ordered ``migrations/NNN_*.sql`` files, each
applied in one transaction. The vector tables are sqlite-vec ``vec0`` tables with cosine distance, created
when the first model writes (their dimension is the model's).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import apsw

from limbic.core.errors import MigrationError
from limbic.core.store.connection import Connection
from limbic.core.store.postgres import schema as pg_schema
from limbic.core.store.postgres.connection import on_postgres

VECTOR_TABLE = "entity_embeddings"
OBSERVATION_VECTOR_TABLE = "observation_embeddings"
_VECTOR_DIMENSION = re.compile(r"float\[(\d+)\]")
LANDED_OP = "embed_vectors"
"""The ``changes`` op of a step that landed vectors: logged (vector caches and other processes follow),
never delivered to change listeners (no text changed)."""


def vector_dimension(conn: Connection, table: str = VECTOR_TABLE) -> int | None:
    """The one answer to "is there a vec0 table, and of what dimension": the dimension declared by
    ``table`` (``entity_embeddings`` or ``observation_embeddings``), or ``None`` when it does not exist
    (no model has written yet, or a database from before schema 4 for the observation table)."""
    if on_postgres(conn):
        if table in _VECTOR_TABLES:
            return pg_read_state(conn)[0][table]
        return pg_schema.vector_dimension(conn, table)  # type: ignore[arg-type]
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    found = _VECTOR_DIMENSION.search(row[0]) if row else None
    return int(found.group(1)) if found else None


_VECTOR_TABLES = (VECTOR_TABLE, OBSERVATION_VECTOR_TABLE)


def pg_read_state(conn: Connection) -> tuple[dict[str, int | None], int, int]:
    """On PostgreSQL, what a search asks before anything else — the vector tables' dimensions, the last change
    id, the entities waiting for vectors — read in one statement, once per read snapshot
    (:func:`~limbic.core.store.postgres.schema.read_state`, :meth:`PgConnection.in_snapshot`)."""
    state: tuple[dict[str, int | None], int, int] = conn.in_snapshot(  # type: ignore[attr-defined]
        ("read state",), lambda: pg_schema.read_state(conn, _VECTOR_TABLES))  # type: ignore[arg-type]
    return state


def shipped_migrations() -> list[tuple[int, str, str]]:
    """``(version, file name, SQL)`` of every migration shipped, by version."""
    folder = resources.files("limbic.core.store") / "migrations"
    found = []
    for item in folder.iterdir():
        if item.name.endswith(".sql"):
            version = int(item.name.split("_", 1)[0])
            found.append((version, item.name, item.read_text(encoding="utf-8")))
    return sorted(found)


def latest_schema_version() -> int:
    """The schema version (``PRAGMA user_version``) a database has once every migration shipped is applied."""
    return shipped_migrations()[-1][0]


def put_setting(conn: Connection, key: str, value: str) -> None:
    """Store ``value`` under ``key`` in ``settings`` (insert or replace), in the caller's transaction."""
    conn.execute("INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))


REBUILDS_TABLES = "-- limbic: rebuilds tables"
"""The line that marks a migration rebuilding a table others point at: it runs with foreign keys off (a dropped
table would otherwise cascade its deletes), and every foreign key is checked before it commits."""


def migrate(conn: Connection, path: Path) -> None:
    """Apply every shipped migration newer than the file's ``PRAGMA user_version``, each in one transaction.

    A migration carrying :data:`REBUILDS_TABLES` runs with ``PRAGMA foreign_keys`` off (SQLite's table rebuild:
    the pragma is set outside the transaction) and is refused when ``PRAGMA foreign_key_check`` finds a row
    pointing nowhere afterwards.

    Raises:
        MigrationError: a step failed; nothing of that step was applied.
    """
    current = conn.execute("PRAGMA user_version").get
    for version, name, sql in shipped_migrations():
        if version <= current:
            continue
        rebuilds = REBUILDS_TABLES in sql
        if rebuilds:
            conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated between our read and the lock.
            if conn.execute("PRAGMA user_version").get >= version:
                conn.execute("ROLLBACK")
                continue
            conn.execute(sql)
            if rebuilds and conn.execute("PRAGMA foreign_key_check").fetchall():
                raise apsw.ConstraintError("a row points at a missing entity after the rebuild")
            conn.execute(f"PRAGMA user_version = {version}")
            conn.execute("COMMIT")
        except apsw.Error as exc:
            conn.execute("ROLLBACK")
            raise MigrationError(
                f"the database {path} could not be upgraded to schema version {version} ({name}); "
                "nothing of that step was applied"
            ) from exc
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        finally:
            if rebuilds:
                conn.execute("PRAGMA foreign_keys = ON")


def ensure_vector_table(conn: Connection, dimension: int, model: str) -> bool:
    """Create (or recreate, when the dimension differs) the vector tables inside the caller's transaction
    (sqlite-vec ``vec0`` tables on SQLite, pgvector tables with an HNSW index on PostgreSQL).

    The two tables are ``entity_embeddings`` (rowid = entity id) and ``observation_embeddings``
    (rowid = observation id), both ``float[dimension]`` with cosine distance. A database from before
    schema 4 gets its observation table here, empty, next to its entity vectors. Returns True when
    the tables were (re)created empty for a new dimension (their meta rows are deleted with them),
    so every entity and observation needs a new vector.
    """
    current = vector_dimension(conn)
    has_observation_table = vector_dimension(conn, OBSERVATION_VECTOR_TABLE) is not None
    if current == dimension and has_observation_table:
        return False
    recreated = current != dimension
    if recreated and current is not None:
        conn.execute(f"DROP TABLE {VECTOR_TABLE}")
    if has_observation_table:
        conn.execute(f"DROP TABLE {OBSERVATION_VECTOR_TABLE}")
    for table in (VECTOR_TABLE, OBSERVATION_VECTOR_TABLE) if recreated else (OBSERVATION_VECTOR_TABLE,):
        if on_postgres(conn):
            pg_schema.create_vector_table(conn, table, dimension)  # type: ignore[arg-type]
        else:
            conn.execute(f"CREATE VIRTUAL TABLE {table} USING vec0("
                         f"embedding float[{int(dimension)}] distance_metric=cosine)")
    conn.execute("DELETE FROM observation_embedding_meta")
    if recreated:
        conn.execute("DELETE FROM entity_embedding_meta")
    put_setting(conn, "embedding_model", model)
    return recreated
