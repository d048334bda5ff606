"""reembed: vectors made by another model are replaced, resumably; a new dimension recreates the table."""

from __future__ import annotations

import numpy as np
import pytest

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.service import MemoryService
from limbic.core.store import vec_rows
from limbic.core.store.backend import open_database
from limbic.core.store.database import Database
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, VECTOR_TABLE, vector_dimension
from limbic.core.store.vector_meta import stale_entity_ids
from limbic.core.vectors.reembed import reembed


@pytest.fixture
def database(memory_address):
    db = open_database(memory_address)
    service = MemoryService(db, HashingEmbedder(dimension=384, name="old-model"))
    service.entities.create_entities([EntityInput(f"entity {i}", "thing", (ObservationInput(f"fact number {i}"),))
                             for i in range(25)])
    yield db
    db.close()


def _models(db: Database) -> dict[str, int]:
    rows = db.read().execute("SELECT model, count(*) FROM observation_embedding_meta GROUP BY model").fetchall()
    return dict(rows)


def test_same_dimension_replaces_every_vector(database):
    new = HashingEmbedder(dimension=384, name="new-model")
    assert len(stale_entity_ids(database.read(), "new-model")) == 25
    seen = []
    report = reembed(database, new, progress=lambda done, total: seen.append((done, total)), batch_size=10)
    assert (report.embedded, report.stale, report.recreated_table) == (25, 25, False)
    assert seen == [(0, 25), (10, 25), (20, 25), (25, 25)]
    assert _models(database) == {"new-model": 25}
    assert database.get_setting("embedding_model") == "new-model"
    [(_, blob)] = vec_rows.read(database.read(), OBSERVATION_VECTOR_TABLE, [1])
    text = "entity 0: fact number 0"
    assert np.allclose(np.frombuffer(blob, dtype=np.float32), new.embed([text])[0], atol=1e-6)
    assert reembed(database, new).embedded == 0  # nothing left to do


def test_new_dimension_recreates_the_vector_table(database):
    report = reembed(database, HashingEmbedder(dimension=64, name="small-model"))
    assert report.recreated_table and report.embedded == 25
    assert vector_dimension(database.read()) == 64
    count = database.read().execute("SELECT count(*) FROM observation_embeddings").fetchone()[0]
    assert count == 25 and _models(database) == {"small-model": 25}


def test_an_interrupted_run_resumes_where_it_stopped(database):
    new = HashingEmbedder(dimension=64, name="small-model")

    def stop_after_two_batches(done: int, total: int) -> None:
        if done >= 10:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        reembed(database, new, progress=stop_after_two_batches, batch_size=5)
    assert _models(database) == {"small-model": 10}  # the committed batches stay
    new.calls = 0
    report = reembed(database, new, batch_size=5)
    assert (report.embedded, report.recreated_table) == (15, False)
    # three steps of 5 entities, one model run each (their passages and observation texts, sorted by length)
    assert new.calls == 3 and _models(database) == {"small-model": 25}


def test_a_database_from_before_observation_vectors_stays_hybrid_until_reembedded(database):
    """Upgrading to schema 4: entity vectors stay, observation vectors are missing and counted as stale;
    search keeps running hybrid on the entity vectors, and reembed fills in the observation vectors."""
    model = HashingEmbedder(dimension=384, name="old-model")
    with database.maintenance() as conn:  # the state right after migration 004 on an older file
        conn.execute(f"DROP TABLE {OBSERVATION_VECTOR_TABLE}")
        conn.execute("DELETE FROM observation_embedding_meta")
        conn.execute(f"DELETE FROM {VECTOR_TABLE}")
        conn.execute("DELETE FROM entity_embedding_meta")
        for i in range(25):  # the entity passage vectors that schema 3 wrote
            vector = model.embed([f"entity {i} (thing, active): fact number {i}"])[0]
            vec_rows.insert(conn, VECTOR_TABLE, [(i + 1, vector.tobytes())])
            conn.execute("INSERT INTO entity_embedding_meta(entity_id, model, updated_at) VALUES (?, 'old-model', 0)",
                         (i + 1,))
    service = MemoryService(database, model)
    assert service.search.stale_vectors() == 25
    assert stale_entity_ids(database.read(), "old-model") == list(range(1, 26))
    outcome = service.search.query("fact number 7", record=False)
    assert outcome.mode == "hybrid" and outcome.results[0].name == "entity 7"
    assert outcome.results[0].distance is not None  # found by KNN on its entity vector too
    model.calls = 0
    report = service.search.reembed(batch_size=100)
    assert (report.embedded, report.recreated_table, service.search.stale_vectors()) == (25, False, 0)
    counts = [database.read().execute(f"SELECT count(*) FROM {table}").fetchone()[0]
              for table in ("observation_embeddings", "entity_embeddings")]
    assert counts == [25, 25] and _models(database) == {"old-model": 25}
    # one model run: the 25 passages (made before text hashes were stored, so re-made once) and the 25
    # observation texts, sorted by length into one batch
    assert model.calls == 1
