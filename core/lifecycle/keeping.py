"""What forgetting never proposes, read from the entity itself (docs/lifecycle.md "Forget and promote"):
open work, configuration, and preferences or decisions held in an entity's observations.

- **Open work**: a bug, task, issue, ticket, release, incident, project … (its type) that is not done, or any
  entity whose latest state says it is open (``Status: open``, ``in progress``, ``todo``, ``blocks …``,
  ``still happens``). What is done: the status ``completed`` or ``archived``, or a latest state such as
  ``fixed``, ``resolved``, ``closed``, ``done``, ``Status: RESOLVED``. The latest state is that of the last
  observation, in the order written, that states one; ``paused`` work is neither open nor done.
- **Configuration**: its type or name says so (config, settings, environment, infrastructure, inventory, hosts,
  secrets; a type also server, cluster, network, DNS, VPN, runbook, dashboard …), or a current observation holds
  an IP address, a ``host:port``, an internal host name, an environment variable (``KEY_NAME=value``), a port, the
  production or staging system ("in production", "the production cluster"), or a service level (SLO, SLA, error
  budget).
- **A preference or decision held**: a current observation of kind ``preference``, ``decision`` or
  ``identity``, or one that says someone prefers or wants something.

Pure functions over an entity's type, name, status and current observations (text and kind, oldest first);
nothing here reads the store. Each answer carries the words that decided it, to show a person.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

WORK_TYPES = frozenset((
    "bug", "issue", "task", "todo", "ticket", "story", "epic", "feature", "milestone", "release", "incident",
    "project", "subtask", "chore", "defect", "problem", "request", "goal", "plan", "action", "pr",
))
"""Words of an entity type that make it a work item (compared without case, word by word: ``Feature Request``,
``Bug``, ``task``)."""
LONG_WORK = frozenset(("project", "goal", "plan", "epic"))
"""Work that runs long: its events ("v1 shipped", "the Safari bug fixed") are about its parts, so only its status
and a ``Status:`` field say whether it is done."""
CONFIG_WORDS = frozenset((
    "config", "configs", "configuration", "configurations", "settings", "environment", "environments",
    "infrastructure", "infra", "inventory", "hosts", "secret", "secrets", "credential", "credentials",
))
"""Words of an entity type or name that make it configuration (``Harbor Production Config``, ``Home Lab
Inventory``, type ``Environment``)."""
CONFIG_TYPES = CONFIG_WORDS | frozenset((
    "setting", "env", "network", "networks", "host", "hostname", "server", "servers", "cluster", "clusters",
    "deployment", "dns", "firewall", "vpn", "ip", "ips", "runbook", "runbooks", "playbook", "procedure", "dashboard",
    "monitor", "monitoring", "alert", "alerts",
))
"""Words of an entity type (not of a name: ``network-manager`` is a package) that make it configuration, or part
of how a system is run."""
DONE_STATUSES = frozenset(("completed", "archived"))

_WORD = re.compile(r"[a-z0-9]+")
_STATE = re.compile(
    r"\b(?P<done>fixed|resolved|closed|done|completed?|finished|shipped|merged|cancell?ed|won'?t fix|wontfix"
    r"|obsolete|signed off|delivered)\b"
    r"|\b(?P<open>(?:is|still|remains|re-?)opened?|in[ -]progress|ongoing|wip|to-?do|pending|blocked|blocks|blocking"
    r"|blocker|backlog|unresolved|not yet|still (?:happens|fails|failing|broken|use[sd]?|needs?)|next step|planned"
    r"|investigating|looking into)\b", re.IGNORECASE)
_FIELD_OPEN = re.compile(r"\b(?:open|new|active|proposed|accepted|started|draft)\b", re.IGNORECASE)
_STATUS_FIELD = re.compile(r"^\s*(?:status|state|estado)\s*[:=]\s*(?P<value>.+)$", re.IGNORECASE)
_ADDRESSES = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?:/\d{1,2})?(?![\w.])")  # IPv4 (with a mask)
_DOTTED_DIGITS = re.compile(r"\d\.\d{1,3}\.\d")  # what every IPv4 address holds (a quick test first)
_WITH_COLON = re.compile(
    r"(?<![\w:])(?:[0-9a-f]{1,4}:){3,7}+[0-9a-f]{1,4}(?![\w:])"  # IPv6
    r"|\b(?:localhost|[a-z][\w-]*+(?:\.[\w-]++)++):\d{2,5}\b", re.IGNORECASE)  # host:port
_ASSIGNMENT = re.compile(r"\b[A-Z][A-Z0-9]*+_[A-Z0-9_]++=\S")  # an environment variable
_CONFIG_PHRASES = re.compile(
    r"\b(?:in|on|to|into|from|for) (?:the )?(?:production|prod)\b|\bprod\b"  # the production system
    r"|\b(?:production|prod|staging)[ -](?:cluster|servers?|environment|env|database|db|deploy\w*|config\w*"
    r"|system|site|api|stack|nodes?|hosts?)\b"
    r"|\b(?:SLOs?|SLAs?|service levels?|error budgets?)\b|\bport \d{2,5}\b"
    r"|\b[\w-]++(?:\.[\w-]++)*?\.(?:internal|local|lan|intranet|corp)\b", re.IGNORECASE)  # an internal host
_PHRASE_CUES = ("prod", "staging", "slo", "sla", "service level", "error budget", "port ", ".internal", ".local",
                ".lan", ".intranet", ".corp")
"""Substrings one of which every :data:`_CONFIG_PHRASES` match holds (a quick test before the expression)."""
_PREFERS = re.compile(r"\b(?:prefers?|preferred|preference|wants)\b", re.IGNORECASE)
_PREFERS_CUES = ("prefer", "wants")
HELD_KINDS = frozenset(("preference", "decision", "identity"))
"""Kinds of observation that keep their entity: what someone prefers, decided, or is."""


@dataclass(frozen=True, slots=True)
class Kept:
    """Why an entity is never proposed for forgetting: ``kind`` (:data:`OPEN_WORK`, :data:`CONFIGURATION` or
    :data:`HOLDS`) and ``evidence``, the words that decided it (an observation, or its type or name)."""

    kind: str
    evidence: str

    def reason(self, entity_type: str) -> str:
        """The reason a person reads: ``"open work (a Bug): “blocks the Harbor 2.0 release”"``."""
        what = {OPEN_WORK: f"open work (a {entity_type})", CONFIGURATION: "configuration",
                HOLDS: "holds a preference or decision"}[self.kind]
        return f"{what}: “{_clip(self.evidence)}”"


OPEN_WORK, CONFIGURATION, HOLDS = "open work", "configuration", "holds"


def _clip(text: str, size: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[:size - 1].rstrip() + "…"


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def is_work(entity_type: str) -> bool:
    """Whether the type names a work item (:data:`WORK_TYPES`)."""
    return bool(_words(entity_type) & WORK_TYPES)


def _reads_text(entity_type: str) -> bool:
    """Whether any text of the entity may state its state: a work item that is not :data:`LONG_WORK`."""
    words = _words(entity_type)
    return bool(words & WORK_TYPES) and not words & LONG_WORK


def latest_state(observations: Sequence[tuple[str, str | None]], work: bool = True) -> tuple[str, str] | None:
    """``("open" | "done", the observation)`` of the last observation (of ``(text, kind)``, oldest first) that
    states a state, or ``None``. A ``Status: …`` field states one by its value (``open``, ``in progress``,
    ``proposed`` …, or ``resolved``, ``done`` …); with ``work`` (the entity is a work item) so does any text, the
    last state word deciding ("was blocked; fixed in 2.1" is done)."""
    for text, _kind in reversed(observations):
        field = _STATUS_FIELD.match(text)
        if field is None and not work:
            continue
        value = field.group("value") if field else text
        found = list(_STATE.finditer(value))
        if found:
            return ("done" if found[-1].group("done") else "open"), text
        if field is not None and _FIELD_OPEN.search(value):
            return "open", text
    return None


def is_done(entity_type: str, status: str, observations: Sequence[tuple[str, str | None]]) -> bool:
    """Whether the entity is finished: status ``completed`` / ``archived``, or status ``active`` and its latest
    state is done (``paused`` is not)."""
    if status in DONE_STATUSES:
        return True
    state = latest_state(observations, work=_reads_text(entity_type)) if status == "active" else None
    return state is not None and state[0] == "done"


def kept(entity_type: str, name: str, status: str, observations: Sequence[tuple[str, str | None]]) -> Kept | None:
    """Why the entity is never proposed for forgetting, or ``None``: open work first, then configuration, then a
    preference or decision it holds. What is done (:func:`is_done`) is neither open work nor configuration.
    ``observations`` are its current ones as ``(text, kind)``, oldest first; ``status`` one of ``active``,
    ``paused``, ``completed``, ``archived``."""
    if status == "active":
        state = latest_state(observations, work=_reads_text(entity_type))
        if state is not None and state[0] == "open":
            return Kept(OPEN_WORK, state[1])
        if state is None and is_work(entity_type):
            return Kept(OPEN_WORK, "status active, not marked done")
    if not is_done(entity_type, status, observations):
        found = _configuration(entity_type, name, observations)
        if found is not None:
            return Kept(CONFIGURATION, found)
    for text, kind in observations:
        lowered = text.lower()
        if (kind or "").lower() in HELD_KINDS or (any(c in lowered for c in _PREFERS_CUES) and _PREFERS.search(text)):
            return Kept(HOLDS, text)
    return None


def _configuration(entity_type: str, name: str, observations: Sequence[tuple[str, str | None]]) -> str | None:
    """The type, name or observation that makes the entity configuration, or ``None``."""
    if _words(entity_type) & CONFIG_TYPES:
        return entity_type
    if _words(name) & CONFIG_WORDS:
        return name
    return next((text for text, _kind in observations if says_configuration(text)), None)


def says_configuration(text: str) -> bool:
    """Whether ``text`` holds an address, a ``host:port``, an environment variable, a port, the production system or
    a service level (the module docstring)."""
    lowered = text.lower()
    return bool((_DOTTED_DIGITS.search(text) and _ADDRESSES.search(text)) or (":" in text and _WITH_COLON.search(text))
                or ("=" in text and _ASSIGNMENT.search(text))
                or (any(c in lowered for c in _PHRASE_CUES) and _CONFIG_PHRASES.search(text)))
