"""An authored usage log for the learning-loop tests: searches, what they showed, and later uses.

Each of ``TOPICS`` topics has a *manual* (matches the query best by text) and *notes* (matches a little
less, but is the memory that is used, day after day). An agent searches each topic with the ``seed``
parameters and then marks the notes as used, naming the search: a higher salience weight (β_sal)
ranks what gets used first, so the tuner should move β_sal up.
"""

from __future__ import annotations

import time

from limbic.core.models import EntityInput, ObservationInput
from limbic.core.search.presets import SEED
from limbic.core.service import MemoryService

DAY = 86400.0
TOPICS = 60


def build_usage_log(service: MemoryService, topics: int = TOPICS) -> list[int]:
    """Create the graph, its usage history and one labelled search per topic; returns the search ids."""
    now = time.time()
    entities = []
    for i in range(topics):
        entities.append(EntityInput(f"manual {i}", "Doc", (ObservationInput(f"lantern{i} repair manual"),),
                                    created_at=now - 10 * DAY))
        entities.append(EntityInput(f"notes {i}", "Doc", (ObservationInput(
            f"lantern{i} repair notes from the workshop, used often"),), created_at=now - 10 * DAY))
    service.entities.create_entities(entities)
    for i in range(topics):
        for day in range(4):
            service.usage.record_access([f"notes {i}"], at=now - day * DAY, co_occurrence=False)
    ids = []
    for i in range(topics):
        outcome = service.search.query(f"lantern{i} repair", limit=5, params=SEED)
        service.usage.wait_for_signals()
        assert outcome.search_id is not None
        service.usage.mark_used([f"notes {i}"], search_id=outcome.search_id)
        ids.append(outcome.search_id)
    return ids
