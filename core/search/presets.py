"""Named scoring presets: ``ScoringParams`` values a search, the CLI, MCP and the sliders can start from.

``seed`` is the seeds' formula exactly (DESIGN.md §4; seed ``000`` "Tuneable Constants"): every worked
example of the seeds is tested against it. ``default`` is the preset that measures best on
``limbic eval locomo`` (DESIGN.md §10).
"""

from __future__ import annotations

from types import MappingProxyType

from limbic.core.errors import ValidationError
from limbic.core.search.params import ScoringParams

SEED = ScoringParams()

DEFAULT = SEED.replace(relevance_fusion=1, bm25_weight=0.5, limbic_ratio=1, created_decay=0.0)
"""Relevance first (docs/scoring.md "Default preset"): base relevance is the even mix of the cosine and
the BM25 score, each divided by its branch's best; the limbic factors multiply it and the blend divides
by the best limbic score (not min–max), so with no usage signal the order is the relevance order; a
never-accessed memory does not decay from its creation time."""

PRESETS = MappingProxyType({
    "default": DEFAULT,
    "seed": SEED,
})
"""Every preset by name; ``default`` first."""


def preset(name: str) -> ScoringParams:
    """The preset called ``name``.

    Raises:
        ValidationError: no preset has that name (the message lists the names).
    """
    try:
        return PRESETS[name]
    except KeyError:
        raise ValidationError(f"unknown preset {name!r}; expected one of {', '.join(PRESETS)}") from None
