"""Entity splitting of :class:`~limbic.core.service.MemoryService`: candidates (entities over their type's
threshold), proposals (topics of their observations as sub-entities, :mod:`limbic.core.curation.splitting`),
and the split itself, one transaction (undone by :class:`~limbic.core.service.curation_edits.SplitEntity`).

The manager :class:`Splits` (``memory.splits``). A proposal is a plain value a person may change before executing it: rename a
part, move observations between parts, leave some on the original. Executing creates each part with its
observations (kind, times, weight and expiry kept), removes them from the original, relates the original and
each part (``contains`` / ``part_of``, or mcp-memory's ``contiene`` / ``parte_de``) and moves the relations
that belong to a part.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from limbic.core import validation as check
from limbic.core.curation import relation_types, splitting
from limbic.core.errors import ConflictError, NotFoundError, ValidationError
from limbic.core.models import Entity, EntityInput, ObservationInput, RelationInput
from limbic.core.store import curation_reads, reads, scope, vec_rows, vector_meta, views
from limbic.core.store.connection import Connection
from limbic.core.store.schema import OBSERVATION_VECTOR_TABLE, put_setting
from limbic.core.validation import MAX_ITEMS

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService

log = logging.getLogger(__name__)

THRESHOLDS_KEY = "split_thresholds"
QUALITIES_KEY = "split_qualities"
"""Setting keeping each split candidate's proposal quality under a digest of its live observations
(:meth:`Splits.suggested_proposals`)."""
SPLIT_RELATIONS = {"contains": (relation_types.CONTAINS, relation_types.PART_OF), "contiene": ("contiene", "parte_de")}


@dataclass(frozen=True, slots=True)
class SplitCandidate:
    """An entity holding more live observations than its type's ``threshold``; ``score`` = observations / threshold."""

    name: str
    entity_type: str
    observations: int
    threshold: int
    id: int = 0

    @property
    def score(self) -> float:
        return self.observations / self.threshold

    def to_dict(self) -> dict[str, Any]:
        return {"entityName": self.name, "entityType": self.entity_type, "observationCount": self.observations,
                "threshold": self.threshold, "score": round(self.score, 3)}


def relation_dict(r: RelationInput) -> dict[str, str]:
    return {"from": r.source, "to": r.target, "relationType": r.relation_type}


@dataclass(frozen=True, slots=True)
class SplitPart:
    """A proposed sub-entity: its ``name`` and type, the observations (texts) it takes, the relations of the
    original it takes over (as stored: the original is their source or target) and the ``terms`` it is named from."""

    name: str
    entity_type: str
    observations: tuple[str, ...]
    relations: tuple[RelationInput, ...] = ()
    terms: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "entityType": self.entity_type, "observations": list(self.observations),
                "relations": [relation_dict(r) for r in self.relations], "terms": list(self.terms)}


@dataclass(frozen=True, slots=True)
class SplitProposal:
    """How to split ``entity``: its live ``observation_count`` against its ``threshold`` (``needs_split`` when
    over), the ``parts``, the observations and relations that stay on it, the ``method`` that found the topics
    and their silhouette ``quality``."""

    entity: str
    entity_type: str
    observation_count: int
    threshold: int
    parts: tuple[SplitPart, ...]
    staying: tuple[str, ...] = ()
    staying_relations: tuple[RelationInput, ...] = ()
    method: str = splitting.DEFAULT_METHOD
    quality: float = 0.0

    @property
    def needs_split(self) -> bool:
        return self.observation_count > self.threshold

    @property
    def suggested(self) -> bool:
        """Whether splitting is worth suggesting: two parts or more whose topics stand apart, a silhouette of
        at least :data:`~limbic.core.curation.splitting.QUALITY_FLOOR` (docs/curation.md "Entity splitting")."""
        return len(self.parts) >= 2 and self.quality >= splitting.QUALITY_FLOOR

    def to_dict(self) -> dict[str, Any]:
        return {"entityName": self.entity, "entityType": self.entity_type, "observationCount": self.observation_count,
                "threshold": self.threshold, "needsSplit": self.needs_split, "suggested": self.suggested, "method": self.method,
                "quality": round(self.quality, 4), "parts": [p.to_dict() for p in self.parts],
                "stayingObservations": list(self.staying),
                "stayingRelations": [relation_dict(r) for r in self.staying_relations]}


class Splits:
    """Entities that grew too large: candidates, proposals and the split itself.

    Reached as ``memory.splits`` (:class:`~limbic.core.service.memory.MemoryService`).
    """

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def split_thresholds(self) -> dict[str, int]:
        """Observations an entity of each type may hold before it is proposed for splitting: the built-in
        ``sesion``/``session`` 15, ``proyecto``/``project`` 25, ``*`` (any other type) 20, over which the saved
        ones apply (keys: types lower-cased, accents removed)."""
        saved = self.memory.database.get_setting(THRESHOLDS_KEY)
        return {**splitting.TYPE_THRESHOLDS, "*": splitting.DEFAULT_THRESHOLD, **(json.loads(saved) if saved else {})}

    def set_split_thresholds(self, thresholds: Mapping[str, int], *, origin: str | None = None) -> dict[str, int]:
        """Save thresholds by type (``"*"`` for every other type), merged over the saved ones; returns them all.
        Raises ValidationError for an empty type or a count outside 1..100000."""
        saved = self.memory.database.get_setting(THRESHOLDS_KEY)
        merged = dict(json.loads(saved)) if saved else {}
        for key, value in thresholds.items():
            label = check.label(key, "entity type")
            merged[label if label == "*" else splitting.type_key(label)] = check.limit(
                value, low=1, high=100_000, what=f"threshold of {label}")
        self.memory.save_setting(THRESHOLDS_KEY, json.dumps(merged, sort_keys=True), origin=origin)
        return self.split_thresholds()

    def find_split_candidates(self, limit: int = 20, thresholds: Mapping[str, int] | None = None
                              ) -> tuple[int, list[SplitCandidate]]:
        """Entities with more live observations than their type's threshold (:meth:`split_thresholds`, overridden
        by ``thresholds`` for this call), most over first; those a person kept as they are are left out.
        Returns how many there are and the first ``limit``."""
        limit = check.limit(limit, low=0, high=1_000_000)
        merged = {**self.split_thresholds(), **{splitting.type_key(k): v for k, v in (thresholds or {}).items()}}
        kept = self.memory.curation.kept_keys("split:")
        conn = self.memory.database.read()
        rows = curation_reads.live_counts(conn)
        shown = set(scope.visible(conn, [int(r[0]) for r in rows]))  # the project view of a bound call
        found = []
        for entity_id, name, entity_type, count in (r for r in rows if int(r[0]) in shown):
            threshold = splitting.threshold_for(entity_type, merged)
            if count > threshold and f"split:{entity_id}" not in kept:
                found.append(SplitCandidate(name, entity_type, int(count), threshold, int(entity_id)))
        found.sort(key=lambda c: (-c.score, c.name))
        return len(found), found[:limit]

    def suggested_proposals(self, candidates: Sequence[SplitCandidate]) -> list[SplitProposal]:
        """The default proposals of ``candidates`` worth suggesting (:attr:`SplitProposal.suggested`), in their
        order. Clustering an entity's observations costs seconds at size (7-9 s for Debian's 25 candidates), so
        each candidate's quality and number of parts are kept (setting :data:`QUALITIES_KEY`, written without a
        change record) under a digest of its live observations — ids, texts, and which have a stored vector of the
        model: a candidate unchanged since its last proposal and not suggested then is not clustered again; any
        change to its observations or vectors proposes it afresh. A store too busy (or read-only) to keep them keeps nothing."""
        conn = self.memory.database.read()
        model = self.memory.curation.stored_model()
        digests: dict[int, Any] = {}
        for entity_id, observation_id, text, vector in curation_reads.live_observations_of(
                conn, [c.id for c in candidates], model):
            digests.setdefault(int(entity_id), hashlib.sha256(str(model).encode())).update(
                f"{observation_id}\x1f{bool(vector)}\x1f{text}\x1e".encode())
        saved = json.loads(self.memory.database.get_setting(QUALITIES_KEY) or "{}")
        kept: dict[str, list[Any]] = {}
        found = []
        for c in candidates:
            digest = digests[c.id].hexdigest() if c.id in digests else ""
            known = saved.get(str(c.id))
            if known is not None and known[0] == digest and not (known[2] >= 2 and known[1] >= splitting.QUALITY_FLOOR):
                kept[str(c.id)] = known
                continue
            proposal = self.propose_entity_split(c.name)
            kept[str(c.id)] = [digest, proposal.quality, len(proposal.parts)]
            if proposal.suggested:
                found.append(proposal)
        if kept != saved:
            try:
                with self.memory.database.maintenance() as writer:
                    put_setting(writer, QUALITIES_KEY, json.dumps(kept, sort_keys=True))
            except Exception as exc:  # noqa: BLE001 - a cache (a busy or read-only store): the next reading proposes them again
                log.debug("split qualities not kept: %s", exc)
        return found

    def propose_entity_split(self, name: str, method: str | None = None) -> SplitProposal:
        """Topics of entity ``name``'s live observations as proposed sub-entities, named ``"<name> - Term Term"``,
        each with the relations whose other end its observations mention most (the rest stay). What says what the
        entity itself is (its first observation and its fields:
        :func:`~limbic.core.curation.splitting.about_itself`) stays on it and is not clustered. ``method``:
        ``vectors`` (the default: the stored observation vectors; TF-IDF when some are missing) or ``tfidf``.
        Reading is not a use. Raises NotFoundError for an unknown entity, ValidationError for a bad method."""
        name = check.name(name)
        method = splitting.DEFAULT_METHOD if method is None else method
        if method not in splitting.METHODS:
            raise ValidationError(f"method must be one of {', '.join(splitting.METHODS)}, got {method!r}")
        conn = self.memory.database.read()
        with conn:
            entity = _entity(conn, name)
            live = list(entity.live_observations)
            own = splitting.about_itself([o.content for o in live])
            topical = [o for o, itself in zip(live, own.tolist(), strict=True) if not itself]
            relations = [r for r in views.relations_seen(conn, [entity.id]) if r.source != r.target]
            vectors = self._observation_vectors(conn, [o.id for o in topical]) if method == "vectors" else None
            taken = {n.casefold() for n in reads.all_names(conn)}
        threshold = splitting.threshold_for(entity.entity_type, self.split_thresholds())
        labels, terms, quality, used = self.memory.offload(splitting.topics, [o.content for o in topical], vectors,
                                                           method, entity.name)  # scikit-learn: the app's worker
        if len(topical) == 0 or int(labels.max()) == 0:
            return SplitProposal(entity.name, entity.entity_type, len(live), threshold, (),
                                 tuple(o.content for o in live), (), used, quality)
        staying_texts = tuple(o.content for o, itself in zip(live, own.tolist(), strict=True) if itself)
        texts = [[o.content for o, label in zip(topical, labels, strict=True) if label == k]
                 for k in range(int(labels.max()) + 1)]
        moving: dict[int, list[RelationInput]] = {}
        staying: list[RelationInput] = []
        for r in relations:
            item = RelationInput(r.source, r.target, r.relation_type, r.context, r.created_at)
            topic = splitting.relation_topic(r.target if r.source == entity.name else r.source, texts)
            (staying if topic is None else moving.setdefault(topic, [])).append(item)
        parts = tuple(SplitPart(splitting.topic_name(entity.name, terms[k], k, taken), entity.entity_type,
                                tuple(texts[k]), tuple(moving.get(k, [])), tuple(terms[k])) for k in range(len(texts)))
        return SplitProposal(entity.name, entity.entity_type, len(live), threshold, parts, staying_texts,
                             tuple(staying), used, quality)

    def _observation_vectors(self, conn: Connection, ids: list[int]) -> np.ndarray | None:
        """The stored vectors ``(n, d) float32`` of observations ``ids`` (in order), or None when one is missing."""
        model = self.memory.curation.stored_model()
        if not ids or model is None:
            return None
        made = vector_meta.observations_of_model(conn, model, ids)
        if len(made) < len(ids):
            return None
        found = dict(vec_rows.read(conn, OBSERVATION_VECTOR_TABLE, ids))
        if len(found) < len(ids):
            return None
        return np.stack([np.frombuffer(found[i], dtype=np.float32) for i in ids])

    def split_entity(self, name: str, parts: Sequence[SplitPart], *, relation_names: str = "contains",
                     origin: str | None = None) -> list[Entity]:
        """Split entity ``name`` into ``parts`` in one transaction (see the module docstring); returns the new
        entities. ``relation_names``: ``contains`` (``contains`` / ``part_of``) or ``contiene`` (``contiene`` /
        ``parte_de``). Nothing is written when anything is refused.

        Raises NotFoundError (unknown entity, an observation not live on it, a relation not active on it),
        ConflictError (a part's name is taken), ValidationError (no parts, a name or observation given twice)."""
        name = check.name(name)
        if relation_names not in SPLIT_RELATIONS:
            raise ValidationError(f"relation names must be one of {', '.join(SPLIT_RELATIONS)}")
        contains, part_of = SPLIT_RELATIONS[relation_names]
        check.count(parts, "parts")
        if not parts:
            raise ValidationError("name at least one part to split off")
        clean = [replace(p, name=check.name(p.name), entity_type=check.label(p.entity_type, "entity type"),
                         observations=tuple(check.observation(o) for o in p.observations)) for p in parts]
        names = [p.name for p in clean]
        texts = [o for p in clean for o in p.observations]
        moved = [(r.source, r.target, r.relation_type) for p in clean for r in p.relations]
        checks: tuple[tuple[str, list[Any]], ...] = (("part name", names), ("observation", texts), ("relation", moved))
        for what, values in checks:
            repeated = sorted({str(v) for v in values if values.count(v) > 1})
            if repeated:
                raise ValidationError(f"a {what} is given twice: {repeated[0][:80]}")
        with self.memory.transaction("split_entity", origin=origin):
            current = self._split_checks(name, clean, names)
            project = self.memory.entities.get_entity(name).entity.project  # the parts belong to the entity's project
            created = self.memory.entities.create_entities([EntityInput(p.name, p.entity_type, project=project) for p in clean])
            for part in clean:  # the service takes at most 1,000 observations per call
                for chunk in _chunks(part.observations):
                    self.memory.entities.add_observations([(part.name, [_copy(current[o]) for o in chunk])])
            for chunk in _chunks(texts):
                self.memory.entities.delete_observations([(name, chunk)])
            self.memory.relations.create_relations([RelationInput(a, b, t) for p in clean
                                   for a, b, t in ((name, p.name, contains), (p.name, name, part_of))])
            for part in clean:
                for relations in _chunks(part.relations):
                    self.memory.relations.delete_relations(list(relations))
                    self.memory.relations.create_relations([_moved(r, name, part.name) for r in relations])
            created = [self.memory.entities.get_entity(e.name).entity for e in created]
        return created

    def _split_checks(self, name: str, parts: list[SplitPart], names: list[str]) -> dict[str, Any]:
        """The entity's live observations by text, once every part is known to be possible."""
        conn = self.memory.database.read()
        entity = _entity(conn, name)
        taken = [n for n in names if n == name or reads.ids_by_names(conn, [n])]
        if taken:
            raise ConflictError(f"an entity named {taken[0]!r} exists already")
        live = {o.content: o for o in entity.live_observations}
        missing = [o for p in parts for o in p.observations if o not in live]
        if missing:
            raise NotFoundError(f"{name!r} has no live observation {missing[0][:80]!r}", missing)
        active = {(r.source, r.target, r.relation_type) for r in views.relations_seen(conn, [entity.id])}
        foreign = [r for p in parts for r in p.relations
                   if (r.source, r.target, r.relation_type) not in active or name not in (r.source, r.target)]
        if foreign:
            r = foreign[0]
            raise NotFoundError(f"{name!r} has no active relation {r.source!r} -[{r.relation_type}]-> {r.target!r}")
        return live


def _chunks(items: Sequence[Any]) -> list[Sequence[Any]]:
    return [items[i:i + MAX_ITEMS] for i in range(0, len(items), MAX_ITEMS)]


def _entity(conn: Connection, name: str) -> Entity:
    found = reads.entities_by_names(conn, [name])
    if not found:
        raise NotFoundError(f"unknown entity {name!r}", [name])
    return found[0]


def _copy(o: Any) -> ObservationInput:
    return ObservationInput(o.content, o.kind, None, o.created_at, o.expires_at, o.weight)


def _moved(r: RelationInput, original: str, part: str) -> RelationInput:
    return RelationInput(part if r.source == original else r.source, part if r.target == original else r.target,
                         r.relation_type, r.context, r.created_at)


def part_from_dict(item: Mapping[str, Any], default_type: str) -> SplitPart:
    """A :class:`SplitPart` from its JSON form (``name``, optional ``entityType``, ``observations``, optional
    ``relations`` ``[{from, to, relationType}]``). Raises ValidationError for a malformed one."""
    try:
        relations = tuple(RelationInput(r["from"], r["to"], r["relationType"]) for r in item.get("relations") or ())
        return SplitPart(item["name"], item.get("entityType") or default_type, tuple(item["observations"]), relations)
    except (KeyError, TypeError) as exc:
        raise ValidationError("a part needs name and observations (and relations as {from, to, relationType})") from exc

