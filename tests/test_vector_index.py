"""The in-memory vector index gives the store's own KNN answer (sqlite-vec's, or pgvector's cosine distance)
aggregated per entity and follows every write through the changes log; observation vectors follow their
observations."""

from __future__ import annotations

import time

import numpy as np
import pytest
from _backends import on_postgres

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.core.vectors.reembed import reembed
from limbic.core.vectors.vector_index import VectorIndex
from tests._store_helpers import fill


def store_distances(conn, table, vector) -> dict[int, float]:
    """``{rowid: cosine distance}`` of every row of ``table`` computed by the store: sqlite-vec's KNN on SQLite,
    pgvector's ``<=>`` on every row (no index: exact) on PostgreSQL."""
    if on_postgres(conn):
        literal = "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"
        return dict(conn.raw.execute(f"SELECT rowid, embedding <=> %s::vector FROM {table}", (literal,)).fetchall())
    blob = np.asarray(vector, dtype=np.float32).tobytes()
    return dict(conn.execute(f"SELECT rowid, distance FROM {table} WHERE embedding MATCH ? AND k = 4096", (blob,)))


def store_reference(conn, vector):
    """Each entity's distance straight from the store's KNN over both vector tables, grouped by entity here."""
    entity = store_distances(conn, "entity_embeddings", vector)
    owner = dict(conn.execute(
        "SELECT m.observation_id, m.entity_id FROM observation_embedding_meta m JOIN observations o "
        "ON o.id = m.observation_id WHERE o.superseded_at IS NULL"))
    observation: dict[int, float] = {}
    for rowid, distance in store_distances(conn, "observation_embeddings", vector).items():
        if rowid in owner:
            observation[owner[rowid]] = min(distance, observation.get(owner[rowid], 2.0))
    return {e: min(d for d in (entity.get(e), observation.get(e)) if d is not None)
            for e in entity.keys() | observation.keys()}  # the best of the entity vector and its observations


def same_as_the_store(service, index, query, k=15):
    conn = service.database.read()
    vector = service.embedder.embed_query(query)
    with conn:
        ours_ids, ours = index.search(conn, service.embedder.name, vector, k, time.time())
        reference = store_reference(conn, vector)
    expected = sorted(reference, key=lambda e: (reference[e], e))[:k]
    assert np.allclose([ours[i] for i in ours_ids], [reference[i] for i in expected], atol=1e-5)
    assert len(set(ours_ids)) == len(ours_ids), "one candidate per entity"
    return ours_ids


def vector_counts(service):
    conn = service.database.read()
    return tuple(conn.execute(sql).fetchone()[0] for sql in (
        "SELECT count(*) FROM observation_embeddings",
        "SELECT count(*) FROM observation_embedding_meta",
        "SELECT count(*) FROM observations WHERE superseded_at IS NULL",
    ))


def test_matches_the_store_and_follows_writes(service):
    fill(service, 200)
    service.entities.create_entities([E(f"bare {i}", "T") for i in range(5)])  # entity vectors: no observations
    index = VectorIndex()
    same_as_the_store(service, index, "vector search cache")
    service.entities.create_entities([E("needle", "T", (O("zebra zeppelin xylophone"),))])
    assert same_as_the_store(service, index, "zebra zeppelin xylophone")[0] == service.entities.get_entity("needle").entity.id
    service.entities.rename_entity("needle", "renamed needle")
    service.entities.delete_entities(["entity 3", "entity 4"])
    service.entities.add_observations([("entity 5", [O("zebra zeppelin xylophone")])])
    service.entities.delete_observations([("entity 7", [service.entities.get_entity("entity 7").entity.observations[0].content])])
    service.entities.merge_entities(["entity 8"], "entity 9")
    same_as_the_store(service, index, "zebra zeppelin xylophone")
    same_as_the_store(service, index, "python rust server")
    observations, meta, live = vector_counts(service)
    assert observations == meta == live


def test_deleted_and_superseded_observations_lose_their_vectors(service):
    service.entities.create_entities([E("a", "T", (O("first fact"), O("second fact"))), E("b", "T", (O("other"),))])
    assert vector_counts(service) == (3, 3, 3)
    service.entities.supersede_observation("a", "second fact", O("second fact, corrected"))
    assert vector_counts(service) == (3, 3, 3)
    service.entities.update_observation("a", "first fact", "first fact, edited")
    assert vector_counts(service) == (3, 3, 3)
    service.entities.delete_entities(["b"])
    assert vector_counts(service) == (2, 2, 2)
    assert service.search.stale_vectors() == 0


def test_expired_observations_do_not_count(service):
    service.entities.create_entities([E("a", "T", (O("plain words"), O("quokka quasar quince", expires_at=time.time() + 3600)))])
    index = VectorIndex()
    conn = service.database.read()
    vector = service.embedder.embed_query("quokka quasar quince")
    with conn:
        _, now = index.search(conn, service.embedder.name, vector, 5, time.time())
        _, later = index.search(conn, service.embedder.name, vector, 5, time.time() + 7200)
    entity = service.entities.get_entity("a").entity.id
    assert now[entity] < later[entity] - 0.2


def test_follows_another_process_and_a_new_model(service, memory_address):
    fill(service, 50)
    index = VectorIndex()
    same_as_the_store(service, index, "graph memory")
    other = MemoryService(open_database(memory_address), HashingEmbedder(), origin="mcp")
    try:
        other.entities.create_entities([E("from elsewhere", "T", (O("quokka quasar quince"),))])
    finally:
        other.close()
    top = same_as_the_store(service, index, "quokka quasar quince")
    assert top[0] == service.entities.get_entity("from elsewhere").entity.id
    bigger = HashingEmbedder(dimension=64, name="hashing-64")
    reembed(service.database, bigger)
    conn = service.database.read()
    with conn:
        ids, _ = index.search(conn, bigger.name, bigger.embed_query("quokka quasar quince"), 5, time.time())
    assert ids[0] == service.entities.get_entity("from elsewhere").entity.id
    entities = service.database.read().execute("SELECT count(*) FROM entities").fetchone()[0]
    assert len(index) == vector_counts(service)[2] + entities  # every entity vector and every live observation


def test_vectors_of_another_model_are_left_out(service):
    fill(service, 30)
    with service.database.maintenance() as conn:
        conn.execute("UPDATE observation_embedding_meta SET model = 'older' WHERE entity_id % 2 = 0")
        conn.execute("UPDATE entity_embedding_meta SET model = 'older' WHERE entity_id % 2 = 0")
    index = VectorIndex()
    conn = service.database.read()
    with conn:
        ids, _ = index.search(conn, service.embedder.name, service.embedder.embed_query("graph"), 100, time.time())
    assert ids and all(i % 2 == 1 for i in ids)
    assert service.search.stale_vectors() > 0
    outcome = service.search.query("graph memory", record=False)  # half the memory is another model's: full text
    assert outcome.mode == "fts_only" and outcome.embedded == (15, 30)


def test_service_search_uses_the_index_with_the_same_results(service):
    fill(service, 120)
    with_index = service.search.query("python server tool", limit=10, record=False)
    service.index = VectorIndex()  # a fresh copy, loaded by this search
    without = service.search.query("python server tool", limit=10, record=False)
    assert [r.name for r in with_index.results] == [r.name for r in without.results]
    assert np.allclose([r.final_score for r in with_index.results], [r.final_score for r in without.results])


class RecordingEmbedder(HashingEmbedder):
    """The hashing embedder, keeping every text it was asked to embed (as passages, or as queries: a write
    encodes its new observations so)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return super().embed(texts)

    def embed_query(self, text):
        self.texts.append(text)
        return super().embed_query(text)


def test_adding_one_observation_to_a_long_entity_embeds_one_observation_text(memory_address):
    """Only the new observation's text is embedded among the observations; the entity's passage (its
    whole-entity vector: header and first observations) is embedded again with it."""
    embedder = RecordingEmbedder()
    service = MemoryService(open_database(memory_address), embedder)
    try:
        service.entities.create_entities([E("long", "T", tuple(O(f"fact {i}") for i in range(100))), E("bare", "T")])
        assert len(embedder.texts) == 102  # 100 observation texts and the passages of both entities
        embedder.texts.clear()
        service.entities.add_observations([("long", [O("one more fact")])])
        observation_texts = [text for text in embedder.texts if text.startswith("long: ")]
        assert observation_texts == ["long: one more fact"] and len(embedder.texts) == 2
        embedder.texts.clear()
        service.entities.update_observation("long", "fact 3", "fact three")
        service.entities.delete_observations([("long", ["fact 4"])])
        assert [text for text in embedder.texts if text.startswith("long: ")] == ["long: fact three"]
        assert vector_counts(service) == (100, 100, 100) and service.search.stale_vectors() == 0
    finally:
        service.close()


def test_distances_of_given_entities_come_from_the_same_pass(service):
    fill(service, 60)
    service.entities.create_entities([E("bare", "T")])
    index = VectorIndex()
    conn = service.database.read()
    vector = service.embedder.embed_query("graph memory agent")
    with conn:
        similarities = index.similarities(conn, service.embedder.name, vector, time.time())
        reference = store_reference(conn, vector)
    wanted = sorted(reference)[::7] + [10_000_000]  # the last one has no vector: left out
    got = similarities.distances(wanted)
    assert sorted(got) == sorted(wanted[:-1])
    assert np.allclose([got[e] for e in wanted[:-1]], [reference[e] for e in wanted[:-1]], atol=1e-5)
    ids, distances = similarities.nearest(5)
    assert ids == sorted(reference, key=lambda e: (reference[e], e))[:5]
    assert similarities.nearest(0) == ([], {})


def _same_as_a_fresh_copy(service, index, query):
    """``index`` (kept across writes) answers exactly as a copy loaded now: ids, similarities and every
    live observation's similarity."""
    conn = service.database.read()
    vector = service.embedder.embed_query(query)
    now = time.time()
    with conn:
        kept = index.similarities(conn, service.embedder.name, vector, now)
        fresh = VectorIndex().similarities(conn, service.embedder.name, vector, now)
        observations = [r[0] for r in conn.execute("SELECT id FROM observations")]
    assert kept.ids.tolist() == fresh.ids.tolist()
    assert np.allclose(kept.similarity, fresh.similarity, atol=1e-6)
    kept_observations, fresh_observations = kept.of_observations(observations), fresh.of_observations(observations)
    assert sorted(kept_observations) == sorted(fresh_observations)
    assert np.allclose([kept_observations[o] for o in sorted(kept_observations)],
                       [fresh_observations[o] for o in sorted(kept_observations)], atol=1e-6)


def test_writes_go_to_a_recent_block_until_it_is_merged(service):
    fill(service, 300)
    index = VectorIndex()
    _same_as_a_fresh_copy(service, index, "vector search cache")
    main_rows = len(index._blocks[0].vectors.owner)
    service.entities.add_observations([("entity 5", [O("zebra zeppelin xylophone")])])
    service.entities.create_entities([E("newcomer", "T", (O("quokka quasar quince"),))])
    service.entities.delete_entities(["entity 6"])
    service.entities.update_observation("entity 7", service.entities.get_entity("entity 7").entity.observations[0].content,
                               "zebra zeppelin, edited")
    service.entities.merge_entities(["entity 8"], "entity 9")
    _same_as_a_fresh_copy(service, index, "zebra zeppelin xylophone")
    main, recent = index._blocks
    assert len(main.vectors.owner) == main_rows  # the main matrix was not rebuilt
    assert len(recent.vectors.owner) > 0 and len(main.dead) > 0
    for i in range(10, 60):  # past COMPACT_SHARE of the main rows: merged into a new main block
        service.entities.add_observations([(f"entity {i}", [O(f"note {i} about a quokka")])])
        _same_as_a_fresh_copy(service, index, "quokka note")
    main, recent = index._blocks
    assert len(recent.vectors.owner) < 0.05 * len(main.vectors.owner)
    entities = service.database.read().execute("SELECT count(*) FROM entities").fetchone()[0]
    assert len(index) == vector_counts(service)[2] + entities  # every current vector, none twice


@pytest.mark.parametrize("rows", [100, 16_385, 60_044, 60_001])
def test_cosines_in_two_halves_equal_the_one_thread_product_bit_for_bit(rows):
    from limbic.core.vectors.blocks import cosines

    generator = np.random.default_rng(rows)
    unit = generator.standard_normal((rows, 384)).astype(np.float32)
    query = generator.standard_normal(384).astype(np.float32)
    assert np.array_equal(cosines(unit, query), unit @ query)
