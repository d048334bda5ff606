"""Which scoring sliders change nothing in the shown search, and why: on a memory nobody has used yet, the
salience, co-occurrence and feedback sliders have nothing to weigh, and a person moving them should be told.

A slider is *inert* when moving it to either end of its range leaves every candidate's final score where it is
(:func:`limbic.core.search.scoring.score_candidates`, pure numpy over the cached candidates, no SQL). The reason
comes from the candidates themselves: no recorded use, no memories used together, no earlier search marked useful;
otherwise nothing in these candidates for it (no archived memory, no date in the query, …).

The search runs in a worker while a person types: each scoring (a few ms at 10,000 entities) is followed by a
pause that lets the UI thread take the interpreter lock, and the work stops when a newer search made it stale.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from limbic.core.errors import LimbicError
from limbic.core.search.params import ScoringParams
from limbic.core.search.scoring import score_candidates

UNUSED = ("nobody has used these memories yet: salience counts uses (Mark as useful, an agent's mark_used, "
          "open_nodes or get_entity), and searching alone is not a use")
NOT_TOGETHER = "no two of these memories were used together yet"
NO_FEEDBACK = "no earlier search like this one was marked useful yet"
NOTHING_HERE = "nothing in these results for it yet"
CAUSES = {"beta_sal": "usage", "alpha_cons": "usage", "beta_deg": "usage", "gamma": "cooc",
          "cooc_temporal_floor": "cooc", "feedback_weight": "feedback", "feedback_floor": "feedback"}


def _reasons(candidates: Any) -> dict[str, str]:
    feedback = np.nan_to_num(np.asarray(candidates.feedback_similarity, dtype=np.float64))
    return {"usage": UNUSED if int(np.sum(candidates.access_count)) == 0 else NOTHING_HERE,
            "cooc": NOT_TOGETHER if len(candidates.cooc_a) == 0 else NOTHING_HERE,
            "feedback": NO_FEEDBACK if not np.any(feedback > 0) else NOTHING_HERE}


def _never() -> bool:
    return False


def inert_sliders(candidates: Any, params: ScoringParams, stale: Callable[[], bool] = _never) -> dict[str, str] | None:
    """``{parameter name: reason}`` for every parameter (:meth:`ScoringParams.knobs`) whose whole range (both ends,
    or every choice) leaves the final scores of ``candidates`` (a ``CandidateSet``) unchanged under ``params``; empty
    for an empty set. ``stale()`` is asked before each scoring: once true, the work stops and the answer is
    ``None``. Between two scorings the interpreter lock is given up (``time.sleep(0)``)."""
    if len(candidates.names) == 0:
        return {}
    reference = score_candidates(candidates, params).final_score
    reasons = _reasons(candidates)
    inert: dict[str, str] = {}
    for spec in ScoringParams.knobs():
        meta = spec.metadata
        moved = False
        for end in meta["choices"] if "choices" in meta else (float(meta["min"]), float(meta["max"])):
            try:
                other = params.replace(**{spec.name: end})
            except LimbicError:
                continue
            time.sleep(0)  # the UI thread may take the lock between two scorings
            if stale():
                return None
            if not np.allclose(score_candidates(candidates, other).final_score, reference, rtol=0, atol=1e-12):
                moved = True
                break
        if not moved:
            inert[spec.name] = reasons.get(CAUSES.get(spec.name, ""), NOTHING_HERE)
    return inert
