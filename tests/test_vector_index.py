"""The in-memory vector index gives sqlite-vec's KNN answer and follows every write through the changes log."""

from __future__ import annotations

import numpy as np

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.search.pipeline import _knn
from limbic.core.service import MemoryService
from limbic.core.store.database import Database
from limbic.core.store.reembed import reembed
from limbic.core.store.vector_index import VectorIndex

WORDS = "cache queue database index vector search graph memory agent tool python rust server client".split()


def fill(service, count, start=0):
    rng = np.random.default_rng(start)
    service.create_entities([
        E(f"entity {i}", "T", (O(" ".join(rng.choice(WORDS, 6))),)) for i in range(start, start + count)
    ])


def same_as_sqlite_vec(service, index, query):
    conn = service.database.read()
    vector = service.embedder.embed_query(query)
    with conn:
        ours_ids, ours = index.search(conn, vector, 15)
        theirs_ids, theirs = _knn(conn, vector, 15)
    assert np.allclose([ours[i] for i in ours_ids], [theirs[i] for i in theirs_ids], atol=1e-5)
    assert set(ours_ids) == set(theirs_ids) or np.isclose(ours[ours_ids[-1]], theirs[theirs_ids[-1]], atol=1e-5)
    return ours_ids


def test_matches_sqlite_vec_and_follows_writes(service):
    fill(service, 200)
    index = VectorIndex()
    same_as_sqlite_vec(service, index, "vector search cache")
    assert len(index) == 200
    service.create_entities([E("needle", "T", (O("zebra zeppelin xylophone"),))])
    assert same_as_sqlite_vec(service, index, "zebra zeppelin xylophone")[0] == service.get_entity("needle").entity.id
    service.rename_entity("needle", "renamed needle")
    service.delete_entities(["entity 3", "entity 4"])
    service.add_observations([("entity 5", [O("zebra zeppelin xylophone")])])
    same_as_sqlite_vec(service, index, "zebra zeppelin xylophone")
    assert len(index) == 199


def test_follows_another_process_and_a_new_model(tmp_path, service):
    fill(service, 50)
    index = VectorIndex()
    same_as_sqlite_vec(service, index, "graph memory")
    other = MemoryService(Database(service.database.path), HashingEmbedder(), origin="mcp")
    try:
        other.create_entities([E("from elsewhere", "T", (O("quokka quasar quince"),))])
    finally:
        other.close()
    top = same_as_sqlite_vec(service, index, "quokka quasar quince")
    assert top[0] == service.get_entity("from elsewhere").entity.id
    bigger = HashingEmbedder(dimension=64, name="hashing-64")
    reembed(service.database, bigger)
    conn = service.database.read()
    with conn:
        ids, distances = index.search(conn, bigger.embed_query("quokka quasar quince"), 5)
    assert ids[0] == service.get_entity("from elsewhere").entity.id and len(index) == 51


def test_service_search_uses_the_index_with_the_same_results(service):
    fill(service, 120)
    with_index = service.search("python server tool", limit=10, record=False)
    service._vectors = None  # the pipeline falls back to the sqlite-vec query
    without = service.search("python server tool", limit=10, record=False)
    assert [r.name for r in with_index.results] == [r.name for r in without.results]
    assert np.allclose([r.final_score for r in with_index.results], [r.final_score for r in without.results])
