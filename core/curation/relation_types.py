"""Relation types the curation writes and reads: ``contains`` / ``part_of`` between an entity and the
sub-entities a split made of it (mcp-memory's Spanish ``contiene`` / ``parte_de`` are the same relations),
and the inverse of a relation type, for reading an incoming relation from its target's side.
"""

from __future__ import annotations

CONTAINS = "contains"
PART_OF = "part_of"
ALIASES = {"contiene": CONTAINS, "parte_de": PART_OF}
"""mcp-memory's names of the split relations (mcp-memory docs "Architecture", "Entity Splitting")."""

_PAIRS = (
    (CONTAINS, PART_OF), ("contiene", "parte_de"), ("parent_of", "child_of"), ("has", "belongs_to"),
    ("uses", "used_by"), ("depends_on", "required_by"), ("manages", "managed_by"), ("owns", "owned_by"),
    ("created", "created_by"), ("works_at", "employs"), ("works_on", "worked_on_by"), ("leads", "led_by"),
    ("supersedes", "superseded_by"), ("implements", "implemented_by"), ("calls", "called_by"),
    ("replaced_by", "replaces"), ("member_of", "has_member"), ("located_in", "location_of"),
    ("authored", "authored_by"), ("reviews", "reviewed_by"), ("teaches", "taught_by"),
)
_SYMMETRIC = ("knows", "related_to", "relates_to", "similar_to", "same_as", "married_to", "sibling_of",
              "friend_of", "conflicts_with", "connected_to", "collaborates_with")
INVERSES: dict[str, str] = {**{a: b for a, b in _PAIRS}, **{b: a for a, b in _PAIRS}, **{s: s for s in _SYMMETRIC}}


def canonical(relation_type: str) -> str:
    """``relation_type`` with mcp-memory's Spanish split names read as ``contains`` / ``part_of``."""
    return ALIASES.get(relation_type.strip().lower(), relation_type)


def inverse(relation_type: str) -> str:
    """The type of ``relation_type`` read backwards: its known inverse (``contains`` → ``part_of``,
    ``knows`` → ``knows``), else ``inverse_<type>``. Case-insensitive for the known ones."""
    return INVERSES.get(relation_type.strip().lower(), f"inverse_{relation_type}")
