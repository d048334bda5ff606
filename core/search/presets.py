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

PRESETS = MappingProxyType({
    "default": ScoringParams(),
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
