"""Calendar dates a query names, and how far a memory's write times are from them (docs/scoring.md
"Dates named in the query").

An agent asks "what did we decide on 3 March 2025?" or "what did Maria share in June 2023?": the memory
meant is the one written then. :func:`query_dates` finds the absolute English dates of a query — a day
(``2025-03-03``, ``3 March 2025``, ``3rd of March, 2025``, ``March 3, 2025``) or a month (``March
2025``) — always with a four-digit year, as spans of UTC seconds; :func:`distance_days` measures how many
days each candidate's nearest write time lies outside the nearest span.

A bare year, a day without a year and relative expressions ("yesterday", "last week") are not read: a
bare number such as "port 2023" or "2.0.2023" is not a date, a day without a year is ambiguous, and the
time of a relative expression is the asker's, which a memory graph shared by agents cannot know. A
general date-search library was measured and not used: ``dateparser.search.search_dates`` split
"the week before 16 November 2023" into "16 November" of the current year plus a bare year, read
"port 2023" as a year, and took 190 ms on its first call. Days are UTC days.
"""

from __future__ import annotations

import calendar
import functools
import re
from datetime import UTC, datetime, timedelta

import numpy as np

SECONDS_PER_DAY = 86400.0

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PATTERNS = tuple(re.compile(pattern, re.IGNORECASE) for pattern in (
    r"\b" + _YEAR + r"-(?P<month_number>[01]\d)-(?P<day>[0-3]\d)\b",  # 2025-03-03
    r"\b" + _DAY + r"(?:\s+of)?\s+" + _MONTH + r",?\s+" + _YEAR + r"\b",  # 3 March 2025, 3rd of March, 2025
    r"\b" + _MONTH + r"\s+" + _DAY + r",?\s+" + _YEAR + r"\b",  # March 3, 2025
    r"\b" + _MONTH + r",?\s+" + _YEAR + r"\b",  # March 2025
))
_HAS_YEAR = re.compile(r"(?:19|20)\d\d")


@functools.lru_cache(maxsize=1024)
def query_dates(query: str) -> tuple[tuple[float, float], ...]:
    """The days and months ``query`` names, each as ``(start, end)`` UTC unix seconds (``end``
    exclusive), in the order the patterns find them; ``()`` when it names none. An impossible day
    ("31 February 2025") is read as its month."""
    if not _HAS_YEAR.search(query):
        return ()
    spans: list[tuple[float, float]] = []
    taken: list[tuple[int, int]] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(query):
            if any(start < match.end() and match.start() < end for start, end in taken):
                continue
            span = _span(match.groupdict())
            if span is not None:
                taken.append(match.span())
                spans.append(span)
    return tuple(spans)


def _span(groups: dict[str, str | None]) -> tuple[float, float] | None:
    year = int(groups["year"] or 0)
    number, name, day = groups.get("month_number"), groups.get("month"), groups.get("day")
    month = int(number) if number else _MONTHS[(name or "").lower()]
    try:
        if day:
            start = datetime(year, month, int(day), tzinfo=UTC)
            return start.timestamp(), (start + timedelta(days=1)).timestamp()
        start = datetime(year, month, 1, tzinfo=UTC)
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    except ValueError:
        return None
    return start.timestamp(), end.timestamp()


def describe(spans: tuple[tuple[float, float], ...]) -> tuple[str, ...]:
    """The spans as the search reports them: ``YYYY-MM-DD`` for a day, ``YYYY-MM`` for a month."""
    out = []
    for start, end in spans:
        day = datetime.fromtimestamp(start, tz=UTC)
        out.append(day.strftime("%Y-%m-%d") if end - start <= SECONDS_PER_DAY else day.strftime("%Y-%m"))
    return tuple(out)


def distance_days(spans: tuple[tuple[float, float], ...], times: list[list[float]]) -> np.ndarray:
    """For each candidate, how many days its nearest write time lies outside the nearest span:
    ``(n,) float64``, 0 inside a span, ``nan`` for every candidate when ``spans`` is empty.

    Args:
        spans: :func:`query_dates` of the query.
        times: per candidate, its write times in UTC unix seconds (the entity's creation and each live
            observation's), at least one each.
    """
    if not spans:
        return np.full(len(times), np.nan, dtype=np.float64)
    out = np.empty(len(times), dtype=np.float64)
    for i, written in enumerate(times):
        at = np.asarray(written, dtype=np.float64)
        nearest = np.inf
        for start, end in spans:
            outside = np.where(at < start, start - at, np.where(at >= end, at - end, 0.0))
            nearest = min(nearest, float(outside.min()))
        out[i] = nearest / SECONDS_PER_DAY
    return out
