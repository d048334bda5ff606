"""Migrating a SQLite memory: the shipped ``migrations/NNN_*.sql`` files (:func:`~limbic.core.store.schema.shipped_migrations`),
each applied in one transaction, the schema version kept in ``PRAGMA user_version``."""

from __future__ import annotations

import time
from pathlib import Path

import apsw

from limbic.core.errors import MigrationError
from limbic.core.store.indexing import CJK_INDEX_VERSION, write_stored_cjk_text
from limbic.core.store.schema import shipped_migrations
from limbic.core.store.sqlite.connection import SqliteConnection

REBUILDS_TABLES = "-- limbic: rebuilds tables"
"""The line that marks a migration rebuilding a table others point at: it runs with foreign keys off (a dropped
table would otherwise cascade its deletes), and every foreign key is checked before it commits."""


def migrate(conn: SqliteConnection, path: Path) -> None:
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
            if version == CJK_INDEX_VERSION:
                write_stored_cjk_text(conn, time.time())
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
