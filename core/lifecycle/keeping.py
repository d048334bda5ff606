"""What forgetting never proposes, read from the entity itself (docs/lifecycle.md "Forget and promote"):
open work, configuration, preferences or decisions held in an entity's observations, standing rules, goals still
ahead, and what still runs.

- **Open work**: a bug, task, issue, ticket, release, incident, project … (its type) that is not done, or any
  entity whose latest state says it is open (``Status: open``, ``in progress``, ``todo``, ``blocks …``,
  ``still happens``). What is done: the status ``completed`` or ``archived``, or a latest state such as
  ``fixed``, ``resolved``, ``closed``, ``done``, ``Status: RESOLVED``. The latest state is that of the last
  observation, in the order written, that states one; ``paused`` work is neither open nor done.
- **Configuration**: its type or name says so (config, settings, environment, infrastructure, inventory, hosts,
  secrets; a type also server, cluster, network, DNS, VPN, runbook, dashboard …), or a current observation holds
  an IP address, a ``host:port``, an internal host name, an environment variable (``KEY_NAME=value``), a port, the
  production or staging system ("in production", "the production cluster"), or a service level (SLO, SLA, error
  budget). The configuration of an agent's own tooling counts too: a type hook, agent, subagent, command, skill
  or workflow.
- **A preference or decision held**: a current observation of kind ``preference``, ``decision`` or
  ``identity``, or one that says someone prefers or wants something.
- **A standing rule**: its type or name says it is one (policy, rule, convention, guideline, checklist,
  specification; a type also standard or directive; a vocabulary for writing memory: ontology, taxonomy, glossary,
  "entity types", "relation types"), or a current observation states one: ``must``, ``should not``, ``mandatory``,
  ``always``, ``never`` or ``do not`` opening a clause ("do not store secrets"; not "files that do not fit"), or a
  fix, workaround or lesson worded as an instruction ("Fixed: run schema changes with ingest paused", "Solution: use
  Git Bash"). Not from what describes a failure (``Cause: …``,
  ``Symptom: …``), nor from a code artefact (function, class, component, table, column, constraint …: its rules
  are the code). Done or not: a policy approved and implemented is in force. A rule is no longer standing once a
  later observation says it was superseded, replaced, deprecated or no longer applies.
- **A goal or plan still ahead**: a current observation states a goal or plan with its year ("the main 2026 goal",
  "plans for Q3 2027"), a roadmap or OKRs; one dated by its year is ahead until that year ends. "The main goal of
  Borg is …" says what a thing is for: not a plan.
- **Still in use**: a current observation says it still runs — on a schedule ("refreshed hourly", "runs nightly",
  cron), in production ("running in production", "went live") or now ("still used"), and no later one says it
  was retired (decommissioned, turned off, replaced by …). A finished project whose product still runs is kept;
  so is a dataset or corpus it is tied to (:func:`is_resource`), and nothing else through it.

What keeps a memory through another one (the review's ties, ``limbic.core.service.forgetting``) is read here too:

- **A tool or library in use**: an entity whose type says it is one (:func:`is_tool`: library, tool, framework,
  package, SDK, plugin …) kept while something current uses it — related by a relation of use (:func:`used_end`:
  ``uses``, ``depends_on``, ``used_by``, ``read_with`` …) or named in a current observation of it that does not say
  it was dropped (:func:`says_dropped`: "migrated from Typer", "replaced by Click").
- **A requirement a standing rule carries**: an observation that states a need or a bound (:func:`requirement`:
  "researchers need full resolution for at least 2 years", "must", "required", "at most …") in an entity tied to a
  memory kept as a standing rule whose type or name says it is one (:func:`is_rule`: a policy, a convention …) —
  a finished meeting where the policy in force was agreed.

Pure functions over an entity's type, name, status and current observations (text and kind, oldest first), and
over a relation's type; nothing here reads the store. Each answer carries the words that decided it, to show a
person.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

WORK_TYPES = frozenset((
    "bug", "issue", "task", "todo", "ticket", "story", "epic", "feature", "milestone", "release", "incident",
    "project", "subtask", "chore", "defect", "problem", "request", "goal", "plan", "action", "pr", "roadmap",
))
"""Words of an entity type that make it a work item (compared without case, word by word: ``Feature Request``,
``Bug``, ``task``)."""
LONG_WORK = frozenset(("project", "goal", "plan", "epic", "roadmap"))
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
    "hook", "hooks", "agent", "agents", "subagent", "subagents", "command", "commands", "skill", "skills", "workflow",
    "workflows",
))
"""Words of an entity type (not of a name: ``network-manager`` is a package) that make it configuration, or part
of how a system is run — an agent's hooks, agents, commands, skills and workflows among them."""
RULE_WORDS = frozenset((
    "policy", "policies", "rule", "rules", "convention", "conventions", "guideline", "guidelines", "checklist",
    "checklists", "specification", "specifications", "standards", "ontology", "taxonomy", "vocabulary", "glossary",
))
"""Words of an entity type or name (split at case changes too: ``RelationTypes``) that make it a standing rule, or
the vocabulary agreed for writing memory."""
RULE_TYPES = RULE_WORDS | frozenset(("standard", "directive", "directives"))
"""Words of an entity type (not of a name: ``Python Standard Library``, ``CoreDirectivesPhase1`` are not rules)
that make it a standing rule."""
CODE_TYPES = frozenset((
    "function", "functions", "method", "class", "interface", "component", "constraint", "column", "table", "struct",
    "enum", "field", "variable", "constant", "property", "slice", "reducer",
))
"""Words of an entity type that make it a code artefact: what its observations say it must do, the code does."""
RESOURCE_WORDS = frozenset(("dataset", "datasets", "corpus", "corpora"))
"""Words of an entity type or name that make it a resource something is built from (:func:`is_resource`)."""
TOOL_TYPES = frozenset((
    "library", "libraries", "lib", "libs", "tool", "tools", "toolset", "toolkit", "toolchain", "framework",
    "frameworks", "package", "packages", "dependency", "dependencies", "sdk", "plugin", "plugins",
))
"""Words of an entity type that make it a tool or library something uses (:func:`is_tool`)."""
USE_WORDS = frozenset((
    "use", "uses", "used", "using", "utilizes", "utilises", "utilize", "leverages", "depends", "requires", "relies",
    "imports", "consumes", "powered", "with",
))
"""Words of a relation type that say one end uses the other (``uses``, ``depends_on``, ``used_by``, ``used_for``,
``read_with``, ``built_with``, ``powered_by`` …); :data:`NOT_USE_WORDS` overrule them."""
NOT_USE_WORDS = frozenset((
    "replaced", "replaces", "replace", "migrates", "migrated", "instead", "deprecated", "superseded", "removed",
    "dropped", "not", "no", "formerly", "previously",
))
"""Words of a relation type that say the use ended or never was (``replaced_with``, ``migrated_from``,
``previously_used``)."""
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
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_VOCABULARY = re.compile(r"\b(?:entity|relation|observation|memory) types\b")


class _Says:
    """An expression over an observation, and the words (lower case) one of which its every match holds: the quick
    test before the expression, on the observation's words (:func:`_texts`)."""

    __slots__ = ("_cues", "_pattern")

    def __init__(self, pattern: re.Pattern[str], cues: str) -> None:
        self._pattern = pattern
        self._cues = frozenset(cues.split())

    def search(self, text: str, words: frozenset[str]) -> re.Match[str] | None:
        return None if self._cues.isdisjoint(words) else self._pattern.search(text)


_RULE = _Says(re.compile(
    r"\b(?:must(?:n'?t)?|should(?:n'?t| not| never| always)|mandatory|no exceptions)\b"
    r"|(?:^|[.;:!?,(\u2014\u2013-]\s*|\b(?:and|but|so|then|please)\s+)(?:always|never|do not|don'?t)\b"
    r"|(?:^|[.;]\s*)(?:fix(?:ed)?|workaround|solution|resolution|remedy|mitigation|lessons?(?: learned)?|rule|tip"
    r"|gotcha|important|critical|remember|note)\s*[:\u2014\u2013-]+\s*(?:first\s+)?(?:run|use|keep|avoid|pause|stop"
    r"|wait|restart|drain|check|verify|ensure|make sure|read|commit|prefer|pin|lock|schedule|back up|rebase)\b",
    re.IGNORECASE), "must mustn mustnt should shouldn shouldnt mandatory exceptions always never not don dont fix fixed"
                    " workaround solution resolution remedy mitigation lesson lessons rule tip gotcha important critical"
                    " remember note")
"""A rule stated: an obligation (must, should not, mandatory), always / never / do not opening a clause (not "that
do not fit", "you don't need"), or a fix, workaround or lesson worded as an instruction."""
_FAILURE = re.compile(r"^\s*(?:root cause|cause|symptoms?|error|problem|what happened)\s*[:\u2014\u2013-]",
                      re.IGNORECASE)
_ENDED = _Says(re.compile(
    r"\b(?:decommissioned|retired|turned off|switched off|shut down|sunset|superseded|replaced by|deprecated|obsolete"
    r"|revoked|repealed|stopped running|removed from production|no longer (?:runs?|running|used|in use|needed"
    r"|maintained|applies|valid|in force))\b", re.IGNORECASE),
    "decommissioned retired off shut sunset superseded replaced deprecated obsolete revoked repealed stopped removed"
    " longer")
_GOAL = _Says(re.compile(
    r"\b(?P<before>(?:19|20)\d\d)\s+(?:goals?|objectives?|OKRs?|targets?|roadmap|plans?)\b"
    r"|\b(?:goals?|objectives?|OKRs?|targets?|roadmap|plans?)\s+(?:for|in|by)\s+(?:(?:Q[1-4]|H[12])\s+)?"
    r"(?P<after>(?:19|20)\d\d)\b|\broadmap\b|\bOKRs?\b", re.IGNORECASE),
    "goal goals objective objectives okr okrs target targets roadmap plan plans")
"""A goal or plan stated with its year ("the main 2026 goal", "plans for Q3 2027"), or a roadmap or OKRs: "the main
goal of Borg is …" is what a thing is for, not a plan."""
_GOAL_CLOSED = _Says(re.compile(r"\b(?:achieved|reached|abandoned|dropped)\b", re.IGNORECASE),
                     "achieved reached abandoned dropped")
_RUNS = _Says(re.compile(
    r"\b(?:runs?|running|refresh(?:ed|es)?|rebuil(?:t|ds?)|retrain(?:ed|s)?|sync(?:ed|s)?|backed up|backs up|scheduled"
    r"|triggered|execute[sd]?)\b[^.;]{0,40}?\b(?:hourly|daily|nightly|weekly|monthly|every (?:\d+ )?(?:minute|hour"
    r"|day|night|week|month)s?|on a schedule|by cron)\b"
    r"|\b(?:hourly|daily|nightly|weekly|monthly) (?:jobs?|runs?|cron|refresh(?:es)?|builds?|backups?|syncs?|tasks?"
    r"|retrain\w*)\b|\bcron(?:job|tab)?s?\b"
    r"|\b(?:still|now) (?:runs|running|live|in use|used|serves|serving)\b"
    r"|\b(?:runs|running|live|serves|serving) (?:in|on) (?:production|prod)\b|\bwent live\b", re.IGNORECASE),
    "hourly daily nightly weekly monthly every schedule cron crons cronjob cronjobs crontab still now production prod"
    " live")
_DROPPED = _Says(re.compile(
    r"\b(?:instead of|(?:migrat(?:ed|ing|es?)|mov(?:ed|ing|es?)|switch(?:ed|ing|es)?|port(?:ed|ing)) (?:away )?from"
    r"|away from|dropped|removed|no longer|replaced|superseded|deprecated|uninstalled|abandoned)\b", re.IGNORECASE),
    "instead migrated migrating migrate migrates moved moving move moves switched switching switch switches ported"
    " porting away dropped removed longer replaced superseded deprecated uninstalled abandoned")
_REQUIREMENT = _Says(re.compile(
    r"\b(?:must|required|requirements?|mandatory|at (?:least|most)|no (?:more|less|fewer|later|earlier) than"
    r"|minimum|maximum|not exceed)\b|(?<=\w )needs?\b|\bneeded\b", re.IGNORECASE),
    "must required requirement requirements mandatory least most more less fewer later earlier"
    " minimum maximum exceed need needs needed")
"""A need or a bound stated: "researchers need full resolution for at least 2 years", "must", "required", "at most
…"; "Needs to be moved" opening a note is a task, not a requirement."""
_PREFERS = re.compile(r"\b(?:prefers?|preferred|preference|wants)\b", re.IGNORECASE)
_PREFERS_CUES = ("prefer", "wants")
HELD_KINDS = frozenset(("preference", "decision", "identity"))
"""Kinds of observation that keep their entity: what someone prefers, decided, or is."""


@dataclass(frozen=True, slots=True)
class Kept:
    """Why an entity is not proposed for forgetting: ``kind`` (one of :data:`KINDS`), ``evidence``, the words that
    decided it (an observation, or its type or name), and ``until_year``, the last year it keeps it (a goal dated by
    its year; ``None``: for good)."""

    kind: str
    evidence: str
    until_year: int | None = None

    def reason(self, entity_type: str) -> str:
        """The reason a person reads: ``"open work (a Bug): “blocks the Harbor 2.0 release”"``."""
        what = {OPEN_WORK: f"open work (a {entity_type})", CONFIGURATION: "configuration", RULE: "a standing rule",
                AHEAD: "a goal still ahead", IN_USE: "still in use", HOLDS: "holds a preference or decision"}[self.kind]
        return f"{what}: {quote(self.evidence)}"


OPEN_WORK, CONFIGURATION, RULE, AHEAD, IN_USE, HOLDS = (
    "open work", "configuration", "standing rule", "goal ahead", "in use", "holds")
KINDS = (OPEN_WORK, CONFIGURATION, HOLDS, RULE, AHEAD, IN_USE)
"""The kinds of :class:`Kept`, in the order :func:`kept` checks them."""
TYING = frozenset((OPEN_WORK, CONFIGURATION, HOLDS))
"""The kinds whose memory keeps what is tied to it too (what open work touches, what configuration names, where a
preference lives). A standing rule or a goal keeps only itself: a rule about a library does not make the library
current; what is still in use keeps only the datasets it was built from (:func:`is_resource`)."""


def quote(text: str, size: int = 80) -> str:
    """``text`` as a reason quotes it: on one line, cut to ``size`` characters with an ellipsis, in quotation marks
    (``“Written with Typer; about 1,200 lines”``)."""
    text = " ".join(text.split())
    return f"“{text if len(text) <= size else text[:size - 1].rstrip() + '…'}”"


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


def kept(entity_type: str, name: str, status: str, observations: Sequence[tuple[str, str | None]], *,
         year: int | None = None) -> Kept | None:
    """Why the entity is never proposed for forgetting, or ``None``, in the order of :data:`KINDS`: open work,
    configuration, a preference or decision it holds, a standing rule, a goal still ahead, still in use. What is
    done (:func:`is_done`) is neither open work nor configuration; the others hold whether it is done or not.
    ``observations`` are its current ones as ``(text, kind)``, oldest first; ``status`` one of ``active``,
    ``paused``, ``completed``, ``archived``; ``year`` the year asked about (a goal dated before it is past;
    ``None``: every dated goal is ahead)."""
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
    texts = _texts(observations)
    found = _rule(entity_type, name, texts)
    if found is not None:
        return Kept(RULE, found)
    goal = _goal(texts, year)
    if goal is not None:
        return Kept(AHEAD, *goal)
    found = _latest(texts, _RUNS)
    return None if found is None else Kept(IN_USE, found)


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


def _name_text(name: str) -> str:
    """The words of a name in order, lower case, split at case changes too (``RelationTypes_Semantic``: ``"relation
    types semantic"``)."""
    return " ".join(_WORD.findall(_CAMEL.sub(" ", name).lower()))


def _texts(observations: Sequence[tuple[str, str | None]]) -> list[tuple[str, frozenset[str]]]:
    """Each observation's text with its words, lower case (for :class:`_Says`)."""
    return [(text, frozenset(_WORD.findall(text.lower()))) for text, _kind in observations]


def _latest(texts: Sequence[tuple[str, frozenset[str]]], says: _Says) -> str | None:
    """The last of ``texts`` (:func:`_texts`, oldest first) that ``says`` something, unless a later one (or it) says
    it ended (:data:`_ENDED`)."""
    for text, words in reversed(texts):
        if _ENDED.search(text, words):
            return None
        if says.search(text, words):
            return text
    return None


@lru_cache(maxsize=4096)
def _type_words(entity_type: str) -> frozenset[str]:
    """The words of an entity type (:func:`_name_text`); a memory holds few types, each asked for many entities."""
    return frozenset(_name_text(entity_type).split())


def _rule(entity_type: str, name: str, texts: Sequence[tuple[str, frozenset[str]]]) -> str | None:
    """The type, name or observation that makes the entity a standing rule (the module docstring), or ``None``."""
    type_words = _type_words(entity_type)
    if type_words & CODE_TYPES:
        return None
    said = _latest([(text, words) for text, words in texts if not _FAILURE.match(text)], _RULE)
    if said is not None:
        return said
    if any(_ENDED.search(text, words) for text, words in texts):
        return None
    return entity_type if type_words & RULE_TYPES else name if is_rule(entity_type, name) else None


def is_rule(entity_type: str, name: str) -> bool:
    """Whether the type or name says the entity is a standing rule (:data:`RULE_TYPES` in its type,
    :data:`RULE_WORDS` or a vocabulary for writing memory in its name: ``Data Retention Policy``,
    ``RelationTypes_Semantic``), whatever its observations say."""
    if not _type_words(entity_type).isdisjoint(RULE_TYPES):
        return True
    words = _name_text(name)
    return not RULE_WORDS.isdisjoint(words.split()) or _VOCABULARY.search(words) is not None


def _goal(texts: Sequence[tuple[str, frozenset[str]]], year: int | None) -> tuple[str, int | None] | None:
    """``(the last observation that states a goal still ahead in year, the goal's year or None)`` (the module
    docstring), or ``None``."""
    for text, words in reversed(texts):
        found = _GOAL.search(text, words)
        if found is None:
            if _GOAL_CLOSED.search(text, words):
                return None
            continue
        dated = found.group("before") or found.group("after")
        if dated is None:
            return text, None
        return (text, int(dated)) if year is None or int(dated) >= year else None
    return None


def is_resource(entity_type: str, name: str) -> bool:
    """Whether the entity is a dataset or corpus (:data:`RESOURCE_WORDS` in its type or name): what a thing still in
    use was built from, kept with it."""
    return not RESOURCE_WORDS.isdisjoint(_type_words(entity_type).union(_name_text(name).split()))


def is_tool(entity_type: str) -> bool:
    """Whether the type names a tool or library (:data:`TOOL_TYPES`, word by word, split at case changes:
    ``Library``, ``development_tool``, ``claude-plugin``)."""
    return not TOOL_TYPES.isdisjoint(_type_words(entity_type))


def used_end(relation_type: str) -> int | None:
    """Which end a relation of this type says is used: ``1`` its target (``Kelp CLI uses Typer``, ``depends_on``,
    ``read_with``, ``powered_by``), ``0`` its source (``used_by``, ``used_for``, ``is used in``: the word ``used``),
    ``None`` when it is no relation of use (:data:`USE_WORDS`, none of :data:`NOT_USE_WORDS`; word by word, split at
    case changes: ``DEPENDS_ON``)."""
    words = _type_words(relation_type)
    if USE_WORDS.isdisjoint(words) or not NOT_USE_WORDS.isdisjoint(words):
        return None
    return 0 if "used" in words else 1


def says_dropped(text: str) -> bool:
    """Whether ``text`` says something was left (``instead of``, ``migrated from``, ``replaced``, ``no longer`` …):
    a name in it is not a use."""
    return _DROPPED.search(text, frozenset(_WORD.findall(text.lower()))) is not None


def requirement(entity_type: str, observations: Sequence[tuple[str, str | None]]) -> str | None:
    """The last of the current ``observations`` (``(text, kind)``, oldest first) that states a need or a bound
    (:data:`_REQUIREMENT`), not describing a failure (``Cause: …``), or ``None``; never for a code artefact (its
    bounds are the code's)."""
    if not _type_words(entity_type).isdisjoint(CODE_TYPES):
        return None
    for text, words in reversed(_texts(observations)):
        if not _FAILURE.match(text) and _REQUIREMENT.search(text, words):
            return text
    return None
