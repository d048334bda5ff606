"""The curation's sources of decisions for the review queue (:mod:`limbic.core.service.review`): duplicate
observations, duplicate entities, entities to split, orphans and placeholder entities left by imports.

Each finds its decisions through the service (detection in :mod:`limbic.core.curation`, never writing) and
settles one with an undoable edit (:mod:`limbic.core.service.curation_edits`). "keep" records the person's
choice, so that the decision is not proposed again (undo forgets it).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from limbic.core.curation.entities import name_keys
from limbic.core.errors import ValidationError
from limbic.core.io.importer import PLACEHOLDER_TYPE
from limbic.core.service.curating import Member
from limbic.core.service.curation_edits import (
    CombineDuplicates,
    KeepAsIs,
    SplitEntity,
    SupersedeDuplicates,
    keep_entities_apart,
    keep_observations_apart,
    merge_duplicates,
)
from limbic.core.service.decisions import Decision, entity_types, family, ranked, usage, worth
from limbic.core.service.edits import Edit
from limbic.core.service.entity_edits import DeleteEntities, MergeEntities
from limbic.core.store import curation_reads

if TYPE_CHECKING:
    from limbic.core.service.memory import MemoryService


def _members(decision: Decision) -> list[Member]:
    return [Member(m["id"], m["entityName"], m["content"], m["kind"],
                   datetime.fromisoformat(m["createdAt"].replace("Z", "+00:00")).timestamp())
            for m in decision.evidence["members"]]


def _refuse(decision: Decision, option: str) -> None:
    if option not in decision.options:
        raise ValidationError(f"{option!r} is not an option of {decision.key!r}; options: {', '.join(decision.options)}")


MAX_CONSIDERED = 100_000
"""Decisions of one kind read before ranking (all of them on any real memory; the first ``limit`` are listed)."""


def _short(text: str, length: int = 60) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


class DuplicateObservations:
    """Observations of one entity that say one fact (duplicate clusters; *more specific* pairs, whose suggestion
    is to keep both, are listed by ``find_duplicate_observations`` and the merge queue, not here). No option
    loses a detail (:mod:`limbic.core.curation.survivors`). When a member keeps every detail of the others (the
    :attr:`~limbic.core.service.curating.DuplicateCluster.survivor`), the options are ``supersede`` (it stays
    live, the others become its history), ``merge`` (it stays, the others are deleted) and ``keep`` (all stay;
    not proposed together again). When none does, ``keep`` comes first and ``combine`` writes the merged text
    shown in the evidence, the members becoming its history. Clusters of entities of one type, settled alike,
    form a family."""

    kind = "duplicate"

    def find(self, service: MemoryService, limit: int) -> tuple[int, list[Decision]]:

        report = service.curation.find_duplicate_observations(limit=MAX_CONSIDERED)
        clusters = [c for c in report.clusters if c.relation == "duplicate"]
        names = {e for c in clusters for e in c.entities}
        uses, kinds = usage(service, names), entity_types(service, names)
        decisions = []
        for cluster in clusters:
            evidence: dict[str, Any] = {**cluster.to_dict(), "threshold": report.threshold}
            where = " / ".join(cluster.entities)
            if cluster.survivor is not None:
                title = f"{where}: {cluster.size} observations say the same — keeps “{_short(cluster.survivor.content)}”"
                settled = ""
            else:
                title = f"{where}: {cluster.size} observations say the same, each with a detail of its own"
                settled = ", each with a detail of its own"
            decisions.append(Decision(
                self.kind, cluster.key, title, cluster.entities, evidence, cluster.options,
                max(m.created_at for m in cluster.members), worth(cluster.best, cluster.entities, uses),
                family(self.kind, " / ".join(sorted({kinds.get(e, "") for e in cluster.entities})) + settled)))
        return len(clusters), ranked(decisions)[:limit]

    def edit(self, service: MemoryService, decision: Decision, option: str) -> Edit:
        _refuse(decision, option)
        members = _members(decision)
        if option == "keep":
            return keep_observations_apart(members)
        if option == "combine":
            return CombineDuplicates(members, decision.evidence["merged"])
        keeps = decision.evidence.get("keeps")
        keeper = next(m for m in members if m.content == keeps)
        if option == "supersede":
            return SupersedeDuplicates(members, keeper)
        return merge_duplicates(members, keeper)


class DuplicateEntities:
    """Entities that may be one thing (same normalised name, an acronym, close vectors with shared evidence;
    siblings never). Options: ``merge`` (into the first name: observations, relations and usage history move to
    it; the evidence says so), ``keep`` (not proposed again)."""

    kind = "duplicate_entity"

    def find(self, service: MemoryService, limit: int) -> tuple[int, list[Decision]]:

        total, found = service.curation.find_duplicate_entities(limit=MAX_CONSIDERED)
        uses = usage(service, {n for g in found for n in g.names})
        decisions = []
        for group in found:
            evidence = {**group.to_dict(), "ids": list(group.ids)}
            confidence = 1.0 if group.similarity is None else group.similarity
            decisions.append(Decision(
                self.kind, group.key, f"{' / '.join(group.names)} may be one entity: {group.why}", group.names,
                evidence, ("merge", "keep"), None, worth(confidence, group.names, uses),
                family(self.kind, f"{group.reason}, {' / '.join(sorted({s.entity_type for s in group.sides}))}")))
        return total, ranked(decisions)[:limit]

    def edit(self, service: MemoryService, decision: Decision, option: str) -> Edit:
        _refuse(decision, option)
        names = list(decision.subjects)
        if option == "merge":
            return MergeEntities(names[1:], names[0])
        return keep_entities_apart(decision.evidence["ids"], names)


class SplitCandidates:
    """Entities holding more observations than their type should, whose proposed split is worth suggesting
    (:attr:`~limbic.core.service.splitting.SplitProposal.suggested`: topics that stand apart; the others are not
    in the queue). Options: ``split`` (into the topics
    :meth:`~limbic.core.service.MemoryService.splits.propose_entity_split` proposes, in one transaction), ``keep``
    (leave it whole; not proposed again). The evidence names each part and what stays."""

    kind = "split"

    def find(self, service: MemoryService, limit: int) -> tuple[int, list[Decision]]:

        _, found = service.splits.find_split_candidates(MAX_CONSIDERED)
        by_name = {c.name: c for c in found}
        decisions = []
        for proposal in service.splits.suggested_proposals(found):
            c = by_name[proposal.entity]
            parts = ", ".join(f"“{p.name}” ({len(p.observations)})" for p in proposal.parts)
            evidence = {**c.to_dict(), "quality": round(proposal.quality, 3),
                        "parts": [{"name": p.name, "observations": list(p.observations)} for p in proposal.parts],
                        "staying": list(proposal.staying)}
            decisions.append(Decision(self.kind, f"split:{c.id}", f"{c.name} holds {c.observations} observations "
                                      f"(threshold {c.threshold} for {c.entity_type}): {parts}", (c.name,), evidence,
                                      ("split", "keep")))
        return len(decisions), decisions[:limit]

    def edit(self, service: MemoryService, decision: Decision, option: str) -> Edit:
        _refuse(decision, option)
        [name] = decision.subjects
        if option == "split":
            return SplitEntity(name, service.splits.propose_entity_split(name).parts)
        return KeepAsIs([decision.key], f"keep {name} whole")


class Orphans:
    """Entities with no relation: nothing connects them to the rest of the memory. Options: ``keep`` (not
    proposed again), ``delete`` (with their observations; undo restores them)."""

    kind = "orphan"

    def find(self, service: MemoryService, limit: int) -> tuple[int, list[Decision]]:

        total, rows = curation_reads.orphans(service.database.read(), limit)
        return total, [Decision(self.kind, f"orphan:{i}", f"{name} ({kind}) has no relations", (name,),
                                {"entityType": kind, "observationCount": n}, ("keep", "delete"), created)
                       for i, name, kind, n, created in rows]

    def edit(self, service: MemoryService, decision: Decision, option: str) -> Edit:
        _refuse(decision, option)
        [name] = decision.subjects
        return DeleteEntities([name]) if option == "delete" else KeepAsIs([decision.key], f"keep {name} unrelated")


class Placeholders:
    """Entities an import made for names its file only referred to (type ``Unknown``). Options: ``merge`` (into
    the entity of the same name once normalised, when there is one), ``keep``, ``delete``."""

    kind = "placeholder"

    def find(self, service: MemoryService, limit: int) -> tuple[int, list[Decision]]:

        conn = service.database.read()
        total, rows = curation_reads.of_type(conn, PLACEHOLDER_TYPE, limit)
        by_key: dict[str, set[str]] = {}
        if rows:
            for other, kind in curation_reads.names_and_types(conn):  # the bound project's view
                if kind != PLACEHOLDER_TYPE:
                    for key in name_keys(other):
                        by_key.setdefault(key, set()).add(other)
        decisions = []
        for i, name, observations, relations, created in rows:
            matches = sorted(set().union(*(by_key.get(key, set()) for key in name_keys(name))))
            options = ("merge", "keep", "delete") if len(matches) == 1 else ("keep", "delete")
            decisions.append(Decision(
                self.kind, f"placeholder:{i}", f"{name} is a placeholder left by an import", (name, *matches[:1]),
                {"observationCount": observations, "relationCount": relations, "sameName": matches}, options, created))
        return total, decisions

    def edit(self, service: MemoryService, decision: Decision, option: str) -> Edit:
        _refuse(decision, option)
        name = decision.subjects[0]
        if option == "merge":
            return MergeEntities([name], decision.subjects[1])
        return DeleteEntities([name]) if option == "delete" else KeepAsIs([decision.key], f"keep {name}")


SOURCES = (DuplicateObservations(), DuplicateEntities(), SplitCandidates(), Orphans(), Placeholders())
"""The curation's decision sources, in the order the report lists them."""
