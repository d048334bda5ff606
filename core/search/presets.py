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

DEFAULT = SEED.replace(relevance_fusion=1, bm25_weight=0.5, bm25_ceiling_share=1.0, bm25_exponent=2.0,
                       limbic_ratio=1, created_decay=0.0)
"""Relevance first (docs/scoring.md "Base relevance"): base relevance mixes the cosine divided by the best
cosine (0.3) with the squared share of what the query can score in BM25 (0.7; BM25 divided by the larger
of the best BM25 and the query's Σ idf), so a weak partial keyword match counts little; the limbic
factors multiply it and the blend divides by the best limbic score (not min–max), so with no usage
signal the order is the relevance order; a never-accessed memory does not decay from its creation time."""

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
