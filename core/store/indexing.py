"""Keep the FTS5 rows and the embeddings of entities in step with their data, inside the caller's transaction.

FTS sync is done in code, not triggers (seed ``003_c3836d96b511ac29.txt``, "FTS synchronization"):
``obs_text`` is the entity's live observations joined with ``" | "``. Embeddings go through the
:class:`~limbic.core.embedding.base.Embedder` interface only; the passage is built by
:func:`~limbic.core.embedding.entity_text.entity_text` (seed ``004``, "Head+Tail+Diversity").
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import apsw
import numpy as np

from limbic.core.embedding.base import Embedder
from limbic.core.embedding.entity_text import SEPARATOR, entity_text
from limbic.core.store.database import VECTOR_TABLE, Database, vector_dimension

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


def drop_index_rows(conn: apsw.Connection, entity_ids: Sequence[int]) -> None:
    """Remove the FTS rows and vectors of entities about to be deleted (FTS5 and vec0 have no cascade)."""
    ids = json.dumps([int(i) for i in entity_ids])
    conn.execute("DELETE FROM entity_fts WHERE rowid IN (SELECT value FROM json_each(?))", (ids,))
    if vector_dimension(conn) is not None:
        conn.execute(f"DELETE FROM {VECTOR_TABLE} WHERE rowid IN (SELECT value FROM json_each(?))", (ids,))


def reindex(
    database: Database,
    conn: apsw.Connection,
    entity_ids: Sequence[int],
    embedder: Embedder | None,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Rewrite the FTS row and, with an embedder, the vector of each entity, in the open transaction.

    Entities that no longer exist are skipped. Vectors are ``(n, d) float32`` from ``embedder.embed``;
    the model name and time (UTC seconds) are recorded in ``entity_embedding_meta``.
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
    now = time.time()
    for start in range(0, len(docs), EMBED_BATCH):
        batch = docs[start : start + EMBED_BATCH]
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
        if progress:
            progress(min(start + EMBED_BATCH, len(docs)), len(docs))
