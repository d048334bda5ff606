"""Reflections: the checks of what may be written, and how a search of them is ranked.

A reflection is prose about one entity, one relation or the whole memory (mcp-memory docs "Architecture",
"ReflectionsMixin"). Its ``author`` is free text and its ``mood`` an open list; :data:`SUGGESTED_MOODS` are
mcp-memory's moods, offered as suggestions only. A search ranks reflections like the memory's hybrid search
does (mcp-memory docs "Hybrid search"): the full-text (BM25) ranking and the vector (cosine) ranking are
fused with Reciprocal Rank Fusion, ``Σ 1/(k + rank)``. The full-text side looks for the query's content words
only (:func:`content_terms`): a reflection that shares nothing with the query but "the" or "her" is not a match.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from limbic.core import validation as check
from limbic.core.curation.stop_words import STOP_WORDS
from limbic.core.errors import ValidationError

TARGET_TYPES = ("entity", "relation", "global")
SUGGESTED_MOODS = ("frustracion", "satisfaccion", "curiosidad", "duda", "insight")
MAX_AUTHOR = 128
MAX_MOOD = 64


def target_type(value: object) -> str:
    """``entity``, ``relation`` or ``global`` (case-insensitive). Raises ValidationError otherwise."""
    if not isinstance(value, str) or value.strip().lower() not in TARGET_TYPES:
        raise ValidationError(f"targetType must be one of {', '.join(TARGET_TYPES)}, got {value!r}")
    return value.strip().lower()


def author(value: object) -> str:
    """A trimmed, non-empty author of at most 128 characters, on one line."""
    text = check.name(value, "author")
    if len(text) > MAX_AUTHOR:
        raise ValidationError(f"author is {len(text)} characters long; the limit is {MAX_AUTHOR}")
    return text


def mood(value: object) -> str | None:
    """An optional mood, trimmed and lower-cased, of at most 64 characters (any word: the suggestions are
    :data:`SUGGESTED_MOODS`); an empty one is no mood."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = check.name(value, "mood").lower()
    if len(text) > MAX_MOOD:
        raise ValidationError(f"mood is {len(text)} characters long; the limit is {MAX_MOOD}")
    return text


@dataclass(frozen=True, slots=True)
class Ranked:
    """One reflection's place in a search: its id, fused ``score``, 1-based ranks in the full-text and vector
    rankings (None when absent from one) and its cosine ``similarity`` to the query (None without vectors)."""

    id: int
    score: float
    text_rank: int | None
    vector_rank: int | None
    similarity: float | None


def fuse(text_ranking: Sequence[int], similarities: dict[int, float], k: float, limit: int) -> list[Ranked]:
    """Reciprocal Rank Fusion of the full-text ranking (ids, best first) and the vector similarities (id →
    cosine): ``Σ 1/(k + rank)`` over the rankings an id is in. Best first, ties to the lower id."""
    by_vector = sorted(similarities, key=lambda i: (-similarities[i], i))
    text_rank = {rid: rank for rank, rid in enumerate(text_ranking, 1)}
    vector_rank = {rid: rank for rank, rid in enumerate(by_vector, 1)}
    ranked = [Ranked(rid, sum(1.0 / (k + r) for r in (text_rank.get(rid), vector_rank.get(rid)) if r is not None),
                     text_rank.get(rid), vector_rank.get(rid), similarities.get(rid))
              for rid in text_rank.keys() | vector_rank.keys()]
    ranked.sort(key=lambda r: (-r.score, r.id))
    return ranked[:limit]


def content_terms(terms: Sequence[str]) -> list[str]:
    """The pieces of a query that are not stop words (English or Spanish, :mod:`limbic.core.curation.stop_words`,
    compared without case and punctuation); all of them when every one is a stop word."""
    kept = [t for t in terms if re.sub(r"[\W_]", "", t).casefold() not in STOP_WORDS]
    return kept or list(terms)
