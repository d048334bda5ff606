"""The PostgreSQL schema: versioned migrations and the pgvector tables.

Versions are rows of ``limbic_schema`` and carry the number of the SQLite schema they equal
(``core/store/migrations``), so both backends speak of one schema version. Migrations are the ordered
``postgres/migrations/NNN_*.sql`` files, each applied in one transaction while holding an advisory lock, so
servers starting at once migrate once. The vector tables (``entity_embeddings``, ``observation_embeddings``:
``rowid bigint``, ``embedding vector(d)``) are made when the first model writes; their HNSW indexes when a
copy grows large enough to use them (:mod:`limbic.core.store.postgres.nearest`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

import psycopg

from limbic.core.errors import DatabaseUnavailableError, MigrationError
from limbic.core.store.indexing import CJK_INDEX_VERSION, write_stored_cjk_text
from limbic.core.store.postgres import full_text

if TYPE_CHECKING:
    from limbic.core.store.postgres.connection import PgConnection

MIGRATION_LOCK_KEY = 0x6C696D6D6967  # "limmig"
_UNICODE_COLLATIONS = ("pg_c_utf8", "C.utf8", "C.UTF-8", "und-x-icu")


def shipped_migrations() -> list[tuple[int, str, str]]:
    """``(version, file name, SQL)`` of every PostgreSQL migration shipped, by version."""
    folder = resources.files("limbic.core.store.postgres") / "migrations"
    found = [(int(item.name.split("_", 1)[0]), item.name, item.read_text(encoding="utf-8"))
             for item in folder.iterdir() if item.name.endswith(".sql")]
    return sorted(found)


def _unicode_lower(raw: psycopg.Connection[Any]) -> None:
    """``unicode_lower(text)``: lower-casing of every script (SQLite's has one registered from Python),
    through the first collation of this server that folds beyond ASCII."""
    available = {row[0] for row in raw.execute("SELECT collname FROM pg_collation")}
    collation = next((name for name in _UNICODE_COLLATIONS if name in available), None)
    body = f'lower($1 COLLATE "{collation}")' if collation else "lower($1)"
    raw.execute(f"CREATE OR REPLACE FUNCTION unicode_lower(text) RETURNS text LANGUAGE sql IMMUTABLE "
                f"PARALLEL SAFE AS $$ SELECT {body} $$")


def migrate(conn: PgConnection, shown: str) -> None:
    """Create the ``vector`` extension if needed and apply every migration newer than the database's version.

    Raises:
        DatabaseUnavailableError: pgvector is not installed on the server (or may not be created by this user).
        MigrationError: a step failed; nothing of that step was applied.
    """
    raw = conn.raw
    raw.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
    try:
        try:
            raw.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error:
            raise DatabaseUnavailableError(
                f"the database in {shown} lacks the pgvector extension; as its owner run: CREATE EXTENSION vector"
            ) from None
        raw.execute("CREATE TABLE IF NOT EXISTS limbic_schema (version integer PRIMARY KEY, "
                    "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
        current = raw.execute("SELECT coalesce(max(version), 0) FROM limbic_schema").fetchone()[0]  # type: ignore[index]
        for version, name, sql in shipped_migrations():
            if version <= current:
                continue
            try:
                with raw.transaction():
                    raw.execute(sql.encode("utf-8"))
                    if version == shipped_migrations()[0][0]:
                        _unicode_lower(raw)
                        full_text.create_schema(raw)
                    if version == CJK_INDEX_VERSION:
                        write_stored_cjk_text(conn, time.time())
                    raw.execute("INSERT INTO limbic_schema(version, name) VALUES (%s, %s)", (version, name))
            except psycopg.Error as exc:
                raise MigrationError(f"the database in {shown} could not be upgraded to schema version {version} "
                                     f"({name}); nothing of that step was applied") from exc
    finally:
        raw.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))


def vector_dimension(conn: PgConnection, table: str) -> int | None:
    """The dimension of ``table``'s ``embedding vector(d)`` column, or None when the table does not exist (read once
    per read snapshot: :meth:`PgConnection.in_snapshot`)."""
    def read() -> int | None:
        row = conn.execute(_DIMENSION.format("?"), (table,)).fetchone()  # run again if the lease was lost
        return int(row[0]) if row and row[0] > 0 else None
    return conn.in_snapshot(("vector_dimension", table), read)


_DIMENSION = ("SELECT a.atttypmod FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = {} "
              "AND a.attname = 'embedding' AND c.relnamespace = current_schema()::regnamespace")


def read_state(conn: PgConnection, tables: Sequence[str]) -> tuple[dict[str, int | None], int, int]:
    """In one statement: the dimension of each of the vector ``tables`` (None when absent, as
    :func:`vector_dimension`), the last change id (0 when none) and how many entities wait for vectors."""
    dimensions = ", ".join(f"({_DIMENSION.format(f'?{n}')})" for n in range(1, len(tables) + 1))
    row = conn.execute(f"SELECT {dimensions}, (SELECT coalesce(max(id), 0) FROM changes), "
                       "(SELECT count(*) FROM pending_vectors)", tuple(tables)).fetchone()
    assert row is not None
    found = {table: int(d) if d is not None and d > 0 else None for table, d in zip(tables, row, strict=False)}
    return found, int(row[len(tables)]), int(row[len(tables) + 1])


def create_vector_table(conn: PgConnection, table: str, dimension: int) -> None:
    """Create ``table`` (``rowid bigint`` primary key, ``embedding vector(dimension)``) in the caller's
    transaction; its HNSW index comes once a copy is large enough to use it (:mod:`limbic.core.store.postgres.nearest`)."""
    conn.raw.execute(f"CREATE TABLE {table} (rowid bigint PRIMARY KEY, embedding vector({int(dimension)}) NOT NULL)")
