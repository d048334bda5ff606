"""Confidence and project scope as priors on relevance (mememory "Scoring & Recall": "Memory Weight",
"Scope Weight"; docs/lifecycle.md "Confidence", "Project scope").

An observation's ``weight`` (0.1..1.0, default 1.0) multiplies its contribution to its entity's relevance;
a search for a project weighs that project's memories 1.0 and global ones :data:`GLOBAL_SCOPE_WEIGHT`
(other projects' are left out before scoring). A memory with default weight, searched without a project,
is multiplied by exactly 1.0: it ranks exactly as before.
"""

from __future__ import annotations

import numpy as np

MIN_WEIGHT = 0.1
MAX_WEIGHT = 1.0
GLOBAL_SCOPE_WEIGHT = 0.8
"""A global memory's weight in a search for a project (the project's own weigh 1.0)."""


def ranking_weight(weights: np.ndarray) -> np.ndarray:
    """Stored weights as ranking multipliers, ``(n,) float64``: clipped into [0.1, 1.0] (older files may hold
    weights outside it)."""
    return np.clip(np.asarray(weights, dtype=np.float64), MIN_WEIGHT, MAX_WEIGHT)


def scope_weight(projects: list[str | None], project: str | None) -> np.ndarray:
    """Each memory's scope weight in a search for ``project``, ``(n,) float64``: 1.0 for its own (and for
    every memory when ``project`` is ``None``), :data:`GLOBAL_SCOPE_WEIGHT` for a global one (``None``).
    Memories of other projects never reach this point (left out by the caller)."""
    if project is None:
        return np.ones(len(projects), dtype=np.float64)
    return np.array([1.0 if p == project else GLOBAL_SCOPE_WEIGHT for p in projects], dtype=np.float64)
