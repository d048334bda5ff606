"""The one registry of the MCP tools: every tool's name and the profiles that list it (docs/mcp.md "Tool profiles").

An agent pays for the tool list in its context on every turn, so a server lists only the tools of its profile
(``limbic mcp --tools PROFILE``, the app's MCP panel, a named token's settings):

- ``agent`` (default): the reference server's nine, plus ``search_semantic``, ``mark_used`` and ``resolve_conflict``;
- ``curation``: ``agent`` plus the curation and lifecycle tools (duplicates, splits, merges, history, status);
- ``reference``: exactly the reference server's nine, published with its own schemas
  (:mod:`limbic.core.mcp.reference_defs`);
- ``all``: every tool under its own name, once;
- ``seed``: the tool names of the seed system, mcp-memory (its ``_tool``-suffixed split tools), for agents
  configured for it. Those aliases are listed by no other profile.

A comma-separated list of tool names is a profile too. Adding a tool is one line in :data:`TOOLS` (its name
and the profiles listing it); :func:`limbic.core.mcp.server.build_server` refuses to register a tool that is
not declared here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from limbic.core.errors import ValidationError

__all__ = ["DEFAULT_PROFILE", "PROFILES", "TOOLS", "Profile", "estimated_tokens", "listed_bytes", "not_enabled",
           "profile", "smallest_profile_with"]

PROFILES = ("agent", "curation", "reference", "all", "seed")
"""The named profiles, in the order :func:`smallest_profile_with` suggests them: the default first, then the larger
ones (``reference`` holds nothing that ``agent`` lacks)."""
DEFAULT_PROFILE = "agent"

_REFERENCE = frozenset({"reference", "agent", "curation", "all", "seed"})
_AGENT = frozenset({"agent", "curation", "all"})
_CURATION = frozenset({"curation", "all"})
_ALL = frozenset({"all"})
_SEED = frozenset({"seed"})

TOOLS: dict[str, frozenset[str]] = {
    # the reference server's nine (@modelcontextprotocol/server-memory)
    "create_entities": _REFERENCE,
    "create_relations": _REFERENCE,
    "add_observations": _REFERENCE,
    "delete_entities": _REFERENCE,
    "delete_observations": _REFERENCE,
    "delete_relations": _REFERENCE,
    "read_graph": _REFERENCE,
    "search_nodes": _REFERENCE,
    "open_nodes": _REFERENCE,
    # an agent's daily work
    "search_semantic": _AGENT | _SEED,
    "mark_used": _AGENT,
    "resolve_conflict": _AGENT,
    # curation and lifecycle
    "get_entity": _CURATION,
    "rename_entity": _CURATION,
    "merge_entities": _CURATION,
    "set_status": _CURATION,
    "end_relation": _CURATION,
    "consolidation_report": _CURATION | _SEED,
    "find_duplicate_observations": _CURATION | _SEED,
    "find_split_candidates": _CURATION,
    "analyze_entity_split": _CURATION,
    "propose_entity_split": _CURATION,
    "execute_entity_split": _CURATION,
    "undo_decision": _CURATION,
    # the rest
    "migrate": _ALL | _SEED,
    "add_reflection": _ALL | _SEED,
    "search_reflections": _ALL | _SEED,
    # the seed system's names of the split tools
    "find_split_candidates_tool": _SEED,
    "analyze_entity_split_tool": _SEED,
    "propose_entity_split_tool": _SEED,
    "execute_entity_split_tool": _SEED,
}
"""Every tool the server registers, in listing order, with the profiles that list it."""


@dataclass(frozen=True, slots=True)
class Profile:
    """A server's tool selection: ``name`` (a profile's name, or the comma list as given) and its ``tools`` in
    listing order. ``named`` is False for a comma list."""

    name: str
    tools: tuple[str, ...]
    named: bool = True

    def __contains__(self, tool: object) -> bool:
        return tool in self.tools

    @property
    def flag(self) -> str:
        """The ``--tools`` value that selects this profile."""
        return self.name if self.named else ",".join(self.tools)


def profile(spec: str | None = None) -> Profile:
    """The profile ``spec`` names: a profile name (case-insensitive), or tool names separated by commas
    (listed in :data:`TOOLS` order, each once). ``None`` or blank: :data:`DEFAULT_PROFILE`.

    Raises:
        ValidationError: an unknown profile or tool name (the message lists the valid ones).
    """
    text = (spec or "").strip()
    if not text:
        text = DEFAULT_PROFILE
    if text.lower() in PROFILES:
        name = text.lower()
        return Profile(name, tuple(tool for tool, where in TOOLS.items() if name in where))
    wanted = {part.strip() for part in text.split(",") if part.strip()}
    unknown = sorted(wanted - TOOLS.keys())
    if unknown or not wanted:
        what = f"unknown tool {', '.join(unknown)}" if unknown else f"no tools in {spec!r}"
        raise ValidationError(f"{what}: --tools takes a profile ({', '.join(PROFILES)}) or tool names separated "
                              "by commas (`limbic mcp --tools all --list` lists them)")
    return Profile(",".join(t for t in TOOLS if t in wanted), tuple(t for t in TOOLS if t in wanted), named=False)


def smallest_profile_with(tool: str) -> str | None:
    """The first profile of :data:`PROFILES` that lists ``tool``, the one a refusal suggests (None for an unknown
    name)."""
    return next((p for p in PROFILES if p in TOOLS.get(tool, ())), None)


def not_enabled(tool: str, current: Profile) -> str:
    """The refusal of a call to a declared tool outside ``current``: which profile lists it."""
    where = "this server's tool list" if not current.named else f"profile {current.name}"
    return (f"tool {tool!r} is not enabled in {where}; start the server with --tools "
            f"{smallest_profile_with(tool)} (or a token with that profile: limbic mcp token add NAME --tools …)")


def listed_bytes(description: str | None, input_schema: dict[str, Any]) -> int:
    """What one tool costs an agent's context: the UTF-8 bytes of its description plus those of its input
    schema as compact JSON (``tools/list`` sends both on every turn; names, titles and annotations are small)."""
    schema = json.dumps(input_schema, separators=(",", ":"), ensure_ascii=False)
    return len((description or "").encode("utf-8")) + len(schema.encode("utf-8"))


def estimated_tokens(size: int) -> int:
    """An estimate of the tokens ``size`` bytes of JSON and English take in a model's context: one per
    4 bytes (the usual rule of thumb for BPE tokenizers on English and JSON), rounded up."""
    return -(-size // 4)
