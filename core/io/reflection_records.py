"""Reflections in memory files: the extra JSONL record type our export writes, read back by the import.

One line per reflection (the reference server and its forks skip records of a type they do not know)::

    {"type": "reflection", "targetType": "entity", "entityName": "Harbor", "author": "sofia",
     "content": "…", "mood": "insight", "createdAt": "…Z", "updatedAt": "…Z"}

``targetType`` is ``entity`` (``entityName``), ``relation`` (``"relation": {"from", "to", "relationType"}``)
or ``global``; ``mood``, ``createdAt`` and ``updatedAt`` are optional (docs/curation.md "Reflections").
Importing adds a reflection unless one with the same target, author and text is stored already.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from limbic.core.errors import LimbicError
from limbic.core.io import values
from limbic.core.io.parsed import LineIssue
from limbic.core.io.report import FileReport, ReportEntry
from limbic.core.models import Reflection, RelationInput, iso

RECORD_TYPE = "reflection"


@dataclass(frozen=True, slots=True)
class ParsedReflection:
    """One reflection record: its target (``entity`` name, or ``relation`` source/target/type), author, text,
    mood, times (UTC seconds) and line."""

    target_type: str
    entity: str | None
    relation: tuple[str, str, str] | None
    author: str
    content: str
    mood: str | None
    created_at: float | None
    updated_at: float | None
    line: int | None


def reflection_record(reflection: Reflection) -> dict[str, Any]:
    """The JSONL record of one reflection."""
    record: dict[str, Any] = {"type": RECORD_TYPE, "targetType": reflection.target_type}
    if reflection.target_type == "entity":
        record["entityName"] = reflection.entity
    elif reflection.target_type == "relation":
        record["relation"] = {"from": reflection.entity, "to": reflection.target,
                              "relationType": reflection.relation_type}
    record.update({"author": reflection.author, "content": reflection.content})
    if reflection.mood:
        record["mood"] = reflection.mood
    record.update({"createdAt": iso(reflection.created_at), "updatedAt": iso(reflection.updated_at)})
    return record


def read_reflection(obj: dict, line: int | None, item: str | None) -> ParsedReflection | LineIssue:
    """The reflection of a ``{"type": "reflection", …}`` record, or why it was skipped."""
    def text(key: str) -> str | None:
        value = obj.get(key)
        return value.strip() if isinstance(value, str) and value.strip() else None

    kind, author, content = (text("targetType") or "").lower(), text("author"), text("content")
    if kind not in ("entity", "relation", "global") or author is None or content is None:
        return LineIssue(line, "skipped", "a reflection needs targetType (entity, relation or global), author "
                         "and content", item)
    entity, relation = text("entityName"), obj.get("relation")
    triple = None
    if kind == "relation":
        parts = [relation.get(k) for k in ("from", "to", "relationType")] if isinstance(relation, dict) else []
        names = [p.strip() for p in parts if isinstance(p, str) and p.strip()]
        if len(names) != 3:
            return LineIssue(line, "skipped", "a relation reflection needs relation {from, to, relationType}", item)
        triple = (names[0], names[1], names[2])
    if kind == "entity" and entity is None:
        return LineIssue(line, "skipped", "an entity reflection needs entityName", item)
    return ParsedReflection(kind, entity if kind == "entity" else None, triple, author, content, text("mood"),
                            values.timestamp(obj.get("createdAt")), values.timestamp(obj.get("updatedAt")), line)


def apply_reflections(service, found: list[ParsedReflection], report: FileReport) -> None:
    """Add the file's reflections not stored yet (same target, author and text), inside the import's
    transaction; one refused (its target missing, a bad field) is reported and the rest go on."""
    if not found:
        return
    stored = {_key(r.target_type, r.entity if r.target_type != "relation" else None,
                   (r.entity, r.target, r.relation_type) if r.target_type == "relation" else None, r.author, r.content)
              for r in service.reflections.all_reflections()}
    for parsed in found:
        key = _key(parsed.target_type, parsed.entity, parsed.relation, parsed.author, parsed.content)
        if key in stored:
            continue
        target = parsed.entity if parsed.relation is None else RelationInput(*parsed.relation)
        try:
            service.reflections.add_reflection(parsed.target_type, target, parsed.author, parsed.content, parsed.mood,
                                   created_at=parsed.created_at, updated_at=parsed.updated_at, origin="import")
        except LimbicError as exc:
            report.skipped.append(ReportEntry(parsed.line, f"reflection not imported: {exc}"))
            continue
        stored.add(key)
        report.reflections_added += 1


def _key(kind: str, entity: str | None, relation: tuple | None, author: str, content: str) -> tuple:
    return kind, entity, relation, author, content
