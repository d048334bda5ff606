"""Keep the FTS5 rows of entities in step with their data and mark their vectors pending, inside the caller's transaction.

FTS sync is done in code, not triggers (mcp-memory "Hybrid search", "FTS synchronization"):
``obs_text`` is the entity's live observations joined with ``" | "``. No model runs here: a write commits its text, FTS rows and a pending mark, and the vectors are computed afterwards
outside the write lock (:mod:`limbic.core.vectors.pending`). Each live observation has one vector of its
own passage (:func:`observation_passage`), so that a fact deep in a long entity is
searchable; each entity has one vector of its header and first observations (:func:`entity_passage`). Vectors are recorded in ``observation_embedding_meta`` and
``entity_embedding_meta`` with the model and a hash of the text: only new or changed texts are
embedded again, and vectors of deleted, superseded or changed observations are removed at once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from limbic.core.embedding.base import Embedder
from limbic.core.embedding.entity_text import SEPARATOR, head_text
from limbic.core.store import vec_rows
from limbic.core.store.connection import Connection
from limbic.core.store.expiry import current
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE, vector_dimension
from limbic.core.store.text_search import cjk_documents


def _documents(conn: Connection, entity_ids: Sequence[int], at: float) -> list[tuple[int, str, str, str, list[str]]]:
    ids = json.dumps([int(i) for i in entity_ids])
    entities, texts = conn.fetch_all([
        ("SELECT id, name, entity_type, status FROM entities WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
         (ids,)),
        (f"SELECT entity_id, content FROM observations WHERE {current('?2')} "
         "AND entity_id IN (SELECT value FROM json_each(?1)) ORDER BY entity_id, id", (ids, at))])
    observations: dict[int, list[str]] = {}
    for entity_id, content in texts:
        observations.setdefault(entity_id, []).append(content)
    return [(eid, name, etype, status, observations.get(eid, [])) for eid, name, etype, status in entities]


def text_hash(text: str) -> int:
    """A signed 64-bit hash of an observation's text (blake2b), stored to tell a changed text from an unchanged one."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


def observation_passage(entity_name: str, content: str) -> str:
    """The text embedded for one observation: ``"<entity name>: <content>"``, so that a fact that does not
    repeat its subject (``"decorators turn functions into tools"``) is still about it."""
    return f"{entity_name}: {content}"


def _has_vector_tables(conn: Connection) -> bool:
    return all(vector_dimension(conn, table) is not None for table in (VECTOR_TABLE, OBSERVATION_VECTOR_TABLE))


def _drop_observation_vectors(conn: Connection, observation_ids: Sequence[int]) -> None:
    ids = json.dumps([int(i) for i in observation_ids])
    conn.execute("DELETE FROM observation_embedding_meta WHERE observation_id IN (SELECT value FROM json_each(?))", (ids,))
    if _has_vector_tables(conn):
        vec_rows.delete(conn, OBSERVATION_VECTOR_TABLE, observation_ids)


def drop_index_rows(conn: Connection, entity_ids: Sequence[int]) -> None:
    """Remove the FTS rows, entity vectors and observation vectors of entities about to be deleted
    (FTS5 and vec0 have no cascade)."""
    ids = json.dumps([int(i) for i in entity_ids])
    conn.ops.delete_entity_text(entity_ids)
    if _has_vector_tables(conn):
        vec_rows.delete(conn, VECTOR_TABLE, entity_ids)
    observations = [r[0] for r in conn.execute(
        "SELECT observation_id FROM observation_embedding_meta WHERE entity_id IN (SELECT value FROM json_each(?))", (ids,))]
    _drop_observation_vectors(conn, observations)


def entity_passage(name: str, entity_type: str, status: str, observations: Sequence[str],
                   embedder: Embedder) -> str:
    """The text of an entity's own vector: its header and the first live observations that fit the
    model's token budget (:func:`~limbic.core.embedding.entity_text.head_text`). Appending an observation
    to an entity whose head is full leaves it unchanged, so only that observation is embedded."""
    return head_text(name, entity_type, status, observations, embedder)


def _drop_stale_observation_vectors(conn: Connection, entity_ids: Sequence[int], at: float) -> None:
    """Remove the vectors of observations of ``entity_ids`` that were deleted, superseded, expired by ``at``,
    moved to another entity or whose passage changed (text or entity name), so KNN never answers with an old text."""
    ids = json.dumps(sorted({int(i) for i in entity_ids}))
    current_rows, stored = conn.fetch_all([
        ("SELECT o.id, o.entity_id, e.name, o.content FROM observations o JOIN entities e ON e.id = o.entity_id "
         f"WHERE {current('?2', 'o')} AND o.entity_id IN (SELECT value FROM json_each(?1))", (ids, at)),
        # two indexed look-ups; as one ``… OR …`` PostgreSQL scans the whole table (5.7 ms against 0.13 at 10k)
        ("SELECT observation_id, entity_id, text_hash FROM observation_embedding_meta "
         "WHERE entity_id IN (SELECT value FROM json_each(?1)) UNION "
         "SELECT observation_id, entity_id, text_hash FROM observation_embedding_meta "
         "WHERE observation_id IN (SELECT id FROM observations WHERE entity_id IN (SELECT value FROM json_each(?1)))",
         (ids,))])
    live = {int(oid): (int(eid), text_hash(observation_passage(name, content)))
            for oid, eid, name, content in current_rows}
    stale = [int(oid) for oid, eid, digest in stored if live.get(int(oid)) != (int(eid), digest)]
    if stale:
        _drop_observation_vectors(conn, stale)


def reindex(conn: Connection, entity_ids: Sequence[int], at: float) -> None:
    """Rewrite the FTS row of each entity and mark its vectors pending, in the open transaction; no model runs.

    The text is the entity's observations current at ``at`` (not superseded, not expired:
    :mod:`limbic.core.store.expiry`). Vectors of observations that are gone, expired or changed are removed at once; the new ones are computed
    after the commit (:mod:`limbic.core.vectors.pending`), outside the write lock. Entities that no longer
    exist are skipped. ``at`` is the time of the write (UTC seconds).
    """
    ids = write_entity_text(conn, entity_ids, at)
    if not ids:
        return
    _drop_stale_observation_vectors(conn, ids, at)
    mark_pending(conn, ids, at)


def write_entity_text(conn: Connection, entity_ids: Sequence[int], at: float) -> list[int]:
    """Rewrite the full-text row of each of ``entity_ids`` (name, type, observations current at ``at``, UTC
    seconds) in the open transaction; returns the ids that exist. Vectors are left alone."""
    docs = _documents(conn, sorted(set(entity_ids)), at)
    ids = [d[0] for d in docs]
    conn.ops.write_entity_text([(eid, name, etype, SEPARATOR.join(obs)) for eid, name, etype, _, obs in docs])
    return ids


CJK_INDEX_VERSION = 16
"""The schema version that adds ``entity_cjk_fts`` (``016_cjk_fts.sql``): once its SQL ran, the migration writes
the rows of the entities already stored (:func:`write_stored_cjk_text`) in the same transaction."""


def write_stored_cjk_text(conn: Connection, at: float, batch: int = 1000) -> int:
    """Write the ``entity_cjk_fts`` rows of every stored entity holding CJK text (``entity_fts`` rewritten for
    those, with their observations current at ``at``, UTC seconds), ``batch`` entities read at a time; in the
    open transaction. Returns how many entities hold CJK text."""
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM entities ORDER BY id")]
    written = 0
    for start in range(0, len(ids), batch):
        rows = [(eid, name, etype, SEPARATOR.join(obs))
                for eid, name, etype, _, obs in _documents(conn, ids[start:start + batch], at)]
        holding = {r[0] for r in cjk_documents(rows)}
        if holding:
            conn.ops.write_entity_text([r for r in rows if r[0] in holding])
            written += len(holding)
    return written


def mark_pending(conn: Connection, entity_ids: Sequence[int], at: float) -> None:
    """Mark the vectors of ``entity_ids`` pending (a new generation for those already pending), in the
    caller's transaction; ``at`` is UTC seconds."""
    conn.executemany(
        "INSERT INTO pending_vectors(entity_id, generation, queued_at) VALUES (?, 1, ?) "
        "ON CONFLICT(entity_id) DO UPDATE SET generation = pending_vectors.generation + 1, queued_at = excluded.queued_at",
        [(int(i), at) for i in entity_ids],
    )
