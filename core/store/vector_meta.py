"""Which stored vectors a model made: reads of ``entity_embedding_meta`` and ``observation_embedding_meta``
for the readers outside the store that compare stored vectors (duplicates, entity splitting)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from limbic.core.store.connection import Connection


def live_observations(conn: Connection, model: str, now: float) -> list[tuple[int, int]]:
    """``(observation id, entity id)`` of the live observations (not superseded, not expired at ``now``, UTC
    seconds) with a vector made by ``model``, by observation id ascending."""
    return conn.execute(
        "SELECT m.observation_id, m.entity_id FROM observation_embedding_meta m "
        "JOIN observations o ON o.id = m.observation_id "
        "WHERE m.model = ?1 AND o.superseded_at IS NULL AND (o.expires_at IS NULL OR o.expires_at > ?2)"
        " ORDER BY m.observation_id", (model, now)).fetchall()


def observations_of_model(conn: Connection, model: str, observation_ids: Sequence[int]) -> set[int]:
    """The ones of ``observation_ids`` whose vector was made by ``model``."""
    return {int(i) for i, in conn.execute(
        "SELECT observation_id FROM observation_embedding_meta WHERE model = ? AND observation_id IN "
        "(SELECT value FROM json_each(?))", (model, json.dumps(list(observation_ids))))}


def entities_of_model(conn: Connection, model: str) -> list[int]:
    """Ids of the entities whose entity vector was made by ``model``, ascending."""
    return [r[0] for r in conn.execute(
        "SELECT entity_id FROM entity_embedding_meta WHERE model = ? ORDER BY entity_id", (model,))]
