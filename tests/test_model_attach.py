"""A model installed while the memory is open: it is attached without opening the memory again, search ranks on
full text alone (the same top-K as without a model) until the vectors cover the memory, and how far the embedding
is comes from the database (the same after opening it again). The real model, the sample memory, each backend."""

from __future__ import annotations

import pytest

from limbic.core.io.sample import seed_if_empty
from limbic.core.service import MemoryService
from limbic.core.service.searching import vectors_cover
from limbic.core.store.backend import open_database
from limbic.core.vectors.pending import fill_step

QUERIES = ("who maintains the deployment scripts", "database migration", "what does the team prefer for testing")


def _names(service: MemoryService, query: str) -> list[str]:
    return [r.name for r in service.search.query(query, 10, record=False).results]


def test_attached_model_ranks_on_full_text_until_the_memory_is_embedded(memory_address, model):
    plain = MemoryService(open_database(memory_address), None)
    try:
        assert seed_if_empty(plain)
        bm25 = {q: _names(plain, q) for q in QUERIES}  # what a memory without a model answers
        assert plain.search.embedding_progress() is None
    finally:
        plain.close()

    service = MemoryService(open_database(memory_address), None)
    try:
        service.attach_embedder(model)
        embedded, total = service.search.embedding_progress()
        assert embedded == 0 and total > 100  # written without a model: nothing embedded, every entity pending
        assert service.search.pending_vectors() == total
        for query in QUERIES:
            outcome = service.search.query(query, 10, record=False)
            assert outcome.mode == "fts_only" and outcome.embedded == (0, total)
            assert [r.name for r in outcome.results] == bm25[query]
        fill_step(service.database, model, service.vectors.land, limit=total // 2)  # half of it embedded
        embedded, _ = service.search.embedding_progress()
        assert embedded == total // 2 and not vectors_cover(embedded, total)
        for query in QUERIES:
            outcome = service.search.query(query, 10, record=False)
            assert outcome.mode == "fts_only" and [r.name for r in outcome.results] == bm25[query]
        with pytest.raises(ValueError, match="attached already"):
            service.attach_embedder(model)
    finally:
        service.close()

    again = MemoryService(open_database(memory_address), model)  # the progress is the database's: the same after a start
    try:
        assert again.search.embedding_progress() == (total // 2, total)
        assert again.search.wait_for_vectors()
        assert again.search.embedding_progress() == (total, total)
        modes = {again.search.query(q, 10, record=False).mode for q in QUERIES}
        assert modes == {"hybrid"}
    finally:
        again.close()


def test_a_few_entities_waiting_keep_search_hybrid():
    assert vectors_cover(99, 100) and not vectors_cover(98, 100) and vectors_cover(0, 0)
