"""The normalised values a memory file is read into (:mod:`.records` builds them, :mod:`.importer` applies them)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class ParsedObservation:
    """One observation. ``superseded`` marks history from our own export (re-added before its successor)."""

    content: str
    created_at: float | None = None
    kind: str | None = None
    weight: float | None = None
    expires_at: float | None = None
    supersedes: str | None = None
    superseded: bool = False

    def fill_from(self, other: ParsedObservation) -> None:
        """Take ``other``'s creation time, kind, weight, expiry and supersedes where this one has none."""
        for name in ("created_at", "kind", "weight", "expires_at", "supersedes"):
            if getattr(self, name) is None and getattr(other, name) is not None:
                setattr(self, name, getattr(other, name))


@dataclass(slots=True)
class ParsedEntity:
    """An entity with its observations in file order. ``declared`` is False for an entity only named
    by observation records (it becomes a placeholder if nothing else matches it)."""

    name: str
    line: int | None
    entity_type: str | None = None
    status: str | None = None
    created_at: float | None = None
    updated_at: float | None = None
    observations: list[ParsedObservation] = field(default_factory=list)
    declared: bool = True
    project: str | None = None

    def merge_fields(self, other: ParsedEntity) -> None:
        """Fold ``other`` (the same name, declared again) into this one: type, status and project where this one
        has none, the earliest creation and the latest update."""
        self.entity_type = self.entity_type or other.entity_type
        self.status = self.status or other.status
        self.project = self.project or other.project
        if other.created_at is not None:
            self.created_at = min(filter(None, (self.created_at, other.created_at)))
        if other.updated_at is not None:
            self.updated_at = max(filter(None, (self.updated_at, other.updated_at)))


@dataclass(slots=True)
class ParsedRelation:
    """A directed relation between two names as written (endpoints given by id already mapped).
    ``active`` False with ``ended_at`` marks an ended relation (our export's extra fields)."""

    source: str
    target: str
    relation_type: str
    line: int | None
    context: str | None = None
    created_at: float | None = None
    active: bool = True
    ended_at: float | None = None


@dataclass(frozen=True, slots=True)
class LineIssue:
    """Something the reader could not keep as is. ``line`` is 1-based (``None`` inside a JSON document,
    where ``item`` says e.g. ``entities[3]``). ``action``: ``skipped`` (dropped), ``merged`` (folded
    into an earlier record), ``recovered`` (kept in another shape), ``ignored`` (format marker)."""

    line: int | None
    action: str
    reason: str
    item: str | None = None

    def where(self) -> str:
        return f"line {self.line}" if self.line is not None else (self.item or "file")
