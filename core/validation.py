"""Input limits and normalisation shared by every boundary (service, MCP tools, CLI, GUI forms).

Limits: a name ≤ 512 characters, an observation ≤ 10,000 characters, ≤ 1,000 items
per call, a query ≤ 2,000 characters. Control characters other than tab and line breaks are refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sized

from limbic.core.errors import ValidationError
from limbic.core.models import STATUS_ALIASES, STATUSES

MAX_NAME = 512
MAX_OBSERVATION = 10_000
MAX_ITEMS = 1_000
MAX_QUERY = 2_000
MAX_KIND = 64
MAX_CONTEXT = 2_000

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _text(value: object, what: str, limit: int, *, multiline: bool) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{what} must be a string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise ValidationError(f"{what} must not be empty")
    if len(text) > limit:
        raise ValidationError(f"{what} is {len(text):,} characters long; the limit is {limit:,}")
    if _CONTROL.search(text) or (not multiline and ("\n" in text or "\r" in text)):
        raise ValidationError(f"{what} contains control characters: {text[:60]!r}")
    return text


def name(value: object, what: str = "entity name") -> str:
    """A trimmed, non-empty single-line name of at most 512 characters."""
    return _text(value, what, MAX_NAME, multiline=False)


def label(value: object, what: str) -> str:
    """An entity type or relation type: like a name."""
    return _text(value, what, MAX_NAME, multiline=False)


def observation(value: object) -> str:
    """A trimmed, non-empty observation text of at most 10,000 characters (line breaks allowed)."""
    return _text(value, "observation", MAX_OBSERVATION, multiline=True)


def kind(value: object) -> str | None:
    """An optional observation kind (e.g. fact, decision, preference, event, metadata), lower-cased."""
    if value is None:
        return None
    return _text(value, "observation kind", MAX_KIND, multiline=False).lower()


def context(value: object) -> str | None:
    if value is None:
        return None
    return _text(value, "relation context", MAX_CONTEXT, multiline=True)


def query(value: object) -> str:
    """A search query of at most 2,000 characters (may be empty after trimming: callers decide)."""
    if not isinstance(value, str):
        raise ValidationError(f"query must be a string, got {type(value).__name__}")
    if len(value) > MAX_QUERY:
        raise ValidationError(f"query is {len(value):,} characters long; the limit is {MAX_QUERY:,}")
    if "\x00" in value:
        raise ValidationError("query contains a NUL character")
    return value.strip()


def status(value: object) -> str:
    """A canonical status; the Spanish seed names (activo, pausado, …) are accepted as aliases."""
    if not isinstance(value, str):
        raise ValidationError(f"status must be a string, got {type(value).__name__}")
    key = value.strip().lower()
    key = STATUS_ALIASES.get(key, key)
    if key not in STATUSES:
        raise ValidationError(f"unknown status {value!r}; use one of {', '.join(STATUSES)}")
    return key


def count(items: Sized, what: str) -> None:
    """Refuse empty-but-required or oversized batches (at most 1,000 items per call)."""
    if len(items) > MAX_ITEMS:
        raise ValidationError(f"too many {what} in one call: {len(items):,}; the limit is {MAX_ITEMS:,}")


def limit(value: object, *, low: int = 1, high: int = MAX_ITEMS, what: str = "limit") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{what} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise ValidationError(f"{what} must be between {low} and {high}, got {value}")
    return value


def timestamp(value: object, what: str = "timestamp") -> float | None:
    """UTC unix seconds (finite, not negative) or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValidationError(f"{what} must be UTC unix seconds, got {value!r}")
    return float(value)


def known_keys(keys: Iterable[str], allowed: Iterable[str], what: str) -> None:
    """Check that every one of ``keys`` is ``allowed`` (settings read from a mapping).

    Raises:
        ValidationError: naming the unknown keys and the known ones (``what``: e.g. "scoring parameters").
    """
    allowed = sorted(allowed)
    unknown = sorted(set(keys) - set(allowed))
    if unknown:
        raise ValidationError(f"unknown {what}: {', '.join(unknown)}; known: {', '.join(allowed)}")
