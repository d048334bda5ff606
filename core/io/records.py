"""Classification and assembly of the JSON records of a memory file (see :mod:`.parsers`).

:class:`RecordReader` takes one decoded JSON value at a time (with its line number), decides what
it is — entity, relation, observation record, graph-database node or edge, format marker — and
builds the normalised entities and relations, folding duplicates and noting every change as a
:class:`LineIssue`. It never raises on content.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from limbic.core import validation
from limbic.core.errors import ValidationError
from limbic.core.io import values
from limbic.core.io.parsed import LineIssue, ParsedEntity, ParsedObservation, ParsedRelation
from limbic.core.io.reflection_records import RECORD_TYPE, ParsedReflection, read_reflection

ENTITY_WORDS = {"entity", "entities", "node"}
RELATION_WORDS = {"relation", "relations", "relationship", "edge", "link"}
OBSERVATION_WORDS = {"observation", "observations"}
NAME_KEYS = ("name", "entityName", "entity_name")
TYPE_KEYS = ("entityType", "entity_type", "entitytype")
ENDPOINT_KEYS = (("from", "to"), ("from_entity", "to_entity"), ("fromEntity", "toEntity"),
                 ("source", "target"), ("from_id", "to_id"), ("subject", "object"))
RELATION_TYPE_KEYS = ("relationType", "relation_type", "relation", "predicate", "label")
CREATED_KEYS = ("createdAt", "created_at", "created", "dateCreated", "timestamp")
UPDATED_KEYS = ("updatedAt", "updated_at", "updated", "modifiedAt", "lastModified")
NODE_NAME_KEYS = ("name", "title", "issue", "label", "feature", "summary")
OBSERVATION_KEYS = ("observations", "contents")
REFERENCE_KEYS = ("entity", "entityName", "entity_name", "name", "entity_id")
TEXT_KEYS = ("observation", "content", "contents", "observations", "text")
IGNORED_KEYS = {"type", "_type", "id", "_id", "version", "embedding", "vector", "labels", "properties",
                "description", "relations", "status", "observationDetails", "supersededObservations", "project",
                *NAME_KEYS, *TYPE_KEYS, *OBSERVATION_KEYS, *CREATED_KEYS, *UPDATED_KEYS}


def _first(obj: dict, keys: tuple[str, ...]) -> Any:
    for key in keys:
        if obj.get(key) is not None:
            return obj[key]
    return None


def _endpoints(obj: dict) -> tuple[Any, Any] | None:
    for source_key, target_key in ENDPOINT_KEYS:
        if source_key in obj and target_key in obj:
            return obj[source_key], obj[target_key]
    return None


def _type_word(obj: dict) -> tuple[str | None, str]:
    raw = obj.get("type", obj.get("_type"))
    if not isinstance(raw, str):
        return None, ""
    return raw, raw.strip().lower()


class RecordReader:
    """Accumulates records; :meth:`finish` returns the folded entities and relations."""

    def __init__(self) -> None:
        self.stats: Counter = Counter()
        self.issues: list[LineIssue] = []
        self._entities: dict[str, ParsedEntity] = {}
        self._first_line: dict[str, int | None] = {}
        self._contents: dict[str, dict[str, ParsedObservation]] = {}
        self._ids: dict[str, str] = {}
        self._relations: list[ParsedRelation] = []
        self._pending: list[tuple[str, list[ParsedObservation], int | None, str | None]] = []
        self.reflections: list[ParsedReflection] = []

    def issue(self, line: int | None, action: str, reason: str, item: str | None = None) -> None:
        self.issues.append(LineIssue(line, action, reason, item))

    # --- dispatch --------------------------------------------------------------------------------

    def container(self, obj: dict, line: int | None) -> None:
        """A ``{"entities":[…],"relations":[…]}`` (or nodes/edges/links) object."""
        for key, hint in (("entities", "entity"), ("nodes", "entity"), ("relations", "relation"),
                          ("edges", "relation"), ("links", "relation")):
            items = obj.get(key)
            if isinstance(items, list):
                for index, item in enumerate(items):
                    self.record(item, line, f"{key}[{index}]", hint)

    def record(self, obj: Any, line: int | None, item: str | None, hint: str | None = None) -> None:
        if not isinstance(obj, dict):
            self.issue(line, "skipped", f"not a JSON object but {type(obj).__name__}: {str(obj)[:60]!r}", item)
            return
        raw_type, word = _type_word(obj)
        if word == RECORD_TYPE:
            found = read_reflection(obj, line, item)
            self.reflections.append(found) if isinstance(found, ParsedReflection) else self.issues.append(found)
            return
        has_name = any(obj.get(k) is not None for k in NAME_KEYS)
        endpoints = _endpoints(obj)
        if word.startswith("_") and not has_name and endpoints is None:
            self.stats["markers"] += 1
            self.issue(line, "ignored", f"format marker {json_short(obj)}", item)
        elif word in RELATION_WORDS or hint == "relation" or (
            endpoints is not None and word not in ENTITY_WORDS | OBSERVATION_WORDS and not has_name
        ):
            self._relation(obj, line, item, raw_type if word not in RELATION_WORDS else None)
        elif word in OBSERVATION_WORDS or (
            not has_name and _first(obj, ("entity", "entityName")) is not None and _first(obj, TEXT_KEYS) is not None
        ):
            self._observation_record(obj, line, item)
        elif has_name or (obj.get("id") is not None and (
            hint == "entity" or isinstance(obj.get("labels"), list) or isinstance(obj.get("properties"), dict)
        )):
            self._entity(obj, line, item, raw_type if word not in ENTITY_WORDS else None)
        else:
            keys = ", ".join(sorted(map(str, obj))[:8])
            self.issue(line, "skipped", f"neither an entity (no name) nor a relation (no endpoints); keys: {keys}", item)

    # --- entities --------------------------------------------------------------------------------

    def _entity(self, obj: dict, line: int | None, item: str | None, type_word: str | None) -> None:
        found = obj.get("properties")
        properties: dict = found if isinstance(found, dict) else {}
        name_value = _first(obj, NAME_KEYS)
        name_key = None
        is_node = name_value is None
        if is_node:
            self.stats["graph_nodes"] += 1
            name_key = next((k for k in NODE_NAME_KEYS if isinstance(properties.get(k), str | int)), None)
            name_value = properties[name_key] if name_key else obj.get("id")
        name, problem = values.clean_name(name_value)
        if name is None:
            self.issue(line, "skipped", f"entity name {problem}", item)
            return
        if problem:
            self.issue(line, "recovered", f"entity name {name!r}: {problem}", item)
        self.stats["entity_records"] += 1
        labels = [str(x) for x in obj.get("labels", []) if isinstance(x, str | int)] \
            if isinstance(obj.get("labels"), list) else []
        entity_type, _ = values.clean_name(_first(obj, TYPE_KEYS) or type_word or (labels[0] if labels else None))
        entity = ParsedEntity(name, line, entity_type)
        entity.created_at = self._timestamp(obj, CREATED_KEYS, line, item)
        entity.updated_at = self._timestamp(obj, UPDATED_KEYS, line, item)
        derived: list[str] = []
        status = obj.get("status")
        if status is not None:
            try:
                entity.status = validation.status(status)
            except ValidationError:
                derived.append(f"status: {values.scalar_text(status)}")
        project = obj.get("project")
        if isinstance(project, str) and project.strip():
            entity.project, _ = values.clean_name(project)
        observations = self._observations(obj, line, item)
        description = obj.get("description")
        if isinstance(description, str) and description.strip():
            derived.append(description)
        if len(labels) > 1:
            derived.append("labels: " + ", ".join(labels))
        for key, value in properties.items():
            if key == name_key:
                continue
            if key in CREATED_KEYS and entity.created_at is None and values.timestamp(value) is not None:
                entity.created_at = values.timestamp(value)
                continue
            text = values.scalar_text(value)
            if text:
                derived.append(text if key == "description" else f"{key}: {text}")
        for key, value in obj.items():
            if key not in IGNORED_KEYS and value not in (None, "", [], {}):
                derived.append(f"{key}: {values.scalar_text(value)}")
        if derived:
            self.stats["observations_derived"] += len(derived)
            self.issue(line, "recovered", f"{len(derived)} field(s) of {name!r} (description, properties, "
                       "labels, extra keys) kept as observations", item)
            observations.extend(ParsedObservation(text, entity.created_at) for text in derived)
        record_id = obj.get("id")
        if isinstance(record_id, str | int) and not isinstance(record_id, bool) and str(record_id) != name:
            self._ids.setdefault(str(record_id), name)
        self._add_entity(entity, observations, line, item)
        nested = obj.get("relations")
        if isinstance(nested, list):
            for index, relation in enumerate(nested):
                self._relation(relation, line, f"{item or name!s}.relations[{index}]", None, default_source=name)

    def _timestamp(self, obj: dict, keys: tuple[str, ...], line: int | None, item: str | None) -> float | None:
        raw = _first(obj, keys)
        moment = values.timestamp(raw)
        if raw is not None and moment is None:
            self.issue(line, "recovered", f"unreadable timestamp {values.scalar_text(raw)!r} ignored", item)
        return moment

    def _observations(self, obj: dict, line: int | None, item: str | None) -> list[ParsedObservation]:
        raw = _first(obj, OBSERVATION_KEYS)
        found: list[ParsedObservation] = []
        if raw is not None:
            pairs, odd = values.flatten_observations(raw)
            self.stats["observations_recovered" if odd else "observations_listed"] += len(pairs)
            if odd:
                self.issue(line, "recovered", f"observations given as {type(raw).__name__}, not a list of "
                           f"strings: {len(pairs)} text(s) recovered", item)
            found = [_observation(text, meta) for text, meta in pairs]
        details = obj.get("observationDetails")
        if isinstance(details, list):
            by_content = {o.content.strip(): o for o in found}
            for detail in details:
                if isinstance(detail, dict) and isinstance(detail.get("content"), str):
                    target = by_content.get(detail["content"].strip())
                    if target is not None:
                        target.fill_from(_observation(detail["content"], detail))
        history = obj.get("supersededObservations")
        if isinstance(history, list):
            old = [_observation(d["content"], d) for d in history if isinstance(d, dict)
                   and isinstance(d.get("content"), str)]
            for observation in old:
                observation.superseded = True
            old.sort(key=lambda o: o.created_at or 0.0)
            found = old + found
        return found

    def _add_entity(self, entity: ParsedEntity, observations: list[ParsedObservation],
                    line: int | None, item: str | None) -> None:
        existing = self._entities.get(entity.name)
        if existing is None:
            self._entities[entity.name] = entity
            self._contents[entity.name] = {}
            self._first_line[entity.name] = line
            existing = entity
        elif not existing.declared:
            existing.declared = True
            existing.line = line
            existing.merge_fields(entity)
        else:
            self.stats["entities_merged"] += 1
            where = f"line {self._first_line[entity.name]}" if self._first_line[entity.name] else "an earlier item"
            note = f"duplicate entity {entity.name!r} merged into the one at {where}"
            if entity.entity_type and existing.entity_type and entity.entity_type != existing.entity_type:
                note += f" (type {existing.entity_type!r} kept, {entity.entity_type!r} dropped)"
            self.issue(line, "merged", note, item)
            existing.merge_fields(entity)
        self._add_observations(existing, observations, line, item)

    def _add_observations(self, entity: ParsedEntity, observations: list[ParsedObservation],
                          line: int | None, item: str | None) -> None:
        contents = self._contents[entity.name]
        duplicates = 0
        for observation in observations:
            text = values.clean_text(observation.content)
            if not text:
                continue
            parts = values.observation_parts(text)
            if len(parts) > 1:
                self.stats["observations_split"] += len(parts) - 1
                self.issue(line, "recovered", f"an observation of {len(text):,} characters on {entity.name!r} "
                           f"split into {len(parts)} parts (limit {validation.MAX_OBSERVATION:,})", item)
            for part in parts:
                if part in contents:
                    duplicates += 1
                    contents[part].fill_from(observation)
                    continue
                kept = ParsedObservation(part, observation.created_at, observation.kind, observation.weight,
                                         observation.expires_at, observation.supersedes, observation.superseded)
                contents[part] = kept
                entity.observations.append(kept)
        if duplicates:
            self.stats["observations_duplicate"] += duplicates
            self.issue(line, "merged", f"{duplicates} repeated observation(s) of {entity.name!r} kept once", item)

    # --- observation records ---------------------------------------------------------------------

    def _observation_record(self, obj: dict, line: int | None, item: str | None) -> None:
        reference, problem = values.clean_name(_first(obj, REFERENCE_KEYS))
        if reference is None:
            self.issue(line, "skipped", f"observation record without an entity ({problem})", item)
            return
        raw = _first(obj, TEXT_KEYS)
        pairs, _ = values.flatten_observations(raw)
        if not pairs:
            self.issue(line, "skipped", f"observation record for {reference!r} without text", item)
            return
        self.stats["observation_records"] += 1
        self.stats["observations_recorded"] += len(pairs)
        created = values.timestamp(_first(obj, CREATED_KEYS))
        found = [_observation(text, meta) for text, meta in pairs]
        for observation in found:
            observation.created_at = observation.created_at or created
            observation.kind = observation.kind or _kind(obj.get("kind"))
        self._pending.append((reference, found, line, item))

    # --- relations -------------------------------------------------------------------------------

    def _relation(self, obj: Any, line: int | None, item: str | None, type_word: str | None,
                  default_source: str | None = None) -> None:
        if not isinstance(obj, dict):
            self.issue(line, "skipped", f"relation is not an object: {str(obj)[:60]!r}", item)
            return
        pair = _endpoints(obj)
        source_raw = pair[0] if pair else _first(obj, ("from", "from_entity", "fromEntity", "source")) or default_source
        target_raw = pair[1] if pair else _first(obj, ("to", "to_entity", "toEntity", "target"))
        source, source_problem = values.clean_name(source_raw)
        target, target_problem = values.clean_name(target_raw)
        if source is None or target is None:
            side = "source" if source is None else "target"
            self.issue(line, "skipped", f"relation {side} {source_problem or target_problem}", item)
            return
        self.stats["relation_records"] += 1
        relation_type, _ = values.clean_name(_first(obj, RELATION_TYPE_KEYS) or type_word)
        if relation_type is None:
            relation_type = "related_to"
            self.issue(line, "recovered", f"relation {source!r} → {target!r} has no type; 'related_to' used", item)
        found = obj.get("properties")
        properties: dict = found if isinstance(found, dict) else {}
        context = obj.get("context")
        if not isinstance(context, str):
            context = obj.get("description") if isinstance(obj.get("description"), str) else None
        if context is None and properties:
            described = properties.get("description")
            context = described if isinstance(described, str) and len(properties) == 1 else values.scalar_text(properties)
        if context is not None:
            context = values.clean_text(context)[: validation.MAX_CONTEXT] or None
        relation = ParsedRelation(source, target, relation_type, line, context,
                                  self._timestamp(obj, CREATED_KEYS, line, item))
        if obj.get("active") is False or _first(obj, ("endedAt", "ended_at")) is not None:
            relation.active = False
            relation.ended_at = values.timestamp(_first(obj, ("endedAt", "ended_at")))
        self._relations.append(relation)

    # --- end -------------------------------------------------------------------------------------

    def finish(self) -> tuple[list[ParsedEntity], list[ParsedRelation]]:
        """Attach observation records, map ids to names, fold repeated relations."""
        for reference, found, line, item in self._pending:
            name = reference if reference in self._entities else self._ids.get(reference, reference)
            if name not in self._entities:
                self._entities[name] = ParsedEntity(name, line, declared=False)
                self._contents[name] = {}
                self._first_line[name] = line
            self._add_observations(self._entities[name], found, line, item)
        seen: dict[tuple[str, str, str], ParsedRelation] = {}
        relations: list[ParsedRelation] = []
        for relation in self._relations:
            relation.source = self._resolve_id(relation.source)
            relation.target = self._resolve_id(relation.target)
            key = (relation.source, relation.target, relation.relation_type)
            if key in seen:
                self.stats["relations_duplicate"] += 1
                first = seen[key].line
                self.issue(relation.line, "merged", f"repeated relation {key[0]!r} -[{key[2]}]-> {key[1]!r}"
                           + (f" (first on line {first})" if first else ""))
                continue
            seen[key] = relation
            relations.append(relation)
        return list(self._entities.values()), relations

    def _resolve_id(self, endpoint: str) -> str:
        if endpoint in self._entities:
            return endpoint
        return self._ids.get(endpoint, endpoint)


def _kind(value: Any) -> str | None:
    try:
        return validation.kind(value) if isinstance(value, str) else None
    except ValidationError:
        return None


def _observation(text: str, meta: dict) -> ParsedObservation:
    if not meta:
        return ParsedObservation(text)
    weight = meta.get("weight")
    supersedes = meta.get("supersedes")
    created = values.timestamp(_first(meta, CREATED_KEYS))
    return ParsedObservation(
        text,
        created,
        _kind(meta.get("kind")),
        float(weight) if isinstance(weight, int | float) and not isinstance(weight, bool) else None,
        values.timestamp(_first(meta, ("expiresAt", "expires_at"))) or values.expiry_from_ttl(
            _first(meta, ("ttlDays", "ttl_days")), created),
        supersedes if isinstance(supersedes, str) else None,
    )


def json_short(obj: Any) -> str:
    """Compact JSON of ``obj``, cut to 80 characters for messages."""
    text = json.dumps(obj, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."
