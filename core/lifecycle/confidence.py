"""Confidence of an observation: its weight, 0.1..1.0 (mememory "Scoring & Recall", "Memory Weight").

1.0 is confident, current knowledge (the default); 0.5 an uncertain or tentative belief; 0.3 partly
outdated; 0.1 what superseding leaves on the replaced observation. Search multiplies an observation's
contribution to its entity's relevance by it (:mod:`limbic.core.search.confidence`; docs/lifecycle.md).
"""

from __future__ import annotations

import math

from limbic.core.errors import ValidationError
from limbic.core.search.confidence import MAX_WEIGHT, MIN_WEIGHT

SUPERSEDED_WEIGHT = 0.1
"""The weight recorded on an observation when a newer one supersedes it."""


def checked_weight(value: object) -> float:
    """``value`` as a weight in [0.1, 1.0].

    Raises:
        ValidationError: not a number, or outside [0.1, 1.0].
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not MIN_WEIGHT <= value <= MAX_WEIGHT:
        raise ValidationError(f"weight must be a number from {MIN_WEIGHT} to {MAX_WEIGHT}, got {value!r}")
    return float(value)
