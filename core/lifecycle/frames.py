"""The frame of a short fact and its values: what the contradiction detector compares.

A fact an assistant stores ("Sofia works at Acme Corp", "api-service runs on Python 3.11", "Launch is planned
for March 15, 2025") is a *frame* — its words, lowercased, with each value masked by its kind — filled with
*values*: named things (capitalised or code-like words, runs of them: ``Acme Corp``, ``GitHub Actions``,
``Austin, Texas``), versions (``3.11``, ``v2``, and a name followed by a number: ``Python 3.11``, ``Node 18``),
regions (``us-east-1``), dates (ISO dates, a month with its day and year in either order, ``Q2 2025``,
``week 32``, Spanish ``15 de abril``), weekdays, times of day (``9:30``, ``3pm``), amounts of money and
numbers. Two facts with the same frame and different values say different things about one slot; a value
present on one side only is a refinement. Spanish function words and month and day names are known too.

Pure functions over text; nothing here reads the store or a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_TOKEN = re.compile(
    r"[$€£]?\d(?:[\d,.:\-]*\d)?(?:am|pm|%|k|m|h)?(?!\w)"  # numbers, dates, times, versions, amounts
    r"|\w(?:[\w\-./+#’']*\w)?"  # words (with inner hyphens, dots, apostrophes: us-east-1, Node.js, don't)
    r"|[;:,()]")
_POSSESSIVE = re.compile(r"^(.+?)['’]s$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$|^\d{1,2}[./]\d{1,2}[./]\d{2,4}$")
_VERSION = re.compile(r"^v?\d+(\.\d+)+[a-z0-9-]*$|^v\d+$")
_REGION = re.compile(r"^[a-z]{2,}(-[a-z]+)+-\d+[a-z]?$")
_TIME = re.compile(r"^(\d{1,2})(?::(\d{2}))?(am|pm)$|^(\d{1,2}):(\d{2})$")
_MONEY = re.compile(r"^[$€£]\d")
_NUMBER = re.compile(r"^\d[\d,]*(\.\d+)?[km%]?$")
_YEAR = re.compile(r"^(19|20)\d{2}$")
_QUARTER = re.compile(r"^q[1-4]$")

MONTHS = {m: i for i, names in enumerate((
    ("january", "jan", "enero"), ("february", "feb", "febrero"), ("march", "marzo"), ("april", "apr", "abril"),
    ("may", "mayo"), ("june", "junio"), ("july", "julio"), ("august", "aug", "agosto"),
    ("september", "sept", "sep", "septiembre"), ("october", "oct", "octubre"), ("november", "nov", "noviembre"),
    ("december", "dec", "diciembre")), start=1) for m in names}
_SPANISH_MONTHS = frozenset(("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre",
                             "octubre", "noviembre", "diciembre"))
WEEKDAYS = {d: i for i, names in enumerate((
    ("monday", "lunes"), ("tuesday", "martes"), ("wednesday", "miércoles", "miercoles"), ("thursday", "jueves"),
    ("friday", "viernes"), ("saturday", "sábado", "sabado"), ("sunday", "domingo"))) for d in names}

FILLERS = frozenset((
    "the", "a", "an", "now", "currently", "still", "already", "today", "again", "also", "is", "are", "was", "were",
    "be", "been", "being", "has", "have", "had", "do", "does", "did", "will", "el", "la", "los", "las", "un", "una",
    "ahora", "actualmente", "todavía", "también", "es", "son", "está", "están", "fue", "ha", "han",
))
"""Words that do not change what a fact says about its slot (articles, auxiliaries, "now", "still")."""
STOP = FILLERS | frozenset((
    "of", "in", "on", "at", "to", "for", "from", "with", "by", "as", "and", "or", "but", "per", "every", "each",
    "all", "any", "some", "this", "that", "these", "those", "it", "its", "he", "she", "they", "we", "i", "his",
    "her", "their", "our", "my", "your", "one", "only", "just", "very", "more", "most", "so", "there", "here",
    "de", "del", "al", "en", "a", "y", "o", "con", "por", "para", "su", "sus", "lo", "le", "se", "que", "'s",
))
"""Function words, left out of the content words two facts are compared by."""


@dataclass(frozen=True, slots=True)
class Value:
    """A value in a fact: ``text`` as written, ``kind`` (``named``, ``version``, ``region``, ``date``,
    ``weekday``, ``time``, ``money``, ``number``), ``key`` (normalised: equal keys are one value written two
    ways) and its token span ``start``–``end`` (end exclusive)."""

    text: str
    kind: str
    key: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact read for comparison: its ``tokens`` as written and ``lower``-cased, its ``values``, its
    ``frame`` (lowercase words, fillers and punctuation other than ``:`` left out, each value as ``<kind>``)
    with the value at each frame position (``slots``: ``None`` for a word), and its content ``words`` (stems
    of the words that are not function words, its values' words among them, and the keys of its values)."""

    text: str
    tokens: tuple[str, ...]
    lower: tuple[str, ...]
    values: tuple[Value, ...]
    frame: tuple[str, ...]
    slots: tuple[Value | None, ...]
    words: frozenset[str]

    def mentions(self, value: Value) -> bool:
        """Whether this fact names ``value`` (the same key, or its words)."""
        if any(v.key == value.key for v in self.values):
            return True
        parts = [stem(w) for w in value.text.lower().split() if w not in STOP]
        return bool(parts) and all(p in self.words for p in parts)


def stem(word: str) -> str:
    """A crude stem for comparing content words across inflections (English and Spanish): a plural ``s``,
    ``ing``/``ed`` and a final ``e`` dropped, then the first five letters (``drinks``/``drinking`` → ``drink``,
    ``viajar``/``viaja`` → ``viaja``)."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w[:5]


def tokens(text: str) -> list[str]:
    """The words, numbers and clause punctuation of ``text``; a possessive ``'s`` is its own token."""
    out: list[str] = []
    for token in _TOKEN.findall(text):
        token = token.replace("’", "'")
        match = _POSSESSIVE.match(token)
        if match and len(token) > 2:
            out += [match.group(1), "'s"]
        else:
            out.append(token.rstrip(".-"))
    return [t for t in out if t]


def _time_key(low: str) -> str | None:
    match = _TIME.match(low)
    if not match:
        return None
    if match.group(3):
        hour = int(match.group(1)) % 12 + (12 if match.group(3) == "pm" else 0)
        return f"{hour:02d}:{match.group(2) or '00'}"
    return f"{int(match.group(4)):02d}:{match.group(5)}"


def _named(token: str, first: bool) -> bool:
    if any(c.isdigit() for c in token) or re.search(r"\w[._/+#]\w", token):
        return True
    if token.isupper():  # an acronym (AWS, KPMG); a longer word in capitals is shouting ("NOW OBSOLETE")
        return 1 < len(token) <= 5
    if any(c.isupper() for c in token[1:]):  # iOS, GitHub, vCPUs
        return True
    return token[:1].isupper() and not first


def _day(token: str) -> int | None:
    return int(token) if token.isdecimal() and 1 <= int(token) <= 31 else None


def _date(toks: list[str], lower: list[str], i: int) -> tuple[int, str] | None:
    """A date starting at token ``i``: ``(end, key)`` — a month with a day and/or year around it in either order
    (``March 15, 2025``, ``15 March 2025``, ``15 de abril``, ``June 2025``), ``Q2 2025``, ``week 32``."""
    def month_at(j: int) -> int | None:
        if j >= len(toks) or lower[j] not in MONTHS:
            return None
        english = lower[j] not in _SPANISH_MONTHS
        return MONTHS[lower[j]] if (toks[j][:1].isupper() or not english) and (lower[j] != "may" or toks[j] == "May") \
            else None

    def year_after(j: int) -> tuple[int, str]:
        k = j + (1 if j < len(lower) and lower[j] in (",", "de", "of") else 0)
        return (k + 1, lower[k]) if k < len(lower) and _YEAR.match(lower[k]) else (j, "")

    if _QUARTER.match(lower[i]):
        end, year = year_after(i + 1)
        return end, f"{lower[i]}-{year}"
    if lower[i] in ("week", "semana") and i + 1 < len(lower) and lower[i + 1].isdigit():
        return i + 2, f"week-{lower[i + 1]}"
    month = month_at(i)
    if month is not None:  # March 15, 2025 / June 2025 / Oct 2
        day = _day(lower[i + 1]) if i + 1 < len(lower) else None
        end, year = year_after(i + 2 if day else i + 1)
        return end, f"{year}-{month:02d}-{day or 0:02d}"
    day = _day(lower[i])
    if day is not None:  # 15 March 2025 / 15 de abril
        j = i + 1 + (1 if i + 1 < len(lower) and lower[i + 1] in ("de", "of") else 0)
        month = month_at(j)
        if month is not None:
            end, year = year_after(j + 1)
            return end, f"{year}-{month:02d}-{day:02d}"
    return None


def _value_at(toks: list[str], lower: list[str], i: int) -> tuple[int, str, str] | None:
    """The value starting at token ``i``: ``(end, kind, key)``, or ``None`` for a word."""
    low = lower[i]
    date = _date(toks, lower, i)
    if date is not None:
        return date[0], "date", date[1]
    if _ISO_DATE.match(low) or _YEAR.match(low):
        return i + 1, "date", low
    if low in WEEKDAYS or (low.endswith("s") and low[:-1] in WEEKDAYS):
        return i + 1, "weekday", str(WEEKDAYS.get(low, WEEKDAYS.get(low[:-1])))
    time = _time_key(low)
    if time is not None:
        return i + 1, "time", time
    if i >= 2 and lower[i - 1] == "las" and lower[i - 2] == "a" and low.isdecimal():  # a las 10
        return i + 1, "time", f"{int(low):02d}:00"
    if _REGION.match(low):
        return i + 1, "region", low
    if _VERSION.match(low):
        return i + 1, "version", low.lstrip("v")
    if _MONEY.match(low):
        return i + 1, "money", low[1:].replace(",", "")
    if _NUMBER.match(low):
        return i + 1, "number", low.replace(",", "")
    if low in STOP or not _named(toks[i], first=i == 0 or toks[i - 1] in (":", ";")):  # a sentence's first word
        return None
    end = i + 1
    while end < len(toks):  # a run of names: Acme Corp, GitHub Actions; Austin, Texas
        nxt = end + 1 if toks[end] == "," and end + 1 < len(toks) else end
        if nxt < len(toks) and lower[nxt] not in STOP and _named(toks[nxt], False) \
                and _value_kind_simple(lower[nxt]) is None and (nxt == end or nxt + 1 >= len(toks)
                                                                 or toks[nxt + 1] in (",", ";", ")", "(")):
            end = nxt + 1
        else:
            break
    if end < len(toks) and (_VERSION.match(lower[end]) or (_NUMBER.match(lower[end]) and not _YEAR.match(lower[end])
                                                             and "," not in lower[end])):
        product = " ".join(stem(t) for t in lower[i:end])  # Python 3.11, Node 18; Postgres 14 = PostgreSQL 14
        return end + 1, "version", f"{product} {lower[end].lstrip('v')}"
    return end, "named", " ".join(t for t in lower[i:end] if t != ",")


def _value_kind_simple(low: str) -> str | None:
    if low in MONTHS or low in WEEKDAYS or _REGION.match(low) or _VERSION.match(low) or _NUMBER.match(low):
        return "other"
    return None


@lru_cache(maxsize=4096)
def read(text: str) -> Fact:
    """``text`` read as a :class:`Fact` (cached: a new observation is compared with many)."""
    toks = tokens(text)
    lower = [t.lower() for t in toks]
    values: list[Value] = []
    frame: list[str] = []
    slots: list[Value | None] = []
    words: set[str] = set()
    i = 0
    while i < len(toks):
        found = _value_at(toks, lower, i)
        if found is None:
            if lower[i] not in FILLERS and (lower[i] == ":" or lower[i][0].isalnum() or lower[i] == "'s"):
                frame.append(lower[i])
                slots.append(None)
            if lower[i] not in STOP and lower[i][0].isalnum():
                words.add(stem(lower[i]))
            i += 1
            continue
        end, kind, key = found
        value = Value(" ".join(toks[i:end]).replace(" ,", ","), kind, key, i, end)
        values.append(value)
        frame.append(f"<{kind}>")
        slots.append(value)
        words.add(key)
        words.update(stem(t) for t in lower[i:end] if t[0].isalpha() and t not in STOP)
        i = end
    return Fact(text, tuple(toks), tuple(lower), tuple(values), tuple(frame), tuple(slots), frozenset(words))
