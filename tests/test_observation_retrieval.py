"""Observation-level retrieval: a fact buried deep in a long entity is found by meaning.

The entity passage covers at most the model's 256 tokens, so the 40th observation of a long entity
is invisible to the entity vector; its own observation vector finds it. Real all-MiniLM-L6-v2 (marker
``model``): the query shares no word with the fact, so only the semantic branch can find it.
"""

from __future__ import annotations

import itertools

import pytest
from _embedder_helpers import real_model_dir

from limbic.core.embedding.onnx_embedder import OnnxEmbedder
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

pytestmark = pytest.mark.model

FACT = "Her daughter adopted a golden retriever puppy called Biscuit last spring."
QUERY = "which dog did the child get"
NEIGHBOURS = "The family next door keeps two cats and a parrot."  # near the query, but not the answer
SUBJECTS = ["the quarterly budget", "the kitchen renovation", "the train timetable", "the tax return",
            "the garden fence", "the laptop warranty", "the conference talk", "the violin lessons"]
EVENTS = ["was discussed on Monday", "needs another review", "was postponed to next month",
          "cost more than planned", "was finished early", "is waiting for a signature"]


def filler(offset: int) -> list[str]:
    pairs = itertools.islice(itertools.cycle(itertools.product(SUBJECTS, EVENTS)), offset, offset + 60)
    return [f"Note {i}: {subject} {event}." for i, (subject, event) in enumerate(pairs)]


@pytest.fixture
def long_entities(memory_address):
    service = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    target = filler(0)
    target[39] = FACT
    entities = [EntityInput("Household log", "log", tuple(ObservationInput(o) for o in target))]
    entities += [EntityInput(f"Office log {i}", "log", tuple(ObservationInput(o) for o in filler(7 * i)))
                 for i in range(1, 4)]
    entities.append(EntityInput("Neighbours", "log", (ObservationInput(NEIGHBOURS),)))
    service.entities.create_entities(entities)
    yield service
    service.close()


def test_a_fact_in_the_40th_observation_is_found(long_entities):
    outcome = long_entities.search.query(QUERY, limit=5, record=False)
    first = outcome.results[0]
    assert first.name == "Household log"
    # the fact's own vector: the entity passage alone (without the fact) is at cosine distance ~0.8
    assert first.distance is not None and first.distance < 0.6
    before_fact = " | ".join(filler(0)[:39])
    assert long_entities.embedder.count_tokens(before_fact) > 256, "the fact lies past the entity passage"
