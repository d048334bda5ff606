"""Contradiction detection: a close pair of observations that differ in something checkable.

mememory ("Scoring & Recall", "Contradiction Detection") flags every existing memory whose cosine similarity to
the new one exceeds 0.75. Measured with all-MiniLM-L6-v2 that rule mostly flags paraphrases and merely related
statements (docs/lifecycle.md "Contradictions": the measured precision and recall of both modes on the labelled
pairs in ``tests/fixtures/contradiction_pairs.jsonl``). The default mode, :data:`CHECKABLE`, keeps the
threshold and adds what can be checked in the text: the two differ in polarity (a negation in one and not the
other) or each has a value of the same kind the other lacks — a number, version, region, date or named value (``us-east-1`` /
``us-west-2``, ``PostgreSQL`` / ``MySQL``, ``v2`` / ``v3``). A value present on one side only is a refinement
("Python 3.11" → "Python 3.11 or newer"), not a conflict. :data:`SIMILARITY` is mememory's rule as written.

Pure functions over texts and ``float32`` unit vectors; nothing here reads or writes the store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

THRESHOLD = 0.75
"""Cosine similarity above which two observations are close enough to contradict each other."""

CHECKABLE = "checkable"
SIMILARITY = "similarity"
MODES = (CHECKABLE, SIMILARITY)
"""``checkable`` (default): close and differing in a checkable value or polarity; ``similarity``: close (mememory's rule)."""

OPTIONS = ("keep_both", "update_old", "supersede", "delete_old")
"""How a person settles a conflict (mememory's resolution options): keep both, replace the old text with the new
one, mark the old one superseded by the new one, delete the old one."""

NEGATIONS = frozenset((
    "not", "no", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor", "cannot", "without",
    "isn't", "aren't", "wasn't", "weren't", "don't", "doesn't", "didn't", "won't", "wouldn't", "can't", "couldn't",
    "shouldn't", "hasn't", "haven't", "hadn't", "mustn't", "shan't", "ain't",
))

_TOKEN = re.compile(r"[$€£]?[\w][\w.\-/:'’,]*")
_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$|^\d{1,2}[./]\d{1,2}[./]\d{2,4}$")
_VERSION = re.compile(r"^v?\d+(\.\d+)+[a-z0-9]*$|^v\d+$")
_REGION = re.compile(r"^[a-z]{2,}(-[a-z]+)+-\d+[a-z]?$")
_NUMBER = re.compile(r"^[$€£]?\d[\d,]*(\.\d+)?[a-z%]*$")
_MONTHS = frozenset(("january", "february", "march", "april", "may", "june", "july", "august", "september",
                     "october", "november", "december"))
_DAYS = frozenset(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))


@dataclass(frozen=True, slots=True)
class Finding:
    """A conflict of the new observation with ``other`` (an observation id): ``similarity`` (cosine) and
    ``reason`` (``negation: …`` or ``differing <kind>: <value> / <value>``; ``similar`` in mememory's mode)."""

    other: int
    similarity: float
    reason: str


def _tokens(text: str) -> list[str]:
    return [t.rstrip(".,:;'’").replace("’", "'") for t in _TOKEN.findall(text)]


def _negated(tokens: Sequence[str]) -> bool:
    return any(t.lower() in NEGATIONS or t.lower().endswith("n't") for t in tokens)


def value_kind(token: str, first: bool = False) -> str | None:
    """The kind of checkable value ``token`` is — ``date``, ``version``, ``region``, ``number``, ``named`` — or
    ``None`` for a plain word. A capitalised word counts as a named value except as the first word (``first``),
    where only acronyms, inner capitals, digits or code-like punctuation make it one."""
    low = token.lower()
    if _DATE.match(low) or low in _MONTHS or low in _DAYS:
        return "date"
    if _VERSION.match(low):
        return "version"
    if _REGION.match(low):
        return "region"
    if _NUMBER.match(low):
        return "number"
    if any(c.isdigit() for c in token) or re.search(r"\w[._/]\w", token) or (len(token) > 1 and token.isupper()):
        return "named"
    if token[:1].isupper() and (not first or any(c.isupper() for c in token[1:])):
        return "named"
    return None


def _values(tokens: Sequence[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for i, token in enumerate(tokens):
        kind = value_kind(token, first=i == 0)
        if kind is not None:
            found[token.lower()] = kind
    return found


def checkable_difference(a: str, b: str) -> str | None:
    """Why ``a`` and ``b`` contradict each other when they say the same thing otherwise: a negation in one and not
    the other, or on each side a value of the same kind the other lacks; ``None`` when there is neither."""
    tokens_a, tokens_b = _tokens(a), _tokens(b)
    if _negated(tokens_a) != _negated(tokens_b):
        word = next(t for t in (tokens_a if _negated(tokens_a) else tokens_b)
                    if t.lower() in NEGATIONS or t.lower().endswith("n't"))
        return f"negation: {word.lower()!r} in one only"
    values_a, values_b = _values(tokens_a), _values(tokens_b)
    only_a = {v: k for v, k in values_a.items() if v not in values_b}
    only_b = {v: k for v, k in values_b.items() if v not in values_a}
    if not only_a or not only_b:
        return None
    pairs = [(x, y) for x, kx in only_a.items() for y, ky in only_b.items() if kx == ky]
    if not pairs:
        return None
    x, y = pairs[0]
    return f"differing {only_a[x]}: {x} / {y}"


def judge(a: str, b: str, similarity: float, mode: str = CHECKABLE, threshold: float = THRESHOLD) -> str | None:
    """The reason ``a`` and ``b`` (cosine ``similarity``) conflict in ``mode``, or ``None`` when they do not."""
    if similarity <= threshold:
        return None
    if mode == SIMILARITY:
        return f"similar ({similarity:.2f} > {threshold:.2f})"
    return checkable_difference(a, b)


def find(text: str, vector: np.ndarray, others: Sequence[tuple[int, str]], vectors: np.ndarray,
         mode: str = CHECKABLE, threshold: float = THRESHOLD) -> list[Finding]:
    """The observations among ``others`` (``(id, text)``, their unit vectors ``(n, d) float32`` in that order)
    that the new observation ``text`` (unit vector ``(d,) float32``) conflicts with in ``mode``, most similar
    first. Identical texts are duplicates, not conflicts."""
    if not len(others):
        return []
    sims = np.asarray(vectors, dtype=np.float32) @ np.asarray(vector, dtype=np.float32)
    found = []
    for (other, other_text), similarity in zip(others, sims.tolist(), strict=True):
        if other_text.strip().lower() == text.strip().lower():
            continue
        reason = judge(other_text, text, similarity, mode, threshold)
        if reason is not None:
            found.append(Finding(other, float(similarity), reason))
    return sorted(found, key=lambda f: -f.similarity)
