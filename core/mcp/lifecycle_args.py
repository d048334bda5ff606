"""The lifecycle's optional keys of the reference tools' inputs, turned into core values (docs/lifecycle.md).

``create_entities`` entities and ``add_observations`` batches may carry ``expiresAt`` (ISO 8601) or
``ttlDays`` and ``weight`` (confidence), applied to each of their contents; ``add_observations`` batches may also carry ``kind`` and
``supersedes``. Unused, they change nothing: the inputs and results are the reference server's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from limbic.core.lifecycle.expiry import expiry_time
from limbic.core.models import ObservationInput


class _Extras(Protocol):
    expiresAt: str | None
    ttlDays: float | None
    weight: float | None


def observation_inputs(contents: Sequence[str], extras: _Extras, now: float | None = None) -> tuple[ObservationInput, ...]:
    """One :class:`ObservationInput` per content with the optional keys of ``extras`` (an ``EntityIn`` or an
    ``ObservationBatchIn``): its expiry from ``expiresAt`` or ``ttlDays`` counted from ``now`` (UTC seconds,
    default the present), its ``weight`` (1.0 when absent), and ``kind`` and ``supersedes`` when it has them.

    Raises:
        ValidationError: both ``expiresAt`` and ``ttlDays``, or a malformed one.
    """
    expires = expiry_time(extras.expiresAt, extras.ttlDays, time.time() if now is None else now)
    kind = getattr(extras, "kind", None)
    supersedes = getattr(extras, "supersedes", None)
    weight = 1.0 if extras.weight is None else extras.weight
    return tuple(ObservationInput(content=c, kind=kind, supersedes=supersedes, expires_at=expires, weight=weight)
                 for c in contents)


def entity_project(requested: str | None, default: str | None) -> str | None:
    """The project of a new entity: the one it names (``""``: global), else the server's default (``None``:
    global)."""
    if requested is None:
        return default
    return requested or None
