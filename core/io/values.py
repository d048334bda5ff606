"""Cleaning of single values found in memory files: timestamps, names, observation texts.

Helpers of :mod:`limbic.core.io.parsers`. They never raise on odd input: each returns the cleaned
value (or ``None``) and, where something was changed or dropped, a short note for the import report.
Limits come from :mod:`limbic.core.validation` (name ≤ 512 characters, observation ≤ 10,000).
"""

from __future__ import annotations

import json
import math
import re
import time
from datetime import UTC, datetime
from typing import Any

from limbic.core import validation

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_XML_TAG = re.compile(r"</?item>")
_SPACES = re.compile(r"\s+")

# Keys whose string values carry the text of an observation written as an object.
TEXT_KEYS = ("content", "text", "observation", "value", "contents", "description", "item", "$text")


def timestamp(value: Any) -> float | None:
    """A timestamp as UTC unix seconds, or ``None`` when absent or unreadable.

    Accepts ISO 8601 strings (``Z`` or an offset; naive ones are read as UTC; a bare date is
    midnight UTC) and epoch numbers in seconds, milliseconds, microseconds or nanoseconds (told
    apart by magnitude: above 1e11 is milliseconds, above 1e14 microseconds, above 1e17 nanoseconds),
    also when written as digit strings.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            number = float(text)
        except ValueError:
            return _iso(text)
        return _epoch(number)
    if isinstance(value, int | float):
        return _epoch(float(value))
    return None


def expiry_from_ttl(days: Any, created_at: float | None) -> float | None:
    """The expiry of an observation written with a time to live of ``days`` (a positive number): counted
    from ``created_at`` (UTC seconds), or from now when it has none; ``None`` when absent or unreadable."""
    if isinstance(days, bool) or not isinstance(days, int | float) or not math.isfinite(days) or days <= 0:
        return None
    return (time.time() if created_at is None else created_at) + float(days) * 86_400.0


def _epoch(number: float) -> float | None:
    if not math.isfinite(number) or number < 0:
        return None
    for threshold, scale in ((1e17, 1e9), (1e14, 1e6), (1e11, 1e3)):
        if number > threshold:
            return number / scale
    return number


def _iso(text: str) -> float | None:
    candidate = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    try:
        moment = datetime.fromisoformat(candidate)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = moment.timestamp()
    return seconds if seconds >= 0 else None


def clean_name(value: Any) -> tuple[str | None, str | None]:
    """A usable entity name (or entity/relation type) and a note when it had to be changed.

    Returns ``(None, reason)`` when nothing usable is left. Numbers become strings; line breaks and
    runs of white space inside a name become one space; control characters are removed; a name
    longer than 512 characters is refused (cutting it could merge two entities).
    """
    if (isinstance(value, str) and value.isprintable() and value == value.strip() and "  " not in value
            and value and len(value) <= validation.MAX_NAME):
        return value, None
    if isinstance(value, bool) or value is None:
        return None, "missing"
    if isinstance(value, int | float):
        value = str(value)
    if not isinstance(value, str):
        return None, f"not a string ({type(value).__name__})"
    text = _CONTROL.sub("", value)
    text = _SPACES.sub(" ", text).strip()
    if not text:
        return None, "empty"
    if len(text) > validation.MAX_NAME:
        return None, f"{len(text):,} characters long (limit {validation.MAX_NAME})"
    note = None if text == value else "white space or control characters cleaned"
    return text, note


def observation_parts(text: str) -> list[str]:
    """Split a cleaned observation longer than 10,000 characters into numbered parts (each within the limit)."""
    limit = validation.MAX_OBSERVATION
    if len(text) <= limit:
        return [text]
    room = limit - 24
    pieces = [text[i : i + room] for i in range(0, len(text), room)]
    return [f"(part {i}/{len(pieces)}) {piece}".strip() for i, piece in enumerate(pieces, 1)]


def clean_text(value: str) -> str:
    """Observation text with control characters (other than tab and line breaks) removed, trimmed."""
    return _CONTROL.sub("", value).strip()


def scalar_text(value: Any) -> str | None:
    """A short string for a property value: lists joined by ", ", objects as compact JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        return ", ".join(scalar_text(v) or "" for v in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def flatten_observations(value: Any) -> tuple[list[tuple[str, dict[str, Any]]], bool]:
    """Observation texts (with the object each came from, ``{}`` for plain strings) from any shape.

    The standard shape is a list of strings. Also read: a single string; objects with a text field
    (``content``, ``text``, ``observation``, ``value``…) whose other fields (``createdAt``, ``kind``…)
    are returned alongside; nested ``{"item": …, "$text": …}`` leftovers of an XML round trip, whose
    leaf strings are taken depth first with stray ``<item>`` tags removed. Returns the pairs and
    whether the shape was non-standard (so the caller can note the recovery).
    """
    out: list[tuple[str, dict[str, Any]]] = []
    standard = isinstance(value, list) and all(isinstance(v, str) for v in value)

    def walk(node: Any) -> None:
        if isinstance(node, str):
            text = _XML_TAG.sub("", node)
            if text.strip():
                out.append((text, {}))
        elif isinstance(node, bool) or node is None:
            return
        elif isinstance(node, int | float):
            out.append((str(node), {}))
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            text_key = next((k for k in ("content", "text", "observation", "value") if
                             isinstance(node.get(k), str)), None)
            if text_key is not None:
                out.append((node[text_key], {k: v for k, v in node.items() if k != text_key}))
                return
            for key in TEXT_KEYS:
                if key in node:
                    walk(node[key])
            if not any(key in node for key in TEXT_KEYS):
                out.append((scalar_text(node) or "", {}))

    walk(value)
    return out, not standard
