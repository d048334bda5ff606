"""The schema both engines share: its version and migrations, the vector tables, settings rows and the change
log's op names.

The schema version is the number of the last of the ordered ``migrations/NNN_*.sql`` files applied (SQLite's
migrations; PostgreSQL's carry the number of the SQLite schema they equal). The vector tables
(:data:`VECTOR_TABLE`, :data:`OBSERVATION_VECTOR_TABLE`: rowid → the model's floats, cosine distance) are
created when the first model writes, each engine its own way (``conn.ops``).
"""

from __future__ import annotations

from importlib import resources

from limbic.core.store.connection import Connection

VECTOR_TABLE = "entity_embeddings"
OBSERVATION_VECTOR_TABLE = "observation_embeddings"
VECTOR_TABLES = (VECTOR_TABLE, OBSERVATION_VECTOR_TABLE)
LANDED_OP = "embed_vectors"
"""The ``changes`` op of a step that landed vectors: logged (vector caches and other processes follow),
never delivered to change listeners (no text changed)."""


def vector_dimension(conn: Connection, table: str = VECTOR_TABLE) -> int | None:
    """The one answer to "is there a vector table, and of what dimension": the dimension of ``table``
    (``entity_embeddings`` or ``observation_embeddings``), or ``None`` when it does not exist (no model has
    written yet, or a database from before schema 4 for the observation table)."""
    return conn.ops.vector_dimension(table)


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
    """The schema version a database has once every migration shipped is applied."""
    return shipped_migrations()[-1][0]


def put_setting(conn: Connection, key: str, value: str) -> None:
    """Store ``value`` under ``key`` in ``settings`` (insert or replace), in the caller's transaction."""
    conn.execute("INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))


def ensure_vector_table(conn: Connection, dimension: int, model: str) -> bool:
    """Create (or recreate, when the dimension differs) the vector tables inside the caller's transaction
    (sqlite-vec ``vec0`` tables on SQLite, pgvector tables on PostgreSQL).

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
        conn.ops.create_vector_table(table, dimension)
    conn.execute("DELETE FROM observation_embedding_meta")
    if recreated:
        conn.execute("DELETE FROM entity_embedding_meta")
    put_setting(conn, "embedding_model", model)
    return recreated
