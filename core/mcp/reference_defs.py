"""The reference server's own tool definitions (``@modelcontextprotocol/server-memory``, as its ``tools/list``
answers): what the ``reference`` profile publishes for the nine tools, byte for byte, instead of ours with
Limbic's optional extras (docs/mcp.md "Tool profiles"). Calls are served by the same tools either way.

Only what a client reads before calling is replaced: title, description and input schema (annotations are
the same already). The output schemas stay ours: a result may carry an entity's ``status`` or a relation's
``context`` written by another client, which the reference's closed output schemas would reject.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REFERENCE_DEFINITIONS"]

_DRAFT = "http://json-schema.org/draft-07/schema#"
_STRINGS = {"type": "array", "items": {"type": "string"}}


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _strings(description: str) -> dict[str, Any]:
    return {**_STRINGS, "description": description}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


def _arguments(properties: dict[str, Any]) -> dict[str, Any]:
    return {"$schema": _DRAFT, **_object(properties)}


_ENTITY = _object({"name": _string("The name of the entity"), "entityType": _string("The type of the entity"),
                   "observations": _strings("An array of observation contents associated with the entity")})
_RELATION = _object({"from": _string("The name of the entity where the relation starts"),
                     "to": _string("The name of the entity where the relation ends"),
                     "relationType": _string("The type of the relation")})

REFERENCE_DEFINITIONS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "create_entities": ("Create Entities", "Create multiple new entities in the knowledge graph",
                        _arguments({"entities": {"type": "array", "items": _ENTITY}})),
    "create_relations": ("Create Relations", "Create multiple new relations between entities in the knowledge "
                         "graph. Relations should be in active voice",
                         _arguments({"relations": {"type": "array", "items": _RELATION}})),
    "add_observations": ("Add Observations", "Add new observations to existing entities in the knowledge graph",
                         _arguments({"observations": {"type": "array", "items": _object({
                             "entityName": _string("The name of the entity to add the observations to"),
                             "contents": _strings("An array of observation contents to add")})}})),
    "delete_entities": ("Delete Entities",
                        "Delete multiple entities and their associated relations from the knowledge graph",
                        _arguments({"entityNames": _strings("An array of entity names to delete")})),
    "delete_observations": ("Delete Observations", "Delete specific observations from entities in the knowledge "
                            "graph", _arguments({"deletions": {"type": "array", "items": _object({
                                "entityName": _string("The name of the entity containing the observations"),
                                "observations": _strings("An array of observations to delete")})}})),
    "delete_relations": ("Delete Relations", "Delete multiple relations from the knowledge graph",
                         _arguments({"relations": {"type": "array", "items": _RELATION,
                                                   "description": "An array of relations to delete"}})),
    "read_graph": ("Read Graph", "Read the entire knowledge graph",
                   {"$schema": _DRAFT, "type": "object", "properties": {}}),
    "search_nodes": ("Search Nodes", "Search for nodes in the knowledge graph based on a query", _arguments({
        "query": _string("The search query to match against entity names, types, and observation content")})),
    "open_nodes": ("Open Nodes", "Open specific nodes in the knowledge graph by their names",
                   _arguments({"names": _strings("An array of entity names to retrieve")})),
}
"""Tool name → (title, description, input schema) as the reference server publishes them."""
