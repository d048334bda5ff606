"""Contradiction detection: does a new observation change what an older one says?

mememory ("Scoring & Recall", "Contradiction Detection") flags every existing memory whose cosine similarity to
the new one exceeds 0.75 (:data:`SIMILARITY`, kept as written). On real agent memory that rule is mostly noise:
agents write lists (commands, phases, imports, updated files, coding standards) whose lines are close in every
way and are sets, not contradictions. The default mode, :data:`CHECKABLE`, flags a pair only when the two speak
of the same attribute of the same thing and that attribute holds one value at a time
(:mod:`limbic.core.lifecycle.claims` reads what each text claims), with a reason a person reads at once:

- **a single-valued field** — ``Status``, ``Priority``, ``Version``, owner, location, a due date (in English,
  Spanish, Korean and Chinese: ``상태``, ``状态``, ``prioridad``) holding another value: ``status: Open →
  RESOLVED``; two states of one rank agree (``done`` / ``completed``), a key the entity holds three or more
  values of is a list (:func:`lists`), and a line beginning as three or more of the entity's do (``Priority 2
  …``, ``- X.razor → Replaced by Y``: a list written a line at a time, :func:`templates`) only meets work further
  along;
- **a state of work** — the same work planned or in progress on one side and done on the other (``MSVC 호환성 작업
  진행`` / ``모든 MSVC 호환성 문제가 해결됨``, ``Needs to be moved to internal/cpu/`` / ``Moved … to
  internal/cpu/darwin/``), their topics alike and not two things (``Sprint 3`` / ``Sprint 4``, two labels);
- **a count, a version, an amount, a date** of the same thing changed (``three services`` / ``four services``,
  ``React 17`` / ``React 18로``, ``Budget: $40k`` / ``cut to $25k``, ``planned for March 3`` / ``starts March 10``);
  never two snapshots tied to two moments (``… (244 passed) after X`` / ``(286 passed) after Y``);
- **an attribute given another value** — where someone lives or works, who owns a thing (``moved: Madrid →
  Valencia``, ``owner changed: Platform → Web``), and the same sentence with another region, time or name in a
  one-value frame (``deploys go to us-east-1`` / ``us-west-2``);
- **a removal or a correction** — the newer says a thing the older names is gone (``Heroku app shut down``,
  ``RabbitMQ 下线``) or says it corrects or supersedes an earlier text;
- **a stated change, a negation, opposite words** — ``left Acme and joined Initech``, ``no configuration
  files`` / ``JSON config file support``, ``enabled`` / ``disabled``; a keyed value the newer says changed in a
  sentence (``Log retention: 30 days`` / ``Retention bumped to 90d``).

Observations longer than :data:`MAX_WORDS` words or :data:`MAX_CHARS` characters are passages (a day's log, a
summary) and are read clause by clause (:func:`_passage`): work one clause leaves to do, done in a clause of the
newer naming the same numbered or coded thing; longer than :data:`MAX_PASSAGE`, not read. A pair below :data:`FLOOR`
is never read; a new observation raises at most :data:`MAX_FINDINGS` conflicts. Which observations are compared
at all is the store's choice: the same entity's and those of entities that are the same subject
(:func:`limbic.core.store.conflicts.same_subject`), never a related module's. docs/lifecycle.md "Contradictions"
has the labelling rule and the figures.

Pure functions over texts and ``float32`` unit vectors; nothing here reads or writes the store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from limbic.core.lifecycle import change_cues as cues
from limbic.core.lifecycle import claims
from limbic.core.lifecycle.claims import Claim
from limbic.core.lifecycle.frames import STOP, Fact, Value, stem

THRESHOLD = 0.75
"""Cosine similarity above which mememory's rule (mode ``similarity``) flags two observations."""

CHECKABLE = "checkable"
SIMILARITY = "similarity"
MODES = (CHECKABLE, SIMILARITY)
"""``checkable`` (default): a change the texts state or show; ``similarity``: close (mememory's rule)."""

OPTIONS = ("keep_both", "update_old", "supersede", "delete_old")
"""How a person settles a conflict (mememory's resolution options): keep both, replace the old text with the new
one, mark the old one superseded by the new one, delete the old one. In this order they are offered when nothing
says which of the two is current (:func:`options_for`): keeping both is suggested."""
SUPERSEDE_FIRST = ("supersede", "keep_both", "update_old", "delete_old")
"""The options when the newer says it is current (:func:`newer_is_current`): marking the older superseded first
(it stays as history, out of search), keeping both right after."""

FLOOR = 0.2
"""Below this cosine similarity no rule of :data:`CHECKABLE` applies: the cheap bound of a check. The structural
rules (a field, a state, a count, a version, an attribute, a removal) read the texts above it."""
SENTENCE_FLOOR = 0.45
"""The cosine similarity the sentence rules (a stated change, a negation, opposite words) need."""
STATE_OVERLAP = 0.6
"""Share of the smaller topic two states of work must have in common to be the same work."""
BARE_WORDS = 6
"""Texts of this many content words or fewer may contradict without one in common (:func:`_apart`)."""
BARE_TOPIC = 2
"""A state said of almost nothing (``Awaiting review``, ``Merged into main on Friday``: two topic words or fewer on
each side, no label) is the entity's own: work under way and work done contradict (a plan, ``should be …``, and
history, ``was flaky in March``, do not); so is an older one said of almost nothing and a newer that opens with
its result (``미해결, 원인 파악 중`` / ``해결됨: 세션 만료 처리 로직 수정``, ``Draft`` / ``Published to …``)."""
COUNT_OVERLAP = 0.6
"""Share of the smaller topic two counts of one unit must have in common to count the same things."""
AMOUNT_OVERLAP = 0.5
"""Share of the smaller topic two quantities or two dates must have in common to be of the same thing."""
_RANGE = re.compile(r"[<>]=?|≥|≤|\^\d|~\d|\bor (?:later|newer|above|higher)\b|\bat least\b|\bminimum\b|\brequires?\b|"
                    r"\bsupports?\b|\bcompatible\b|以上|이상")
_SINGLE_KINDS = frozenset(("region", "time", "date", "weekday", "money"))
"""Kinds of value one slot holds one of at a time (a list holds names, paths and numbers)."""
_NEGATION_STEMS = frozenset(stem(w) for w in cues.NEGATIONS | {"longer", "anymore", "no", "not", "yet"})
_ONE_VALUE = frozenset(("is", "are", "was", "runs", "run", "listens", "built", "requires", "served", "stored",
                        "expire", "expires", "edits", "writes", "lives", "located", "hosted", "deployed", "set",
                        "limit", "es", "está", "vive"))
_MANY_VALUES = frozenset(("imports", "includes", "include", "supports", "contains", "has", "have", "uses", "also",
                          "and", "like", "likes", "enjoys", "speaks", "plays", "knows"))
MAX_FINDINGS = 2
"""Conflicts one new observation raises at most (the most similar older observations)."""
REMOVAL_FLOOR = 0.55
"""The cosine similarity a removal needs: the older text must be about the thing said gone, not mention it."""
_SNAPSHOT_RULES = frozenset(("state", "count", "amount"))
"""Rules two anchored snapshots never trigger (:func:`_history`)."""
MAX_WORDS = 40
"""Longer observations are passages (a day's log, a summary), not facts: they are read clause by clause."""
CORRECTION_FLOOR = 0.6
"""The cosine similarity an older text needs to be the one a correction corrects."""
NOW_WORDS = 12
"""The most content words an older text may hold for a newer ``now …`` to replace its value (``Search is powered by
Elasticsearch`` / ``Search now runs on OpenSearch``): a longer one tells a story, it gives no slot one value."""
LIST_VALUES = 3
"""Different values from which a field key is a list in an entity (one item a line)."""
_VERSION_WORDS = frozenset(("versi", "relea", "curre", "lates", "버전", "版本", "version", "release", "released"))
_CURRENT = frozenset(("current", "currently", "latest", "now", "is", "pins", "uses", "runs", "running", "actual", "현재",
                      "当前"))
MAX_CHARS = 300
"""Longer observations are passages, not facts with a frame: they are read clause by clause (:func:`_passage`)."""
MAX_PASSAGE = 2000
"""Longer observations (a document pasted in) are not read at all (the similarity mode still compares them)."""
_WORD = re.compile(r"\w+")
_PAST = frozenset((
    "had", "met", "held", "released", "shipped", "flew", "ran", "interviewed", "migrated", "presented", "visited",
    "attended", "went", "closed", "paid", "bought", "completed", "finished", "deployed", "was", "were", "presentó",
    "tuvo", "fue", "visitó",
))
_ADDED = frozenset(("also", "too", "another", "second", "además", "también", "otro", "otra"))


@dataclass(frozen=True, slots=True)
class Finding:
    """A conflict of the new observation with ``other`` (an observation id): ``similarity`` (cosine) and
    ``reason`` (``employer changed: Acme → Initech``, ``negated: …``, ``opposite: …``; ``similar (…)`` in
    mememory's mode)."""

    other: int
    similarity: float
    reason: str


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """The stems of ``text``'s content words, read cheaply: two facts without one in common are never read."""
    return frozenset(stem(w) for w in _WORD.findall(text.lower()) if w not in STOP)


def _change(x: Value, y: Value, a: Fact, b: Fact) -> str:
    shown_x, shown_y = cues.shown(x, y)
    return f"{cues.slot(x, y, a, b)}: {shown_x} → {shown_y}"


def _shared(a: Fact, b: Fact, leave_out: Sequence[Value | None] = ()) -> set[str]:
    keys = {v.key for v in leave_out if v is not None}
    return set(a.words & b.words) - keys


def _stated_change(a: Fact, b: Fact) -> str | None:
    """A change one fact states that the other contradicts (the reason shows ``a``'s value → ``b``'s); two moves
    are two events (``Moved types to pkg/…`` / ``Moved implementation files to internal/…``)."""
    if set(a.lower) & _MOVES and set(b.lower) & _MOVES:
        return None
    for side, other, newer in ((b, a, True), (a, b, False)):
        for move in cues.moves(side):
            if move.old is not None:
                if not other.mentions(move.old) or (move.new is not None and other.mentions(move.new)):
                    continue
                if move.cue in cues.NEGATIONS and cues.negation(other) is not None or move.new is None and \
                        claims.has_any(" ".join(other.lower), claims.REMOVING):
                    continue  # both say it stopped ("no longer using Tauri" / "removing Tauri dependencies")
                if move.old.kind == "word" and cues.negation(side) is not None:
                    continue  # "no longer on call": a negation, said as one
                if not _shared(side, other, (move.old, move.new)):
                    continue
                if move.old.kind == "word" or _reported(other):
                    continue  # "replaced the legacy modal", "again": a word, not a value the other holds; "error
                    # occurred due to Math.random()": a report, still true when the thing is replaced
                if move.new is None:
                    return f"no longer: {move.old.text}" if newer else f"again: {move.old.text}"
                x, y = (move.old, move.new) if newer else (move.new, move.old)
                return _change(x, y, a if newer else b, b if newer else a) if newer else _change(x, y, a, b)
            new = move.new
            if new is None or other.mentions(new):
                continue
            if move.cue in cues.NOW and set(other.lower) & cues.NOW:
                continue  # both say what holds now
            kinds = ("version", "number") if new.kind == "version" else (new.kind,)
            old = next((v for v in other.values if v.kind in kinds and v.key != new.key and not side.mentions(v)), None)
            if old is None or not _shared(side, other, (old, new)):
                continue
            if new.kind in ("number", "money") and _unit(other, old) != _unit(side, new):
                continue  # "port 9223" / "8 tools": two quantities of two things
            if old.text.endswith("%") != new.text.endswith("%"):
                continue  # "Gradle 8+" / "completion from 98% → 99.5%": a share is not a version
            if old.text.lower().rstrip("s") == new.text.lower().rstrip("s"):
                continue  # "its specific ID" / "modal IDs": one word written twice, not two values
            if move.cue in cues.NOW and (claims.in_code(old.text) != claims.in_code(new.text)
                                         or _content(" ".join(other.tokens)) > NOW_WORDS):
                continue  # "its specific ID" / "now stores childModalId": a word and a name in code fill no one slot;
                # "TemplateSearchModal … was only calling …": a narrative gives no slot one value
            label = cues.slot(old, new, other, side) if new.kind == "named" else ""
            if label in ("changed", "switched") and (_reported(other) or not (
                    newer and set(other.lower) & _ONE_VALUE and not set(other.lower) & _MANY_VALUES
                    and _shared(side, other, (old, new)) - _VERBS_OF_USE)):
                continue  # "now uses Y": nothing says the two names fill one slot (an employer, a home), or the
                # other reports what happened
            if label and label not in ("changed", "switched") and cues.slot(old, old, other, other) != label:
                continue  # "joined an LGBTQ group" / "asked John for books": the other's name fills no such slot
            return _change(old, new, a, b) if newer else _change(new, old, a, b)
    return None


def _reported(other: Fact) -> bool:
    """Whether the text a stated change meets reports what happened (:data:`~limbic.core.lifecycle.claims.
    REPORT_CUES`: ``Hydration error occurred due to Math.random()`` / ``Replaced Math.random() with a seeded
    generator``): the report stays true, the change is what came of it."""
    return claims.has_any(" ".join(other.lower), claims.REPORT_CUES)


_MOVES = frozenset(("moved", "migrated", "relocated", "transferred"))
_VERBS_OF_USE = frozenset(stem(w) for w in ("use", "uses", "used", "using", "run", "runs", "now", "also", "switched",
                                            "moved", "migrated", "replaced"))
"""Words two texts share that do not say what slot a name fills (``uses X`` / ``now uses Y``); a word besides them,
the older giving its subject one value, does (``CI runs on Jenkins`` / ``CI fully moved to GitHub Actions``)."""


def _unit(fact: Fact, value: Value) -> str:
    """What a number counts: the first content word after it ("8 tools", "$25 per month"), else the one before
    ("port 9000")."""
    after = [w for w in fact.lower[value.end: value.end + 3] if w[0].isalpha() and w not in STOP]
    before = [w for w in fact.lower[max(0, value.start - 2): value.start] if w[0].isalpha() and w not in STOP]
    return stem(after[0]) if after else stem(before[-1]) if before else ""




def _past(fact: Fact) -> bool:
    """Whether ``fact`` tells of an event in the past ("had", "was held"; not "must be finished")."""
    return any(w in _PAST and (i == 0 or fact.lower[i - 1] not in ("be", "been", "to")) for i, w in enumerate(fact.lower))




def _negated(a: Claim, b: Claim) -> str | None:
    """One fact negates what the other asserts: the negated one says nothing the positive one does not, its
    negation aside (``No configuration files`` / ``JSON config file support``, ``doesn't like spicy food`` /
    ``likes spicy food``), at most one word excepted when it says six or more."""
    neg_a, neg_b = cues.negation(a.fact), cues.negation(b.fact)
    if (neg_a is None) == (neg_b is None):
        return None
    positive, negated, phrase = (a, b, neg_b) if neg_b is not None else (b, a, neg_a)
    if _FREE_OF.search(positive.text):
        return None  # "can't have dairy" / "a dairy-free recipe": the positive one says it without, too
    said = {w for w in negated.fact.words if w not in _NEGATION_STEMS}
    extra = said - positive.fact.words
    if len(said) < 2 or len(extra) > (1 if len(said) >= 6 else 0):
        return None
    return f"negated: {phrase}"


_FREE_OF = re.compile(r"\w-free\b|\bfree of\b|\bwithout\b|\bmissing\b|\black(?:s|ing)?\b|\bsin\s|\bsans\b|"
                      r"\blibre de\b|\bno\s+\w+\s+(?:at all|ever)\b|없이|없는|프리|无|不含|免", re.IGNORECASE)
"""Words that say a thing is left out (``dairy-free``, ``without sugar``, ``missing .db files``, ``sin gluten``,
``无糖``): a text holding one agrees with a negation of it, it does not assert it."""


def _opposite(a: Claim, b: Claim) -> str | None:
    """Opposite words, one on each side, the rest of the two alike."""
    pair = cues.opposite(a.fact, b.fact)
    if pair is None or a.fact.lower and b.fact.lower and (a.fact.lower[0], b.fact.lower[0]) == pair:
        return None  # "Sync handler checks …" / "Async handler checks …": the opposite names two things
    left = {w for w in a.fact.words if not any(w in p for p in pair)}
    right = {w for w in b.fact.words if not any(w in p for p in pair)}
    shared = left & right
    if not shared or len(shared) < 0.6 * min(len(left), len(right)):
        return None
    return f"opposite: {pair[0]} → {pair[1]}"


def _field(a: Claim, b: Claim) -> str | None:
    """A single-valued field (:data:`~limbic.core.lifecycle.claims.FIELD_KEYS`) holding another value: ``status:
    Open → RESOLVED``, ``priority: medium → high``; two states of one rank (``done`` / ``completed``) agree, and a
    value that holds the other (``high`` / ``high (P1)``) refines it."""
    if a.field is None or b.field is None or a.field[0] != b.field[0]:
        return None
    if a.field[1] != b.field[1] and not (a.field[1] in claims.FIELD_KEYS[a.field[0]]
                                         and b.field[1] in claims.FIELD_KEYS[b.field[0]]):
        return None  # "Frontend status" / "Backend status": two things' fields
    key, value_a, value_b = a.field[0], a.field[2], b.field[2]
    plain_a, plain_b = _plain(_main(value_a)), _plain(_main(value_b))
    if not plain_a or not plain_b or plain_a in plain_b or plain_b in plain_a:
        return None
    state_a, state_b = claims.value_state(value_a), claims.value_state(value_b)
    if state_a is not None and state_b is not None and claims.STATE_RANK[state_a] == claims.STATE_RANK[state_b]:
        return None
    if key == "status" and (state_a is None) != (state_b is None) and plain_a.split()[0] == plain_b.split()[0]:
        return None
    return f"{a.field[1].split()[-1]}: {_short(value_a)} → {_short(value_b)}"


def _state(a: Claim, b: Claim) -> str | None:
    """The same work in two states: planned or in progress on one side, done on the other (``MSVC 호환성 작업 진행``
    / ``모든 MSVC 호환성 문제가 해결됨``), about the same topic and not two different things."""
    own = _own_status(a) and _result(b.text, tagged=True)  # "Status: PENDING - …" / "✅ COMPLETED - …"
    if (a.field is None) != (b.field is None):  # "Current status: Database partially set up" / "Database ready for …"
        a, b = _stated(a), _stated(b)
    if a.state is None or b.state is None or a.field is not None or b.field is not None or _mixed(a) or _mixed(b):
        return None  # a passage whose clauses are in two states is read clause by clause (_passage)
    if _describes(a.text) or _describes(b.text):
        return None
    rank_a, rank_b = claims.STATE_RANK[a.state], claims.STATE_RANK[b.state]
    if rank_a == rank_b or max(rank_a, rank_b) < claims.STATE_RANK[claims.DONE] or claims.other_things(a, b) and not own:
        return None  # planned / in progress: both still to finish
    if rank_b < rank_a and a.state != claims.CANCELLED and not claims.has_any(b.text.lower(), claims.REOPEN_CUES):
        return None  # "Completed Phase 1 of the consolidation" / "Ready to continue with the remaining steps": the
        # next piece of work, not this one undone (work cancelled and then under way again is the same work)
    bare = (len(a.topic) <= BARE_TOPIC and len(b.topic) <= BARE_TOPIC and a.label is None and b.label is None
            and claims.PLANNED not in (a.state, b.state) and not _past(a.fact)) or (
        len(a.topic) <= BARE_TOPIC and a.label is None and a.state in (claims.ACTIVE, claims.OPEN) and not _past(
            a.fact) and claims.headline(b.text) == b.state and _result(b.text)) or own  # "미해결, 원인 파악 중" / "해결됨: 세션 만료 처리 로직 수정"
    same_work = any("#" in t or " " in t for t in a.topic & b.topic)  # PR #412 / #412; Task 7 / task 7
    topic_a, topic_b = _about(a, b)
    if (topic_a or topic_b) and not bare and not same_work:
        shared = topic_a & topic_b
        if not shared or len(shared) / min(len(topic_a), len(topic_b)) < STATE_OVERLAP or (len(shared) < 2 and min(
                len(topic_a), len(topic_b)) > 2):
            return None
    return f"state: {a.state} → {b.state}"


_DESCRIBES = re.compile(r"(?:GET|POST|PUT|PATCH|DELETE|HEAD)\s+/|(?:if|when|whenever|si|cuando)\s|(?:如果|若|만약|만일)",
                        re.IGNORECASE)


def _describes(text: str) -> bool:
    """Whether ``text`` describes how something behaves rather than how far work is: an API endpoint (``PUT
    /api/orders/{id}/complete-all：全部完成``) or a condition (``If hole punch succeeds, the connection is
    upgraded``): the words of work done in it name what happens, not a state."""
    return _DESCRIBES.match(text.lstrip("-*• ")) is not None


def _about(a: Claim, b: Claim) -> tuple[frozenset[str], frozenset[str]]:
    """The topics of ``a`` and ``b`` without the subject both open with (``Joanna has been working on a project`` /
    ``Joanna finished a presentation``: the entity both are written about, not a thing they share)."""
    first_a, first_b = a.text.split(maxsplit=1)[:1], b.text.split(maxsplit=1)[:1]
    if not first_a or first_a != first_b or not first_a[0][:1].isupper():
        return a.topic, b.topic
    subject = claims.claim(first_a[0]).topic
    return a.topic - subject, b.topic - subject


def _says_more(topic: frozenset[str]) -> bool:
    """Whether a text says something besides its count: some topic word, two Chinese, Japanese or Korean character
    pairs at least (``目前有 8 个服务``: only ``目前``, now, beside the count)."""
    return bool(topic) and not (len(topic) <= 2 and all(_CJK_CUE.search(t) for t in topic))


_STEPS = frozenset(("added", "created", "updated", "refactored", "ported", "integrated", "moved", "migrated",
                    "removed", "debugged", "upgraded", "tests", "test"))
"""Words that open a step of work (``Tests added: …``, ``Added a retry``), not its end."""


def _result(text: str, tagged: bool = False) -> bool:
    """Whether ``text`` opens with the end of its entity's work (``✅ COMPLETED - …``, ``Fixed: 2026-01-14``,
    ``해결됨: …``), not with a step of it (``Tests added: …``, ``Added a retry to the client``). ``tagged``: only
    as a tag — a mark, a label, capitals or a dash after it — not as a verb with its object (``Implemented
    GetAllTicketsAsync - returns …`` is one piece of the work)."""
    state = claims.headline(text)
    if state is None or claims.STATE_RANK[state] != _DONE_RANK:
        return False
    label = claims.labelled(text)[0]
    opening = label or " ".join(text.lower().split()[:2])
    if set(_WORD.findall(opening.lower())) & _STEPS:
        return False
    return not tagged or label is not None or _TAGGED.match(text) is not None


_TAGGED = re.compile(r"\W*(?:\[[^\]]*\]\s*)?(?:✅|☑|✔|\[x\]|[A-Z]{3,}(?:\s+[A-Z]{3,})?\b|\w+\s*[-–—:])")
"""A state written as a tag: a mark (``✅``), words in capitals (``[2026-01-11] IMPLEMENTATION COMPLETE``), or one word
and a dash or colon (``Done — …``)."""


def _own_status(c: Claim) -> bool:
    """Whether ``c`` is its entity's status field whose value is a state, a comment after a dash aside (``Status:
    PENDING - depends on Task-3.4``, ``Status: IN PROGRESS - signature mismatches identified``): the entity's own
    state, as a newer text opening with its result (``✅ COMPLETED - …``) is."""
    return c.field is not None and c.field[0] == "status" and claims.value_state(_main(c.field[2])) is not None


def _stated(c: Claim) -> Claim:
    """``c``, or the value of its status field read as a text of its own when it has one (``Current status
    (2026-02-25): Database partially set up``: ``Database partially set up``)."""
    return claims.claim(c.field[2]) if c.field is not None and c.field[0] == "status" else c


def _mixed(c: Claim) -> bool:
    """Whether the clauses of ``c`` state work in two ranks (``任务1 已 done；任务2 已置 in-progress``)."""
    parts = claims.clauses(c.text)
    return len(parts) > 1 and len({claims.STATE_RANK[s] for s in (claims.claim(p).state for p in parts)
                                   if s is not None}) > 1


def _all_done(a: Claim, b: Claim) -> str | None:
    """The older says some work is not done yet and the newer that all of it is, by the same verb (``P1A-3 产物未提交，
    待用户批准检查点提交`` / ``全部工作已提交并 push``, ``Changes not yet deployed`` / ``All services deployed``)."""
    return _verbs_done(a.text, b.text)


def _verbs_done(a: str, b: str) -> str | None:
    verbs = claims.not_yet(a) & claims.all_done(b)
    return f"state: not yet → all done ({min(verbs)})" if verbs and not claims.not_yet(b) & verbs else None


def _count(a: Claim, b: Claim) -> str | None:
    """A count of the same things changed (``Three services`` / ``four services``, ``노드 3대`` / ``5대``); the rest
    of the two about the same topic."""
    if not a.counts or not b.counts or claims.other_things(a, b):
        return None
    mine = {unit: number for unit, number, _ in a.counts}
    for unit, number, shown in b.counts:
        old = mine.get(unit)
        if old is None or old == number or any(u == unit and n != old for u, n, _ in a.counts):
            continue  # "86개 서브태스크 중 84개 완료" / "2개 서브태스크가 지연됨": parts of a whole the older counts
        words = set(unit.split()) | claims.cjk_pairs(unit)
        rest_a, rest_b = a.topic - words, b.topic - words
        if _says_more(rest_a) and _says_more(rest_b) and len(rest_a & rest_b) / min(len(rest_a), len(rest_b)) < COUNT_OVERLAP:
            continue
        return f"{shown}: {old} → {number}"
    return None


def _children(a: Claim, b: Claim) -> str | None:
    """A child born after the older counted them (``Has two kids`` / ``welcomed their third child``, ``자녀 한 명`` /
    ``둘째 아들 태어남``): the newer names a child of a rank above the older's count, and counts none itself."""
    count, _ = claims.children(a.text)
    newer, rank = claims.children(b.text)
    if count is None or rank is None or newer is not None or rank <= count:
        return None
    return f"children: {count} → {rank}"


_PARTNER_ORDER = {"single": 0, "dating": 1, "engaged": 2, "married": 3, "divorced": 4}


def _partnered(a: Claim, b: Claim) -> str | None:
    """Someone's standing with a partner changed (``Single, no kids`` / ``Got married in June``, ``Soltera`` /
    ``Se casó en mayo``): any other stage, except single after divorced or divorced after single (both true)."""
    x, y = claims.partnered(a.text), claims.partnered(b.text)
    if x is None or y is None or x == y or {x, y} == {"single", "divorced"}:
        return None
    return f"relationship: {x} → {y}"


def _version(a: Claim, b: Claim) -> str | None:
    """Another version of the same product (``Python 3.9`` / ``Python 3.12``, ``React 17`` / ``React 18로``), or
    of the thing itself when both speak of its version and one says which is current (``v2.2.0 released`` /
    ``Current version is v2.4.0``) or both open with it, one saying it is current (``Version 2.3.0, MIT license``
    / ``v3.0.0 uses …``; not ``v2.2.0 released March 3`` / ``v2.3.0 released April 20``); never a range and a
    version in it (``requires Node >= 18``)."""
    if _RANGE.search(a.text) or _RANGE.search(b.text):
        return None
    (pa, bare_a), (pb, bare_b) = claims.versions(a.text), claims.versions(b.text)
    if (bare_a and bare_b and not bare_a & bare_b and _OWN_VERSION.match(a.text) and _OWN_VERSION.match(b.text)
            and _current(a, b)):
        return f"version: {min(bare_a)} → {min(bare_b)}"
    if claims.other_things(a, b):
        return None
    for product, x in pa.items():
        y = pb.get(product)
        if y is None or y == x or x in pb.values() or y in pa.values() or _within(x, y):
            continue  # the same version, one in both, or "Python 3" / "python 3.11": a refinement
        if _several(a.text, product) or _several(b.text, product):
            continue  # "JUnit 3 and JUnit 4": a text naming versions of it, not the one in use
        return f"version: {_shown(a.text, product)} {x} → {y}"
    raised = claims.upgraded(b.text)
    if len(bare_a) == 1 and not pa and len(raised) == 1 and not raised & bare_a and not bare_a & bare_b and _raised(
            min(bare_a), min(raised)):
        return f"version: {min(bare_a)} → {min(raised)}"  # "Cluster version 1.27" / "Upgraded the control plane to 1.29"
    own = any(c.field is not None and c.field[0] == "version" for c in (a, b))  # "Version: 2.3.1" / "Running v2.4.0"
    if bare_a and bare_b and not bare_a & bare_b and _current(a, b) and (own or claims.topic_overlap(a, b) >= 0.3):
        return f"version: {min(bare_a)} → {min(bare_b)}"
    return None


_OWN_VERSION = re.compile(r"\s*(?:version\s+|v)\d+(?:\.\d+)+\b", re.IGNORECASE)
"""A text that opens with a version (``Version 2.3.0, MIT license``, ``v3.0.0 uses …``) gives its entity's own."""


def _raised(x: str, y: str) -> bool:
    """Whether version ``y`` follows ``x`` as the next of one thing's: written alike (as many parts) and higher
    (``1.27`` → ``1.29``, ``1.8.2`` → ``2.0.0``; not ``1.2.0`` → ``18.2``, another thing's)."""
    px, py = [int(p) for p in x.split(".")], [int(p) for p in y.split(".")]
    return len(px) == len(py) and py > px and py[0] - px[0] <= 1


def _shown(text: str, product: str) -> str:
    """``product`` as ``text`` writes it."""
    at = text.lower().find(product)
    return text[at:at + len(product)] if at >= 0 else product


def _within(x: str, y: str) -> bool:
    """Whether one version is a prefix of the other (``3`` and ``3.11``)."""
    return x.startswith(y + ".") or y.startswith(x + ".")


def _several(text: str, product: str) -> bool:
    """Whether ``text`` names two or more versions of ``product`` (``VP8 and VP9``, ``JUnit 3 and JUnit 4``)."""
    return len(re.findall(rf"{re.escape(product)}\s*v?\d", text.lower())) > 1


def _current(a: Claim, b: Claim) -> bool:
    """Both speak of a version, and one says which is current (not two releases, both history)."""
    words = [a.fact.words | set(a.fact.lower), b.fact.words | set(b.fact.lower)]
    versioned = [bool(w & _VERSION_WORDS) or any(v.kind == "version" and v.text.lower().startswith("v")
                                                 for v in c.fact.values) for w, c in zip(words, (a, b), strict=True)]
    return all(versioned) and any(w & _CURRENT for w in words)


def _slot(a: Claim, b: Claim) -> str | None:
    """Where someone lives or works, or who owns a thing, given another value (``home: berlin → munich``); never
    two moves each tied to a year."""
    if a.slot is None or b.slot is None or a.slot[0] != b.slot[0] or a.slot[1] == b.slot[1]:
        return None
    if _in_year(a) and _in_year(b):
        return None  # "Moved to Berlin in 2019" / "Lived in Munich 2015–2019": two dated events, both history
    if a.slot[1].lower() in b.text.lower() or b.slot[1].lower() in a.text.lower():
        return None
    if a.slot[1].lower() == b.slot[1].lower() or stem(a.slot[1]) == stem(b.slot[1]):
        return None
    return f"{_SLOT_NAMES[a.slot[0]]}: {a.slot[1]} → {b.slot[1]}"


def _in_year(c: Claim) -> bool:
    """Whether ``c`` ties itself to a year (``in 2019``, ``2018년``, ``February 2026``)."""
    return any(re.search(r"(?:19|20)\d\d", key) for key in claims.when(c.text) if key.startswith("date"))


_SLOT_NAMES = {"home": "moved", "employer": "employer changed", "owner": "owner changed"}


def _frame(a: Claim, b: Claim) -> str | None:
    """The same sentence with one value of a single-valued kind changed (``deploys go to us-east-1`` / ``…
    us-west-2``: a region, a time, an amount); never two past events, never an identifier or a name (lists)."""
    fa, fb = a.fact, b.fact
    if fa.frame != fb.frame or _ADDED & set(fb.lower):
        return None
    diffs = [(x, y) for x, y in zip(fa.slots, fb.slots, strict=True) if x is not None and y is not None
             and x.key != y.key]
    if len(diffs) != 1 or diffs[0][0].kind != diffs[0][1].kind:
        return None
    kind = diffs[0][0].kind
    if kind not in _SINGLE_KINDS and not (kind in ("named", "number", "version") and _single_frame(fa)
                                          and not _code_only(fa) and not _code_only(fb)):
        return None
    x, y = diffs[0]
    if x.kind in ("date", "time", "weekday") and _past(fa) and _past(fb):
        return None  # two past events on two dates
    return _change(x, y, fa, fb)


def _single_frame(fact: Fact) -> bool:
    """Whether ``fact``'s frame gives its subject one value (``is``, ``runs on``, ``listens on``, ``built with``,
    ``expire after``), not one of many (``imports``, ``includes``, ``supports``, ``uses``, a bare list item)."""
    words = set(fact.lower)
    return bool(words & _ONE_VALUE) and not words & _MANY_VALUES and fact.frame[:1] != ("<named>",)


def _corrected(a: Claim, b: Claim, similarity: float) -> str | None:
    """The newer says it corrects or supersedes an earlier text (``CORRECTED: …``, ``(supersedes earlier …
    wording)``, ``更正``) and the older is close to it: about the same topic, or naming the same code
    (``api.minimax.chat``)."""
    if not b.correction or a.correction or similarity < CORRECTION_FLOOR:
        return None
    if a.state == claims.DONE and _in_year(a):
        return None  # "Comparison … completed February 2026": a dated event is not what a correction corrects
    if claims.topic_overlap(a, b) < 0.5 and not {n for n in claims.names(a.text)[1] & claims.names(b.text)[1]
                                                 if re.search(r"[./_]", n)}:
        return None  # a path, a host, a file in common; not a product's name (LightRAG)
    return "corrected by the newer"


def _restated(a: Claim, b: Claim) -> str | None:
    """A keyed value the newer says changed in a sentence (``Log retention: 30 days`` / ``Retention bumped to 90d
    for compliance``, ``负责人：张伟`` / ``用户服务现由刘洋负责``, ``배포 담당: 정우`` / ``배포 담당자 현아로 바뀜``): the
    older is ``Key: value`` (a value of six words at most), the newer names the key (its last word, or a word
    of the same single-valued key: ``Responsable`` / ``owner``; or two of its words: ``Error message displays:
    '…'`` / ``Error messages updated to …``), states a change and no longer holds the value."""
    if a.label is None or b.label is not None or not b.change or a.label in claims.STATE_WORDS:
        return None
    written = claims.labelled(a.text)[1]
    quoted = _QUOTED.fullmatch(written.strip())
    value = quoted.group(1) if quoted else _main(written)
    if not value or (claims.words_long(written) > 6 and not quoted) or _plain(value) in _plain(b.text):
        return None  # "Video UI components: VideoSizeSelector (…), DurationSelector (…), …": a list
    if claims.is_path(value) and not any(claims.in_code(t) for t in b.fact.tokens):
        return None  # "Local path: $env:…/gitconfig" / "All file paths in the docs updated": no path in its place
    words, low = a.label.split(), b.text.lower()
    keys = (*claims.FIELD_KEYS[a.field[0]], *claims.SLOT_CUES.get(a.field[0], ())) if a.field is not None else ()
    named = sum(stem(w) in b.fact.words for w in words if w not in STOP)
    if not (stem(words[-1]) in b.fact.words or named >= 2 or (_CJK_CUE.search(words[-1]) and words[-1] in low)
            or any(claims.has_any(low, (k,)) for k in keys)):
        return None
    if stem(words[-1]) in _CHANGE_STEMS or _CJK_CUE.search(words[-1]) and claims.has_any(words[-1], claims.CHANGE_CUES):
        return None  # "UPDATED: src/app.ts" / "updated the docs": the key is the change itself
    return f"{a.label}: {_short(value)} → {_short(b.text)}"


_CHANGE_STEMS = frozenset(stem(c) for c in claims.CHANGE_CUES)
_QUOTED = re.compile(r"""['"“‘`](.+)['"”’`]""")
"""A value written in quotes: one value, however many words (``Error message displays: 'URL must end with …'``)."""


def _corrected_opposite(a: Claim, b: Claim) -> str | None:
    """The newer says it corrects (:func:`_corrected`) and the older holds the opposite of one of its words
    (``API-based service`` / ``CORRECTED: … a LOCAL/EMBEDDED Python library``) or denies one (``Not truly
    local/embedded``), however far apart the rest."""
    if not b.correction or a.correction:
        return None
    pair = cues.opposite(a.fact, b.fact)
    if pair is not None:
        return f"corrected: {pair[0]} → {pair[1]}"
    denied = cues.negation(a.fact)  # "Not truly local/embedded - still API-based" / "CORRECTED: … LOCAL/EMBEDDED"
    said = claims.claim(denied).fact if denied else None
    shared = sorted(cues.terms(said) & cues.terms(b.fact)) if said is not None and cues.negation(b.fact) is None else []
    return f"corrected: not {shared[0]} → {shared[0]}" if shared else None


def _removed(a: Claim, b: Claim) -> str | None:
    """The newer says a thing the older names is gone (``Heroku app shut down``, ``RabbitMQ 下线``, ``SendGrid dado
    de baja``), the older not itself a removal."""
    if not b.removed or a.removing or b.state == claims.PLANNED or cues.negation(a.fact) is not None:
        return None  # "to be deleted once confirmed": a plan, not a removal
    named = {v.key for v in a.fact.values if v.kind == "named"} | {stem(v.key) for v in a.fact.values
                                                                      if v.kind == "named"}
    written_a = {t for t in a.fact.tokens if t[:1].isupper()}
    named_b = {stem(v.key) for v in b.fact.values if v.kind == "named"} | {stem(t) for t in b.fact.tokens
                                                                           if t in written_a}  # "…; Redis was removed"
    capitals = {stem(t) for t in written_a}
    gone = b.removed & (named | (capitals & named_b)) & _written_both(a, b)
    if not gone or len(gone) < len(b.removed) / 2:
        return None  # "Outer tokio::RwLock removed" / "internal RwLock": a part of it, qualified, is gone
    shown = [t for t in a.fact.tokens if stem(t) in gone or t.lower() in gone]
    return f"removed: {shown[0] if shown else sorted(gone)[0]}"


def _replaced(a: Claim, b: Claim) -> str | None:
    """The newer says something took the place of a thing the older holds and that thing is given up (``Uses Webpack
    for bundling`` / ``Bundler switched to Vite; webpack.config.js deleted``, ``Drinks tea every morning`` /
    ``Switched to coffee, gave up tea entirely``): a switch (:data:`~limbic.core.lifecycle.claims.SWITCH_CUES`)
    and a removal of a word the older says, not a word it negates, nor one it speaks of removing."""
    if not b.removed or a.removing or b.state == claims.PLANNED or not claims.has_any(b.text.lower(), claims.SWITCH_CUES):
        return None
    negated = cues.negation(a.fact)  # "doesn't like coffee": not a thing the older holds
    held = a.fact.words - _NEGATION_STEMS - (_words(negated) if negated is not None else frozenset())
    gone = {w for w in b.removed & held if len(w) > 2} & _written_both(a, b)
    if not gone or all(_renamed(w, b) for w in gone):
        return None  # "CYTOKINE_* replaced with BRAIN_CYTOKINE_*": renamed, the thing is still there
    shown = [t for t in a.fact.tokens if stem(t) in gone or t.lower() in gone]
    return f"replaced: {shown[0] if shown else sorted(gone)[0]}"


def _written_both(a: Claim, b: Claim) -> frozenset[str]:
    """The stems of the words both texts write alike, a plural aside, parts of a path or a dotted name included
    (``webpack`` / ``webpack.config.js``): ``RecentFood`` and ``RecentFoodRecord`` share a stem, not a word."""
    def plain(c: Claim) -> set[str]:
        return {w.rstrip("s") for t in c.fact.tokens for w in {t.lower(), *re.split(r"[._/:-]+", t.lower())} if w}
    return frozenset(stem(w) for w in plain(a) & plain(b)) | frozenset(w for w in plain(a) & plain(b))


def _renamed(gone: str, b: Claim) -> bool:
    """Whether the newer keeps what it says is gone inside another name (``CYTOKINE_*`` → ``BRAIN_CYTOKINE_*``)."""
    return any(t.lower().find(gone) > 0 for t in b.fact.tokens)


def _main(value: str) -> str:
    """A field's value without what follows it in parentheses or after a dash (``한지호 (최수진 퇴사 후 인계)``)."""
    return re.split(r"\s[(（\[]|[(（\[]|\s[-–—]\s", value, maxsplit=1)[0] or value


def _amount(a: Claim, b: Claim) -> str | None:
    """A quantity of the same thing changed, the newer saying so (``Rate limit: 100 requests per minute`` /
    ``Rate limit raised to 300 req/min``, ``Budget: $40k`` / ``Budget cut to $25k``, ``timeout is 30s`` /
    ``DEFAULT_TIMEOUT changed to 10s``), or one field holding another: one quantity each, the topic alike; of an
    older list of quantities, the one whose item's words the newer holds (``Validates: prompt required, max 10
    images, …`` / ``Max reference images validation updated to 14``)."""
    if not (b.change or (a.label is not None and a.label == b.label) or _setting(a, b)) or claims.other_things(a, b):
        return None
    qa, qb = claims.quantities(a.text), claims.quantities(b.text)
    if len(qa) > 1 and len(qb) == 1 and b.change:
        qa = [q for q, near in _keyed(a.text) if len(near) >= 2 and near <= b.topic]  # "max 10 images" of a list
    if len(qa) != 1 or len(qb) != 1 or qa[0] == qb[0] or _unit_of(qa[0]) != _unit_of(qb[0]):
        return None  # one quantity each, of one kind (two durations, two amounts of money, two shares)
    shared = a.topic & b.topic
    if not shared or (claims.topic_overlap(a, b) < AMOUNT_OVERLAP and len(shared) < 2):
        return None
    if a.label is not None and a.label == b.label and not b.change and not _same_item(a, b):
        return None  # "Travel policy: meals up to €40/day" / "Travel policy: hotels up to €180/night": two items
    return f"amount: {qa[0]} → {qb[0]}"


def _same_item(a: Claim, b: Claim) -> bool:
    """Whether two texts under one heading speak of the same item: besides the heading's words, their topics are
    alike (:data:`AMOUNT_OVERLAP` of the smaller) or one of them says nothing besides its value (``Budget: $40k``)."""
    heading = _words(a.label or "")
    rest_a, rest_b = a.topic - heading, b.topic - heading
    if not rest_a or not rest_b:
        return True
    return len(rest_a & rest_b) >= AMOUNT_OVERLAP * min(len(rest_a), len(rest_b))


def _setting(a: Claim, b: Claim) -> bool:
    """Whether ``b`` gives a setting of ``a`` a value: both open with one code name (``new_checkout enabled for 10%
    of users`` / ``new_checkout at 100% rollout``) or ``b`` is ``key=value`` whose key's words ``a`` holds
    (``Per-client rate limit set to 100 req/s`` / ``rate_limit_per_client=250``)."""
    first_a, first_b = (c.text.split(maxsplit=1)[0].lower() if c.text.split() else "" for c in (a, b))
    if first_a == first_b and first_a in claims.names(a.text)[1]:
        return not (claims.versions(a.text)[0] or claims.versions(b.text)[0])  # "uses NumPy 1.26": a version
    key = b.label.split() if b.label is not None and "_" in b.text.split("=")[0] + b.text.split(":")[0] else []
    return len(key) >= 2 and {stem(w) for w in key if w not in STOP} <= a.fact.words | a.topic


def _keyed(text: str) -> list[tuple[str, frozenset[str]]]:
    """The quantities of ``text`` (:func:`~limbic.core.lifecycle.claims.quantities`) each with the stems of the
    content words of its own item (``max 10 images``: ``{max, imag}``), the items of a list being parted by commas
    and semicolons."""
    out = []
    for item in re.split(r"[,;:]\s", text):
        found = claims.quantities(item)
        if len(found) == 1:
            out.append((found[0], _words(re.sub(r"[$€£]?\d[\d,.]*\w*", " ", item))))
    return out


def _unit_of(quantity: str) -> str:
    """What kind of quantity ``quantity`` is: ``money``, ``share``, ``time``, ``size`` or a bare ``number``
    (``10s`` and ``30 s`` are of one kind, ``100%`` and ``3`` are not)."""
    low = quantity.lower()
    if low[:1] in "$€£":
        return "money"
    unit = re.sub(r"^[\d.,]+", "", low)
    return {"%": "share", "ms": "time", "s": "time", "h": "time", "d": "time", "w": "time", "min": "time",
            "gb": "size", "mb": "size", "tb": "size", "k": "number", "m": "number", "x": "factor"}.get(unit, "number")


def _when(a: Claim, b: Claim) -> str | None:
    """The same event at another date or time, one of the two a plan or a change (``Sprint 4 planned for March
    3`` / ``Sprint 4 starts March 10``, ``定在周三下午两点`` / ``改到周四上午十点``); never two past events."""
    da, db = claims.when(a.text), claims.when(b.text)
    kinds = {k.split()[0] for k in da} & {k.split()[0] for k in db}
    da = {k: v for k, v in da.items() if k.split()[0] in kinds}
    db = {k: v for k, v in db.items() if k.split()[0] in kinds}
    if not da or not db or da.keys() & db.keys() or claims.other_things(a, b):
        return None  # nothing of one kind (a weekday and a time are two facts), or a date in common
    if not (b.change or _scheduled(a) or _scheduled(b)) or (_past(a.fact) and _past(b.fact)):
        return None
    rest_a, rest_b = _undated(a.text, da), _undated(b.text, db)
    if (len(rest_a) > 1 or len(rest_b) > 1) and len(rest_a & rest_b) < max(1.0, AMOUNT_OVERLAP * min(len(rest_a), len(rest_b))):
        return None  # about two things; two texts that say little but their dates or times are their entity's own
    return f"date: {da[min(da)]} → {db[min(db)]}"


def _undated(text: str, found: dict[str, str]) -> frozenset[str]:
    """The topic of ``text`` without the dates and times ``found`` in it and the words that schedule or change
    (``定在周三下午两点``: ``{}``; ``陈晨的游泳课改到周五晚上``: ``{陈晨, 游泳, …}``)."""
    for shown in sorted(found.values(), key=len, reverse=True):
        text = text.replace(shown, " ")
    cjk = (*claims.SCHEDULE_CUES, *claims.CHANGE_CUES, *_CJK_TIMES)
    topic = claims.claim(re.sub("|".join(re.escape(c) for c in cjk if _CJK_CUE.search(c)), " ", text)).topic
    return frozenset(t for t in topic if not _CJK_CUE.search(t) or len(t) > 1)


_CJK_CUE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_CJK_TIMES = ("每周", "每天", "每月", "上午", "下午", "晚上", "早上", "中午", "매주", "매일", "오전", "오후", "저녁", "아침")
"""Chinese and Korean words of the time of day or a recurrence: part of a schedule, not of what is scheduled."""


def _scheduled(c: Claim) -> bool:
    return claims.has_any(c.text.lower(), claims.SCHEDULE_CUES)


def _plain(value: str) -> str:
    return " ".join(_WORD.findall(value.lower()))


def _short(value: str) -> str:
    return value if len(value) <= 40 else value[:39] + "…"


RULES = (("field", _field), ("state", _state), ("all done", _all_done), ("count", _count), ("children", _children), ("relationship", _partnered), ("version", _version), ("slot", _slot),
         ("removed", _removed), ("replaced", _replaced), ("amount", _amount), ("when", _when), ("frame", _frame),
         ("corrected", _corrected_opposite))
"""The rules that read structure, tried in order; then the sentence rules (a stated change, a negation, opposite
words)."""
ITEM_RULES = frozenset(("field", "state", "all done"))
"""The rules a line of a list may meet (:func:`templates`): a status field, work further along."""


def judge(a: str, b: str, similarity: float, mode: str = CHECKABLE, threshold: float = THRESHOLD,
          item: bool = False) -> str | None:
    """The reason the newer observation ``b`` conflicts with the older ``a`` (cosine ``similarity``) in ``mode``,
    or ``None`` when it does not. ``threshold`` is the similarity mode's cut. ``item``: ``b`` is a line of a list
    its entity holds (:func:`templates`): only work further along (:data:`ITEM_RULES`, a passage's states) can
    contradict it — an item never replaces another's value."""
    if mode == SIMILARITY:
        return f"similar ({similarity:.2f} > {threshold:.2f})" if similarity > threshold else None
    if similarity < FLOOR or a.strip().lower() == b.strip().lower() or len(a) > MAX_PASSAGE or len(b) > MAX_PASSAGE:
        return None
    if _heading(a) or _heading(b):
        return None  # "MISSING FOR TRUE REASONING:": a heading whose items are other observations says nothing itself
    if claims.words_long(a) > MAX_WORDS or claims.words_long(b) > MAX_WORDS or len(a) > MAX_CHARS or len(
            b) > MAX_CHARS:
        return _passage(a, b)  # a passage (a log of a day's work): read clause by clause
    if not _words(a) & _words(b) and not _apart(a, b):
        return None  # no word in common, and nothing that could differ without one: never read further
    ca, cb = claims.claim(a), claims.claim(b)
    history = _history(a, b)
    for name, rule in RULES:
        if history and name in _SNAPSHOT_RULES or item and name not in ITEM_RULES:
            continue
        if name == "removed" and similarity < REMOVAL_FLOOR:
            continue
        reason = rule(ca, cb)
        if reason is not None:
            return reason
    if len(claims.clauses(a)) > 1 or len(claims.clauses(b)) > 1:
        reason = _passage(a, b)
        if reason is not None:
            return reason
    if item or similarity < SENTENCE_FLOOR or ca.label != cb.label and None not in (ca.label, cb.label):
        return None
    reason = _corrected(ca, cb, similarity) or _restated(ca, cb)
    if reason is not None:
        return reason
    if not _words(a) & _words(b):
        return None  # no content word in common: no sentence rule can apply
    fa, fb = ca.fact, cb.fact
    if cues.opposite(fa, fb) is not None and (cues.negation(fa) is None) != (cues.negation(fb) is None):
        return None  # "private" / "not public": two negatives say the same
    if not ((_code_only(fa) or _code_only(fb)) and ("now" in fa.lower or "now" in fb.lower)):
        reason = _stated_change(fa, fb)
        if reason is not None and not (_past(fa) and _past(fb)) and not (_in_year(ca) and _in_year(cb)):
            return reason
    return _negated(ca, cb) or _opposite(ca, cb)


def _passage(a: str, b: str) -> str | None:
    """Two texts of which one at least is a passage (a day's log, a summary), read clause by clause
    (:func:`~limbic.core.lifecycle.claims.clauses`): a clause of the older leaves work to do (planned, in
    progress, open: ``迁移 20 尚未云上 deploy``) and a clause of the newer says it done (``迁移 19/20/21 已应用``),
    both naming the same thing by number or as code (:func:`~limbic.core.lifecycle.claims.names`; a clause that
    names nothing speaks of what the clause before it named) and, when both name things by number, the newer
    naming the first the older names (not ``Phase 0`` / ``Phase 1A``, nor ``ADR-001 预留 Phase 0 目标架构`` /
    ``Phase 0 Accepted``); or the newer opens by saying it corrects (``2026-07-24 更正：…``) and names what the
    older names; or the newer says all of the work done that the older left to do (:func:`_all_done`)."""
    done = _verbs_done(a, b)
    if done is not None:
        return done
    correction = claims.is_correction(b) and not claims.is_correction(a)
    if not correction and not (claims.may_leave_work(a) and claims.may_say_done(b)):
        return None  # no clause of the older leaves work to do, or none of the newer says it done
    named_a, named_b = _named_clauses(a), _named_clauses(b)
    if correction:
        coded_a = frozenset().union(*(n[1] for _, n, _ in named_a))
        coded_b = frozenset().union(*(n[1] for _, n, _ in named_b))
        return "corrected by the newer" if coded_a & coded_b else None
    older = [n for n in named_a if n[0] is not None and claims.STATE_RANK[n[0]] < _DONE_RANK]
    for state_y, (numbered_y, coded_y), _ in named_b:
        if state_y is None or claims.STATE_RANK[state_y] < _DONE_RANK:
            continue
        for state_x, (numbered_x, coded_x), source_x in older:
            shared = (coded_x & coded_y) or (numbered_x & numbered_y)
            if not shared or (numbered_x and numbered_y and claims.first_numbered(source_x) not in numbered_y):
                continue  # "ADR-001 预留 Phase 0 目标架构" / "Phase 0 Accepted": what the clause is about is not named
            return f"state: {state_x} → {state_y} ({min(shared)})"
    return None


Named = tuple[str | None, tuple[frozenset[str], frozenset[str]], str]
"""A clause's state of work (:func:`~limbic.core.lifecycle.claims.stated`), the things it names
(:func:`~limbic.core.lifecycle.claims.names`) and the clause that names them (itself, or the one before it)."""


@lru_cache(maxsize=2048)
def _named_clauses(text: str) -> tuple[Named, ...]:
    """The clauses of ``text`` that name something or follow one that does, each with its state of work, the
    things it names (those of the clause before it when it names none) and the clause that names them."""
    out: list[Named] = []
    before: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    source = ""
    for clause in claims.clauses(text):
        named = claims.names(clause)
        if any(named):
            before, source = named, clause
        if any(before):
            out.append((None if _describes(clause) else claims.stated(clause), before, source))
    return tuple(out)


_DONE_RANK = claims.STATE_RANK[claims.DONE]


def _apart(a: str, b: str) -> bool:
    """Whether two texts without a content word in common may still contradict: both name where someone lives or
    works or who owns a thing (``Lives in Berlin`` / ``Relocated to Munich``), both are a few words long (a
    bare state, a date: ``Awaiting review`` / ``Merged into main on Friday``), or the newer says it corrects
    (``API-based memory …`` / ``CORRECTED: … a LOCAL/EMBEDDED Python library``), or the older counts children
    and the newer names one (``Has two kids`` / ``their third child``), or the older is the entity's status and
    the newer opens with its result (``Status: PENDING - cleanup required`` / ``✅ COMPLETED - DTOs consolidated``)."""
    low_a, low_b = a.lower(), b.lower()
    return (claims.has_any(low_a, claims.SLOT_WORDS) and claims.has_any(low_b, claims.SLOT_WORDS)) or (
        _content(a) <= BARE_WORDS and _content(b) <= BARE_WORDS) or claims.is_correction(b) or (
        claims.children(a)[0] is not None and claims.children(b)[1] is not None) or (
        claims.partnered(a) is not None and claims.partnered(b) is not None) or (
        _own_status(claims.claim(a)) and _result(b, tagged=True))


def _heading(text: str) -> bool:
    """Whether ``text`` is only a heading: it ends with a colon and holds nothing after it (``Key decisions:``,
    ``MISSING FOR TRUE REASONING:``); its items are other observations."""
    return text.rstrip().endswith((":", "："))


def _content(text: str) -> int:
    """How many content words ``text`` holds, numbers left out (``Running v2.4.0 in prod since Tuesday``: 5)."""
    return sum(not w.isdigit() for w in _words(text))


def _history(a: str, b: str) -> bool:
    """Both texts tie themselves to two different moments (``… (244 passed) after the responsive fixes`` / ``…
    (286 passed) after the database fix``): two snapshots, both history."""
    x, y = claims.anchored(a), claims.anchored(b)
    return x is not None and y is not None and x != y


def newer_is_current(old: str, new: str) -> bool:
    """Whether ``new`` says it replaces ``old``: it states a change (``now``, ``moved to``, ``upgraded``,
    ``변경``, ``改到``, ``ahora``), a correction or a removal, or it is further along the same work (planned or in
    progress → done, a ``Status`` field included)."""
    a, b = claims.claim(old), claims.claim(new)
    if b.change or b.correction or b.removed:
        return True
    state_a = claims.value_state(a.field[2]) if a.field is not None else a.state
    state_b = claims.value_state(b.field[2]) if b.field is not None else b.state
    return (state_a is not None and state_b is not None
            and claims.STATE_RANK[state_b] > claims.STATE_RANK[state_a])


SUGGESTIONS = {
    "supersede": "the newer says it replaces the older: mark the older superseded (it stays as history)",
    "keep_both": "nothing says which is current: keep both until someone says which is right",
}
"""What the suggested option of a conflict (the first of :func:`options_for`) means, in one line."""


def options_for(old: str, new: str, same_entity: bool) -> tuple[str, ...]:
    """The ways to settle a conflict of ``new`` with ``old``, the suggested one first: ``supersede`` only when both
    are on one entity and the newer says it is current (:func:`newer_is_current`); otherwise ``keep_both``. A
    conflict across two entities never suggests superseding the other entity's observation."""
    return SUPERSEDE_FIRST if same_entity and newer_is_current(old, new) else OPTIONS


def _code_only(fact: Fact) -> bool:
    """Whether the values of ``fact`` are all paths or code names (a file's location, a command): those are lists
    in agent memory, not one value replaced by another."""
    named = [v for v in fact.values if v.kind == "named"]
    return bool(named) and all(re.search(r"[/\\._:]", v.text) for v in named)


def possible(text: str, others: Sequence[str]) -> bool:
    """Whether the new observation ``text`` could conflict with one of ``others`` (older texts) in the default
    mode, whatever their similarity: a rule flags the pair at the highest one. A write whose texts cannot is
    checked without encoding them (their vectors come from the background embedder)."""
    listed = lists([text, *others])
    if claims.labelled(text)[0] in listed:
        return False
    item = shape(text) in templates([text, *others])
    return any(judge(other, text, 1.0, item=item) is not None for other in others)


_SHAPE_TOKEN = re.compile(r"\S+")


@lru_cache(maxsize=8192)
def shape(text: str) -> tuple[str, ...]:
    """How a line of a list begins: its first word (digits as ``#``: ``Priority 4`` and ``2025-03-02:`` keep their
    form) and the kind of the next — a number, a name in code or a word (``- TouchMenuGrid.razor → …``: ``("-",
    "code")``; ``Moved types to …``: ``("moved", "word")``); a first word that says nothing alone (``The``) is
    followed by the second as written."""
    tokens = _SHAPE_TOKEN.findall(text.lower())[:3]
    if not tokens:
        return ()
    first = re.sub(r"\d+", "#", tokens[0])
    if first.strip("#:.-") and first.rstrip(":") in STOP and len(tokens) > 1:
        return (first, tokens[1])
    if len(tokens) == 1:
        return (first,)
    second = text.split()[1]
    kind = "number" if re.match(r"^\W?\d", second) else "code" if claims.in_code(second) or "." in second.strip(".") \
        else "word"
    return (first, kind)


def templates(texts: Sequence[str]) -> frozenset[tuple[str, ...]]:
    """The beginnings (:func:`shape`) that :data:`LIST_VALUES` or more of ``texts`` (one entity's observations)
    share: the template of a list written a line at a time (``Priority 1 focuses on …`` ×5, ``- X.razor →
    Replaced by Y`` ×7, a dated log ``2025-03-02: …``). A line of it replaces no other's value."""
    counts: dict[tuple[str, ...], int] = {}
    for text in texts:
        key = shape(text)
        counts[key] = counts.get(key, 0) + 1
    return frozenset(k for k, n in counts.items() if n >= LIST_VALUES and k)


def lists(texts: Sequence[str]) -> frozenset[str]:
    """The field keys of ``texts`` (one entity's observations) that the memory treats as lists: a key that holds
    :data:`LIST_VALUES` or more different values, other than a status (``Coding standard: …`` ×n, ``UPDATED:
    …`` ×n)."""
    values: dict[str, set[str]] = {}
    for text in texts:
        label, value = claims.labelled(text)
        if label is not None:
            values.setdefault(label, set()).add(_plain(value))
    return frozenset(k for k, v in values.items() if len(v) >= LIST_VALUES and claims._KEY_OF.get(k) != "status")


def find(text: str, vector: np.ndarray, others: Sequence[tuple[int, str]], vectors: np.ndarray,
         mode: str = CHECKABLE, threshold: float = THRESHOLD) -> list[Finding]:
    """The observations among ``others`` (``(id, text)``, older ones, their unit vectors ``(n, d) float32`` in that
    order) that the new observation ``text`` (unit vector ``(d,) float32``) conflicts with in ``mode``, most
    similar first. Identical texts are duplicates, not conflicts; a pair below the mode's lowest similarity is
    never read; a field the others hold as a list (:func:`lists`) is never a conflict; in the default mode at
    most :data:`MAX_FINDINGS` (the most similar): one change is settled once, not against every older mention."""
    if not len(others):
        return []
    sims = np.asarray(vectors, dtype=np.float32) @ np.asarray(vector, dtype=np.float32)
    cut = threshold if mode == SIMILARITY else FLOOR
    texts = [text, *(t for _, t in others)]
    listed = lists(texts) if mode == CHECKABLE else frozenset()
    label = claims.labelled(text)[0] if mode == CHECKABLE else None
    if label is not None and label in listed:
        return []
    item = mode == CHECKABLE and shape(text) in templates(texts)
    found = []
    for index in np.flatnonzero(sims >= cut).tolist():
        other, other_text = others[index]
        reason = judge(other_text, text, float(sims[index]), mode, threshold, item)
        if reason is not None:
            found.append(Finding(other, float(sims[index]), reason))
    found.sort(key=lambda f: -f.similarity)
    return found if mode == SIMILARITY else found[:MAX_FINDINGS]
