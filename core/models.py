"""Plain, immutable values that cross the core's boundary (service → GUI, CLI, MCP).

Timestamps are UTC unix seconds (``float``); :func:`iso` turns them into ISO 8601 for outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

STATUSES = ("active", "paused", "completed", "archived")
STATUS_ALIASES = {
    "activo": "active", "activa": "active",
    "pausado": "paused", "pausada": "paused",
    "completado": "completed", "completada": "completed",
    "archivado": "archived", "archivada": "archived",
}

# Change origins (who made a change): the GUI, an MCP client (``mcp:NAME`` over HTTP with the token NAME,
# ``stdio`` over stdio), the CLI, an import, or another process.
ORIGINS = ("gui", "mcp", "stdio", "cli", "import", "system", "external")


def iso(ts: float | None) -> str | None:
    """UTC unix seconds → ISO 8601 with a ``Z`` suffix (``None`` stays ``None``)."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Observation:
    """One fact about an entity. ``superseded_at`` is set when a newer observation replaced it."""

    id: int
    entity_id: int
    content: str
    kind: str | None
    supersedes: int | None
    superseded_at: float | None
    expires_at: float | None
    weight: float
    created_at: float

    @property
    def live(self) -> bool:
        """True while not superseded (expiry is judged by the caller, who knows "now": :meth:`current`)."""
        return self.superseded_at is None

    def expired(self, now: float) -> bool:
        """True once its expiry time has passed at ``now`` (UTC seconds)."""
        return self.expires_at is not None and self.expires_at <= now

    def current(self, now: float) -> bool:
        """Live and not expired at ``now`` (UTC seconds): what search, ``open_nodes`` and the index hold."""
        return self.superseded_at is None and not self.expired(now)


@dataclass(frozen=True, slots=True)
class Entity:
    """A node of the memory graph with its observations (all of them, superseded ones included).

    ``project``: the project it belongs to (``None``: global, seen from every project); ``strength``: the
    multiplier of its forget/promote score (0..2, docs/lifecycle.md); ``pinned_at``: when it was pinned
    (promoted to long-term memory; UTC seconds, ``None`` when not pinned).
    """

    id: int
    name: str
    entity_type: str
    status: str
    created_at: float
    updated_at: float
    observations: tuple[Observation, ...] = ()
    project: str | None = None
    strength: float = 1.0
    pinned_at: float | None = None

    @property
    def live_observations(self) -> tuple[Observation, ...]:
        return tuple(o for o in self.observations if o.superseded_at is None)


@dataclass(frozen=True, slots=True)
class Relation:
    """A typed, directed edge ``source -[relation_type]-> target`` between two entity names."""

    id: int
    source: str
    target: str
    relation_type: str
    context: str | None
    active: bool
    ended_at: float | None
    created_at: float
    source_id: int = 0
    target_id: int = 0


@dataclass(frozen=True, slots=True)
class Graph:
    """A set of entities and the relations among or around them."""

    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]


@dataclass(frozen=True, slots=True)
class GraphPage:
    """One page of the graph ordered by entity id; ``relations`` touch at least one entity of the page."""

    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]
    offset: int
    limit: int
    total_entities: int


@dataclass(frozen=True, slots=True)
class GraphStats:
    """Counts of the stored graph; ``observations`` counts live ones, ``superseded_observations`` the rest."""

    entities: int
    relations: int
    observations: int
    superseded_observations: int
    entity_types: dict[str, int]
    statuses: dict[str, int]
    embedded_entities: int
    embedding_model: str | None


@dataclass(frozen=True, slots=True)
class EntityDetail:
    """Everything known about one entity: the entity, access statistics, degree and its relations.

    Accesses are uses (opened, read, marked used); impressions are appearances in search results
    (``last_access`` and ``last_impression`` are UTC seconds, ``None`` when there was none).
    """

    entity: Entity
    access_count: int
    last_access: float | None
    access_days: int
    degree: int
    relations: tuple[Relation, ...]
    impression_count: int = 0
    last_impression: float | None = None


# --- inputs -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ObservationInput:
    """An observation to add. ``supersedes`` names the content of a live observation it replaces."""

    content: str
    kind: str | None = None
    supersedes: str | None = None
    created_at: float | None = None
    expires_at: float | None = None
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class EntityInput:
    """An entity to create or upsert. ``None`` type/status on an upsert keeps the stored values; ``project``
    names the project of a new entity (``None``: global; an upsert keeps an existing entity's project)."""

    name: str
    entity_type: str | None = None
    observations: tuple[ObservationInput, ...] = ()
    status: str | None = None
    created_at: float | None = None
    updated_at: float | None = None
    project: str | None = None


@dataclass(frozen=True, slots=True)
class RelationInput:
    """A relation to create between two existing entity names."""

    source: str
    target: str
    relation_type: str
    context: str | None = None
    created_at: float | None = None


@dataclass(frozen=True, slots=True)
class Changes:
    """What one committed mutation touched; sent to subscribers after commit (Anki's ``OpChanges``).

    ``change_id`` is the row id in the ``changes`` log; ``origin`` one of :data:`ORIGINS`.
    """

    change_id: int
    origin: str
    op: str
    entity_ids: frozenset[int] = field(default_factory=frozenset)
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    """One step of an agent's timeline (``MemoryService.history.timeline``).

    ``kind``: ``search`` (``detail`` the query, ``entities`` what it showed, by rank), ``opened`` (``open_nodes``,
    ``get_entity``), ``used`` (``mark_used``, the app's *Mark as useful*) — each with ``entities`` the ones it
    opened or used and ``searches`` the ids of the logged searches they answered (empty: no search showed them
    first) — or ``wrote``
    (``detail`` the operation, ``entities`` what it touched). ``at``: UTC seconds; ``origin`` as stored (``mcp:NAME``
    for the MCP token NAME); ``entity_ids`` beside ``entities`` (a deleted entity is named ``#ID``); ``searches``
    holds a search's own id; ``mode`` a search's (``hybrid``, ``semantic``, ``fts_only``), else ``""``."""

    at: float
    origin: str
    kind: str
    detail: str
    entities: tuple[str, ...]
    entity_ids: tuple[int, ...]
    searches: tuple[int, ...] = ()
    mode: str = ""


@dataclass(frozen=True, slots=True)
class Reflection:
    """What someone thought about a memory, in prose. ``target_type``: ``entity`` (``entity`` names it),
    ``relation`` (``entity -[relation_type]-> target``) or ``global`` (no target). ``author`` and ``mood`` are
    free text (``mood`` may be None); times are UTC seconds. ``entity_id``/``target_id`` are the entities' ids."""

    id: int
    target_type: str
    entity: str | None
    target: str | None
    relation_type: str | None
    author: str
    content: str
    mood: str | None
    created_at: float
    updated_at: float
    entity_id: int | None = None
    target_id: int | None = None
