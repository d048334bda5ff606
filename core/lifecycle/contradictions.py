"""Contradiction detection: does a new observation change what an older one says?

mememory ("Scoring & Recall", "Contradiction Detection") flags every existing memory whose cosine similarity to
the new one exceeds 0.75. On facts written the way an assistant stores them that rule flags paraphrases,
refinements and two facts about two things, and misses a changed value phrased differently ("left Acme and
joined Initech") or an antonym. The default mode, :data:`CHECKABLE`, reads the two texts
(:mod:`limbic.core.lifecycle.frames`, :mod:`limbic.core.lifecycle.change_cues`) and flags, with a reason a person
reads at once:

- **a stated change** — one text says a value was left or replaced (``moved to``, ``switched from … to``,
  ``left … and joined``, ``no longer at``, ``slipped to``, ``now``, ``se mudó a``, ``dejó``) and the other holds the
  old value (or a different value of the new one's kind): ``employer changed: Acme → Initech``;
- **the same frame with another value** — the two say the same words with their values masked, and a value of
  one kind differs in one slot (``version: Python 3.11 → 3.12``), or a ``Key: value`` field holds another value;
  never two events with two dates (both in the past tense), never two slots at once (two things);
- **a negation** — one negates what the other says, their content words alike (``negated: is no longer on call``);
- **opposite words** — ``enabled``/``disabled``, ``public``/``private``, the rest alike (``opposite: enabled →
  disabled``).

Each rule needs a cosine similarity above its floor (:data:`FLOORS`), and two facts need a content word in
common, so unrelated facts are never read; nor are observations longer than :data:`MAX_CHARS`. The floors were
chosen on the dev split of ``tests/fixtures/contradiction_pairs_realistic.jsonl`` (docs/lifecycle.md
"Contradictions" has the figures). :data:`SIMILARITY` is mememory's rule as written.

Pure functions over texts and ``float32`` unit vectors; nothing here reads or writes the store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from limbic.core.lifecycle import change_cues as cues
from limbic.core.lifecycle.frames import STOP, Fact, Value, read, stem

THRESHOLD = 0.75
"""Cosine similarity above which mememory's rule (mode ``similarity``) flags two observations."""

CHECKABLE = "checkable"
SIMILARITY = "similarity"
MODES = (CHECKABLE, SIMILARITY)
"""``checkable`` (default): a change the texts state or show; ``similarity``: close (mememory's rule)."""

OPTIONS = ("keep_both", "update_old", "supersede", "delete_old")
"""How a person settles a conflict (mememory's resolution options): keep both, replace the old text with the new
one, mark the old one superseded by the new one, delete the old one."""

FLOORS = {"change": 0.45, "frame": 0.6, "field": 0.6, "negation": 0.6, "opposite": 0.55}
"""The cosine similarity each rule of :data:`CHECKABLE` needs, by rule."""
FLOOR = min(FLOORS.values())
"""Below this similarity no rule of :data:`CHECKABLE` applies: the cheap bound of a check."""
MAX_CHARS = 300
"""Longer observations are passages, not facts with a frame: they are not read (the similarity mode still
compares them)."""
_WORD = re.compile(r"\w+")
_PAST = frozenset((
    "had", "met", "held", "released", "shipped", "flew", "ran", "interviewed", "migrated", "presented", "visited",
    "attended", "went", "closed", "paid", "bought", "completed", "finished", "deployed", "was", "were", "presentó",
    "tuvo", "fue", "visitó",
))
_DATES = frozenset(("date", "weekday", "time"))
_SHARED_VERBS = frozenset(("enjoy", "like", "love", "speak", "play", "know", "learn", "visit", "watch", "read",
                           "colle", "follo", "disfr", "habla", "juega", "conoc"))
"""Stems of verbs two names can share ("enjoys Confucianism" and "enjoys Buddhism"); "lives in", "works at",
"is" hold one."""
_ADDED = frozenset(("also", "too", "another", "second", "además", "también", "otro", "otra"))
_NOTES = frozenset(("note", "notes", "todo", "comment", "update", "fact", "insight", "observation", "step",
                    "example", "tip", "idea", "question", "nota", "see", "context", "summary", "description"))


@dataclass(frozen=True, slots=True)
class Finding:
    """A conflict of the new observation with ``other`` (an observation id): ``similarity`` (cosine) and
    ``reason`` (``employer changed: Acme → Initech``, ``negated: …``, ``opposite: …``; ``similar (…)`` in
    mememory's mode)."""

    other: int
    similarity: float
    reason: str


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """The stems of ``text``'s content words, read cheaply: two facts without one in common are never read."""
    return frozenset(stem(w) for w in _WORD.findall(text.lower()) if w not in STOP)


def _change(x: Value, y: Value, a: Fact, b: Fact) -> str:
    shown_x, shown_y = cues.shown(x, y)
    return f"{cues.slot(x, y, a, b)}: {shown_x} → {shown_y}"


def _shared(a: Fact, b: Fact, leave_out: Sequence[Value | None] = ()) -> set[str]:
    keys = {v.key for v in leave_out if v is not None}
    return set(a.words & b.words) - keys


def _stated_change(a: Fact, b: Fact) -> str | None:
    """A change one fact states that the other contradicts (the reason shows ``a``'s value → ``b``'s)."""
    for side, other, newer in ((b, a, True), (a, b, False)):
        for move in cues.moves(side):
            if move.old is not None:
                if not other.mentions(move.old) or (move.new is not None and other.mentions(move.new)):
                    continue
                if move.cue in cues.NEGATIONS and cues.negation(other) is not None:
                    continue  # both say it stopped
                if move.old.kind == "word" and cues.negation(side) is not None:
                    continue  # "no longer on call": a negation, said as one
                if not _shared(side, other, (move.old, move.new)):
                    continue
                if move.new is None or move.old.kind == "word":
                    return f"no longer: {move.old.text}" if newer else f"again: {move.old.text}"
                x, y = (move.old, move.new) if newer else (move.new, move.old)
                return _change(x, y, a if newer else b, b if newer else a) if newer else _change(x, y, a, b)
            new = move.new
            if new is None or other.mentions(new):
                continue
            kinds = ("version", "number") if new.kind == "version" else (new.kind,)
            old = next((v for v in other.values if v.kind in kinds and v.key != new.key and not side.mentions(v)), None)
            if old is None or not _shared(side, other, (old, new)):
                continue
            if new.kind in ("number", "money") and _unit(other, old) != _unit(side, new):
                continue  # "port 9223" / "8 tools": two quantities of two things
            if new.kind == "named" and cues.slot(old, new, other, side) == "changed":
                continue  # nothing says what the two names are: not enough to call it a change
            return _change(old, new, a, b) if newer else _change(new, old, a, b)
    return None


def _same_frame(a: Fact, b: Fact) -> str | None:
    """The same frame (or one frame extending the other) with another value in one slot."""
    short, long = (a.frame, b.frame) if len(a.frame) <= len(b.frame) else (b.frame, a.frame)
    if not short or long[: len(short)] != short or _ADDED & set(b.lower):
        return None  # another frame; or "also …": one more, not another
    if ":" in a.lower and ":" in b.lower and a.lower[:a.lower.index(":")] != b.lower[:b.lower.index(":")]:
        return None  # two fields ("Error 1: …" / "Error 5: …")
    diffs = [(x, y) for x, y in zip(a.slots, b.slots, strict=False) if x is not None and y is not None and x.key != y.key
             and not _aside(a, x) and not _aside(b, y)]
    if any(x.start == 0 or y.start == 0 for x, y in diffs) or len(diffs) > 2 or (len(diffs) > 1 and diffs[0][0].kind
                                                                                      in ("named", "version")):
        return None  # another subject ("BUY button …" / "SELL button …"), or two names, or many slots: two things
    if diffs and diffs[0][0].kind == "named" and _SHARED_VERBS & {stem(w) for w in a.lower} & {stem(w) for w in b.lower}:
        return None  # "enjoys Confucianism" / "enjoys Buddhism": one may enjoy both
    if not diffs or len({x.kind for x, _ in diffs}) > 1 or any(_product(x) != _product(y) for x, y in diffs):
        return None  # nothing differs; two slots of two kinds (two things, two events); Java 17 / Gradle 8
    if all(x.kind in _DATES for x, _ in diffs) and _past(a) and _past(b):
        return None  # two past events on two dates
    return "; ".join(_change(x, y, a, b) for x, y in diffs)


def _unit(fact: Fact, value: Value) -> str:
    """What a number counts: the first content word after it ("8 tools", "$25 per month"), else the one before
    ("port 9000")."""
    after = [w for w in fact.lower[value.end: value.end + 3] if w[0].isalpha() and w not in STOP]
    before = [w for w in fact.lower[max(0, value.start - 2): value.start] if w[0].isalpha() and w not in STOP]
    return stem(after[0]) if after else stem(before[-1]) if before else ""


def _aside(fact: Fact, value: Value) -> bool:
    """Whether ``value`` is written inside parentheses: an aside ("(note 2)", "(build 212)"), not the slot."""
    before = fact.lower[: value.start]
    return before.count("(") > before.count(")")


def _past(fact: Fact) -> bool:
    """Whether ``fact`` tells of an event in the past ("had", "was held"; not "must be finished")."""
    return any(w in _PAST and (i == 0 or fact.lower[i - 1] not in ("be", "been", "to")) for i, w in enumerate(fact.lower))


def _product(value: Value) -> str:
    """What a version is a version of (``python`` of ``Python 3.11``; ``""`` for a bare number)."""
    return value.key.rpartition(" ")[0] if value.kind == "version" else ""


def _field(a: Fact, b: Fact) -> str | None:
    """A ``Key: value`` field holding another value (``role: senior product manager → director of product``)."""
    if ":" not in a.frame or ":" not in b.frame:
        return None
    key = a.lower[: a.lower.index(":")]
    if key != b.lower[: b.lower.index(":")] or not key or len(key) > 5 or key[-1] in _NOTES:
        return None  # the same field, by its words as written
    if len(key[-1]) > 3 and key[-1].endswith("s") and not key[-1].endswith(("ss", "us", "is")):
        return None  # "Config structs: …", "Dependencies: …": a list of items, each line another one
    va, vb = a.lower[a.lower.index(":") + 1:], b.lower[b.lower.index(":") + 1:]
    if not va or not vb or va == vb or len(va) > 8 or len(vb) > 8:
        return None
    text_a, text_b = " ".join(va), " ".join(vb)
    if text_a in text_b or text_b in text_a:
        return None  # a refinement
    shown_a = a.text[a.text.index(":") + 1:].strip()
    shown_b = b.text[b.text.index(":") + 1:].strip()
    return f"{key[-1]}: {shown_a} → {shown_b}"


def _negated(a: Fact, b: Fact) -> str | None:
    """One fact negates what the other says: most of the positive one's content words are in the negated one."""
    neg_a, neg_b = cues.negation(a), cues.negation(b)
    if (neg_a is None) == (neg_b is None):
        return None
    positive, negated, phrase = (a, b, neg_b) if neg_b is not None else (b, a, neg_a)
    words = {w for w in positive.words if w not in ("no", "not")}
    shared = words & negated.words
    if len(shared) < min(2, len(words)) or len(shared) < 0.6 * len(words):
        return None
    return f"negated: {phrase}"


def _opposite(a: Fact, b: Fact) -> str | None:
    """Opposite words, one on each side, the rest of the two alike."""
    pair = cues.opposite(a, b)
    if pair is None:
        return None
    left = {w for w in a.words if not any(w in p for p in pair)}
    right = {w for w in b.words if not any(w in p for p in pair)}
    shared = left & right
    if not shared or len(shared) < 0.6 * min(len(left), len(right)):
        return None
    return f"opposite: {pair[0]} → {pair[1]}"


def judge(a: str, b: str, similarity: float, mode: str = CHECKABLE, threshold: float = THRESHOLD) -> str | None:
    """The reason the newer observation ``b`` conflicts with the older ``a`` (cosine ``similarity``) in ``mode``,
    or ``None`` when it does not. ``threshold`` is the similarity mode's cut."""
    if mode == SIMILARITY:
        return f"similar ({similarity:.2f} > {threshold:.2f})" if similarity > threshold else None
    if similarity < FLOOR or a.strip().lower() == b.strip().lower() or len(a) > MAX_CHARS or len(b) > MAX_CHARS:
        return None
    if not _words(a) & _words(b):
        return None  # no content word in common: no rule can apply
    fa, fb = read(a), read(b)
    if cues.opposite(fa, fb) is not None and (cues.negation(fa) is None) != (cues.negation(fb) is None):
        return None  # "private" / "not public": two negatives say the same
    for rule, check in (("change", _stated_change), ("frame", _same_frame), ("field", _field),
                        ("negation", _negated), ("opposite", _opposite)):
        if similarity >= FLOORS[rule]:
            reason = check(fa, fb)
            if reason is not None:
                return reason
    return None


def find(text: str, vector: np.ndarray, others: Sequence[tuple[int, str]], vectors: np.ndarray,
         mode: str = CHECKABLE, threshold: float = THRESHOLD) -> list[Finding]:
    """The observations among ``others`` (``(id, text)``, older ones, their unit vectors ``(n, d) float32`` in that
    order) that the new observation ``text`` (unit vector ``(d,) float32``) conflicts with in ``mode``, most
    similar first. Identical texts are duplicates, not conflicts; a pair below the mode's lowest similarity is
    never read."""
    if not len(others):
        return []
    sims = np.asarray(vectors, dtype=np.float32) @ np.asarray(vector, dtype=np.float32)
    cut = threshold if mode == SIMILARITY else FLOOR
    found = []
    for index in np.flatnonzero(sims >= cut).tolist():
        other, other_text = others[index]
        reason = judge(other_text, text, float(sims[index]), mode, threshold)
        if reason is not None:
            found.append(Finding(other, float(sims[index]), reason))
    return sorted(found, key=lambda f: -f.similarity)
