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
from collections import defaultdict
from dataclasses import dataclass

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

    protected = {i for i in ids if types[i].lower() in params.protected_types}
    neighbours: dict[int, set[int]] = defaultdict(set)
    for a, b in rows.active_pairs(conn):
        neighbours[a].add(b)
        neighbours[b].add(a)
    named = _mentions(rows.texts_of_types(conn, params.protected_types, now), {i: names[i] for i in ids}) \
        if protected else {}
    last_use = dict(zip(ids, last.tolist(), strict=True))
    keep_used = params.keep_used_days * DAY

    def guard(k: int, i: int, pinned: bool) -> tuple[str, float] | None:
        """Why entity ``i`` (row ``k``) is kept whatever its score (the first guard that holds, in the module's
        order), and the hours from now until no guard holds it any more (``inf``: never)."""
        held: list[tuple[str, float]] = []
        if pinned:
            held.append(("pinned", math.inf))
        if i in protected:
            held.append((f"a {types[i]}: never proposed for forgetting", math.inf))
        age = now - float(arrived[k])
        if age < params.grace_days * DAY:
            verb = "imported" if arrived[k] - created[k] > IMPORTED_AFTER else "written"
            held.append((f"new: {verb} {_ago(age)}; kept at least {params.grace_days:g} days",
                         (params.grace_days * DAY - age) / HOUR))
        idle = clock - last_use[i]
        if idle < keep_used:
            held.append((f"used {_ago(idle)}", (keep_used - idle) / HOUR))
        holder = next((n for n in sorted(neighbours[i]) if n in protected), None)
        if holder is not None:
            held.append((f"related to {names[holder]} (a {types[holder]})", math.inf))
        if i in named:
            held.append((f"named by {names[named[i]]} (a {types[named[i]]})", math.inf))
        busy = max(neighbours[i], key=lambda n: (last_use.get(n, -math.inf), -n), default=None)
        if busy is not None and clock - last_use[busy] < keep_used:
            held.append((f"related to {names[busy]}, used {_ago(clock - last_use[busy])}",
                         (keep_used - (clock - last_use[busy])) / HOUR))
        return (held[0][0], max(h for _, h in held)) if held else None

    out = []
    for k, r in enumerate(found):
        i, pinned = int(r[0]), r[5] is not None
        decision, reason = decisions[k]
        kept = guard(k, i, pinned)
        hold = float(until[k]) if kept is None else max(float(until[k]), kept[1])
        if decision == retention.PROMOTE and (pinned or i in protected):
            decision, reason = retention.KEEP, "pinned" if pinned else f"a {types[i]}: kept without pinning"
        elif decision != retention.PROMOTE:
            if kept is not None:
                decision, reason = retention.KEEP, kept[0]
            elif decision == retention.FORGET:
                reason = _forget_reason(int(accesses[k]), now - float(arrived[k]), now - float(created[k]),
                                        clock - last_use[i], arrived[k] - created[k] > IMPORTED_AFTER)
        out.append(Retention(i, names[i], float(scores[k]), decision, reason, int(uses[k]), int(recent[k]),
                             float(hours[k]), float(strengths[k]), str(r[2]), r[5], hold, types[i], float(arrived[k])))
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
