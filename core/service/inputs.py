"""Validated, normalised copies of the service's input values, and the shared "add observations" step."""

from __future__ import annotations

from collections.abc import Sequence

from limbic.core import validation as check
from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.lifecycle.confidence import SUPERSEDED_WEIGHT
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.store import Connection, scope, writes


def prepare_observation(item: ObservationInput | str) -> ObservationInput:
    """Validate one observation (a plain string is accepted as its content)."""
    if isinstance(item, str):
        item = ObservationInput(item)
    if not isinstance(item, ObservationInput):
        raise ValidationError(f"an observation must be text, got {type(item).__name__}")
    weight = item.weight
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0.0 <= weight <= 10.0:
        raise ValidationError(f"observation weight must be a number in [0, 10], got {weight!r}")
    return ObservationInput(
        content=check.observation(item.content),
        kind=check.kind(item.kind),
        supersedes=None if item.supersedes is None else check.observation(item.supersedes),
        created_at=check.timestamp(item.created_at, "observation createdAt"),
        expires_at=check.timestamp(item.expires_at, "observation expiresAt"),
        weight=float(weight),
    )


def prepare_entity(item: EntityInput) -> EntityInput:
    """Validate an entity input: name, optional type and status, observations, timestamps."""
    if not isinstance(item, EntityInput):
        raise ValidationError(f"expected an entity, got {type(item).__name__}")
    observations = tuple(prepare_observation(o) for o in item.observations)
    check.count(observations, f"observations for {item.name!r}")
    return EntityInput(
        name=check.name(item.name),
        entity_type=None if item.entity_type is None else check.label(item.entity_type, "entity type"),
        observations=observations,
        status=None if item.status is None else check.status(item.status),
        created_at=check.timestamp(item.created_at, "createdAt"),
        updated_at=check.timestamp(item.updated_at, "updatedAt"),
        project=None if item.project is None else check.label(item.project, "project"),
    )


def prepare_relation(item: RelationInput) -> RelationInput:
    """Validate a relation input: endpoint names, type, optional context and creation time."""
    if not isinstance(item, RelationInput):
        raise ValidationError(f"expected a relation, got {type(item).__name__}")
    return RelationInput(
        source=check.name(item.source, "relation source"),
        target=check.name(item.target, "relation target"),
        relation_type=check.label(item.relation_type, "relation type"),
        context=check.context(item.context),
        created_at=check.timestamp(item.created_at, "relation createdAt"),
    )


def add_observations(
    conn: Connection, entity_id: int, entity_name: str, observations: Sequence[ObservationInput], now: float
) -> list[str]:
    """Insert validated observations of one entity; returns the contents actually added.

    Exact duplicates are skipped. ``supersedes`` names the content of a live observation of the same
    entity, which is marked superseded with weight 0.1 (mememory "Scoring & Recall", "Memory Weight"); an
    unknown one raises :class:`NotFoundError`.
    """
    added: list[str] = []
    for obs in observations:
        previous = None
        if obs.supersedes is not None:
            previous = writes.observation_id(conn, entity_id, obs.supersedes)
            if previous is None:
                raise NotFoundError(
                    f"{entity_name!r} has no live observation {obs.supersedes[:80]!r} to supersede", [obs.supersedes]
                )
        new_id = writes.insert_observation(
            conn, entity_id, obs.content, kind=obs.kind, supersedes=previous,
            created_at=obs.created_at or now, expires_at=obs.expires_at, weight=obs.weight,
        )
        if new_id is None:
            continue
        if previous is not None:
            writes.mark_superseded(conn, previous, obs.created_at or now, SUPERSEDED_WEIGHT)
        added.append(obs.content)
    return added


def view_args(project: str | None, as_of: float | None) -> tuple[str | None, float | None]:
    """Validated view arguments: a project name (or ``None``) narrowed by the project the call is bound to
    (:func:`limbic.core.store.scope.narrow`: the binding when none is asked, a refusal for another one), a time
    in UTC seconds (or ``None``)."""
    return (scope.narrow(None if project is None else check.label(project, "project")),
            check.timestamp(as_of, "asOf"))
