"""Wire shapes of the curation tools (:mod:`limbic.core.mcp.curation_tools`): pydantic output models, published
as the tools' output schemas, and converters from core values. camelCase keys, ISO 8601 UTC times."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from limbic.core.io.report import FileReport


class MemberOut(BaseModel):
    id: int
    entityName: str
    content: str
    kind: str | None
    createdAt: str | None


class PairOut(BaseModel):
    a: int
    b: int
    similarity: float


class ClusterOut(BaseModel):
    """``relation``: duplicate (one fact said twice) or "more specific"; ``keeps``: the member a merge keeps,
    the one that holds every value, name, path, number and qualifier of the others — null when none does, and
    then ``merged`` is one text that keeps them all (for approval; null when a member keeps all); ``options``:
    the ways to settle it, the suggested one first (``keep`` when no member keeps every detail); ``reason`` in
    plain words."""

    key: str
    relation: str
    reason: str
    size: int
    best: float
    lowest: float
    entities: list[str]
    keeps: str | None
    merged: str | None
    options: list[str]
    members: list[MemberOut]
    pairs: list[PairOut]


class SharedFactOut(BaseModel):
    text: str
    entities: list[str]
    entityCount: int
    reason: str


class SharedFactsOut(BaseModel):
    """Texts said alike of several entities: each entity's own field or fact, never merged."""

    total: int
    items: list[SharedFactOut]


class DuplicatesOut(BaseModel):
    """``find_duplicate_observations``: duplicate clusters most similar first, then "more specific" pairs
    (members oldest first, at most 25 listed, ``size`` counts all), how many in all (``total``), shared facts,
    the observations compared, the pairs of one entity at or above ``threshold`` (``pairsAtThreshold``: each was
    compared by its words; those in no cluster differ in a field, a value, a state or wording) and the entities
    still waiting for vectors (``pendingVectors``); ``complete`` is false (with a ``note``) when some were not
    compared yet."""

    threshold: float
    total: int
    complete: bool
    clusters: list[ClusterOut]
    sharedFacts: SharedFactsOut
    compared: int
    pairsAtThreshold: int
    pendingVectors: int
    model: str | None
    seconds: float
    note: str | None = None


class MigrateOut(BaseModel):
    """``migrate``: what the import of one file did (a second import of the same file adds nothing):
    counts, the entities created (``created``; ``placeholders`` among them were made for names the file only
    referred to) and the lines ``skipped`` with why."""

    path: str
    format: str
    lines: int
    entitiesCreated: int
    entitiesUpdated: int
    entitiesUnchanged: int
    observationsAdded: int
    relationsCreated: int
    relationsExisting: int
    created: list[str]
    placeholders: list[str]
    skipped: list[dict[str, Any]]
    addedNothing: bool
    seconds: float


def migrate_out(report: FileReport) -> dict[str, Any]:
    return {"path": report.path, "format": report.format, "lines": report.lines,
            "entitiesCreated": len(report.entities_created), "entitiesUpdated": report.entities_updated,
            "entitiesUnchanged": report.entities_unchanged, "observationsAdded": report.observations_added,
            "relationsCreated": report.relations_created, "relationsExisting": report.relations_existing,
            "created": list(report.entities_created), "placeholders": [e.name or "" for e in report.placeholders],
            "skipped": [e.to_dict() for e in report.skipped], "addedNothing": report.added_nothing,
            "seconds": round(report.seconds, 3)}


class RelationRef(BaseModel):
    """A relation named by its ends and type (``from`` is a Python keyword: ``from_`` with an alias)."""

    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    relationType: str


class ReflectionOut(BaseModel):
    """A reflection: ``targetType`` entity (``entityName``), relation (``relation``) or global."""

    id: int
    targetType: str
    entityName: str | None = None
    relation: RelationRef | None = None
    author: str
    content: str
    mood: str | None
    createdAt: str | None
    updatedAt: str | None


class FoundReflectionOut(ReflectionOut):
    """A search result: the fused ``score`` (RRF), its ranks by keyword and by meaning (None when absent from
    one) and its cosine ``similarity`` to the query (None without a model)."""

    score: float
    textRank: int | None
    vectorRank: int | None
    similarity: float | None


class ReflectionsOut(BaseModel):
    """``search_reflections``: best first; ``mode`` hybrid, or fts_only without a model."""

    results: list[FoundReflectionOut]
    mode: str


class SplitCandidateOut(BaseModel):
    entityName: str
    entityType: str
    observationCount: int
    threshold: int
    score: float


class SplitCandidatesOut(BaseModel):
    """``find_split_candidates``: entities over their type's threshold, most over first; ``total`` counts all;
    ``thresholds`` the thresholds used by type (``*``: any other type)."""

    total: int
    candidates: list[SplitCandidateOut]
    thresholds: dict[str, int]


class TopicOut(BaseModel):
    terms: list[str]
    size: int
    observations: list[str]


class SplitOfEntity(BaseModel):
    """An entity's live observations against its type's threshold, and how its topics were found (``method``,
    with its silhouette ``quality``, −1..1); ``suggested``: the split is worth suggesting (two topics or more,
    quality at or above the floor, docs/curation.md "Entity splitting")."""

    entityName: str
    entityType: str
    observationCount: int
    threshold: int
    needsSplit: bool
    suggested: bool
    method: str
    quality: float


class SplitAnalysisOut(SplitOfEntity):
    """``analyze_entity_split``: :class:`SplitOfEntity`, the topics and the observations that say what the entity
    itself is (they stay on it and are not clustered)."""

    topics: list[TopicOut]
    stayingObservations: list[str]


class SplitPartOut(BaseModel):
    name: str
    entityType: str
    observations: list[str]
    relations: list[RelationRef]
    terms: list[str]


class SplitProposalOut(SplitOfEntity):
    """``propose_entity_split``: proposed ``parts`` (change names, move observations, then pass them to
    execute_entity_split), what stays on the entity, and the relations the split creates."""

    parts: list[SplitPartOut]
    stayingObservations: list[str]
    stayingRelations: list[RelationRef]
    relationsToCreate: list[RelationRef]


class SplitDoneOut(BaseModel):
    """``execute_entity_split``: the entities created, the observations and relations moved to them and the
    relations created between them and the original."""

    entityName: str
    created: list[str]
    decision: int = Field(description="The decision's id in the log (undo_decision takes it back)")
    movedObservations: int
    movedRelations: int
    relationsCreated: list[RelationRef]


class DecisionOut(BaseModel):
    """One thing to decide: ``kind``, a stable ``key``, a one-line ``title``, the entities concerned
    (``subjects``), the ``evidence`` (texts side by side, similarity, counts, …), the ``options`` (the suggested
    one first) and when it arose (``createdAt``, ISO 8601, None when unknown)."""

    kind: str
    key: str
    title: str
    subjects: list[str]
    evidence: dict[str, Any]
    options: list[str]
    createdAt: str | None
    worth: float = 0.0
    family: str | None = None


class FamilyOut(BaseModel):
    """Alike decisions of one kind: settle them all with one of ``options`` by their ``keys``."""

    family: str
    count: int
    title: str
    options: list[str]
    keys: list[str]


class SectionOut(BaseModel):
    """``rows``: lines the queue needs for all ``total`` decisions (a family is one line)."""

    kind: str
    total: int
    rows: int = 0
    items: list[DecisionOut]
    families: list[FamilyOut] = []


class ReportOut(BaseModel):
    """``consolidation_report``: one section per kind of decision (its total, first items most worth first, and
    families of alike items) and the totals; ``complete`` is false (with a ``note``) while vectors of recent
    writes are still being computed."""

    sections: list[SectionOut]
    totals: dict[str, int]
    complete: bool = True
    seconds: float
    note: str | None = None
    at: str | None = Field(default=None, description="The moment the lifecycle's kinds were read at, when asked")
