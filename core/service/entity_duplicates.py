"""Duplicate entities as a person sees them (:meth:`~limbic.core.service.curating.Curation.find_duplicate_entities`):
both sides of a proposed merge, why in plain words, what a merge keeps, and the evidence a candidate needs —
close entity vectors: observations said alike and related entities in common; one name spelled two ways
(``CPUPackage`` / ``cpu_package``): alike types, an observation said alike, a related entity in common or
entity vectors not far apart (:func:`name_supported`). Reads only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from limbic.core.curation import entities, statements
from limbic.core.store import curation_reads
from limbic.core.store.connection import Connection

SIDE_OBSERVATIONS = 3  # observations shown per side of a proposed entity merge
NAME_SIMILARITY = 0.6
"""Entity vectors this similar are enough evidence that two entities of one name once normalised are one; two
entities of one spelled name are rarely further apart (on the real agent memory files: 0.61 and 0.73 for
one thing, 0.44 for two projects' ``git_workflow`` / ``GitWorkflow``)."""


@dataclass(frozen=True, slots=True)
class Side:
    """One entity of a proposed entity merge: its name, type, live observation count and first observations."""

    name: str
    entity_type: str
    observations: int
    first: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "entityType": self.entity_type, "observationCount": self.observations,
                "firstObservations": list(self.first)}


@dataclass(frozen=True, slots=True)
class EntityDuplicate:
    """Entities that may be one thing: their ``names`` (the suggested survivor first: most observations, then
    oldest), why (``reason``: ``same name``, ``acronym`` or ``close vectors``), the entity vectors'
    ``similarity`` when that is the reason, their ``ids``, both ``sides`` and, for close vectors, the
    observations said alike and related entities in common."""

    names: tuple[str, ...]
    reason: str
    similarity: float | None = None
    ids: tuple[int, ...] = field(default=(), compare=False)
    sides: tuple[Side, ...] = field(default=(), compare=False)
    shared_observations: int = field(default=0, compare=False)
    shared_neighbours: int = field(default=0, compare=False)

    @property
    def key(self) -> str:
        return "duplicate_entity:" + "-".join(str(i) for i in sorted(self.ids))

    @property
    def why(self) -> str:
        """The reason in plain words."""
        if self.reason == "same name":
            return "the same name once case, spaces, punctuation and plurals are set aside"
        if self.reason == "acronym":
            return f"“{min(self.names, key=len)}” is the initials of “{max(self.names, key=len)}”"
        similarity = "" if self.similarity is None else f" (similarity {self.similarity:.2f})"
        return (f"they say nearly the same{similarity}, with {_count(self.shared_observations, 'observation')} "
                f"and {_count(self.shared_neighbours, 'related entity', 'related entities')} in common")

    @property
    def merge_note(self) -> str:
        """What a merge keeps, in plain words."""
        others = ", ".join(f"“{n}”" for n in self.names[1:])
        return f"keeps the name “{self.names[0]}”; the observations and relations of {others} move to it"

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "names": list(self.names), "reason": self.reason, "why": self.why,
                "similarity": None if self.similarity is None else round(self.similarity, 4),
                "merge": self.merge_note, "sides": [side.to_dict() for side in self.sides]}


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def shared_evidence(conn: Connection, pairs: Sequence[tuple[int, ...]]) -> dict[tuple[int, ...], tuple[int, int]]:
    """For each pair of entity ids: ``(observations said alike, related entities in common)`` (live
    observations compared normalised; active relations either way); related entities ``-1`` when neither
    entity has a relation."""
    involved = sorted({i for pair in pairs for i in pair})
    if not involved:
        return {}
    said: dict[int, set[str]] = {}
    for entity_id, content in curation_reads.live_texts_of(conn, involved):
        said.setdefault(int(entity_id), set()).add(statements.normalised(str(content)))
    near: dict[int, set[int]] = {}
    for a, b in curation_reads.active_links(conn, involved):
        near.setdefault(int(a), set()).add(int(b))
        near.setdefault(int(b), set()).add(int(a))
    out = {}
    for pair in pairs:
        x, y = pair[0], pair[1]
        mine, theirs = near.get(x, set()) - {y}, near.get(y, set()) - {x}
        neighbours = -1 if not mine and not theirs else len(mine & theirs)
        out[pair] = (len(said.get(x, set()) & said.get(y, set())), neighbours)
    return out


def alike_types(a: str, b: str) -> bool:
    """Whether two entity types name one kind: equal once normalised, or the words of one among the other's
    (``project`` / ``software_project``)."""
    x, y = set(entities.normalise_name(a).split()), set(entities.normalise_name(b).split())
    return bool(x) and bool(y) and (x <= y or y <= x)


def name_supported(types: tuple[str, str], observations: int, neighbours: int, similarity: float | None) -> bool:
    """Two entities of one name once normalised are proposed as one with any evidence: alike types, an
    observation said alike, a related entity in common, or entity vectors at least :data:`NAME_SIMILARITY`
    similar. Without any (another type, nothing shared, far apart) they are two things that share a name."""
    return alike_types(*types) or observations >= 1 or neighbours >= 1 or (
        similarity is not None and similarity >= NAME_SIMILARITY)


def name_groups(conn: Connection, model: str | None, groups: list[entities.NameGroup]) -> list[entities.NameGroup]:
    """The same-name ``groups`` split into the parts that :func:`name_supported` holds together (two entities
    or more each, connected by pairs with evidence); acronym groups unchanged."""
    named = [g for g in groups if g.reason == "same name"]
    pairs = [(a, b) for g in named for i, a in enumerate(g.ids) for b in g.ids[i + 1:]]
    if not pairs:
        return groups
    kinds = {int(r[0]): str(r[2]) for r in curation_reads.sides(conn, sorted({i for p in pairs for i in p}))}
    evidence = shared_evidence(conn, pairs)
    similar = entities.pair_similarities(conn, model, pairs) if model else {}
    out = [g for g in groups if g.reason != "same name"]
    for group in named:
        linked = {(a, b) for i, a in enumerate(group.ids) for b in group.ids[i + 1:]
                  if a in kinds and b in kinds
                  and name_supported((kinds[a], kinds[b]), *evidence[(a, b)], similar.get((a, b)))}
        out += [entities.NameGroup(ids, group.reason) for ids in _parts(group.ids, linked) if len(ids) > 1]
    return sorted(out, key=lambda g: g.ids)


def _parts(ids: tuple[int, ...], linked: set[tuple[int, int]]) -> list[tuple[int, ...]]:
    """The connected parts of ``ids`` by the pairs ``linked``, each ascending."""
    left, parts = set(ids), []
    while left:
        seen, todo = set(), [min(left)]
        while todo:
            x = todo.pop()
            if x not in seen:
                seen.add(x)
                todo += [b if a == x else a for a, b in linked if x in (a, b)]
        left -= seen
        parts.append(tuple(sorted(seen)))
    return parts


def supported(observations: int, neighbours: int) -> bool:
    """Close vectors are enough with an observation said alike and a related entity in common (or no relations)."""
    return observations >= 1 and neighbours != 0


def entity_duplicates(conn: Connection, groups: list[entities.NameGroup],
                       evidence: dict[tuple[int, ...], tuple[int, int]]) -> list[EntityDuplicate]:
    """The groups with both sides read (two queries for all): names ordered survivor first (most live
    observations, then oldest), each side's type, count and first observations."""
    involved = sorted({i for g in groups for i in g.ids})
    if not involved:
        return []
    info = {int(r[0]): (str(r[1]), str(r[2]), int(r[3]), float(r[4])) for r in curation_reads.sides(conn, involved)}
    first: dict[int, list[str]] = {}
    for entity_id, content in curation_reads.live_texts_of(conn, involved, ordered=True):
        listed = first.setdefault(int(entity_id), [])
        if len(listed) < SIDE_OBSERVATIONS:
            listed.append(str(content))
    out = []
    for group in groups:
        ids = sorted((i for i in group.ids if i in info), key=lambda i: (-info[i][2], info[i][3], i))
        sides = tuple(Side(info[i][0], info[i][1], info[i][2], tuple(first.get(i, ()))) for i in ids)
        shared = evidence.get(group.ids, (0, 0))
        out.append(EntityDuplicate(tuple(side.name for side in sides), group.reason, group.similarity, tuple(ids),
                                   sides, max(shared[0], 0), max(shared[1], 0)))
    return out
