"""The forget/promote review over the whole memory (docs/lifecycle.md "Forget and promote"): every entity's
retention score from its uses (accesses only), strength and last use, what it suggests, and why, in words.

Writing a memory is its first use: ``n_use = 1 + accesses``, and a memory never accessed was last used when it
was created. Time since use runs on the memory's own clock: up to its last activity (its latest write or use,
:func:`limbic.core.store.retention.last_activity`), so a memory nobody opened for a month has not aged by a
month. A low score proposes forgetting only when no guard keeps the memory, checked in this order:

1. pinned (promoted);
2. its type is protected (``protected_types``: person, preference, identity, decision);
3. new: written or imported (:func:`limbic.core.store.retention.arrivals`) less than ``grace_days`` ago, on the
   wall clock;
4. used less than ``keep_used_days`` ago;
5. related (an active relation) to a memory of a protected type, or named in one's current observations;
6. related to a memory used less than ``keep_used_days`` ago.

A protected or pinned memory is never a promote candidate either (it is kept already).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from limbic.core.lifecycle import retention
from limbic.core.lifecycle.retention import RetentionParams, duration, times
from limbic.core.store import retention as rows
from limbic.core.store.database import Database
from limbic.core.store.writes import day_of

PARAMS_KEY = "retention_params"
"""Setting: the saved :class:`~limbic.core.lifecycle.retention.RetentionParams` (JSON)."""
HOUR = 3600.0
DAY = 86_400.0
IMPORTED_AFTER = DAY
"""A memory whose first logged change came this long after its ``created_at`` was imported (the file kept its
older time)."""
_MAX_NAME_WORDS = 6
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Retention:
    """One entity in the review: ``score``, ``decision`` (keep / forget / promote) and its ``reason`` (a phrase
    a person reads); ``uses`` (1 + accesses), ``recent_uses`` (uses within the promote window),
    ``hours_since_use`` (on the memory's clock), ``strength`` (after its uses), ``status``, ``pinned_at`` (UTC
    seconds or ``None``), ``hours_until_forgotten`` without another use (bisection and the guards; ``inf``: not
    within 100 years, or never), ``entity_type`` and ``arrived_at`` (UTC seconds it was written or imported)."""

    entity_id: int
    name: str
    score: float
    decision: str
    reason: str
    uses: int
    recent_uses: int
    hours_since_use: float
    strength: float
    status: str
    pinned_at: float | None
    hours_until_forgotten: float
    entity_type: str = ""
    arrived_at: float = 0.0

    def to_dict(self) -> dict:
        until = self.hours_until_forgotten
        return {"name": self.name, "entityType": self.entity_type, "score": round(self.score, 6),
                "decision": self.decision, "reason": self.reason, "uses": self.uses, "recentUses": self.recent_uses,
                "daysSinceUse": round(self.hours_since_use / 24, 2), "strength": round(self.strength, 3),
                "status": self.status, "pinned": self.pinned_at is not None,
                "daysUntilForgotten": None if math.isinf(until) else round(until / 24, 2)}


def load_params(database: Database) -> RetentionParams:
    text = database.get_setting(PARAMS_KEY)
    return RetentionParams.from_dict(json.loads(text)) if text else RetentionParams()


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _mentions(texts: list[tuple[int, str]], names: dict[int, str]) -> dict[int, int]:
    """``{entity id: id of a protected entity whose text names it}``: a name matches a run of whole words
    (case ignored) of one of ``texts``; names of more than six words are not looked for."""
    runs: dict[tuple[str, ...], int] = {}
    for owner, text in texts:
        words = _words(text)
        for size in range(1, _MAX_NAME_WORDS + 1):
            for start in range(len(words) - size + 1):
                runs.setdefault(tuple(words[start:start + size]), owner)
    found = {}
    for eid, name in names.items():
        key = tuple(_words(name))
        if key and len(key) <= _MAX_NAME_WORDS and len(name) >= 3 and key in runs and runs[key] != eid:
            found[eid] = runs[key]
    return found


def _ago(seconds: float) -> str:
    return f"{duration(max(0.0, seconds))} ago"


def review(database: Database, params: RetentionParams, now: float) -> list[Retention]:
    """Every entity's retention at ``now`` (UTC seconds, the wall clock; decay runs on the memory's clock), by id."""
    conn = database.read()
    since = day_of(now - params.promote_window_days * DAY)
    found = rows.usage(conn, since)
    if not found:
        return []
    clock = min(now, rows.last_activity(conn) or now)
    first = rows.arrivals(conn)
    ids = [int(r[0]) for r in found]
    names = {int(r[0]): str(r[1]) for r in found}
    types = {int(r[0]): str(r[9]) for r in found}
    created = np.array([r[3] for r in found], dtype=np.float64)
    arrived = np.maximum(created, np.array([first.get(i, -math.inf) for i in ids], dtype=np.float64))
    accesses = np.array([r[6] for r in found], dtype=np.float64)
    last = np.array([r[3] if r[7] is None else r[7] for r in found], dtype=np.float64)
    hours = np.maximum(0.0, (clock - last) / HOUR)
    strengths = retention.strength(np.array([r[4] for r in found]), accesses, params)
    uses = 1.0 + accesses
    window_start = clock - params.promote_window_days * DAY  # the write is a use within the window too
    recent = np.array([r[8] + (r[3] >= window_start) for r in found], dtype=np.float64)
    scores = retention.score(uses, hours, strengths, params)
    decisions = retention.decide(scores, uses, recent, params)
    until = retention.hours_until_forgotten(uses, hours, strengths, params)

    pinned = np.array([r[5] is not None for r in found])
    protected = np.array([types[i].lower() in params.protected_types for i in ids])
    graph = _Neighbours(np.array(ids, dtype=np.int64), rows.active_pairs(conn))
    named = _mentions(rows.texts_of_types(conn, params.protected_types, now), names) if protected.any() else {}
    named_by = np.array([i in named for i in ids])
    keep_used, grace = params.keep_used_days * DAY, params.grace_days * DAY
    age, idle = now - arrived, clock - last
    busy_idle = clock - graph.latest(last)
    # the guards (module docstring), each a mask over the rows, and the hours each holds from now
    new, used, busy = age < grace, idle < keep_used, busy_idle < keep_used
    held_for_good = pinned | protected | graph.any(protected) | named_by
    hold = np.maximum.reduce([until, np.where(held_for_good, np.inf, 0.0), np.where(new, (grace - age) / HOUR, 0.0),
                              np.where(used, (keep_used - idle) / HOUR, 0.0),
                              np.where(busy, (keep_used - busy_idle) / HOUR, 0.0)])
    kept = held_for_good | new | used | busy

    def guard(k: int) -> str:
        """Why row ``k`` is kept whatever its score: the first guard that holds, in the module's order."""
        i = ids[k]
        if pinned[k]:
            return "pinned"
        if protected[k]:
            return f"a {types[i]}: never proposed for forgetting"
        if new[k]:
            verb = "imported" if arrived[k] - created[k] > IMPORTED_AFTER else "written"
            return f"new: {verb} {_ago(age[k])}; kept at least {params.grace_days:g} days"
        if used[k]:
            return f"used {_ago(idle[k])}"
        around = graph.of(k)
        holders = around[protected[around]]
        if len(holders):
            holder = int(holders.min())
            return f"related to {names[ids[holder]]} (a {types[ids[holder]]})"
        if named_by[k]:
            return f"named by {names[named[i]]} (a {types[named[i]]})"
        j = int(around[np.argmax(last[around])])
        return f"related to {names[ids[j]]}, used {_ago(busy_idle[k])}"

    out = []
    for k, r in enumerate(found):
        i = ids[k]
        decision, reason = decisions[k]
        if decision == retention.PROMOTE and (pinned[k] or protected[k]):
            decision, reason = retention.KEEP, "pinned" if pinned[k] else f"a {types[i]}: kept without pinning"
        elif decision == retention.FORGET and kept[k]:
            decision, reason = retention.KEEP, guard(k)
        elif decision == retention.FORGET:
            reason = _forget_reason(int(accesses[k]), float(age[k]), now - float(created[k]), float(idle[k]),
                                    arrived[k] - created[k] > IMPORTED_AFTER)
        out.append(Retention(i, names[i], float(scores[k]), decision, reason, int(uses[k]), int(recent[k]),
                             float(hours[k]), float(strengths[k]), str(r[2]), r[5], float(hold[k]), types[i],
                             float(arrived[k])))
    return out


class _Neighbours:
    """The active relations as rows' neighbour lists (compressed rows, both directions): ``ids`` ``(n,)`` the
    entity ids by row, ascending; ``pairs`` ``(from id, to id)``."""

    def __init__(self, ids: np.ndarray, pairs: list[tuple[Any, ...]]) -> None:
        ends = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        ends = ends[np.isin(ends, ids).all(axis=1)]
        a, b = np.searchsorted(ids, ends[:, 0]), np.searchsorted(ids, ends[:, 1])
        source, target = np.concatenate([a, b]), np.concatenate([b, a])
        order = np.argsort(source, kind="stable")
        self._source, self._target = source[order], target[order]
        self._starts = np.searchsorted(self._source, np.arange(len(ids) + 1))

    def of(self, row: int) -> np.ndarray:
        """The rows related to ``row``, ``(m,) int64``."""
        return self._target[self._starts[row]:self._starts[row + 1]]

    def latest(self, values: np.ndarray) -> np.ndarray:
        """Per row, the largest of ``values`` ``(n,)`` over its neighbours (``-inf`` without any)."""
        out = np.full(len(values), -np.inf)
        np.maximum.at(out, self._source, values[self._target])
        return out

    def any(self, mask: np.ndarray) -> np.ndarray:
        """Per row, whether a neighbour is in ``mask`` ``(n,) bool``."""
        out = np.zeros(len(mask), dtype=bool)
        np.logical_or.at(out, self._source, mask[self._target])
        return out


def _forget_reason(accesses: int, since_arrival: float, since_written: float, idle: float, imported: bool) -> str:
    """Why a memory is proposed for forgetting, in words: ``"never used since it was imported 3 months ago
    (written 2 years ago)"``, ``"not used for 8 months (used 4 times in all)"``."""
    if accesses == 0:
        if imported:
            return f"never used since it was imported {_ago(since_arrival)} (written {_ago(since_written)})"
        return f"never used since it was written {_ago(since_written)}"
    return f"not used for {duration(idle)} (used {times(accesses)} in all)"



def forget_candidates(items: list[Retention], *, archived: bool = False) -> list[Retention]:
    """The forget candidates, lowest score first: not pinned, and not archived already unless ``archived``."""
    return sorted((r for r in items if r.decision == retention.FORGET and r.pinned_at is None
                   and (archived or r.status != "archived")), key=lambda r: (r.score, r.entity_id))


def promote_candidates(items: list[Retention]) -> list[Retention]:
    """The promote candidates, highest score first: not pinned yet."""
    return sorted((r for r in items if r.decision == retention.PROMOTE and r.pinned_at is None),
                  key=lambda r: (-r.score, r.entity_id))
