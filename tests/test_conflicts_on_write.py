"""The contradiction check as a write makes it, with the real model, on both backends: two conflicting
observations of one call are compared with each other and stored once; a text is embedded once (the write stores
the vector the background embedder would have computed); a write whose conflicts cannot be read still answers
with what it wrote."""

from __future__ import annotations

import apsw
import pytest
from _mcp_helpers import portal_client

from limbic.core.embedding.onnx_embedder import OnnxEmbedder
from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.core.store.indexing import observation_passage

EU, US = "Production is deployed in eu-west-1", "Production is deployed in us-east-1"


class CountingModel:
    """The real model, recording every text it embeds or encodes as a query (to count how often a text is
    embedded)."""

    def __init__(self, model: OnnxEmbedder) -> None:
        self.model, self.texts = model, []

    def __getattr__(self, name):  # name, dimension, max_tokens, count_tokens, embed_query, …: the model's
        return getattr(self.model, name)

    def embed(self, texts):
        self.texts += list(texts)
        return self.model.embed(texts)

    def embed_query(self, text):
        self.texts.append(text)
        return self.model.embed_query(text)


@pytest.fixture
def memory(model, memory_address):
    service = MemoryService(open_database(memory_address), model)
    service.entities.create_entities([E("api", "Service", (O("The API is written in Go"),))])
    yield service
    service.close()


def conflict_pairs(memory):
    total, rows = memory.lifecycle.open_conflicts()
    return total, sorted((r.content, r.other_content) for r in rows)


def test_two_conflicting_observations_of_one_call_make_one_conflict(memory):
    with portal_client(build_server(memory)) as (portal, client):
        result = portal.call(client.call_tool, "add_observations", {"observations": [
            {"entityName": "api", "contents": [EU, US]}]})
    assert not result.is_error, result.content[0].text
    [conflict] = result.structured_content["conflicts"]
    assert conflict["observation"] == US and conflict["conflictsWith"]["observation"] == EU
    assert conflict["reason"] == "region: eu-west-1 → us-east-1"
    memory.search.wait_for_vectors()
    assert memory.lifecycle.check_conflicts() == 0
    assert conflict_pairs(memory) == (1, [(US, EU)])  # queued once: not again as eu → us


def test_a_new_entity_with_two_conflicting_observations_is_checked_once(memory):
    memory.entities.create_entities([E("web", "Service", (O(EU), O(US)))])
    memory.search.wait_for_vectors()
    assert conflict_pairs(memory) == (1, [(US, EU)])


def test_the_pair_is_found_once_when_the_vectors_land_later(memory):
    with memory.search.deferred_vectors():  # the model is busy: both are queued, their vectors come later
        memory.entities.add_observations([("api", [O(EU), O(US)])])
    memory.search.wait_for_vectors()
    assert conflict_pairs(memory) == (1, [(US, EU)])


def test_the_pair_is_found_once_when_checked_before_the_vectors_land(memory):
    with memory.search.deferred_vectors():
        memory.entities.add_observations([("api", [O(EU), O(US)])])
        found, pending = memory.lifecycle.conflicts_of([("api", [EU, US])])  # both embedded at once, compared
    assert pending == 0 and [(r.content, r.other_content) for r in found] == [(US, EU)]
    memory.search.wait_for_vectors()
    assert conflict_pairs(memory) == (1, [(US, EU)])


def test_a_written_text_is_embedded_once(model, memory_address):
    counting = CountingModel(model)
    service = MemoryService(open_database(memory_address), counting)
    try:
        service.entities.create_entities([E("api", "Service")])
        counting.texts.clear()
        service.entities.add_observations([("api", [O("The API is written in Go")])])
        stored = service.database.read().execute(
            "SELECT count(*) FROM observation_embedding_meta m JOIN observations o ON o.id = m.observation_id "
            "WHERE o.content = ?", ("The API is written in Go",)).fetchall()[0][0]
        service.search.wait_for_vectors()
    finally:
        service.close()
    assert stored == 1  # in the write's own transaction
    assert counting.texts.count(observation_passage("api", "The API is written in Go")) == 1


def test_a_write_whose_conflicts_cannot_be_read_still_answers(model, tmp_path):
    path = tmp_path / "memory.db"
    memory = MemoryService(open_database(str(path)), model)
    try:
        memory.entities.create_entities([E("api", "Service", (O(EU),))])
        other = apsw.Connection(str(path))
        other.execute("DROP TABLE conflicts")  # the conflict store is gone: every read of it fails
        other.close()
        with portal_client(build_server(memory)) as (portal, client):
            result = portal.call(client.call_tool, "add_observations", {"observations": [
                {"entityName": "api", "contents": [US]}]})
        assert not result.is_error, result.content[0].text
        assert result.structured_content == {
            "results": [{"entityName": "api", "addedObservations": [US]}], "conflicts": "unavailable"}
        assert [o.content for o in memory.entities.get_entity("api").entity.observations] == [EU, US]
    finally:
        memory.close()
