"""The forget/promote review over the whole memory (docs/lifecycle.md "Forget and promote"): every entity's
retention score from its own uses, strength and last use, what it suggests, and why, in words; and
:func:`forecast`, what the rules would propose at a date.

Writing a memory is its first use: ``n_use = 1 + accesses``, and a memory never accessed was last used when it
was written into this memory — created, or imported (:func:`limbic.core.store.retention.arrivals`: an import
writes it here, whatever ``created_at`` its file carried). Time since use is each memory's own, on the wall
clock: nothing else written or swept moves it. A low score proposes forgetting only when no guard keeps the
memory, checked in this order:

1. pinned (promoted);
2. its type is protected (``protected_types``: person, preference, identity, decision);
3. what it says keeps it (:mod:`limbic.core.lifecycle.keeping`): open work, configuration, a preference or
   decision it holds, a standing rule, a goal still ahead, or still in use;
4. new: written or imported less than ``grace_days`` ago;
5. used less than ``keep_used_days`` ago;
6. tied to a memory kept by 2 or 3 that keeps its ties — of a protected type, open work, configuration, or holding
   a preference or decision (:data:`~limbic.core.lifecycle.keeping.TYING`): related to it (an active relation),
   naming it, or named in its current observations. A memory still in use ties only a dataset or corpus
   (:func:`~limbic.core.lifecycle.keeping.is_resource`); a standing rule or a goal keeps only itself;
7. a tool or library (:func:`~limbic.core.lifecycle.keeping.is_tool`) that something current uses — a memory
   that is not a tool, kept for good by 1–3 or 6 and not done, or still in use — related to it by a relation of use
   (:func:`~limbic.core.lifecycle.keeping.used_end`) or naming it in a current observation that does not say it was
   dropped (:func:`~limbic.core.lifecycle.keeping.says_dropped`);
8. a requirement a standing rule carries: an observation stating a need or a bound
   (:func:`~limbic.core.lifecycle.keeping.requirement`) in a memory related to a policy, convention … in force (kept
   as a standing rule, its type or name saying it is one: :func:`~limbic.core.lifecycle.keeping.is_rule`), naming
   it, or named by it — done or not;
9. related to a memory used less than ``keep_used_days`` ago.

What is done (completed, archived, or a work item whose latest state is done) is judged by its own use alone:
guards 6, 7 and 9 do not hold it. A goal dated by its year keeps its memory until that year ends, no longer. A
protected or pinned memory is never a promote candidate either (it is kept already). Nothing here depends on when
it is asked but through ``now``: the review at a later moment is what the rules would propose then if nothing else
happens (:func:`forecast`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from limbic.core.errors import ValidationError
from limbic.core.lifecycle import keeping, retention
from limbic.core.lifecycle.retention import RetentionParams, duration, times
from limbic.core.models import iso
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
GUARDS = ("pinned", "protected type", keeping.OPEN_WORK, keeping.CONFIGURATION, "holds a preference or decision",
          keeping.RULE, keeping.AHEAD, keeping.IN_USE, "new", "used lately", "tied to a kept memory",
          "used by a current memory", "holds a standing rule's requirement", "tied to a used memory")
"""The guards of the module docstring, by the names a ``Retention.guard`` holds."""
_MAX_NAME_WORDS = 6
WORDS_PER_DETAIL = 10.0
"""Words of observations that count as one detail of a memory's strength (about one observation's worth)."""
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Retention:
    """One entity in the review: ``score``, ``decision`` (keep / forget / promote) and its ``reason`` (a phrase
    a person reads); ``uses`` (1 + accesses), ``recent_uses`` (uses within the promote window),
    ``hours_since_use`` (since its own last use: its write or import, or its last access), ``strength`` (after its
    uses and with what it holds), ``status``, ``pinned_at`` (UTC seconds or ``None``), ``hours_until_forgotten``
    without another use (bisection and the guards; ``inf``: not within 100 years, or never), ``entity_type``,
    ``arrived_at`` (UTC seconds it was written or imported) and ``guard``, the guard that keeps it although its
    score is low (one of :data:`GUARDS`; ``""`` when none does)."""

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
    guard: str = ""

    def to_dict(self) -> dict:
        until = self.hours_until_forgotten
        return {"name": self.name, "entityType": self.entity_type, "score": round(self.score, 6),
                "decision": self.decision, "reason": self.reason, "uses": self.uses, "recentUses": self.recent_uses,
                "daysSinceUse": round(self.hours_since_use / 24, 2), "strength": round(self.strength, 3),
                "status": self.status, "pinned": self.pinned_at is not None,
                "daysUntilForgotten": None if math.isinf(until) else round(until / 24, 2),
                **({"keptBy": self.guard} if self.guard else {})}


def load_params(database: Database) -> RetentionParams:
    text = database.get_setting(PARAMS_KEY)
    return RetentionParams.from_dict(json.loads(text)) if text else RetentionParams()


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class _Texts:
    """Each entity's current observations (``facts``: ``{id: [(text, kind), …]}``, oldest first) as words
    (:func:`_words`), each entity's read once, when first asked for."""

    def __init__(self, facts: dict[int, list[tuple[str, str | None]]]) -> None:
        self._facts = facts
        self._words: dict[int, list[list[str]]] = {}

    def of(self, ids: Iterable[int]) -> Iterator[tuple[int, int, list[str]]]:
        """``(entity id, the observation's position among its current ones, its words)`` of each current observation
        of ``ids``."""
        for i in ids:
            words = self._words.get(i)
            if words is None:
                words = self._words[i] = [_words(text) for text, _ in self._facts[i]]
            for n, said in enumerate(words):
                yield i, n, said


def _named(texts: Iterable[tuple[int, int, list[str]]], names: dict[int, str]) -> list[tuple[int, int, int]]:
    """``(owner id, named id, the observation's position)`` for each entity of ``names`` that an observation
    (:meth:`_Texts.of`) of another entity names, in the order found: a name matches a run of whole words (case
    ignored); names under 3 characters or of more than six words are not looked for. Linear in the words of
    ``texts`` (names indexed by their first word)."""
    keys: dict[str, dict[tuple[str, ...], list[int]]] = {}
    for eid, name in names.items():
        key = tuple(_words(name))
        if key and len(key) <= _MAX_NAME_WORDS and len(name) >= 3:
            keys.setdefault(key[0], {}).setdefault(key, []).append(eid)
    found: list[tuple[int, int, int]] = []
    if not keys:
        return found
    for owner, n, words in texts:
        if keys.keys().isdisjoint(words):
            continue
        for start, word in enumerate(words):
            for key, eids in keys.get(word, {}).items():
                if tuple(words[start:start + len(key)]) == key:
                    found.extend((owner, e, n) for e in eids if e != owner)
    return found


def _said(facts: list[tuple[str, str | None]]) -> float:
    """How much a memory says, in observations: its current observations' words (runs of letters and digits, as
    names are matched: ``x86-64-v3`` is three, ``1.4.2`` three) beyond the first ten, by tens."""
    return max(0.0, sum(len(_WORD.findall(text)) for text, _ in facts) - WORDS_PER_DETAIL) / WORDS_PER_DETAIL


def _ago(seconds: float) -> str:
    return f"{duration(max(0.0, seconds))} ago"


_shared: ContextVar[dict[tuple[int, RetentionParams, float], list[Retention]] | None] = ContextVar("reviews",
                                                                                                default=None)


@contextmanager
def shared_reviews() -> Iterator[None]:
    """Inside the block, :func:`review` of one database with the same parameters at the same moment is computed
    once (the consolidation report asks it for its forget and its promote candidates: 1.3 s each at 10k Debian)."""
    token = _shared.set({})
    try:
        yield
    finally:
        _shared.reset(token)


def review(database: Database, params: RetentionParams, now: float) -> list[Retention]:
    """Every entity's retention at ``now`` (UTC seconds; each memory's decay runs from its own last use), by id
    (a new list; shared with earlier calls inside :func:`shared_reviews`)."""
    memo = _shared.get()
    if memo is None:
        return _review(database, params, now)
    key = (id(database), params, now)
    if key not in memo:
        memo[key] = _review(database, params, now)
    return list(memo[key])


def _review(database: Database, params: RetentionParams, now: float) -> list[Retention]:
    conn = database.read()
    since = day_of(now - params.promote_window_days * DAY)
    found = rows.usage(conn, since)
    if not found:
        return []
    first = rows.arrivals(conn)
    ids = [int(r[0]) for r in found]
    names = {int(r[0]): str(r[1]) for r in found}
    types = {int(r[0]): str(r[9]) for r in found}
    statuses = [str(r[2]) for r in found]
    facts: dict[int, list[tuple[str, str | None]]] = {i: [] for i in ids}
    for owner, text, kind in rows.current_observations(conn, now):
        facts.setdefault(owner, []).append((text, kind))
    created = np.array([r[3] for r in found], dtype=np.float64)
    arrived = np.maximum(created, np.array([first.get(i, -math.inf) for i in ids], dtype=np.float64))
    accesses = np.array([r[6] for r in found], dtype=np.float64)
    accessed = np.array([-math.inf if r[7] is None else r[7] for r in found], dtype=np.float64)
    last = np.maximum(arrived, accessed)  # writing it here (or importing it) is a use
    hours = np.maximum(0.0, (now - last) / HOUR)
    row_of = {i: k for k, i in enumerate(ids)}.__getitem__
    relations = rows.active_relations(conn)
    graph = _Neighbours(np.array(ids, dtype=np.int64), [(a, b) for a, b, _ in relations])
    details = np.array([_said(facts[i]) for i in ids], dtype=np.float64) + graph.degree()
    strengths = retention.strength(np.array([r[4] for r in found]), accesses, details, params)
    uses = 1.0 + accesses
    window_start = now - params.promote_window_days * DAY  # the write is a use within the window too
    recent = np.array([r[8] for r in found], dtype=np.float64) + (arrived >= window_start)
    scores = retention.score(uses, hours, strengths, params)
    decisions = retention.decide(scores, uses, recent, params)
    until = retention.hours_until_forgotten(uses, hours, strengths, params)

    pinned = np.array([r[5] is not None for r in found])
    protected = np.array([types[i].lower() in params.protected_types for i in ids])
    year = datetime.fromtimestamp(now, UTC).year
    says = [keeping.kept(types[i], names[i], statuses[k], facts[i], year=year) for k, i in enumerate(ids)]
    done = np.array([keeping.is_done(types[i], statuses[k], facts[i]) for k, i in enumerate(ids)])
    # what keeps others: a holder keeps what is tied to it; a standing rule or a goal only itself; what still runs,
    # itself and the datasets it was built from
    kinds = [None if x is None else x.kind for x in says]
    holders = protected | np.array([kind in keeping.TYING for kind in kinds])
    runs = np.array([kind == keeping.IN_USE for kind in kinds])
    resource = np.array([keeping.is_resource(types[i], names[i]) for i in ids]) if runs.any() \
        else np.zeros(len(ids), dtype=bool)
    keepers = holders | runs
    # a policy, convention … in force: kept as a standing rule, and its type or name says it is one
    rule = np.array([kinds[k] == keeping.RULE and keeping.is_rule(types[i], names[i]) for k, i in enumerate(ids)],
                    dtype=bool)
    tool = np.array([keeping.is_tool(types[i]) for i in ids], dtype=bool)
    # who names whom, in two passes over the current observations: those of what keeps others and of standing
    # rules against every name, the others' against the names of those and of every tool or library
    texts = _Texts(facts)
    speaks = keepers | rule
    named: dict[int, int] = {}  # named: the keeper naming it
    mentions: dict[int, int] = {}  # owner: the keeper it names
    tools_named: list[tuple[int, int, str]] = []  # (what names a tool, the tool, the observation)
    rule_ties: list[tuple[int, int]] = []  # (a standing rule, what it names or what names it)
    for owner, e, n in _named(texts.of(i for k, i in enumerate(ids) if speaks[k]), names) + _named(
            texts.of(i for k, i in enumerate(ids) if not speaks[k]),
            {i: names[i] for k, i in enumerate(ids) if speaks[k] or tool[k]}):
        o, t = row_of(owner), row_of(e)
        if keepers[o] and (holders[o] or resource[t]):
            named.setdefault(e, owner)
        elif keepers[t] and not keepers[o] and not done[o] and (holders[t] or resource[o]):
            mentions.setdefault(owner, e)
        if rule[o] != rule[t]:
            rule_ties.append((owner, e) if rule[o] else (e, owner))
        if tool[t] and not tool[o]:
            tools_named.append((owner, e, facts[owner][n][0]))
    named_by = np.array([i in named for i in ids]) & ~done
    mentioning = np.array([i in mentions for i in ids])
    tied = (graph.any(holders) | graph.any(runs) & resource) & ~done
    # a goal dated by its year keeps its memory until that year ends
    ends = np.array([math.inf if x is None or x.until_year is None
                     else datetime(x.until_year + 1, 1, 1, tzinfo=UTC).timestamp() for x in says])
    held_for_good = pinned | protected | (np.array([kind is not None for kind in kinds]) & np.isinf(ends)) | tied \
        | named_by | mentioning
    # what uses a tool or library: not a tool itself, kept for good and not done, or still in use
    users = ~tool & (held_for_good & ~done | runs)
    users_of = _used(ids, names, relations, tool, users, {
        e: (owner, text) for owner, e, text in reversed(tools_named)
        if users[row_of(owner)] and not keeping.says_dropped(text)})
    used_by = np.array([i in users_of for i in ids]) & ~done
    needs, carries = _carried(ids, types, facts, graph, rule, rule_ties)
    held_for_good |= used_by | np.array([i in carries for i in ids])
    keep_used, grace = params.keep_used_days * DAY, params.grace_days * DAY
    age, idle = now - arrived, now - accessed
    busy_idle = now - graph.latest(accessed)
    # the guards (module docstring), each a mask over the rows, and the hours each holds from now
    new, used, busy = age < grace, idle < keep_used, (busy_idle < keep_used) & ~done
    hold = np.maximum.reduce([until, np.where(held_for_good, np.inf, 0.0), np.where(new, (grace - age) / HOUR, 0.0),
                              np.where(used, (keep_used - idle) / HOUR, 0.0),
                              np.where(busy, (keep_used - busy_idle) / HOUR, 0.0),
                              np.where(np.isfinite(ends), (ends - now) / HOUR, 0.0)])
    kept = held_for_good | new | used | busy | np.isfinite(ends)

    def guard(k: int) -> tuple[str, str]:
        """Why row ``k`` is kept whatever its score: the first guard that holds, in the module's order, and the
        reason in words."""
        i = ids[k]
        if pinned[k]:
            return "pinned", "pinned"
        if protected[k]:
            return "protected type", f"a {types[i]}: never proposed for forgetting"
        held = says[k]
        if held is not None:
            return GUARDS[2 + keeping.KINDS.index(held.kind)], held.reason(types[i])
        if new[k]:
            verb = "imported" if arrived[k] - created[k] > IMPORTED_AFTER else "written"
            return "new", f"new: {verb} {_ago(age[k])}; kept at least {params.grace_days:g} days"
        if used[k]:
            return "used lately", f"used {_ago(idle[k])}"
        around = graph.of(k)
        if tied[k]:
            j = int(around[(holders | runs & resource[k])[around]].min())
            return "tied to a kept memory", f"related to {names[ids[j]]} ({_held_as(says[j], types[ids[j]], protected[j])})"
        if named_by[k] or mentioning[k]:
            other = named[i] if named_by[k] else mentions[i]
            j = row_of(other)
            verb = "named by" if named_by[k] else "mentions"
            return "tied to a kept memory", f"{verb} {names[other]} ({_held_as(says[j], types[other], protected[j])})"
        if used_by[k]:
            user, evidence = users_of[i]
            j = row_of(user)
            state = "still in use" if runs[j] else "open work" if kinds[j] == keeping.OPEN_WORK \
                else "paused" if statuses[j] == "paused" else "not done"
            return GUARDS[-3], f"a {types[i]} used by {names[user]} ({state}): {keeping.quote(evidence)}"
        if i in carries:
            rule_name = names[carries[i]]
            return GUARDS[-2], f"holds a requirement of {rule_name} (a standing rule): {keeping.quote(needs[i])}"
        j = int(around[np.argmax(accessed[around])])
        return "tied to a used memory", f"related to {names[ids[j]]}, used {_ago(busy_idle[k])}"

    out = []
    for k, r in enumerate(found):
        i = ids[k]
        decision, reason = decisions[k]
        kept_by = ""
        if decision == retention.PROMOTE and (pinned[k] or protected[k]):
            decision, reason = retention.KEEP, "pinned" if pinned[k] else f"a {types[i]}: kept without pinning"
        elif decision == retention.FORGET and kept[k]:
            decision, (kept_by, reason) = retention.KEEP, guard(k)
        elif decision == retention.FORGET:
            reason = _forget_reason(int(accesses[k]), float(age[k]), now - float(created[k]), float(now - last[k]),
                                    float(idle[k]), arrived[k] - created[k] > IMPORTED_AFTER)
        out.append(Retention(i, names[i], float(scores[k]), decision, reason, int(uses[k]), int(recent[k]),
                             float(hours[k]), float(strengths[k]), str(r[2]), r[5], float(hold[k]), types[i],
                             float(arrived[k]), kept_by))
    return out


def _used(ids: list[int], names: dict[int, str], relations: list[tuple[Any, ...]], tool: np.ndarray,
          users: np.ndarray, named: dict[int, tuple[int, str]]) -> dict[int, tuple[int, str]]:
    """``{tool id: (user id, the relation in words or the observation naming it)}`` for each tool or library
    (``tool``, by row; guard 7 of the module docstring) that a user (``users``, by row) uses:
    related by a relation of use whose used end it is, else as ``named`` says (``{tool id: (user id, an
    observation of the user naming it that does not say it was dropped)}``)."""
    row = {i: k for k, i in enumerate(ids)}
    ends = {kind: keeping.used_end(kind) for kind in {str(r[2]) for r in relations}}
    found: dict[int, tuple[int, str]] = {}
    for a, b, relation_type in relations:
        end = ends[relation_type]
        if end is None or a not in row or b not in row:
            continue
        t, u = (row[b], row[a]) if end else (row[a], row[b])
        if tool[t] and users[u]:
            found.setdefault(ids[t], (ids[u], f"{names[a]} {relation_type} {names[b]}"))
    return {**named, **found}


def _carried(ids: list[int], types: dict[int, str], facts: dict[int, list[tuple[str, str | None]]],
             graph: _Neighbours, rule: np.ndarray,
             named: list[tuple[int, int]]) -> tuple[dict[int, str], dict[int, int]]:
    """``({id: the requirement it states}, {id: the standing rule that carries it})`` (guard 8 of the module
    docstring): a memory that is not itself a standing rule (``rule``, by row) stating a need or a bound, related
    to a standing rule, or as ``named`` says (``(rule id, the id of what it names or of what names it)``)."""
    if not rule.any():
        return {}, {}
    ties: dict[int, int] = {}
    for k in np.flatnonzero(graph.any(rule) & ~rule).tolist():
        around = graph.of(k)
        ties[ids[k]] = ids[int(around[rule[around]].min())]
    for held, owner in named:
        ties.setdefault(owner, held)
    needs = {i: text for i in ties if (text := keeping.requirement(types[i], facts[i])) is not None}
    return needs, {i: ties[i] for i in needs}


def _held_as(says: keeping.Kept | None, entity_type: str, protected: bool) -> str:
    """What keeps a holder, in a few words: ``"a Person"``, ``"open work"``, ``"configuration"``, ``"still in
    use"``."""
    if protected or says is None:
        return f"a {entity_type}"
    return {keeping.OPEN_WORK: "open work", keeping.CONFIGURATION: "configuration",
            keeping.IN_USE: "still in use"}.get(says.kind, "it holds a preference or decision")


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

    def degree(self) -> np.ndarray:
        """Per row, the rows it is related to (either way; a relation and its inverse between the same two, ``affects``
        and ``affected_by``, are one tie), ``(n,) float64``."""
        n = len(self._starts) - 1
        tied = np.unique(self._source * n + self._target)
        return np.bincount(tied // n, minlength=n).astype(np.float64)

    def any(self, mask: np.ndarray) -> np.ndarray:
        """Per row, whether a neighbour is in ``mask`` ``(n,) bool``."""
        out = np.zeros(len(mask), dtype=bool)
        np.logical_or.at(out, self._source, mask[self._target])
        return out


def _forget_reason(accesses: int, since_arrival: float, since_written: float, since_use: float, since_access: float,
                   imported: bool) -> str:
    """Why a memory is proposed for forgetting, in words: ``"never used since it was imported 3 months ago
    (written 2 years ago)"``, ``"not used for 8 months (used 4 times in all)"``, ``"not used since it was imported
    2 months ago (used 4 times in all, last 8 months ago)"``."""
    if accesses == 0:
        if imported:
            return f"never used since it was imported {_ago(since_arrival)} (written {_ago(since_written)})"
        return f"never used since it was written {_ago(since_written)}"
    if since_access > since_use:
        return f"not used since it was imported {_ago(since_arrival)} (used {times(accesses)} in all, last " \
               f"{_ago(since_access)})"
    return f"not used for {duration(since_use)} (used {times(accesses)} in all)"


def forget_candidates(items: list[Retention], *, archived: bool = False) -> list[Retention]:
    """The forget candidates, lowest score first: not pinned, and not archived already unless ``archived``."""
    return sorted((r for r in items if r.decision == retention.FORGET and r.pinned_at is None
                   and (archived or r.status != "archived")), key=lambda r: (r.score, r.entity_id))


def promote_candidates(items: list[Retention]) -> list[Retention]:
    """The promote candidates, highest score first: not pinned yet."""
    return sorted((r for r in items if r.decision == retention.PROMOTE and r.pinned_at is None),
                  key=lambda r: (-r.score, r.entity_id))


@dataclass(frozen=True, slots=True)
class Proposal:
    """A memory the rules would propose for forgetting at a moment: its :class:`Retention` then, and ``due``, the
    first moment (UTC seconds, from the asking on) it is proposed."""

    retention: Retention
    due: float

    def to_dict(self) -> dict:
        return {**self.retention.to_dict(), "proposedFrom": iso(self.due)}


@dataclass(frozen=True, slots=True)
class Forecast:
    """What the rules would propose at ``at`` (UTC seconds), asked at ``now``: ``proposed`` (lowest score first)
    and ``held``, the memories whose score is below ``τ_forget`` then but that a guard keeps, with the reason."""

    at: float
    now: float
    proposed: list[Proposal]
    held: list[Retention]

    def to_dict(self) -> dict:
        return {"at": iso(self.at), "askedAt": iso(self.now), "proposed": [p.to_dict() for p in self.proposed],
                "held": [{"name": r.name, "entityType": r.entity_type, "keptBy": r.guard, "reason": r.reason}
                         for r in self.held]}


def forecast(database: Database, params: RetentionParams, at: float, now: float, *,
             archived: bool = False) -> Forecast:
    """What the lifecycle rules would propose for forgetting at ``at`` (UTC seconds, ``now`` or later) if, from
    ``now`` on, nothing is used, written or decided: the forget candidates of :func:`review` at ``at`` (archived
    ones only with ``archived``), each with the moment from ``now`` on it is first proposed (from the review at
    ``now``: each memory's own decay and guards). ``at == now`` is what is proposed now — ``limbic gc``, its dry
    run and the Review view ask exactly this; ``limbic gc --at``, ``consolidation_report``'s ``at`` and the app's
    *Ahead* ask it for a later date.

    Raises:
        ValidationError: ``at`` is before ``now``.
    """
    if at < now:
        raise ValidationError("a forecast is for now or later: the past is read with asOf")
    later = review(database, params, at)
    proposed = forget_candidates(later, archived=archived)
    if at == now or not proposed:
        due = dict.fromkeys((r.entity_id for r in proposed), now)
    else:
        due = {r.entity_id: now + min(r.hours_until_forgotten * HOUR, at - now) for r in review(database, params, now)}
    held = [r for r in later if r.guard and (archived or r.status != "archived")]
    return Forecast(at, now, [Proposal(r, due.get(r.entity_id, now)) for r in proposed], held)
