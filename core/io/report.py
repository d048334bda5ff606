"""The import report: what each file gave, what was merged, recovered, skipped, and why.

Plain values built by :mod:`.importer`; :meth:`ImportReport.to_dict` is the ``limbic import --json``
output and :meth:`ImportReport.summary` the human one. Line numbers are 1-based; entries inside a
pretty-printed JSON document carry ``item`` (e.g. ``entities[3]``) instead.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ReportEntry:
    """One remark: where (``line`` or ``item``), why (``reason``), and the entity concerned if any."""

    line: int | None
    reason: str
    item: str | None = None
    name: str | None = None

    def where(self) -> str:
        return f"line {self.line}" if self.line is not None else (self.item or "-")

    def to_dict(self) -> dict:
        out: dict = {"line": self.line, "reason": self.reason}
        if self.item is not None:
            out["item"] = self.item
        if self.name is not None:
            out["name"] = self.name
        return out


@dataclass(slots=True)
class FileReport:
    """The outcome of importing one file.

    ``entities_created``: names created (placeholders included); ``merged``: records folded into
    others (duplicate names, repeated observations or relations) and stored entities that received
    something new; ``entities_unchanged``: stored entities the file had nothing new for;
    ``placeholders``: entities of type ``Unknown`` made for unknown names; ``resolved``: names matched
    ignoring case; ``recovered``: content kept in another shape; ``skipped``: content not imported;
    ``ignored``: format markers. ``error`` is set (and nothing imported) when the file was unreadable.
    """

    path: str
    format: str = ""
    error: str | None = None
    lines: int = 0
    entities_created: list[str] = field(default_factory=list)
    entities_unchanged: int = 0
    entities_updated: int = 0
    observations_added: int = 0
    relations_created: int = 0
    relations_existing: int = 0
    reflections_added: int = 0
    merged: list[ReportEntry] = field(default_factory=list)
    placeholders: list[ReportEntry] = field(default_factory=list)
    resolved: list[ReportEntry] = field(default_factory=list)
    recovered: list[ReportEntry] = field(default_factory=list)
    skipped: list[ReportEntry] = field(default_factory=list)
    ignored: list[ReportEntry] = field(default_factory=list)
    parse_stats: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def added_nothing(self) -> bool:
        """True when the import changed nothing (what a repeated import must give)."""
        return not (self.entities_created or self.observations_added or self.relations_created
                    or self.entities_updated or self.reflections_added)

    def to_dict(self) -> dict:
        return {
            "path": self.path, "format": self.format, "error": self.error, "lines": self.lines,
            "entities_created": len(self.entities_created), "entities_unchanged": self.entities_unchanged,
            "entities_updated": self.entities_updated,
            "observations_added": self.observations_added, "relations_created": self.relations_created,
            "relations_existing": self.relations_existing, "reflections_added": self.reflections_added,
            "seconds": round(self.seconds, 3),
            "created": list(self.entities_created),
            **{key: [e.to_dict() for e in getattr(self, key)]
               for key in ("merged", "placeholders", "resolved", "recovered", "skipped", "ignored")},
            "parse_stats": dict(self.parse_stats),
        }

    def summary(self, limit: int = 20) -> str:
        if self.error:
            return f"{self.path}: NOT IMPORTED — {self.error}"
        head = (f"{self.path} ({self.format}, {self.lines} lines): {len(self.entities_created)} entities created, "
                f"{self.observations_added} observations added, {self.relations_created} relations created "
                f"({self.relations_existing} already stored), {self.entities_unchanged} entities unchanged")
        lines = [head]
        for key in ("placeholders", "resolved", "merged", "recovered", "skipped", "ignored"):
            entries = getattr(self, key)
            if not entries:
                continue
            lines.append(f"  {key} ({len(entries)}):")
            lines.extend(f"    {e.where()}: {e.reason}" for e in entries[:limit])
            if len(entries) > limit:
                lines.append(f"    … {len(entries) - limit} more (use --json for all)")
        return "\n".join(lines)


@dataclass(slots=True)
class ImportReport:
    """Reports of every file of one import, in the order given; ``contradictions``: the conflicts the check
    found among the observations the import added, once their vectors landed (``None``: not checked, no model
    in use or the vectors not waited for)."""

    files: list[FileReport]
    contradictions: int | None = None

    @property
    def ok(self) -> bool:
        """False when at least one file could not be read at all."""
        return all(f.error is None for f in self.files)

    def totals(self) -> dict:
        keys = ("observations_added", "relations_created", "relations_existing", "entities_unchanged",
                "entities_updated")
        out: dict[str, int | None] = {"files": len(self.files), "failed_files": sum(1 for f in self.files if f.error),
                                      "entities_created": sum(len(f.entities_created) for f in self.files)}
        out.update({key: sum(getattr(f, key) for f in self.files) for key in keys})
        out["placeholders"] = sum(len(f.placeholders) for f in self.files)
        out["skipped"] = sum(len(f.skipped) for f in self.files)
        out["contradictions"] = self.contradictions
        return out

    def to_dict(self) -> dict:
        return {"ok": self.ok, "totals": self.totals(), "files": [f.to_dict() for f in self.files]}

    def summary(self, limit: int = 20) -> str:
        totals = self.totals()
        tail = (f"Total: {totals['files']} file(s), {totals['entities_created']} entities created "
                f"({totals['placeholders']} placeholders), {totals['observations_added']} observations added, "
                f"{totals['relations_created']} relations created, {totals['skipped']} item(s) skipped"
                + (f", {totals['failed_files']} file(s) NOT imported" if totals["failed_files"] else "")
                + (f"; {self.contradictions} contradiction(s) to review (limbic review)" if self.contradictions
                   else "; no contradictions found" if self.contradictions == 0 else ""))
        return "\n".join([*(f.summary(limit) for f in self.files), tail])
