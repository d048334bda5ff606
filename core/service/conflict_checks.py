"""The contradiction check of written observations (docs/lifecycle.md "Contradictions").

A write that adds observations while a model is in use queues them (:func:`queue_new`, in the write's own
transaction; imports are not checked). Nothing waits for the model: once an observation's vector has landed
(:func:`run_checks`, called after every landing step of the vector upkeep), it is compared with the current
observations of its entity and of the related entities (:func:`limbic.core.store.conflicts.neighbours`) by
:func:`limbic.core.lifecycle.contradictions.find`, and each conflict is stored, open until a person settles it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from limbic.core.lifecycle import contradictions
from limbic.core.store import conflicts
from limbic.core.store.database import Database, WriteTransaction
from limbic.core.store.expiry import current
from limbic.core.store.schema import vector_dimension

log = logging.getLogger(__name__)

CHECKED_OPS = frozenset({"create_entities", "upsert_entities", "add_observations", "supersede_observation"})
"""The writes whose new observations are checked (an import's are not: origin ``import``)."""
MODE_KEY = "conflict_mode"
"""Setting: the detector's mode (:data:`~limbic.core.lifecycle.contradictions.MODES`)."""
CHECK_OP = "check_conflicts"

Write = Callable[[str, str | None, Callable[[WriteTransaction], Any]], Any]


def newest_observation(txn: WriteTransaction) -> int:
    """The highest observation id now (new observations get higher ones)."""
    return int(txn.conn.execute("SELECT coalesce(max(id), 0) FROM observations").get)


def queue_new(txn: WriteTransaction, after: int) -> int:
    """Queue the current observations with an id above ``after`` (those this write added), when a model has made
    vectors in this database; returns how many."""
    if vector_dimension(txn.conn) is None:
        return 0
    now = time.time()
    ids = [int(r[0]) for r in txn.conn.execute(f"SELECT id FROM observations WHERE id > ? AND {current('?2')}",
                                               (after, now))]
    conflicts.queue(txn.conn, ids, now)
    return len(ids)


def run_checks(database: Database, write: Write, model: str, mode: str,
               held: Callable[[list[int]], dict[int, np.ndarray]] = lambda ids: {}) -> int:
    """Check every queued observation whose vector by ``model`` has landed, in batches, each batch's conflicts
    stored in one transaction; queued observations no longer current are dropped. ``held`` gives the vectors the
    in-memory copy holds (the rest are read from the store). Returns the conflicts found."""
    found = 0
    while True:
        now = time.time()
        conn = database.read()
        with conn:
            ready, dropped = conflicts.ready(conn, model, now)
            findings = []
            entities: dict[int, int] = {}
            for observation_id, entity_id, text in ready:
                entities[observation_id] = entity_id
                others = conflicts.neighbours(conn, observation_id, entity_id, model, now)
                ids = [observation_id] + [i for i, _ in others]
                found_vectors = conflicts.vectors(conn, ids, held(ids))
                if observation_id not in found_vectors:
                    continue
                others = [o for o in others if o[0] in found_vectors]
                matrix = np.array([found_vectors[i] for i, _ in others], dtype=np.float32).reshape(len(others), -1)
                findings += [(observation_id, f) for f in contradictions.find(
                    text, found_vectors[observation_id], others, matrix, mode)]
        if not ready and not dropped:
            return found

        checked = [r[0] for r in ready] + dropped
        if findings:  # logged and published: the Review view shows them
            write(CHECK_OP, "system", partial(_store, findings=findings, checked=checked, entities=entities, mode=mode,
                                              at=now))
        else:  # nothing to show: the queue is emptied without a change for views to follow
            with database.maintenance() as conn:
                conflicts.done(conn, checked)
        found += len(findings)


def _store(txn: WriteTransaction, *, findings: list[tuple[int, contradictions.Finding]], checked: list[int],
           entities: dict[int, int], mode: str, at: float) -> None:
    """Store the ``findings`` of one batch and take the ``checked`` observations off the queue."""
    for observation_id, finding in findings:
        conflicts.insert(txn.conn, observation_id, finding.other, finding.similarity, finding.reason, mode, at)
    conflicts.done(txn.conn, checked)
    txn.touch({entities[observation_id] for observation_id, _ in findings})  # the Review view follows
