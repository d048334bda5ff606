"""The lifecycle side of the entity editor: an observation's state (live, expiring, expired, superseded), its
weight, and the form fields that set them (docs/lifecycle.md "Expiry", "Confidence")."""

from __future__ import annotations

import time

from limbic.core.errors import ValidationError
from limbic.core.lifecycle.confidence import checked_weight
from limbic.core.lifecycle.expiry import expiry_time
from limbic.core.models import Entity, Observation, iso
from limbic.gui.edit.forms import Field


def state_text(observation: Observation, now: float) -> str:
    """``superseded``, ``expired``, ``live · expires <date>`` or ``live``."""
    if observation.superseded_at is not None:
        return "superseded"
    if observation.expired(now):
        return "expired"
    if observation.expires_at is not None:
        return f"live · expires {(iso(observation.expires_at) or '')[:16].replace('T', ' ')}"
    return "live"


def weight_text(observation: Observation) -> str:
    return f"{observation.weight:g}"


def title_suffix(entity: Entity) -> str:
    """What the editor's title adds for the lifecycle: the project and the pin, when set."""
    parts = [f" · project {entity.project}" if entity.project else ""]
    if entity.pinned_at is not None:
        parts.append(" · 📌 pinned")
    return "".join(parts)


def term_fields(observation: Observation | None = None) -> list[Field]:
    """The form fields of an observation's terms: expiry (ISO 8601 date or date-time, or a number of days from
    now) and weight (0.1..1.0), filled from ``observation`` when given."""
    expires = "" if observation is None or observation.expires_at is None else iso(observation.expires_at) or ""
    weight = "1" if observation is None else weight_text(observation)
    return [Field("expires", "Expires (ISO date, or days from now)", expires, required=False),
            Field("weight", "Weight (confidence 0.1–1)", weight, required=False)]


def read_terms(answer: dict[str, str], now: float | None = None) -> tuple[float | None, float]:
    """``(expires_at, weight)`` from the answers of :func:`term_fields` (UTC seconds or ``None``; weight 1.0 when
    left empty).

    Raises:
        ValidationError: an unreadable expiry or weight (the message says what is expected).
    """
    now = time.time() if now is None else now
    text = answer.get("expires", "").strip()
    try:
        days = float(text) if text else None
    except ValueError:
        days = None
    expires = expiry_time(None, days, now) if days is not None else expiry_time(text or None, None, now)
    weight_text_ = answer.get("weight", "").strip()
    try:
        weight = float(weight_text_) if weight_text_ else 1.0
    except ValueError:
        raise ValidationError(f"weight must be a number from 0.1 to 1, got {weight_text_!r}") from None
    return expires, checked_weight(weight)
