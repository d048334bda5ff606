"""Forget and promote: a memory's retention score and what it suggests (Mnemex ``scoring_algorithm.md``,
"Core Formula", "Decision Thresholds"; docs/lifecycle.md "Forget and promote").

``score = n_use^β · f(Δt) · strength``: ``n_use`` the uses (writing a memory is its first use, then each
access — an agent's ``open_nodes``, ``get_entity``, ``mark_used`` or a person's *Mark as useful*; never an
impression), ``f`` the decay model (:class:`limbic.core.search.decay.Decay`) of the hours ``Δt`` since
the memory's own last use (its write, its arrival by import, or its last access; the wall clock), ``strength``
0..2 (its stored base, default 1, raised by each use and by each detail it holds — each ten words of its
observations beyond the first ten, each memory it is related to — capped at 2). Below ``τ_forget`` a memory is a
candidate to forget (archive or delete); at ``τ_promote`` or above, or with ``promote_uses`` uses within
``promote_window_days``, a candidate to promote (pin). Pure functions over numbers and numpy arrays.

The default decay is Mnemex's default model, the power law (half-life 3 days, α 1.1): a memory written once and
never used again falls below ``τ_forget`` 0.05 after 49 days, one holding more or used more later, each at its
own moment. A low score is not enough to propose forgetting: the guards of :mod:`limbic.core.service.forgetting`
keep what is new (``grace_days``), used lately (``keep_used_days``), pinned, of a protected type
(``protected_types``), open work, configuration, or tied to such a memory. :func:`duration` words a span of time
for the reasons a person reads.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from limbic.core.errors import ValidationError
from limbic.core.search.decay import PARAMETERS, Decay, rate
from limbic.core.validation import known_keys

KEEP, FORGET, PROMOTE = "keep", "forget", "promote"


def _setting(default: float, low: float, high: float, help_text: str) -> Any:
    return field(default=default, metadata={"min": low, "max": high, "help": help_text})


PROTECTED_TYPES = ("person", "preference", "identity", "decision")
"""Entity types never proposed for forgetting (compared without case): who someone is, what they prefer, what
was decided."""


@dataclass(frozen=True, slots=True)
class RetentionParams:
    """The constants of the retention score and its thresholds; the defaults are Mnemex's (its default power-law
    decay with a 3-day half-life). ``decay`` is the decay model with its parameters, stored flat as ``decay_model``
    and each parameter's own name (``alpha``: :meth:`to_dict`)."""

    beta: float = _setting(0.6, 0.0, 1.0, "exponent of the use count")
    half_life_hours: float = _setting(72.0, 1.0, 87_600.0, "half-life of the decay, hours (1 hour to 10 years)")
    decay: Decay = Decay("power_law")  # Mnemex's default model
    tau_forget: float = _setting(0.05, 0.0, 10.0, "forget below this score")
    tau_promote: float = _setting(0.65, 0.0, 100.0, "promote at or above this score")
    promote_uses: float = _setting(5, 1, 10_000, "promote with this many uses within the window")
    promote_window_days: float = _setting(14, 1, 3_650, "the window of the usage rule, days")
    strength_step: float = _setting(0.1, 0.0, 2.0, "strength added by each use")
    detail_step: float = _setting(0.1, 0.0, 2.0, "strength added by each detail a memory holds: each ten "
                                  "words of its observations beyond the first ten, each memory it is related to")
    promote_min_uses: float = _setting(2, 1, 10_000, "uses a memory needs before its score can promote it")
    grace_days: float = _setting(30, 0, 3_650, "never propose forgetting what was written or imported this many "
                                 "days ago or less")
    keep_used_days: float = _setting(30, 0, 3_650, "never propose forgetting what was used (or whose related "
                                     "memories were used) this many days ago or less")
    protected_types: tuple[str, ...] = field(default=PROTECTED_TYPES, metadata={
        "help": "entity types never proposed for forgetting, comma-separated (compared without case)"})

    def __post_init__(self) -> None:
        if not isinstance(self.decay, Decay):
            raise ValidationError(f"decay must be a decay model, got {self.decay!r}")
        types = self.protected_types
        if isinstance(types, str) or not isinstance(types, tuple | list) \
                or not all(isinstance(t, str) and t.strip() for t in types):
            raise ValidationError(f"protected_types must be a list of entity types, got {types!r}")
        object.__setattr__(self, "protected_types", tuple(dict.fromkeys(t.strip().lower() for t in types)))
        for f in dataclasses.fields(self):
            if "min" not in f.metadata:
                continue
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                    or not f.metadata["min"] <= value <= f.metadata["max"]:
                raise ValidationError(f"{f.name} must be a number from {f.metadata['min']} to {f.metadata['max']}, "
                                      f"got {value!r}")

    @staticmethod
    def keys() -> list[str]:
        """Every setting's key, as :meth:`to_dict` writes them (``limbic review --set KEY=VALUE``)."""
        names = [f.name for f in dataclasses.fields(RetentionParams)]
        at = names.index("decay")
        return [*names[:at], *Decay.keys(""), *names[at + 1:]]

    def to_dict(self) -> dict[str, Any]:
        """Every setting by key: the numbers, ``decay_model`` (the model's name), the decay parameters by their own
        names and ``protected_types`` (a list)."""
        flat = {**{f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "decay"},
                **self.decay.flat("")}
        return {**flat, "protected_types": list(self.protected_types)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RetentionParams:
        """From a mapping of :meth:`keys` (values may be text, as ``--set`` gives them); unknown keys raise
        :class:`ValidationError`, missing ones keep their defaults; ``decay_model`` may also be the number stored
        before models had names (:data:`limbic.core.search.decay.LEGACY_CODES`)."""
        known_keys(data, cls.keys(), "retention settings")
        data = dict(data)
        types = data.pop("protected_types", PROTECTED_TYPES)
        if isinstance(types, str):  # ``--set protected_types=person,preference``
            types = [t for t in types.split(",") if t.strip()]
        decay = Decay.from_flat(data, "", cls().decay)
        numbers = {f.name for f in dataclasses.fields(cls) if "min" in f.metadata}
        try:
            return cls(**{k: float(v) for k, v in data.items() if k in numbers}, decay=decay,
                       protected_types=tuple(types))
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"retention settings must be numbers: {exc}") from None


_TAKEN = PARAMETERS.keys() & {f.name for f in dataclasses.fields(RetentionParams)}
if _TAKEN:  # the settings keep a decay parameter under its own name: it must not be a setting's name too
    raise TypeError(f"decay parameters named like retention settings: {', '.join(sorted(_TAKEN))}")

MAX_STRENGTH = 2.0


def strength(base: np.ndarray, accesses: np.ndarray, details: np.ndarray, params: RetentionParams) -> np.ndarray:
    """A memory's strength after its uses and with what it holds: ``min(2, base + strength_step·accesses +
    detail_step·details)``, ``(n,) float64``; ``details`` counts the tens of words of its current observations beyond
    the first ten and the memories it is related to (a memory that holds more, tied to more, fades slower: each its
    own moment)."""
    return np.minimum(MAX_STRENGTH, np.asarray(base, dtype=np.float64)
                      + params.strength_step * np.asarray(accesses, dtype=np.float64)
                      + params.detail_step * np.asarray(details, dtype=np.float64))


def fading(hours: np.ndarray, params: RetentionParams) -> np.ndarray:
    """``f(Δt)`` of the chosen model at ``hours`` since the last use, ``(n,) float64``, at the rate
    ``ln 2 / half_life_hours``."""
    return params.decay.curve(hours, rate(params.half_life_hours))


def score(uses: np.ndarray, hours: np.ndarray, strengths: np.ndarray, params: RetentionParams) -> np.ndarray:
    """``n_use^β · f(Δt) · strength``, ``(n,) float64`` (Mnemex ``scoring_algorithm.md``, "Core Formula")."""
    return np.asarray(uses, dtype=np.float64) ** params.beta * fading(hours, params) \
        * np.asarray(strengths, dtype=np.float64)


def decide(scores: np.ndarray, uses: np.ndarray, recent_uses: np.ndarray,
           params: RetentionParams) -> list[tuple[str, str]]:
    """What each score suggests, with the reason: ``promote`` (high score, or frequent use within the window),
    ``forget`` (low score) or ``keep`` (Mnemex ``scoring_algorithm.md``, "Complete Decision Logic"). A memory
    just written scores 1 (one use, no decay), above τ_promote: its score promotes it only once it has been
    used ``promote_min_uses`` times (2: written and used again), as the worked example A keeps a memory used
    once six hours ago (score 0.944)."""
    out = []
    for value, used, recent in zip(np.asarray(scores).tolist(), np.asarray(uses).tolist(),
                                   np.asarray(recent_uses).tolist(), strict=True):
        if value >= params.tau_promote and used >= params.promote_min_uses:
            out.append((PROMOTE, f"used often and lately: {times(used)} in all"))
        elif recent >= params.promote_uses:
            out.append((PROMOTE, f"used {times(recent)} in the last {params.promote_window_days:g} days"))
        elif value < params.tau_forget:
            out.append((FORGET, "rarely used and not lately"))
        else:
            out.append((KEEP, "used lately enough"))
    return out


def hours_until_forgotten(uses: np.ndarray, hours: np.ndarray, strengths: np.ndarray, params: RetentionParams,
                          horizon_hours: float = 100 * 8_766.0) -> np.ndarray:
    """Hours from now until each score falls below ``τ_forget`` without another use, ``(n,) float64``, by bisection on
    the decay (as Mnemex's ``time_until_threshold``; all memories at once): 0 when below already, ``inf`` when it
    stays above within ``horizon_hours`` (100 years). Accurate to 0.1 % or a minute."""
    uses, hours, strengths = (np.asarray(a, dtype=np.float64) for a in (uses, hours, strengths))

    def above(extra: np.ndarray) -> np.ndarray:
        return score(uses, hours + extra, strengths, params) >= params.tau_forget

    low = np.zeros_like(hours)
    high = np.full_like(hours, horizon_hours)
    never = above(high)
    for _ in range(60):
        middle = (low + high) / 2.0
        up = above(middle)
        low, high = np.where(up, middle, low), np.where(up, high, middle)
        if np.all(high - low <= np.maximum(1e-3 * low, 1.0 / 60)):
            break
    return np.where(~above(np.zeros_like(hours)), 0.0, np.where(never, np.inf, high))


_UNITS = ((365.25 * 86_400.0, "year"), (30.44 * 86_400.0, "month"), (7 * 86_400.0, "week"), (86_400.0, "day"),
          (3_600.0, "hour"), (60.0, "minute"))


def duration(seconds: float) -> str:
    """A span of time as a person says it: ``"10 minutes"``, ``"3 days"``, ``"8 months"``, ``"2 years"`` (the
    largest unit that fits at least once, rounded down); under a minute ``"less than a minute"``."""
    for size, unit in _UNITS:
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return "less than a minute"


def times(count: float) -> str:
    """``once``, ``twice``, ``7 times``."""
    count = int(count)
    return "once" if count == 1 else "twice" if count == 2 else f"{count:,} times"
