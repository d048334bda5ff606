"""Export of the memory graph: reference JSONL, GraphML and GEXF.

JSONL is the reference memory server's format — one ``{"type":"entity","name","entityType",
"observations":[…]}`` line per entity (live observations, oldest first) and one
``{"type":"relation","from","to","relationType"}`` line per relation — so the reference server and
its forks read it. Our extras ride along as optional fields those readers ignore: ``status``,
``createdAt``/``updatedAt`` (ISO 8601, UTC), ``observationDetails`` (per live observation:
``content``, ``createdAt`` and, when set, ``kind``, ``weight``, ``expiresAt``, ``supersedes``),
``supersededObservations`` (history), and on relations ``createdAt``, ``context``, and
``active: false`` + ``endedAt`` for ended ones; reflections are extra ``{"type": "reflection"}`` lines
(:mod:`.reflection_records`). :mod:`.importer` reads them all back, so export →
import into an empty database gives the same graph. ``extras=False`` writes the bare reference
shape (active relations only).

GraphML and GEXF go through networkx (a ``MultiDiGraph`` keyed by entity name; observations joined
by newlines, timestamps as ISO strings) for Gephi, yEd, Cytoscape.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO

import networkx as nx

from limbic.core.errors import ValidationError
from limbic.core.io.reflection_records import reflection_record
from limbic.core.models import Entity, Graph, Reflection, Relation, iso

FORMATS = ("jsonl", "graphml", "gexf")


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What was written: format, number of entities and of relations."""

    format: str
    entities: int
    relations: int


def export_graph(service, fmt: str, out: BinaryIO, *, extras: bool = True) -> ExportSummary:
    """Write the whole graph (ended relations included) to the binary stream ``out``; in a call bound to a
    project (``MemoryService.scoped``), that project's entities and the global ones.

    ``fmt`` is one of ``jsonl``, ``graphml``, ``gexf``; anything else raises ValidationError. Relations name
    their ends by name, so a graph in which projects share a name is refused (ValidationError naming them):
    export it one project at a time.
    """
    if fmt not in FORMATS:
        raise ValidationError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    graph = service.entities.read_graph(include_ended=True)
    _refuse_shared_names(graph)
    thoughts = service.reflections.all_reflections() if extras else []
    if fmt == "jsonl":
        for line in jsonl_lines(graph, extras=extras, reflections=thoughts):
            out.write(line.encode("utf-8") + b"\n")
    else:
        network = to_networkx(graph, thoughts)
        if fmt == "graphml":
            nx.write_graphml(network, out, encoding="utf-8")
        else:
            nx.write_gexf(network, out, encoding="utf-8")
    return ExportSummary(fmt, len(graph.entities), len(graph.relations))


def _refuse_shared_names(graph: Graph) -> None:
    """Raise ValidationError when two entities of ``graph`` have one name (projects holding the same name)."""
    holders: dict[str, list[str]] = defaultdict(list)
    for entity in graph.entities:
        holders[entity.name].append(entity.project or "global")
    shared = sorted(name for name, owners in holders.items() if len(owners) > 1)
    if shared:
        owners = ", ".join(holders[shared[0]])
        raise ValidationError(f"{len(shared)} name(s) are held by several projects (e.g. {shared[0]!r}: {owners}); "
                              "relations name their ends by name, so export one project at a time (--project)")


def jsonl_lines(graph: Graph, *, extras: bool = True, reflections: Sequence[Reflection] = ()) -> Iterator[str]:
    """The JSONL lines (without line breaks) of ``graph``: entities first, then relations, then ``reflections``
    (an extra record type, :mod:`.reflection_records`)."""
    for entity in graph.entities:
        yield json.dumps(entity_record(entity, extras=extras), ensure_ascii=False)
    for relation in graph.relations:
        if extras or relation.active:
            yield json.dumps(relation_record(relation, extras=extras), ensure_ascii=False)
    for reflection in reflections:
        yield json.dumps(reflection_record(reflection), ensure_ascii=False)


def entity_record(entity: Entity, *, extras: bool = True) -> dict:
    """One entity line. Observations listed are the live ones (not superseded), in insertion order."""
    live = [o for o in entity.observations if o.superseded_at is None]
    record: dict = {"type": "entity", "name": entity.name, "entityType": entity.entity_type,
                    "observations": [o.content for o in live]}
    if not extras:
        return record
    contents = {o.id: o.content for o in entity.observations}

    def details(observation, *, history: bool) -> dict:
        out = {"content": observation.content, "createdAt": iso(observation.created_at)}
        if history:
            out["supersededAt"] = iso(observation.superseded_at)
        if observation.kind:
            out["kind"] = observation.kind
        if observation.weight != 1.0:
            out["weight"] = observation.weight
        if observation.expires_at is not None:
            out["expiresAt"] = iso(observation.expires_at)
        if observation.supersedes in contents:
            out["supersedes"] = contents[observation.supersedes]
        return out

    record.update({"status": entity.status, "createdAt": iso(entity.created_at),
                   "updatedAt": iso(entity.updated_at)})
    if entity.project is not None:
        record["project"] = entity.project
    record["observationDetails"] = [details(o, history=False) for o in live]
    history = [details(o, history=True) for o in entity.observations if o.superseded_at is not None]
    if history:
        record["supersededObservations"] = history
    return record


def relation_record(relation: Relation, *, extras: bool = True) -> dict:
    """One relation line (``from``/``to`` are entity names)."""
    record: dict = {"type": "relation", "from": relation.source, "to": relation.target,
                    "relationType": relation.relation_type}
    if extras:
        record["createdAt"] = iso(relation.created_at)
        if relation.context:
            record["context"] = relation.context
        if not relation.active:
            record["active"] = False
            record["endedAt"] = iso(relation.ended_at)
    return record


def to_networkx(graph: Graph, reflections: Sequence[Reflection] = ()) -> nx.MultiDiGraph:
    """``graph`` as a networkx MultiDiGraph: nodes are entity names, one edge per relation (key = relation id).

    Node attributes: ``entityType``, ``status``, ``createdAt``, ``updatedAt``, ``observations`` (live
    ones joined by newlines), ``observationCount``. Edge attributes: ``relationType``, ``createdAt``,
    ``active`` and, when set, ``context``, ``endedAt``. ``reflections`` (a JSON list of their records, on the
    nodes and edges that have some, and on the graph for global ones: GraphML keeps graph attributes, GEXF has
    none). No attribute is ``None`` (GraphML/GEXF forbid it).
    """
    network = nx.MultiDiGraph()
    about: dict[object, list[dict]] = defaultdict(list)
    for reflection in reflections:
        record = reflection_record(reflection)
        place = (reflection.entity, reflection.target, reflection.relation_type) if reflection.target_type == \
            "relation" else reflection.entity
        about[place].append({k: v for k, v in record.items() if k not in ("type", "entityName", "relation")})
    if about.get(None):
        network.graph["reflections"] = json.dumps(about[None], ensure_ascii=False)
    for entity in graph.entities:
        live = [o.content for o in entity.observations if o.superseded_at is None]
        network.add_node(entity.name, entityType=entity.entity_type, status=entity.status,
                         createdAt=iso(entity.created_at), updatedAt=iso(entity.updated_at),
                         observations="\n".join(live), observationCount=len(live))
        if about.get(entity.name):
            network.nodes[entity.name]["reflections"] = json.dumps(about[entity.name], ensure_ascii=False)
    for relation in graph.relations:
        attributes = {"relationType": relation.relation_type, "createdAt": iso(relation.created_at),
                      "active": relation.active}
        if relation.context:
            attributes["context"] = relation.context
        if relation.ended_at is not None:
            attributes["endedAt"] = iso(relation.ended_at)
        if about.get((relation.source, relation.target, relation.relation_type)):
            attributes["reflections"] = json.dumps(about[(relation.source, relation.target, relation.relation_type)],
                                                   ensure_ascii=False)
        network.add_edge(relation.source, relation.target, key=str(relation.id), **attributes)
    return network
