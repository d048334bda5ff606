"""Wire shapes of the MCP tools: pydantic input/output models and the converters from core values.

The nine reference tools keep the input schemas and result shapes of the npm server
``@modelcontextprotocol/server-memory`` (camelCase keys, ``from``/``to``/``relationType``), with our
extras as optional keys inside the same objects: ``status`` on entities, ``kind`` and ``supersedes``
on observation batches, ``context`` on relations. Field constraints mirror the
service limits of :mod:`limbic.core.validation`, so schema-level mistakes are refused before any
work is done; the service then checks the rest (empty names, control characters).
Timestamps are ISO 8601 UTC strings in every output.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from limbic.core.mcp.answers import trim_observations  # noqa: F401 - the tools' converters, in one place
from limbic.core.models import Entity, GraphStats, Observation, Relation
from limbic.core.search.presets import PRESETS
from limbic.core.validation import MAX_CONTEXT, MAX_ITEMS, MAX_KIND, MAX_NAME, MAX_OBSERVATION, MAX_QUERY

Name = Annotated[str, Field(max_length=MAX_NAME)]
Content = Annotated[str, Field(max_length=MAX_OBSERVATION)]
Kind = Annotated[str, Field(max_length=MAX_KIND)]
Query = Annotated[str, Field(max_length=MAX_QUERY)]
Status = Literal["active", "paused", "completed", "archived"]  # limbic.core.models.STATUSES (a test checks)
DEFAULT_STATUS = "active"
PresetName = Annotated[str, Field(
    json_schema_extra={"enum": list(PRESETS)},
    description="Rank with this preset instead of the saved parameters",
)]


def _items(description: str) -> Any:
    """The ``Field`` of a list input: its description and the item limit."""
    return Field(description=description, max_length=MAX_ITEMS)


# --- inputs -------------------------------------------------------------------------------------


class StrictIn(BaseModel):
    """Base of every input object: an unknown key (a typo such as ``stauts``) is refused, as the
    reference server's schemas say (``additionalProperties: false``)."""

    model_config = ConfigDict(extra="forbid")


# Descriptions of the optional extras are short: every agent reads them on every turn (docs/mcp.md "Tool profiles").
ExpiresAt = Annotated[str | None, Field(max_length=64, description="ISO 8601 date-time; then no longer returned")]
TtlDays = Annotated[float | None, Field(gt=0, le=36_500, description="Expire in this many days")]
Weight = Annotated[float | None, Field(ge=0.1, le=1.0, description="Confidence (default 1; 0.5 tentative)")]


class EntityIn(StrictIn):
    name: Annotated[Name, Field(description="The name of the entity")]
    entityType: Annotated[Name, Field(description="The type of the entity")]
    observations: Annotated[list[Content], _items("An array of observation contents associated with the entity")]
    status: Annotated[Status | None, Field(description="Default active")] = None
    expiresAt: ExpiresAt = None
    ttlDays: TtlDays = None
    weight: Weight = None
    project: Annotated[str | None, Field(
        max_length=MAX_NAME, description="Its project (\"\": global; default: the server's)")] = None


class RelationIn(StrictIn):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    from_: Annotated[Name, Field(alias="from", description="The name of the entity where the relation starts")]
    to: Annotated[Name, Field(description="The name of the entity where the relation ends")]
    relationType: Annotated[Name, Field(description="The type of the relation")]
    context: Annotated[
        str | None, Field(description="Why or where it holds", max_length=MAX_CONTEXT)
    ] = None


class ObservationBatchIn(StrictIn):
    entityName: Annotated[Name, Field(description="The name of the entity to add the observations to")]
    contents: Annotated[list[Content], _items("An array of observation contents to add")]
    kind: Annotated[
        str | None,
        Field(description="e.g. fact, decision, preference, event", max_length=MAX_KIND),
    ] = None
    supersedes: Annotated[
        Content | None,
        Field(description="A current observation the single content replaces (kept as history)"),
    ] = None
    expiresAt: ExpiresAt = None
    ttlDays: TtlDays = None
    weight: Weight = None


class DeletionIn(StrictIn):
    entityName: Annotated[Name, Field(description="The name of the entity containing the observations")]
    observations: Annotated[list[Content], _items("An array of observations to delete")]


# --- outputs ------------------------------------------------------------------------------------


class EntityOut(BaseModel):
    name: str
    entityType: str
    observations: list[str]
    status: str | None = None
    omittedObservations: int | None = None
    supersededObservations: list[str] | None = None
    reflections: list[dict[str, Any]] | None = None


class RelationOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    relationType: str
    context: str | None = None


class EntitiesOut(BaseModel):
    entities: list[EntityOut]
    notes: list[str] | None = None


class StatusOut(BaseModel):
    """``set_status``: the entities as they are now (in the order named) and the decision's id in the log."""

    entities: list[EntityOut]
    decision: int = Field(description="The decision's id in the log (undo_decision takes it back)")


class RelationsOut(BaseModel):
    relations: list[RelationOut]


class AddedObservationsOut(BaseModel):
    entityName: str
    addedObservations: list[str]


class AddObservationsOut(BaseModel):
    """``results`` as the reference server's; ``conflicts`` (only when some) the current observations the new ones
    contradict (docs/lifecycle.md "Contradictions"), or ``"unavailable"`` when the observations were stored but
    their conflicts could not be read (the database went away after the commit); ``pendingConflictChecks``
    (only when some) new observations whose check waits for their vectors (its conflicts go to the review
    queue); ``notes`` (only when some) what a person should know, e.g. an ``expiresAt`` already past."""

    results: list[AddedObservationsOut]
    conflicts: list[dict[str, Any]] | Literal["unavailable"] | None = None
    pendingConflictChecks: int | None = None
    notes: list[str] | None = None


class SuccessOut(BaseModel):
    success: bool
    message: str


class GraphOut(BaseModel):
    """``read_graph``: ``entities`` and ``relations`` (modes full and page), ``names`` (mode names),
    ``summary`` (mode summary); ``offset``, ``limit``, ``total`` for the paged modes."""

    entities: list[EntityOut] | None = None
    relations: list[RelationOut] | None = None
    names: list[str] | None = None
    summary: dict[str, Any] | None = None
    offset: int | None = None
    limit: int | None = None
    total: int | None = None


class NodesOut(BaseModel):
    """``search_nodes`` / ``open_nodes``: the matched entities and every relation with at least one
    endpoint among them; ``offset``, ``limit``, ``total`` only when ``search_nodes`` was paged."""

    entities: list[EntityOut]
    relations: list[RelationOut]
    offset: int | None = None
    limit: int | None = None
    total: int | None = None


class SearchOut(BaseModel):
    """``search_semantic``: results in the shape docs/mcp.md gives; ``mode`` hybrid / semantic / fts_only;
    ``model`` the embedding model used (None when FTS-only); ``timings`` milliseconds per stage;
    ``searchId`` the logged search, to name in ``mark_used`` (None when the search was not logged);
    ``pendingVectors`` (only when > 0) entities whose newest texts are not embedded yet: found by keyword only;
    ``dates`` (only when the query names one) the days and months it was read as naming, which lift the
    memories written then; ``knn`` (only when a model ran) ``exact``, or ``graph`` when a large memory's
    HNSW graph proposed the semantic candidates (their scores are still exact)."""

    results: list[dict[str, Any]]
    mode: str
    model: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    searchId: int | None = None
    pendingVectors: int | None = None
    dates: list[str] | None = None
    knn: str | None = None


class MarkUsedOut(BaseModel):
    """``mark_used``: the entities recorded as used (duplicates removed)."""

    used: list[str]


def _current(observation: Observation, now: float) -> bool:
    return observation.superseded_at is None and (observation.expires_at is None or observation.expires_at > now)


def entity_out(entity: Entity, now: float | None = None) -> dict[str, Any]:
    """Reference entity shape; ``status`` only when it is not the default ``active`` (so that results are
    byte-identical to the reference server's while the extension is unused). Observations are the current
    ones (not superseded, not expired)."""
    now = time.time() if now is None else now
    out: dict[str, Any] = {
        "name": entity.name,
        "entityType": entity.entity_type,
        "observations": [o.content for o in entity.observations if _current(o, now)],
    }
    if entity.status != DEFAULT_STATUS:
        out["status"] = entity.status
    return out


def relation_out(relation: Relation) -> dict[str, Any]:
    """Reference relation shape; ``context`` only when the relation has one."""
    out: dict[str, Any] = {"from": relation.source, "to": relation.target, "relationType": relation.relation_type}
    if relation.context:
        out["context"] = relation.context
    return out


def graph_out(entities: tuple[Entity, ...], relations: tuple[Relation, ...], now: float | None = None) -> dict[str, Any]:
    """``{entities, relations}`` as the reference server returns them (active relations only); observations
    current at ``now`` (UTC seconds, default the present; an ``asOf`` read passes its date)."""
    now = time.time() if now is None else now
    return {
        "entities": [entity_out(e, now) for e in entities],
        "relations": [relation_out(r) for r in relations if r.active],
    }


def filtered_entity_out(entity: Entity, kinds: list[str] | None, include_superseded: bool,
                        now: float | None = None) -> dict[str, Any]:
    """:func:`entity_out` with only the observations of ``kinds`` (case-insensitive; an observation without a
    kind has none), and with ``include_superseded`` the superseded ones (history, oldest first) as
    ``supersededObservations``."""
    now = time.time() if now is None else now
    out = entity_out(entity, now)
    wanted = None if kinds is None else {k.strip().lower() for k in kinds}

    def kept(o: Observation) -> bool:
        return wanted is None or (o.kind or "").lower() in wanted

    if wanted is not None:
        out["observations"] = [o.content for o in entity.observations if _current(o, now) and kept(o)]
    if include_superseded:
        out["supersededObservations"] = [o.content for o in entity.observations
                                         if o.superseded_at is not None and kept(o)]
    return out



def stats_out(stats: GraphStats) -> dict[str, Any]:
    return {
        "entities": stats.entities,
        "relations": stats.relations,
        "observations": stats.observations,
        "supersededObservations": stats.superseded_observations,
        "entityTypes": dict(stats.entity_types),
        "statuses": dict(stats.statuses),
        "embeddedEntities": stats.embedded_entities,
        "embeddingModel": stats.embedding_model,
    }
