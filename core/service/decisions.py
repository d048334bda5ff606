"""The values of the queue of decisions (:mod:`limbic.core.service.review`): a :class:`Decision`, a section of them
per kind, and the :class:`DecisionSource` each kind provides (docs/architecture.md "Review")."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from limbic.core.store import reads

if TYPE_CHECKING:
    from limbic.core.service.edits import Edit
    from limbic.core.service.memory import MemoryService


@dataclass(frozen=True, slots=True)
class Decision:
    """One thing to decide.

    ``kind``: the source's kind (``contradiction``, ``duplicate``, ``split``, ``forget``, ``promote``,
    ``expired``, …); ``key``: a stable id within the memory (``"contradiction:123:456"``); ``title``: one line;
    ``subjects``: the entity names it concerns; ``evidence``: JSON-able details shown beside it (texts side by
    side, similarity, reason, …); ``options``: the ways to settle it, the suggested one first;
    ``created_at``: when it arose (UTC seconds), ``None`` when unknown; ``worth``: what deciding it is worth
    (:func:`worth`: the detector's confidence by how much its entities are used and found), the queue's order;
    ``family``: decisions alike enough to be settled together share it (:func:`family`), ``None`` for none.
    """

    kind: str
    key: str
    title: str
    subjects: tuple[str, ...]
    evidence: dict[str, Any] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    created_at: float | None = None
    worth: float = 0.0
    family: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (camelCase keys, as MCP results use)."""
        return {"kind": self.kind, "key": self.key, "title": self.title, "subjects": list(self.subjects),
                "evidence": self.evidence, "options": list(self.options), "createdAt": self.created_at,
                "worth": round(self.worth, 3), "family": self.family}


@dataclass(frozen=True, slots=True)
class Family:
    """Decisions of one kind alike enough to settle together (same :func:`family` key): how many (``count``),
    one ``title`` for them all, the ``options`` every member has, and their ``keys`` (most worth first)."""

    key: str
    count: int
    title: str
    options: tuple[str, ...]
    keys: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.key, "count": self.count, "title": self.title, "options": list(self.options),
                "keys": list(self.keys)}


FAMILY_WORDS = 6  # words of a decision's text that make its family key
_DIGITS = re.compile(r"\S*\d\S*")


def family(kind: str, what: str, text: str = "") -> str:
    """The family key of a decision: its kind, what it is about (e.g. ``"task"``: duplicates within entities of
    type task; ``"same name, package"``; no ``:`` in it) and the first :data:`FAMILY_WORDS` words of ``text`` with every token
    holding a digit masked (``Version 1.2`` / ``Version 2.0`` are one family)."""
    words = _DIGITS.sub("#", text.casefold()).split()[:FAMILY_WORDS]
    return f"{kind}:{what.replace(':', ' ')}:{' '.join(words)}"


def families(decisions: Sequence[Decision], title: str = "{count} alike: {example}") -> tuple[Family, ...]:
    """The families of two decisions or more among ``decisions``, largest first. ``title`` is formatted with
    ``count``, ``what`` (the second part of the family key) and ``example`` (the most worth member's title)."""
    groups: dict[str, list[Decision]] = {}
    for decision in decisions:
        if decision.family is not None:
            groups.setdefault(decision.family, []).append(decision)
    out = []
    for key, members in groups.items():
        if len(members) < 2:
            continue
        members = ranked(members)
        options = tuple(o for o in members[0].options if all(o in m.options for m in members))
        what = key.split(":")[1] if key.count(":") >= 2 else ""
        out.append(Family(key, len(members), title.format(count=len(members), what=what, example=members[0].title),
                          options, tuple(m.key for m in members)))
    return tuple(sorted(out, key=lambda f: (-f.count, f.key)))


def usage(service: MemoryService, names: Iterable[str]) -> dict[str, tuple[int, int]]:
    """``{entity name: (uses, times found by a search)}`` of ``names`` (entity_access, entity_impressions)."""
    wanted = sorted(set(names))
    if not wanted:
        return {}
    return reads.usage_by_name(service.database.read(), wanted)


def entity_types(service: MemoryService, names: Iterable[str]) -> dict[str, str]:
    """``{entity name: entity type}`` of ``names``."""
    wanted = sorted(set(names))
    if not wanted:
        return {}
    return reads.types_by_name(service.database.read(), wanted)


def worth(confidence: float, names: Iterable[str], uses: dict[str, tuple[int, int]]) -> float:
    """What deciding is worth: ``confidence × (1 + ln(1 + uses) + ½·ln(1 + found))``, uses and times found
    summed over the decision's entities (a decision about what people open and search for comes first)."""
    used = sum(uses.get(n, (0, 0))[0] for n in names)
    found = sum(uses.get(n, (0, 0))[1] for n in names)
    return confidence * (1.0 + math.log1p(used) + 0.5 * math.log1p(found))


def ranked(decisions: Iterable[Decision]) -> list[Decision]:
    """Most worth first (then the key, for a stable order)."""
    return sorted(decisions, key=lambda d: (-d.worth, d.key))


@dataclass(frozen=True, slots=True)
class ReviewSection:
    """The decisions of one ``kind``: how many there are in all (``total``), the first ``items`` (most worth
    first) and the ``families`` of alike decisions among them."""

    kind: str
    total: int
    items: tuple[Decision, ...]
    families: tuple[Family, ...] = ()

    @property
    def rows(self) -> int:
        """Lines the queue needs for all of its decisions: one per family, one per other decision."""
        return self.total - sum(f.count for f in self.families) + len(self.families)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "total": self.total, "rows": self.rows, "items": [d.to_dict() for d in self.items],
                "families": [f.to_dict() for f in self.families]}


class DecisionSource(Protocol):
    """Finds the decisions of one kind and builds the edit that settles one."""

    kind: str

    def find(self, service: MemoryService, limit: int) -> tuple[int, list[Decision]]:
        """The number of open decisions of this kind and the ``limit`` most important ones; never writes."""
        ...

    def edit(self, service: MemoryService, decision: Decision, option: str) -> Edit:
        """The undoable edit that settles ``decision`` with ``option`` (not applied yet).

        Raises:
            ValidationError: ``option`` is not one of ``decision.options``.
        """
        ...


def _plain_value(value: Any) -> str | None:
    """A value as a person reads it: numbers rounded (tiny ones as 0), lists joined, mappings left out."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "0" if abs(value) < 0.005 else f"{value:.2f}"
    if isinstance(value, int | str):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(_plain_value(v) or "" for v in value)
    return None


def _words(key: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).replace("_", " ").capitalize()


PART_SHOWN = 5
"""Observations of each proposed part a split's description shows."""


def describe(decision: Decision) -> str:
    """The decision's evidence in plain words for a person (the Review view's detail): the reason, what an
    option keeps, the texts side by side or each entity with its first observations; no ids, no JSON."""
    evidence = decision.evidence
    lines: list[str] = []
    reason = evidence.get("why") or evidence.get("reason")
    if isinstance(reason, str):
        lines.append(reason[:1].upper() + reason[1:] + ".")
    if isinstance(evidence.get("keeps"), str):
        lines.append(f"Merging keeps: “{evidence['keeps']}”")
    if isinstance(evidence.get("merged"), str):
        lines.append(f"Combining writes: “{evidence['merged']}”")
    if isinstance(evidence.get("merge"), str):
        lines.append(f"Merging {evidence['merge']}.")
    members = evidence.get("members")
    if isinstance(members, list) and members:
        entities = list(dict.fromkeys(m.get("entityName", "") for m in members))
        lines.append("")
        if len(entities) == 1:
            lines.append(f"In {entities[0]}:")
        for m in members:
            prefix = "" if len(entities) == 1 else f"{m.get('entityName', '')}: "
            lines.append(f"  • {prefix}{m.get('content', '')}")
        if evidence.get("size", len(members)) > len(members):
            lines.append(f"  … and {evidence['size'] - len(members)} more")
    for side in evidence.get("sides", []) or []:
        lines.append("")
        count = side["observationCount"]
        lines.append(f"{side['name']} ({side['entityType']}, {count} observation{'' if count == 1 else 's'})")
        lines.extend(f"  • {text}" for text in side.get("firstObservations", []))
    for part in evidence.get("parts", []) or []:
        lines.append("")
        count = len(part["observations"])
        lines.append(f"Part “{part['name']}” ({count} observation{'' if count == 1 else 's'})")
        lines.extend(f"  • {text}" for text in part["observations"][:PART_SHOWN])
        if count > PART_SHOWN:
            lines.append(f"  … and {count - PART_SHOWN} more")
    if evidence.get("parts"):
        lines.append("")
        lines.append("Stays on the entity:")
        lines.extend(f"  • {text}" for text in evidence.get("staying", []) or ["(nothing)"])
    if not members and not evidence.get("sides"):
        skip = {"why", "reason", "keeps", "merged", "merge", "members", "sides", "pairs", "key", "ids", "id", "parts",
                "staying"}
        for key, value in evidence.items():
            shown = None if key in skip or key.endswith(("Id", "Ids")) else _plain_value(value)
            if shown:
                lines.append(f"{_words(key)}: {shown}")
    return "\n".join(lines).strip()
