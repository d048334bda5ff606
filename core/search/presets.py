"""Named scoring presets: ``ScoringParams`` values a search, the CLI, MCP and the sliders can start from.

``seed`` is the seeds' formula exactly (mcp-memory "The Limbic System", "Tuneable Constants"): every worked
example of the seeds is tested against it. ``default`` is the preset that measures best on
``limbic eval locomo`` (docs/evaluation.md).
"""

from __future__ import annotations

from types import MappingProxyType

from limbic.core.errors import ValidationError
from limbic.core.search.params import ScoringParams

SEED = ScoringParams()

DEFAULT = SEED.replace(relevance_fusion=1, bm25_weight=0.5, bm25_ceiling_share=1.0, bm25_exponent=2.0,
                       limbic_ratio=1, created_decay=0.0, beta_sal=0.25, gamma=0.0,
                       context_weight=0.5, observation_weight=0.4, observation_ceiling_share=1.0,
                       date_weight=0.3, feedback_weight=1.0)
"""Relevance first (docs/scoring.md "Base relevance"): base relevance mixes the cosine divided by the best
cosine (0.5) with the squared share of what the query can score in BM25 (0.5; BM25 divided by the larger
of the best BM25 and the query's Σ idf), so a weak partial keyword match counts little; the limbic
factors multiply it and the blend divides by the best limbic score (not min–max), so with no usage
signal the order is the relevance order; a never-accessed memory does not decay from its creation time.
The best single observation's own fused relevance is mixed in (0.4, BM25 on the query's Σ idf in the
observation index) and a memory's neighbours in creation order lend it relevance (α 0.5; docs/scoring.md
"Observation evidence", "Context"). A memory written on a day or month the query names has its relevance
multiplied by up to 1.3 (δ 0.3, falling to 1/e three days off; "Dates named in the query").
A memory used after an earlier query like this one (cosine ≥ 0.7) gets a prior of up to 2 (β_fb 1; "Feedback
from similar queries"). Usage priors are milder than the seed's (β_sal 0.25, no co-occurrence boost): replaying LoCoMo with use
(``limbic eval locomo --replay use``) they lift NDCG@10 (session 0.802 → 0.810, turn 0.450 → 0.477)
where the seed's strengths lowered session R@5 (docs/scoring.md "Usage priors")."""

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
