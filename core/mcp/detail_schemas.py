"""The shapes of one entity in full (``get_entity``): observations with their history, relations both ways
(inverse relations named), reflections; the MCP output models and the functions that build them."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from limbic.core.curation.relation_types import inverse
from limbic.core.models import EntityDetail, Reflection, Relation, iso


class ObservationDetailOut(BaseModel):
    id: int
    content: str
    kind: str | None
    supersedes: int | None
    supersededAt: str | None
    expiresAt: str | None
    expired: bool = Field(default=False, description="Past its expiry: history, left out of reads and search")
    weight: float
    createdAt: str | None


class RelationDetailOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    id: int
    from_: str = Field(alias="from")
    to: str
    relationType: str
    context: str | None
    active: bool
    endedAt: str | None
    createdAt: str | None


class InverseRelationOut(BaseModel):
    """An incoming relation read from its target: ``from`` is the entity shown, ``relationType`` the inverse of
    the stored type ``inverseOf`` (``part_of`` for ``contains``; ``inverse_<type>`` when none is known)."""

    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    relationType: str
    inverseOf: str
    active: bool


class EntityDetailOut(BaseModel):
    id: int
    name: str
    entityType: str
    status: str
    createdAt: str | None
    updatedAt: str | None
    accessCount: int
    lastAccess: str | None
    accessDays: int
    impressionCount: int
    lastImpression: str | None
    degree: int
    observations: list[ObservationDetailOut]
    relations: list[RelationDetailOut]
    project: str | None = None
    strength: float = 1.0
    pinnedAt: str | None = None
    inverseRelations: list[InverseRelationOut] | None = None
    reflections: list[dict[str, Any]] | None = None


# --- converters ---------------------------------------------------------------------------------


def relation_detail(relation: Relation) -> dict[str, Any]:
    return {
        "id": relation.id,
        "from": relation.source,
        "to": relation.target,
        "relationType": relation.relation_type,
        "context": relation.context,
        "active": relation.active,
        "endedAt": iso(relation.ended_at),
        "createdAt": iso(relation.created_at),
    }


def reflection_out(reflection: Reflection) -> dict[str, Any]:
    """A reflection as the curation tools return it (``entityName`` or ``relation`` by its target type)."""
    relation = None
    if reflection.target_type == "relation":
        relation = {"from": reflection.entity, "to": reflection.target, "relationType": reflection.relation_type}
    return {"id": reflection.id, "targetType": reflection.target_type,
            "entityName": reflection.entity if reflection.target_type == "entity" else None, "relation": relation,
            "author": reflection.author, "content": reflection.content, "mood": reflection.mood,
            "createdAt": iso(reflection.created_at), "updatedAt": iso(reflection.updated_at)}


def inverse_relations(detail: EntityDetail) -> list[dict[str, Any]]:
    """The relations pointing at ``detail``'s entity, read from it (:func:`limbic.core.curation.relation_types.inverse`)."""
    name = detail.entity.name
    return [{"from": name, "to": r.source, "relationType": inverse(r.relation_type), "inverseOf": r.relation_type,
             "active": r.active} for r in detail.relations if r.target == name and r.source != name]


def detail_out(detail: EntityDetail, now: float | None = None) -> dict[str, Any]:
    """Everything about one entity: ids, ISO timestamps, access (use) and impression statistics, degree,
    the supersede chain, each observation's expiry and whether it has ``expired`` by ``now`` (UTC seconds, default
    the present), its project, strength and pin (docs/lifecycle.md)."""
    entity = detail.entity
    at = time.time() if now is None else now
    return {
        "id": entity.id,
        "name": entity.name,
        "entityType": entity.entity_type,
        "status": entity.status,
        "createdAt": iso(entity.created_at),
        "updatedAt": iso(entity.updated_at),
        "accessCount": detail.access_count,
        "lastAccess": iso(detail.last_access),
        "accessDays": detail.access_days,
        "impressionCount": detail.impression_count,
        "lastImpression": iso(detail.last_impression),
        "degree": detail.degree,
        "observations": [
            {
                "id": o.id,
                "content": o.content,
                "kind": o.kind,
                "supersedes": o.supersedes,
                "supersededAt": iso(o.superseded_at),
                "expiresAt": iso(o.expires_at),
                "expired": o.expires_at is not None and o.expires_at <= at,
                "weight": o.weight,
                "createdAt": iso(o.created_at),
            }
            for o in entity.observations
        ],
        "relations": [relation_detail(r) for r in detail.relations],
        "project": entity.project,
        "strength": entity.strength,
        "pinnedAt": iso(entity.pinned_at),
        "inverseRelations": inverse_relations(detail),
    }
