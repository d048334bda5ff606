"""When an observation expires: an ISO 8601 instant or a time to live in days (docs/lifecycle.md "Expiry").

Pure functions for the boundaries (MCP arguments, the editor, import): they read what a person or an agent
wrote and return UTC unix seconds, or raise :class:`~limbic.core.errors.ValidationError` with a plain
message. The store keeps ``expires_at``; search, ``open_nodes`` and the indexes leave an observation out
from that moment on (mememory "Scoring & Recall", "Filter expired").
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from limbic.core.errors import ValidationError

DAY_SECONDS = 86_400.0
MAX_TTL_DAYS = 36_500.0
"""The longest time to live accepted (100 years)."""


END_OF_DAY = 86_400.0 - 0.001
"""Where a date without a time ends, in seconds after its midnight: 23:59:59.999."""


def parse_instant(text: object, what: str = "expiresAt", *, end_of_day: bool = False) -> float:
    """An ISO 8601 date or date-time (``2026-03-01``, ``2026-03-01T12:00:00Z``, an offset, or naive = UTC) as
    UTC unix seconds. A date without a time is its midnight (UTC), or with ``end_of_day`` its last millisecond
    (23:59:59.999 UTC: ``asOf: "2026-11-27"`` is that day as it ended, its writes included).

    Raises:
        ValidationError: not a string, or not ISO 8601.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"{what} must be an ISO 8601 date or date-time, e.g. 2026-03-01T12:00:00Z")
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValidationError(f"{what} {text.strip()[:40]!r} is not an ISO 8601 date or date-time, "
                              "e.g. 2026-03-01T12:00:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    whole_day = end_of_day and _DATE_ONLY.fullmatch(text.strip()) is not None
    return moment.timestamp() + (END_OF_DAY if whole_day else 0.0)


_DATE_ONLY = re.compile(r"\d{4}-?\d{2}-?\d{2}")


def ttl_seconds(days: object) -> float:
    """A time to live in days (more than 0, at most :data:`MAX_TTL_DAYS`; fractions allowed) in seconds.

    Raises:
        ValidationError: not a number, or out of range.
    """
    if isinstance(days, bool) or not isinstance(days, int | float) or not math.isfinite(days) \
            or not 0 < days <= MAX_TTL_DAYS:
        raise ValidationError(f"ttlDays must be a number of days above 0 and at most {MAX_TTL_DAYS:,.0f}, got {days!r}")
    return float(days) * DAY_SECONDS


def expiry_time(expires_at: object | None, ttl_days: object | None, now: float) -> float | None:
    """The expiry (UTC seconds) given either an ISO 8601 ``expires_at`` or ``ttl_days`` counted from ``now``
    (UTC seconds); ``None`` when neither is given.

    Raises:
        ValidationError: both are given, or either is malformed.
    """
    if expires_at is not None and ttl_days is not None:
        raise ValidationError("give either expiresAt or ttlDays, not both")
    if expires_at is not None:
        return parse_instant(expires_at)
    if ttl_days is not None:
        return now + ttl_seconds(ttl_days)
    return None


_RELATIVE = re.compile(r"^\+\s*(\d+(?:\.\d+)?)\s*(h|hours?|d|days?|w|weeks?)$", re.IGNORECASE)
_UNIT_SECONDS = {"h": 3_600.0, "d": DAY_SECONDS, "w": 7 * DAY_SECONDS}


def parse_moment(text: object, now: float, what: str = "at") -> float:
    """A moment from ``now`` on (UTC seconds): ``+30d``, ``+12h``, ``+2w`` (``days``, ``hours``, ``weeks`` too)
    counted from ``now``, or an ISO 8601 date or date-time (a date alone is the end of that day, as ``asOf``
    reads it: :func:`parse_instant`), at most :data:`MAX_TTL_DAYS` ahead.

    Raises:
        ValidationError: neither form, or a moment before ``now``.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"{what} must be +N days (e.g. +30d) or an ISO 8601 date (e.g. 2027-01-15)")
    relative = _RELATIVE.match(text.strip())
    if relative:
        moment = now + float(relative.group(1)) * _UNIT_SECONDS[relative.group(2)[0].lower()]
    else:
        try:
            moment = parse_instant(text, what, end_of_day=True)
        except ValidationError:
            raise ValidationError(f"{what} {text.strip()[:40]!r} is neither +N days (e.g. +30d) nor an ISO 8601 "
                                  "date (e.g. 2027-01-15)") from None
    if moment < now:
        raise ValidationError(f"{what} {text.strip()[:40]!r} is in the past: a forecast is for now or later")
    if moment > now + MAX_TTL_DAYS * DAY_SECONDS:
        raise ValidationError(f"{what} {text.strip()[:40]!r} is more than {MAX_TTL_DAYS:,.0f} days ahead")
    return moment
