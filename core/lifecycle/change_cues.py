"""The words of change in a fact: negation, cues that a value was left or replaced, opposite words, and the
name of the slot a changed value fills — what the contradiction detector reads besides the frame
(:mod:`limbic.core.lifecycle.frames`). English and Spanish.

Pure functions over :class:`~limbic.core.lifecycle.frames.Fact`; nothing here reads the store or a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from limbic.core.lifecycle.frames import STOP, Fact, Value, stem

NEGATIONS = frozenset((
    "not", "no", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor", "cannot", "anymore",
    "isn't", "aren't", "wasn't", "weren't", "don't", "doesn't", "didn't", "won't", "wouldn't", "can't", "couldn't",
    "shouldn't", "hasn't", "haven't", "hadn't", "mustn't", "shan't", "ain't", "nunca", "jamás", "tampoco",
    "stopped", "quit",
))
"""Words that turn a fact around ("is no longer on call", "doesn't have", "ya no juega", "quit coffee")."""
_AUXILIARIES = frozenset(("is", "are", "was", "were", "does", "do", "did", "has", "have", "can", "will", "ya",
                          "has", "had"))
_CLAUSE_END = frozenset((";", ",", "(", ")", ":"))

ANTONYMS = (
    ("enabled", "disabled"), ("enable", "disable"), ("turned on", "turned off"), ("switched on", "switched off"),
    ("remotely", "on-site"), ("remote", "on-site"), ("remote", "in-office"), ("public", "private"),
    ("open", "closed"), ("single", "married"), ("synchronous", "asynchronous"), ("synchronously", "asynchronously"),
    ("sync", "async"), ("likes", "dislikes"), ("like", "dislike"), ("loves", "hates"), ("allowed", "forbidden"),
    ("allowed", "prohibited"), ("required", "optional"), ("mandatory", "optional"), ("active", "inactive"),
    ("available", "unavailable"), ("visible", "hidden"), ("dark mode", "light mode"), ("dark theme", "light theme"),
    ("morning", "afternoon"), ("morning", "evening"), ("tabs", "spaces"), ("supported", "unsupported"),
    ("accepted", "rejected"), ("approved", "rejected"), ("full-time", "part-time"), ("online", "offline"),
    ("increased", "decreased"), ("fast", "slow"), ("stateless", "stateful"), ("cheap", "expensive"), ("passing", "failing"), ("healthy", "unhealthy"), ("encendido", "apagado"),
    ("encendida", "apagada"), ("activado", "desactivado"), ("activada", "desactivada"), ("activo", "inactivo"),
    ("público", "privado"), ("pública", "privada"), ("abierto", "cerrado"), ("abierta", "cerrada"),
    ("soltero", "casado"), ("soltera", "casada"), ("remoto", "presencial"),
    ("local", "cloud"), ("local", "remote"), ("local", "hosted"), ("local", "api-based"), ("embedded", "api-based"),
    ("embedded", "cloud"), ("on-premise", "cloud"), ("self-hosted", "saas"), ("optional", "enforced"),
    ("optional", "enforces"), ("remote", "onsite"), ("remotely", "onsite"),
)
"""Pairs of opposite words or phrases: one on each side, with the rest alike, is a conflict."""

_FROM = frozenset(("from", "off", "de"))
_CHANGE_VERBS = frozenset((
    "moved", "switched", "migrated", "upgraded", "downgraded", "changed", "went", "relocated", "transitioned",
    "shifted", "mudó", "pasó", "cambió", "migró", "trasladó", "cambiamos", "migramos",
))
_TO = frozenset(("to", "until", "a", "al", "hasta"))
_TO_VERBS = _CHANGE_VERBS - {"went"} | frozenset((  # "went to London": a trip; "went from 3 to 5": a change
    "raised", "lowered", "slipped", "pushed", "postponed", "rescheduled", "delayed", "extended", "retrasó",
    "aplazó", "pospuso", "adelantó", "bumped",
))
_JOIN = frozenset(("joined", "dating", "new job at", "new role at", "in-house at"))
_LEFT = frozenset(("left", "quit", "dropped", "ditched", "replaced", "dejó", "abandonó"))
_GONE = frozenset(("decommissioned", "retired", "deprecated", "removed", "gone", "sunset"))
NOW = frozenset(("now", "ahora"))
_ARTICLES = frozenset(("the", "a", "an", "el", "la", "los", "las", "un", "una", "her", "his", "their"))

SLOT_WORDS = (
    ("employer changed", ("emplo", "compa", "job", "joine", "consu", "traba", "empre", "hire", "in-ho")),
    ("manager changed", ("manager", "reports", "boss", "jefe")),
    ("preference changed", ("prefe", "prefi", "wants", "want", "asked", "favor", "favou")),
    ("partner changed", ("partn", "datin", "marri", "husba", "wife", "boyfr", "girlf", "pareja", "novio", "novia")),
    ("switched", ("us", "use", "usa", "store", "run", "track", "provi", "built", "switc", "migra", "repla", "dropp",
                  "edito", "datab", "tool", "colle", "power", "depen", "hoste")),
    ("moved", ("liv", "live", "reloc", "based", "city", "home", "addre", "locat", "vive", "mudó", "resid", "moved")),
)
"""What a changed named value is, by the words just before it on either side (the first group that matches)."""
_WORKS = ("work", "engin", "desig", "analy", "devel", "nurse", "docto", "teach", "traba")
"""Words that name an employer when ``at``/``for`` follows them ("works at Acme", "designer at Figma")."""
_KIND_LABELS = {"version": "version", "date": "date", "weekday": "day", "time": "time", "region": "region",
                "money": "amount"}


@dataclass(frozen=True, slots=True)
class Move:
    """A change a fact states: it left ``old`` and/or took ``new`` (either may be ``None``), ``cue`` the word
    that says so."""

    old: Value | None
    new: Value | None
    cue: str


def negation(fact: Fact) -> str | None:
    """The phrase that negates ``fact`` ("is no longer on call this week", "ya no juega al fútbol"), from its
    auxiliary to the end of its clause (at most eight words), or ``None`` when it is not negated."""
    lower = fact.lower
    for i, word in enumerate(lower):
        if word in NEGATIONS or word.endswith("n't"):
            if word == "anymore":
                continue  # "doesn't … anymore" is found at "doesn't"; alone, at the verb before it
            start = i - 1 if i > 0 and lower[i - 1] in _AUXILIARIES else i
            end = i + 1
            while end < len(lower) and lower[end] not in _CLAUSE_END and end - start < 8:
                end += 1
            return " ".join(fact.tokens[start:end])
    if "anymore" in lower:
        return " ".join(fact.tokens[max(0, lower.index("anymore") - 4): lower.index("anymore") + 1])
    return None


_OPPOSITE_TERMS = tuple(dict.fromkeys(term for pair in ANTONYMS for term in pair))


@lru_cache(maxsize=4096)
def terms(fact: Fact) -> frozenset[str]:
    """The words and phrases of :data:`ANTONYMS` that ``fact`` holds (``cloud/SaaS`` holds ``cloud``)."""
    joined = f" {' '.join(fact.lower).replace('/', ' ')} "
    return frozenset(term for term in _OPPOSITE_TERMS if f" {term} " in joined)


def opposite(a: Fact, b: Fact) -> tuple[str, str] | None:
    """The pair of opposite words ``a`` and ``b`` hold, one each (``("enabled", "disabled")``), or ``None``."""
    terms_a, terms_b = terms(a), terms(b)
    if not terms_a or not terms_b:
        return None
    for x, y in ANTONYMS:
        for first, second in ((x, y), (y, x)):
            if first in terms_a and second in terms_b and second not in terms_a and first not in terms_b:
                return first, second
    return None


def _value_from(fact: Fact, i: int) -> Value | None:
    """The value at token ``i`` (after an article), or the next word there as a value of kind ``word``."""
    while i < len(fact.lower) and fact.lower[i] in _ARTICLES:
        i += 1
    for value in fact.values:
        if value.start == i:
            return value
    if i < len(fact.lower) and fact.lower[i][0].isalnum() and fact.lower[i] not in STOP:
        return Value(fact.tokens[i], "word", stem(fact.lower[i]), i, i + 1)
    return None


def _value_after(fact: Fact, i: int, kind: str, span: int = 4) -> Value | None:
    """The first value of ``kind`` (any kind with ``""``) starting within ``span`` tokens after ``i``, not across
    a clause boundary."""
    for j in range(i + 1, min(len(fact.lower), i + 1 + span)):
        if fact.lower[j] in _CLAUSE_END:
            return None
        found = next((v for v in fact.values if v.start == j and (not kind or v.kind == kind)), None)
        if found is not None:
            return found
    return None


def moves(fact: Fact) -> list[Move]:
    """The changes ``fact`` states: ``moved from X to Y`` / ``off X to Y`` / ``se mudó de X a Y``; ``left X (and
    joined Y)``, ``quit X``, ``replaced X with Y``, ``dejó X``, ``stopped using X``, ``no longer at X``, ``broke up
    with X``, ``X is decommissioned``; ``moved to Y``, ``switched to Y``, ``slipped to Y``, ``joined Y``, ``now …
    Y``, ``se mudó a Y``, ``ahora … Y``."""
    lower, found = fact.lower, []
    for i, word in enumerate(lower):
        before = lower[max(0, i - 3): i]
        if word in _FROM and any(w in _CHANGE_VERBS for w in before) or (word == "out" and lower[i + 1: i + 2] == ("of",)):
            old = _value_from(fact, i + (2 if word == "out" else 1))
            if old is not None and old.end < len(lower) and lower[old.end] in _TO:
                found.append(Move(old, _value_from(fact, old.end + 1), word))
                continue
        left = None
        if word in _LEFT:
            left = _value_from(fact, i + 1)
        elif word == "stopped":
            j = i + 1 + (1 if i + 1 < len(lower) and lower[i + 1].endswith("ing") else 0)
            left = _value_from(fact, j + (1 if j < len(lower) and lower[j] in ("for", "at", "with", "in") else 0))
        elif word == "longer" and i > 0 and lower[i - 1] == "no" and i + 1 < len(lower) and lower[i + 1] in (
                "at", "with", "in", "on", "using"):
            left = _value_from(fact, i + 2)
        elif word == "with" and i >= 2 and lower[i - 2: i] == ("broke", "up"):
            left = _value_from(fact, i + 1)
        elif word in _GONE and i >= 2 and lower[i - 1] in ("is", "was", "been", "are"):
            left = next((v for v in fact.values if v.end == i - 1), None) or _value_from(fact, i - 2)
        if left is not None:
            new = next((v for v in fact.values if v.start >= left.end and v.kind == left.kind and v.key != left.key),
                       None) if left.kind != "word" else None
            found.append(Move(left, new, word))
            continue
        new = None
        if word in _TO_VERBS:
            to = next((j for j in range(i + 1, min(len(lower), i + 6)) if lower[j] in _TO), None)
            new = _value_from(fact, to + 1) if to is not None else None
            if new is not None and new.kind == "word":
                new = None
        elif word in _JOIN or " ".join(lower[max(0, i - 2): i + 1]) in _JOIN:
            new = _value_after(fact, i, "", 3)
        elif word in NOW:  # "now works at Y"; at a clause's end, "is on React 18 now"
            at_end = i + 1 >= len(lower) or lower[i + 1] in _CLAUSE_END or lower[i + 1] in ("on", "en")
            new = next((v for v in reversed(fact.values) if i - 6 <= v.start and v.end <= i), None) if at_end \
                else _value_after(fact, i, "", 4)
        if new is not None:
            found.append(Move(None, new, word))
    stated = {move.new.start for move in found if move.old is not None and move.new is not None}
    found = [move for move in found if move.old is not None or move.new is None or move.new.start not in stated]
    return sorted(found, key=lambda move: move.old is None)  # "from X to Y", "left X": the old value is said


def slot(x: Value, y: Value, a: Fact, b: Fact) -> str:
    """What the changed value ``x`` (in ``a``) → ``y`` (in ``b``) is, for a reason: its kind's name (``version``,
    ``date``, ``day``, ``time``, ``region``, ``amount``), the word a number counts (``engineers``), or for a name
    what the words just before it say (``employer changed``, ``switched``, ``moved``, …; else ``changed``)."""
    if x.kind in _KIND_LABELS:
        return _KIND_LABELS[x.kind]
    if x.kind == "number":
        for fact, value in ((a, x), (b, y)):
            after = fact.lower[value.end] if value.end < len(fact.lower) else ""
            before = fact.lower[value.start - 1] if value.start > 0 else ""
            for word in (after, before):
                if word and word[0].isalpha() and word not in STOP:
                    return word
        return "number"
    windows = [fact.lower[max(0, value.start - 3): value.start] for fact, value in ((a, x), (b, y))]
    if any(w[-1:] and w[-1] in ("at", "for", "en") and any(stem(t) in _WORKS for t in w[:-1]) for w in windows):
        return "employer changed"
    context = {stem(t) for w in windows for t in w} | {t[:5] for w in windows for t in w} | {t for w in windows for t in w}
    for label, words in SLOT_WORDS:
        if context & set(words):
            return label
    return "changed"


def shown(x: Value, y: Value) -> tuple[str, str]:
    """How ``x`` → ``y`` are written in a reason: a version of one product names it once (``Python 3.11 →
    3.12``)."""
    if x.kind == "version" and " " in x.text and " " in y.text:
        product_x, _, number_x = x.text.rpartition(" ")
        product_y, _, number_y = y.text.rpartition(" ")
        if product_x.lower() == product_y.lower():
            return x.text, number_y
    return x.text, y.text
