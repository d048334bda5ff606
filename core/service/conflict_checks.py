"""The contradiction check of written observations (docs/lifecycle.md "Contradictions").

A write that adds observations while a model is in use encodes their texts just before its transaction with the
query encoder — the vectors the background embedder would compute — and inside the
transaction stores those vectors and checks each new observation (:func:`check_written`) against the current observations of
its entity and of the related entities (:func:`limbic.core.store.conflicts.candidates`), the other observations
of the same write among them, each pair once. Where a neighbour has no vector yet, or the texts were not embedded
beforehand (the model busy, a write inside a larger transaction), the observation is queued instead
(:func:`queue_new`): the write's caller may check it at once (:func:`check_now`, embedding what is missing), and
otherwise it is checked once the vectors have landed (:func:`run_checks`, after every landing step). Each conflict
is stored, open until a person settles it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from itertools import groupby
from typing import Any

import numpy as np

from limbic.core.lifecycle import contradictions
from limbic.core.store import conflicts
from limbic.core.store.connection import Connection
from limbic.core.store.database import Database, WriteTransaction
from limbic.core.store.indexing import observation_passage, text_hash
from limbic.core.store.pending_vectors import store_observation_vectors
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, ensure_vector_table, vector_dimension

log = logging.getLogger(__name__)

CHECKED_OPS = frozenset({"create_entities", "upsert_entities", "add_observations", "supersede_observation"})
"""The writes whose new observations are checked (an import's too: queued, checked once its vectors land)."""
MODE_KEY = "conflict_mode"
"""Setting: the detector's mode (:data:`~limbic.core.lifecycle.contradictions.MODES`)."""
CHECK_OP = "check_conflicts"
INLINE_NEIGHBOURS = 32
"""Neighbours without a landed vector that a write's own check embeds at once (more wait for the landing)."""

Write = Callable[[str, str | None, Callable[[WriteTransaction], Any]], Any]


def newest_observation(txn: WriteTransaction) -> int:
    """The highest observation id now (new observations get higher ones)."""
    return conflicts.newest_observation(txn.conn)


def queue_new(txn: WriteTransaction, after: int, only: Sequence[int] | None = None) -> int:
    """Queue the current observations with an id above ``after`` (those this write added; of them ``only`` when
    given); returns how many. The service queues only while a model is in use."""
    if only is not None and not only:
        return 0
    now = time.time()
    ids = conflicts.current_after(txn.conn, after, now)
    if only is not None:
        ids = [i for i in ids if i in set(only)]
    conflicts.queue(txn.conn, ids, now)
    return len(ids)


Vectors = Mapping[tuple[str, str], np.ndarray]
"""Vectors of a write's texts encoded before its transaction: ``{(entity name, content): (d,) float32 unit}``, the
passage as the vector upkeep embeds it (:func:`~limbic.core.store.indexing.observation_passage`)."""


def possible_before(conn: Connection, texts: Sequence[tuple[str, str]], entity_ids: Mapping[str, int]) -> bool:
    """Before a write: whether one of its new ``texts`` (``(entity name, content)``) could conflict with its
    entity's or the same subject's current observations, or with an earlier text of the same write
    (:func:`~limbic.core.lifecycle.contradictions.possible`). ``entity_ids``: the entities that exist already."""
    now = time.time()
    earlier: dict[str, list[str]] = {}
    for name, content in texts:
        known = earlier.setdefault(name, conflicts.subject_texts(conn, entity_ids[name], now)
                                   if name in entity_ids else [])
        if contradictions.possible(content, known):
            return True
        known.insert(0, content)
    return False


def possible_written(txn: WriteTransaction, after: int) -> list[int]:
    """Inside a write whose texts were found unable to conflict before it began (:func:`possible_before`): the
    ids of its added observations (id above ``after``) that could conflict now — with what another writer
    added meanwhile — for the queue; usually none."""
    conn, now = txn.conn, time.time()
    rows = conflicts.written(conn, after, now)
    new = [r[0] for r in rows]
    return [r[0] for r in rows if contradictions.possible(r[2], conflicts.subject_texts(
        conn, r[1], now, [i for i in new if i >= r[0]]))]


def check_written(txn: WriteTransaction, after: int, vectors: Vectors, model: str, mode: str,
                  held: Callable[[list[int]], dict[int, np.ndarray]] = lambda ids: {}) -> list[int]:
    """Inside the write's transaction: store the vectors of the observations it added (id above ``after``) that
    ``vectors`` holds, and check each of those whose neighbours all have vectors (the other observations of this
    write among them: each pair once, the later one as the new side); conflicts are stored in the same
    transaction. Neighbours whose cosine similarity is below the mode's floor are never read
    (:data:`~limbic.core.lifecycle.contradictions.FLOOR`). Returns the ids of the added observations left
    unchecked (no vector given, or some neighbour without one): the caller queues them."""
    conn, now = txn.conn, time.time()
    rows = conflicts.written(conn, after, now)
    mine = [r for r in rows if (r[3], r[2]) in vectors]
    unchecked = [r[0] for r in rows if (r[3], r[2]) not in vectors]
    if not mine:
        return unchecked
    given = {r[0]: np.asarray(vectors[(r[3], r[2])], dtype=np.float32) for r in mine}
    dimension = len(next(iter(given.values())))
    stored = vector_dimension(conn, OBSERVATION_VECTOR_TABLE)
    if stored not in (None, dimension):  # vectors of another model: the upkeep re-embeds, the landing checks
        return [r[0] for r in rows]
    if stored is None:
        ensure_vector_table(conn, dimension, model)
    store_observation_vectors(conn, [(r[0], r[1], text_hash(observation_passage(r[3], r[2])), given[r[0]])
                                     for r in mine], model, now)
    new = {r[0] for r in rows}
    conflicting: list[tuple[int, int, float, str]] = []
    for entity_id, group in groupby(sorted(mine, key=lambda r: (r[1], r[0])), key=lambda r: r[1]):
        written = list(group)
        landed, waiting = conflicts.candidates(conn, entity_id, model, now)
        if any(i not in new for i in waiting):
            unchecked += [r[0] for r in written]
            continue
        ids = [i for i, _ in landed]
        found = conflicts.vectors(conn, ids, {**held([i for i in ids if i not in given]), **given})
        for observation_id, _, content, _ in written:
            others = [(i, text) for i, text in landed if i in found and i != observation_id
                      and not (i in new and i > observation_id)]
            if not others:
                continue
            matrix = np.array([found[i] for i, _ in others], dtype=np.float32).reshape(len(others), -1)
            conflicting += [(observation_id, finding.other, finding.similarity, finding.reason)
                            for finding in contradictions.find(content, given[observation_id], others, matrix, mode)]
    conflicts.insert(conn, conflicting, mode, now)
    return unchecked


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
        for observation_id, entity_id, _, _ in rows:  # earlier ones of this batch are neighbours: each pair once
            waiting = conflicts.unlanded(conn, [i for i in ids if i >= observation_id], entity_id, model, now)
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


def _findings(conn: Connection, ready: Sequence[tuple[int, int, str]], given: dict[int, np.ndarray], model: str, mode: str,
              now: float, held: Callable[[list[int]], dict[int, np.ndarray]],
              extra: dict[int, list[tuple[int, str]]] | None = None) -> list[tuple[int, contradictions.Finding]]:
    """The conflicts of each ``(observation id, entity id, text)`` with its neighbours (their vectors held, read
    from the store, or in ``given``; ``extra`` adds neighbours without a stored vector, per observation). A queued
    neighbour written later is left to its own check: each pair once."""
    later = set(conflicts.queued(conn))
    subjects: dict[int, list[int]] = {}  # an import's batch holds many observations of one entity
    findings = []
    for observation_id, entity_id, text in ready:
        if entity_id not in subjects:
            subjects[entity_id] = conflicts.same_subject(conn, entity_id)
        others = [o for o in conflicts.neighbours(conn, observation_id, entity_id, model, now, subjects[entity_id])
                  if not (o[0] > observation_id and o[0] in later)] + (extra or {}).get(observation_id, [])
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
    conflicts.insert(txn.conn, [(observation_id, finding.other, finding.similarity, finding.reason)
                                for observation_id, finding in findings], mode, at)
    conflicts.done(txn.conn, checked)
    txn.touch({entities[observation_id] for observation_id, _ in findings})  # the Review view follows
