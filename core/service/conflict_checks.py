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
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from limbic.core.lifecycle import contradictions
from limbic.core.store import conflicts
from limbic.core.store.database import Database, WriteTransaction
from limbic.core.store.expiry import current
from limbic.core.store.indexing import observation_passage

log = logging.getLogger(__name__)

CHECKED_OPS = frozenset({"create_entities", "upsert_entities", "add_observations", "supersede_observation"})
"""The writes whose new observations are checked (an import's are not: origin ``import``)."""
MODE_KEY = "conflict_mode"
"""Setting: the detector's mode (:data:`~limbic.core.lifecycle.contradictions.MODES`)."""
CHECK_OP = "check_conflicts"
INLINE_NEIGHBOURS = 32
"""Neighbours without a landed vector that a write's own check embeds at once (more wait for the landing)."""

Write = Callable[[str, str | None, Callable[[WriteTransaction], Any]], Any]


def newest_observation(txn: WriteTransaction) -> int:
    """The highest observation id now (new observations get higher ones)."""
    return int(txn.conn.execute("SELECT coalesce(max(id), 0) FROM observations").get)


def queue_new(txn: WriteTransaction, after: int) -> int:
    """Queue the current observations with an id above ``after`` (those this write added); returns how many. The
    service queues only while a model is in use."""
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
            findings = _findings(conn, ready, {}, model, mode, now, held)
        if not ready and not dropped:
            return found
        _settle(database, write, findings, [r[0] for r in ready] + dropped, {r[0]: r[1] for r in ready}, mode, now)
        found += len(findings)


def check_now(database: Database, write: Write, model: str, mode: str, observation_ids: Sequence[int],
              embed: Callable[[list[str]], np.ndarray],
              held: Callable[[list[int]], dict[int, np.ndarray]] = lambda ids: {}) -> int:
    """Check the queued ones of ``observation_ids`` at once, as a write returns. The texts whose vectors have not
    landed yet — these observations' and, up to :data:`INLINE_NEIGHBOURS` each, their neighbours' — are embedded
    by ``embed`` (the passages as the vector upkeep embeds them, ``(n, d) float32``: the same model gives the same
    vectors the upkeep stores). Conflicts are stored in one transaction; an observation is taken off the queue
    unless some neighbour was left without a vector (the check then runs again when the vectors land). Returns
    the conflicts found."""
    now = time.time()
    conn = database.read()
    with conn:
        rows = conflicts.queued_texts(conn, observation_ids, now)
        if not rows:
            return 0
        ids = [r[0] for r in rows]
        texts = {r[0]: observation_passage(r[3], r[2]) for r in rows}
        extra: dict[int, list[tuple[int, str]]] = {}
        complete: list[int] = []
        for observation_id, entity_id, _, _ in rows:
            waiting = conflicts.unlanded(conn, ids, entity_id, model, now)
            extra[observation_id] = [(i, text) for i, text, _ in waiting[:INLINE_NEIGHBOURS]]
            texts.update({i: observation_passage(name, text) for i, text, name in waiting[:INLINE_NEIGHBOURS]})
            if len(waiting) <= INLINE_NEIGHBOURS:
                complete.append(observation_id)
        landed = conflicts.vectors(conn, list(texts), held(list(texts)))
        missing = [i for i in texts if i not in landed]
        given = dict(zip(missing, embed([texts[i] for i in missing]), strict=True)) if missing else {}
        ready = [(r[0], r[1], r[2]) for r in rows]
        findings = _findings(conn, ready, given, model, mode, now, held, extra)
    _settle(database, write, findings, complete, {r[0]: r[1] for r in ready}, mode, now)
    return len(findings)


def _findings(conn: Any, ready: Sequence[tuple[int, int, str]], given: dict[int, np.ndarray], model: str, mode: str,
              now: float, held: Callable[[list[int]], dict[int, np.ndarray]],
              extra: dict[int, list[tuple[int, str]]] | None = None) -> list[tuple[int, contradictions.Finding]]:
    """The conflicts of each ``(observation id, entity id, text)`` with its neighbours (their vectors held, read
    from the store, or in ``given``; ``extra`` adds neighbours without a stored vector, per observation)."""
    findings = []
    for observation_id, entity_id, text in ready:
        others = conflicts.neighbours(conn, observation_id, entity_id, model, now) + (extra or {}).get(observation_id, [])
        ids = [observation_id] + [i for i, _ in others]
        found_vectors = conflicts.vectors(conn, ids, {**held(ids), **given})
        if observation_id not in found_vectors:
            continue
        others = [o for o in others if o[0] in found_vectors]
        if not others:
            continue
        matrix = np.array([found_vectors[i] for i, _ in others], dtype=np.float32).reshape(len(others), -1)
        findings += [(observation_id, f) for f in contradictions.find(text, found_vectors[observation_id], others,
                                                                       matrix, mode)]
    return findings


def _settle(database: Database, write: Write, findings: list[tuple[int, contradictions.Finding]], checked: list[int],
            entities: dict[int, int], mode: str, at: float) -> None:
    if findings:  # logged and published: the Review view shows them
        write(CHECK_OP, "system", partial(_store, findings=findings, checked=checked, entities=entities, mode=mode,
                                          at=at))
    elif checked:  # nothing to show: the queue is emptied without a change for views to follow
        with database.maintenance() as conn:
            conflicts.done(conn, checked)


def _store(txn: WriteTransaction, *, findings: list[tuple[int, contradictions.Finding]], checked: list[int],
           entities: dict[int, int], mode: str, at: float) -> None:
    """Store the ``findings`` of one batch and take the ``checked`` observations off the queue."""
    for observation_id, finding in findings:
        conflicts.insert(txn.conn, observation_id, finding.other, finding.similarity, finding.reason, mode, at)
    conflicts.done(txn.conn, checked)
    txn.touch({entities[observation_id] for observation_id, _ in findings})  # the Review view follows
