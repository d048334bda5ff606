"""Keep the FTS5 rows and the embeddings of entities in step with their data, inside the caller's transaction.

FTS sync is done in code, not triggers (seed ``003_c3836d96b511ac29.txt``, "FTS synchronization"):
``obs_text`` is the entity's live observations joined with ``" | "``. Embeddings go through the
:class:`~limbic.core.embedding.base.Embedder` interface only. Each live observation has one vector
of its own text (issue 9 item 5), so that a fact deep in a long entity is searchable; an entity without
live observations has one vector of its passage built by
:func:`~limbic.core.embedding.entity_text.entity_text` (seed ``004``, "Head+Tail+Diversity"). Observation vectors are recorded in
``observation_embedding_meta`` with the model and a hash of the text: only new or changed
observations are embedded again, and vectors of deleted or superseded observations are removed.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

import apsw
import numpy as np

from limbic.core.embedding.base import Embedder
from limbic.core.embedding.entity_text import SEPARATOR, entity_text
from limbic.core.store.database import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE, Database, vector_dimension

EMBED_BATCH = 64


def _documents(conn: apsw.Connection, entity_ids: Sequence[int]) -> list[tuple[int, str, str, str, list[str]]]:
    ids = json.dumps([int(i) for i in entity_ids])
    entities: list[tuple[Any, ...]] = conn.execute(
        "SELECT id, name, entity_type, status FROM entities WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
        (ids,),
    ).fetchall()
    observations: dict[int, list[str]] = {}
    for entity_id, content in conn.execute(
        "SELECT entity_id, content FROM observations WHERE superseded_at IS NULL "
        "AND entity_id IN (SELECT value FROM json_each(?)) ORDER BY entity_id, id",
        (ids,),
    ):
        observations.setdefault(entity_id, []).append(content)
    return [(eid, name, etype, status, observations.get(eid, [])) for eid, name, etype, status in entities]


def text_hash(text: str) -> int:
    """A signed 64-bit hash of an observation's text (blake2b), stored to tell a changed text from an unchanged one."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


def observation_passage(entity_name: str, content: str) -> str:
    """The text embedded for one observation: ``"<entity name>: <content>"``, so that a fact that does not
    repeat its subject (``"decorators turn functions into tools"``) is still about it."""
    return f"{entity_name}: {content}"


def _has_vector_tables(conn: apsw.Connection) -> bool:
    return all(vector_dimension(conn, table) is not None for table in (VECTOR_TABLE, OBSERVATION_VECTOR_TABLE))


def _drop_observation_vectors(conn: apsw.Connection, observation_ids: Sequence[int]) -> None:
    ids = json.dumps([int(i) for i in observation_ids])
    conn.execute("DELETE FROM observation_embedding_meta WHERE observation_id IN (SELECT value FROM json_each(?))", (ids,))
    if _has_vector_tables(conn):
        conn.execute(f"DELETE FROM {OBSERVATION_VECTOR_TABLE} WHERE rowid IN (SELECT value FROM json_each(?))", (ids,))


def drop_index_rows(conn: apsw.Connection, entity_ids: Sequence[int]) -> None:
    """Remove the FTS rows, entity vectors and observation vectors of entities about to be deleted
    (FTS5 and vec0 have no cascade)."""
    ids = json.dumps([int(i) for i in entity_ids])
    conn.execute("DELETE FROM entity_fts WHERE rowid IN (SELECT value FROM json_each(?))", (ids,))
    if _has_vector_tables(conn):
        conn.execute(f"DELETE FROM {VECTOR_TABLE} WHERE rowid IN (SELECT value FROM json_each(?))", (ids,))
    observations = [r[0] for r in conn.execute(
        "SELECT observation_id FROM observation_embedding_meta WHERE entity_id IN (SELECT value FROM json_each(?))", (ids,))]
    _drop_observation_vectors(conn, observations)


def sync_observation_vectors(conn: apsw.Connection, entity_ids: Sequence[int], embedder: Embedder,
                             batch_size: int = EMBED_BATCH) -> int:
    """Bring the observation vectors of ``entity_ids`` in step with their live observations, in the open transaction.

    Vectors of observations that were deleted, superseded or moved are removed; live observations
    without a vector made by ``embedder.name`` for their current passage (:func:`observation_passage`;
    a rename changes it) are embedded (``(n, d) float32``, batches sorted by length). Returns the
    number of texts embedded.
    """
    ids = json.dumps(sorted({int(i) for i in entity_ids}))
    live = {int(oid): (int(eid), observation_passage(name, content)) for oid, eid, name, content in conn.execute(
        "SELECT o.id, o.entity_id, e.name, o.content FROM observations o JOIN entities e ON e.id = o.entity_id "
        "WHERE o.superseded_at IS NULL AND o.entity_id IN (SELECT value FROM json_each(?))", (ids,))}
    stored = {int(oid): (int(eid), model, digest) for oid, eid, model, digest in conn.execute(
        "SELECT observation_id, entity_id, model, text_hash FROM observation_embedding_meta "
        "WHERE entity_id IN (SELECT value FROM json_each(?1)) "
        "OR observation_id IN (SELECT id FROM observations WHERE entity_id IN (SELECT value FROM json_each(?1)))",
        (ids,))}
    gone = [oid for oid in stored if oid not in live]
    if gone:
        _drop_observation_vectors(conn, gone)
    moved = [(eid, oid) for oid, (eid, _) in live.items() if oid in stored and stored[oid][0] != eid]
    conn.executemany("UPDATE observation_embedding_meta SET entity_id = ? WHERE observation_id = ?", moved)
    wanted = [(oid, eid, content, text_hash(content)) for oid, (eid, content) in live.items()
              if oid not in stored or stored[oid][1] != embedder.name or stored[oid][2] != text_hash(content)]
    wanted.sort(key=lambda item: len(item[2]))
    now = time.time()
    for start in range(0, len(wanted), batch_size):
        batch = wanted[start : start + batch_size]
        vectors = np.asarray(embedder.embed([item[2] for item in batch]), dtype=np.float32)
        batch_ids = json.dumps([item[0] for item in batch])
        conn.execute(f"DELETE FROM {OBSERVATION_VECTOR_TABLE} WHERE rowid IN (SELECT value FROM json_each(?))", (batch_ids,))
        conn.executemany(f"INSERT INTO {OBSERVATION_VECTOR_TABLE}(rowid, embedding) VALUES (?, ?)",
                         [(item[0], vectors[i].tobytes()) for i, item in enumerate(batch)])
        conn.executemany(
            "INSERT INTO observation_embedding_meta(observation_id, entity_id, model, text_hash, updated_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT(observation_id) DO UPDATE SET entity_id = excluded.entity_id, "
            "model = excluded.model, text_hash = excluded.text_hash, updated_at = excluded.updated_at",
            [(item[0], item[1], embedder.name, item[3], now) for item in batch],
        )
    return len(wanted)


def reindex(
    database: Database,
    conn: apsw.Connection,
    entity_ids: Sequence[int],
    embedder: Embedder | None,
) -> None:
    """Rewrite the FTS row and, with an embedder, the vectors of each entity, in the open transaction.

    An entity with live observations is represented by its observation vectors
    (:func:`sync_observation_vectors`: only new or changed texts are embedded, never the whole entity
    again) and has no entity vector; an entity without live observations gets one vector of its
    passage (:func:`~limbic.core.embedding.entity_text.entity_text`). Entities that no longer exist are skipped. Vectors are ``(n, d) float32`` from ``embedder.embed``;
    the model name and time (UTC seconds) are recorded in ``entity_embedding_meta`` and
    ``observation_embedding_meta``.
    """
    docs = _documents(conn, sorted(set(entity_ids)))
    if not docs:
        return
    ids_json = json.dumps([d[0] for d in docs])
    conn.execute("DELETE FROM entity_fts WHERE rowid IN (SELECT value FROM json_each(?))", (ids_json,))
    conn.executemany(
        "INSERT INTO entity_fts(rowid, name, entity_type, obs_text) VALUES (?, ?, ?, ?)",
        [(eid, name, etype, SEPARATOR.join(obs)) for eid, name, etype, _, obs in docs],
    )
    if embedder is None:
        return
    database.ensure_vector_table(conn, embedder.dimension, embedder.name)
    covered = json.dumps([d[0] for d in docs if d[4]])
    conn.execute(f"DELETE FROM {VECTOR_TABLE} WHERE rowid IN (SELECT value FROM json_each(?))", (covered,))
    conn.execute("DELETE FROM entity_embedding_meta WHERE entity_id IN (SELECT value FROM json_each(?))", (covered,))
    bare = [d for d in docs if not d[4]]
    now = time.time()
    for start in range(0, len(bare), EMBED_BATCH):
        batch = bare[start : start + EMBED_BATCH]
        texts = [entity_text(name, etype, status, obs, embedder) for _, name, etype, status, obs in batch]
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
        batch_ids = json.dumps([d[0] for d in batch])
        conn.execute(f"DELETE FROM {VECTOR_TABLE} WHERE rowid IN (SELECT value FROM json_each(?))", (batch_ids,))
        conn.executemany(
            f"INSERT INTO {VECTOR_TABLE}(rowid, embedding) VALUES (?, ?)",
            [(d[0], vectors[i].tobytes()) for i, d in enumerate(batch)],
        )
        conn.executemany(
            "INSERT INTO entity_embedding_meta(entity_id, model, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(entity_id) DO UPDATE SET model = excluded.model, updated_at = excluded.updated_at",
            [(d[0], embedder.name, now) for d in batch],
        )
    sync_observation_vectors(conn, [d[0] for d in docs], embedder)
