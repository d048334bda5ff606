"""The lifecycle's optional keys of the reference tools' inputs, turned into core values (docs/lifecycle.md).

``create_entities`` entities and ``add_observations`` batches may carry ``expiresAt`` (ISO 8601) or
``ttlDays`` and ``weight`` (confidence), applied to each of their contents; ``add_observations`` batches may also carry ``kind`` and
``supersedes``. Unused, they change nothing: the inputs and results are the reference server's. An ``expiresAt``
already past is accepted (the observation is stored expired: history, left out of reads) and the result says so
in ``notes`` (:func:`past_expiry_notes`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from limbic.core.lifecycle.expiry import expiry_time
from limbic.core.models import ObservationInput, iso


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


def past_expiry_notes(batches: Sequence[tuple[str, Sequence[ObservationInput]]], now: float | None = None) -> list[str]:
    """One line per entity of ``batches`` (``(name, observations)``) given observations whose expiry is not after
    ``now`` (UTC seconds, default the present): they were stored already expired."""
    at = time.time() if now is None else now
    notes = []
    for name, inputs in batches:
        past = [o for o in inputs if o.expires_at is not None and o.expires_at <= at]
        if past:
            count = "1 observation" if len(past) == 1 else f"{len(past)} observations"
            notes.append(f"{name}: expiresAt {(iso(past[0].expires_at) or '')[:19]}Z is in the past; {count} "
                         "stored already expired (kept as history, left out of reads and search)")
    return notes
