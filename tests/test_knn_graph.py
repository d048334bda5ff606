"""The HNSW graph of a large vector copy (core/vectors/approximate.py): every score stays exact, the pool
matches the exact scan, the graph is kept next to the database (for PostgreSQL: in the memory's local folder)
and read by the next process."""

from __future__ import annotations

import time

import numpy as np
import pytest

from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.vectors import approximate
from limbic.core.vectors.approximate import GraphBuilder
from limbic.core.vectors.server_graph import ServerGraphs
from limbic.core.vectors.similarities import ApproximateSimilarities
from limbic.core.vectors.vector_index import VectorIndex
from tests._store_helpers import fill

QUERIES = ("vector search cache", "graph memory agent", "quokka quasar quince", "python rust server")


def graph_index(service, min_rows=100):
    return VectorIndex(GraphBuilder(service.database.path, min_rows=min_rows))


def similarities(service, index, query, now):
    conn = service.database.read()
    with conn:
        return index.similarities(conn, service.embedder.name, service.embedder.embed_query(query), now)


def ready(service, index):
    """Ask for the graph of the current copy and wait for it."""
    similarities(service, index, QUERIES[0], time.time())
    index.graphs.wait(60)
    found = similarities(service, index, QUERIES[0], time.time())
    assert isinstance(found, ApproximateSimilarities)
    return found


def beside(service, suffix):
    """The file ``<database>-<suffix>`` next to the database file (the local folder's ``memory`` on PostgreSQL)."""
    path = service.database.path
    return path.with_name(f"{path.name}-{suffix}")


def stored_nodes(service):
    with np.load(beside(service, "knn.npz")) as stored:
        return int(stored["size"])


def same_as_exact(service, index, query, now=None):
    """``index`` (with its graph) answers like an exact copy: the same nearest entities and the same
    similarity for every entity and every observation asked about."""
    now = time.time() if now is None else now
    approximate_ = similarities(service, index, query, now)
    exact = similarities(service, VectorIndex(), query, now)
    assert isinstance(approximate_, ApproximateSimilarities)
    ids, distances = approximate_.nearest(15)
    exact_ids, exact_distances = exact.nearest(15)
    assert np.allclose([distances[e] for e in ids], [exact_distances[e] for e in exact_ids], atol=1e-6)
    # the same distances in the same order (the hashing embedder ties many entities, in any order)
    truth = exact.distances(ids)
    assert np.allclose([distances[e] for e in ids], [truth[e] for e in ids], atol=1e-6)
    entities = exact.ids.tolist() + [10_000_000]
    got, expected = approximate_.distances(entities), exact.distances(entities)
    assert sorted(got) == sorted(expected)
    assert np.allclose([got[e] for e in sorted(got)], [expected[e] for e in sorted(got)], atol=1e-6)
    observations = [r[0] for r in service.database.read().execute("SELECT id FROM observations")]
    got, expected = approximate_.of_observations(observations), exact.of_observations(observations)
    assert sorted(got) == sorted(expected)
    assert np.allclose([got[o] for o in sorted(got)], [expected[o] for o in sorted(got)], atol=1e-6)


def test_a_large_copy_is_searched_through_its_graph_with_exact_scores(service):
    fill(service, 300)
    index = graph_index(service)
    first = similarities(service, index, QUERIES[0], time.time())
    assert not isinstance(first, ApproximateSimilarities)  # exact until the graph is built
    ready(service, index)
    for query in QUERIES:
        same_as_exact(service, index, query)


def test_writes_dead_rows_and_expired_observations_stay_exact(service):
    fill(service, 300)
    service.entities.create_entities([E("short lived", "T", (O("quokka quasar quince", expires_at=time.time() + 3600),))])
    index = graph_index(service)
    ready(service, index)
    service.entities.add_observations([("entity 5", [O("zebra zeppelin xylophone")])])
    service.entities.delete_entities(["entity 6"])
    service.entities.merge_entities(["entity 8"], "entity 9")
    for query in QUERIES + ("zebra zeppelin xylophone",):
        same_as_exact(service, index, query)
        same_as_exact(service, index, query, now=time.time() + 7200)  # the short-lived observation expired
    deleted = service.database.read().execute("SELECT count(*) FROM entities WHERE name = 'entity 6'").fetchone()[0]
    assert deleted == 0
    assert len(index._blocks[1].vectors.owner) > 0 and len(index._blocks[0].dead) > 0  # dead rows were in play


def test_the_graph_is_kept_next_to_the_database_for_the_next_process(service, monkeypatch):
    fill(service, 300)
    ready(service, graph_index(service))
    assert approximate.cache_files(service.database.path) == [beside(service, "knn.npz"), beside(service, "knn.lock")]

    def no_build(unit):
        raise AssertionError("the stored graph should have been read")

    monkeypatch.setattr(approximate, "build", no_build)
    second = graph_index(service)  # another process holding the same rows
    ready(service, second)
    same_as_exact(service, second, QUERIES[1])
    service.entities.add_observations([("entity 5", [O("zebra zeppelin xylophone")])])
    service.entities.create_entities([E("newcomer", "T", (O("quokka quasar quince"),))])
    service.entities.delete_entities(["entity 6"])
    third = graph_index(service)  # a process started after these writes: the stored graph, extended
    found = ready(service, third)
    assert found._graph.graph.index.ntotal > second._blocks[0].vectors.owner.size
    # four nodes added to ~900 (under STORE_SHARE): the file is not rewritten; the next process adds them too
    assert stored_nodes(service) == second._blocks[0].vectors.owner.size
    same_as_exact(service, third, "zebra zeppelin xylophone")
    same_as_exact(service, third, QUERIES[2])


def test_a_new_main_block_extends_the_graph_and_a_stale_one_is_built_again(service, monkeypatch):
    fill(service, 300)
    index = graph_index(service)
    ready(service, index)
    nodes = index.graphs._graph.index.ntotal
    for i in range(10, 60):  # past COMPACT_SHARE of the main rows: a new main block
        service.entities.add_observations([(f"entity {i}", [O(f"note {i} about a quokka")])])
    similarities(service, index, QUERIES[0], time.time())
    index.graphs.wait(60)
    same_as_exact(service, index, "quokka note")
    # the 50 new observations and the 50 entity passages they changed were added; the old passages are stale
    assert index.graphs._graph.index.ntotal == nodes + 100
    assert int((index.graphs.graph_for(index._blocks[0].vectors).rows < 0).sum()) == 50
    built = []
    monkeypatch.setattr(approximate, "build", lambda unit: built.append(len(unit)) or real_build(unit))
    service.entities.delete_entities([f"entity {i}" for i in range(100, 250)])  # half the graph's nodes go stale
    similarities(service, index, QUERIES[0], time.time())
    index.graphs.wait(60)
    same_as_exact(service, index, QUERIES[3])
    assert built == [len(index._blocks[0].vectors.owner)]
    assert stored_nodes(service) == len(index._blocks[0].vectors.owner)  # a new graph is always kept


real_build = approximate.build


def test_a_failed_build_leaves_the_exact_scan(service, monkeypatch):
    fill(service, 300)

    def broken(unit):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(approximate, "build", broken)
    index = graph_index(service)
    similarities(service, index, QUERIES[0], time.time())
    index.graphs.wait(60)
    exact = similarities(service, VectorIndex(), QUERIES[2], time.time())
    again = similarities(service, index, QUERIES[2], time.time())
    assert not isinstance(again, ApproximateSimilarities)
    assert again.nearest(10) == exact.nearest(10)
    assert index.graphs._thread is None  # not tried again for the same rows


def test_a_small_copy_gets_no_graph(service):
    fill(service, 30)
    index = graph_index(service, min_rows=1_000)
    similarities(service, index, QUERIES[0], time.time())
    assert index.graphs._thread is None
    assert approximate.cache_files(service.database.path) == []


def test_a_folder_where_the_graph_cannot_be_kept_still_gets_one_in_memory(service):
    fill(service, 300)
    beside(service, "knn.lock").mkdir()  # the lock file cannot be opened
    index = graph_index(service)
    ready(service, index)
    same_as_exact(service, index, QUERIES[0])
    assert not beside(service, "knn.npz").exists()


def test_a_search_says_how_knn_ran(service):
    fill(service, 300)
    assert service.search.query("vector search cache", record=False).knn == "exact"
    service.index.graphs.min_rows = 100  # this graph is small: let it have an HNSW graph as a large one would
    service.search.wait_for_knn_graph(60)
    service.search.query("vector search cache", record=False)
    service.search.wait_for_knn_graph(60)
    assert service.search.query("vector search cache", record=False).knn == "graph"


def test_concurrent_searches_through_the_graph_agree_with_one_at_a_time(service):
    from concurrent.futures import ThreadPoolExecutor

    fill(service, 300)
    service.index.graphs.min_rows = 100
    service.search.query(QUERIES[0], record=False)
    service.search.wait_for_knn_graph(60)
    queries = [QUERIES[i % len(QUERIES)] for i in range(80)]
    alone = [[r.entity_id for r in service.search.query(q, 10, record=False).results] for q in queries]
    with ThreadPoolExecutor(4) as pool:  # as the HTTP server's request threads do
        together = list(pool.map(lambda q: service.search.query(q, 10, record=False), queries))
    assert all(outcome.knn == "graph" for outcome in together)
    assert [[r.entity_id for r in outcome.results] for outcome in together] == alone


def test_warm_up_loads_the_vector_copy_and_asks_for_the_graph(service):
    fill(service, 300)
    service.index.graphs.min_rows = 100
    service.search.start_warm_up()
    service.search.start_warm_up()  # once
    service.search.wait_for_warm_up()
    assert len(service.index) == 300 + int(service.entities.stats().observations)  # loaded before any search
    service.search.wait_for_knn_graph(60)
    assert service.search.query("vector search cache", record=False).knn == "graph"  # the first search uses it


def test_warm_up_without_vectors_does_nothing_and_close_waits_for_it(memory_address):
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    empty = MemoryService(open_database(memory_address), HashingEmbedder())
    after: list[bool] = []
    empty.search.start_warm_up(then=lambda: after.append(empty.search.warming_up()))
    empty.close()  # joins the warm-up before closing the connections
    assert not empty.search.warming_up()
    assert len(empty.index) == 0
    assert after == [True]  # ``then`` ran once, on the warm-up's thread, after the warm-up itself


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_the_servers_pgvector_indexes_propose_with_exact_scores(service):
    """On PostgreSQL the server's HNSW indexes, built when the copy is large enough, propose the candidates (no
    graph on this machine); every similarity stays exact, through writes, deletions, merges and expiry."""
    fill(service, 300)
    service.entities.create_entities([E("short lived", "T", (O("quokka quasar quince", expires_at=time.time() + 3600),))])
    index = VectorIndex(ServerGraphs(service.database.nearest_index, min_rows=100))
    first = similarities(service, index, QUERIES[0], time.time())
    assert not isinstance(first, ApproximateSimilarities)  # exact while the server builds its indexes
    ready(service, index)
    for query in QUERIES:
        same_as_exact(service, index, query)
    service.entities.add_observations([("entity 5", [O("zebra zeppelin xylophone")])])
    service.entities.delete_entities(["entity 6"])
    service.entities.merge_entities(["entity 8"], "entity 9")
    for query in QUERIES + ("zebra zeppelin xylophone",):
        same_as_exact(service, index, query)
        same_as_exact(service, index, query, now=time.time() + 7200)
    assert not beside(service, "knn.npz").exists()
