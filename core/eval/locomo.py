"""Read and validate a LoCoMo-format file and map each conversation to memory entities.

LoCoMo (Maharana et al., ACL 2024; snap-research/locomo ``data/locomo10.json``) is a JSON list of
conversations: ``sample_id``, ``conversation`` (``speaker_a``, ``speaker_b``, ``session_N`` lists of
turns ``{speaker, dia_id, text, blip_caption?}``, ``session_N_date_time`` like
``"1:56 pm on 8 May, 2023"``) and ``qa`` (``question``, ``evidence``: turn ids like ``"D1:3"``,
``category`` 1–5).

Mapping (:data:`MAPPING_VERSION` changes whenever it does):

- ``session`` granularity: one entity per session, named ``"<sample_id> session <N>"``, type
  ``session``, one observation per turn, created at the session's time;
- ``turn`` granularity: one entity per turn, named ``"<sample_id> <dia_id>"``, type ``turn``, the
  same single observation, created at its session's time.

A turn's observation is ``"Speaker: text"``, plus ``" [shares a photo: CAPTION]"`` when it has a
``blip_caption``. Session times carry no zone in LoCoMo and are read as UTC.

A file whose structure is wrong raises one :class:`LocomoFormatError` naming the record. Evidence ids
that do not name a turn of their conversation (LoCoMo has a few, e.g. ``"D"`` or ``"D:11:26"``) are
not an error: they are reported by :func:`resolve_evidence`, and a question none of whose ids
resolve is skipped by the runner.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from limbic.core.errors import ValidationError
from limbic.core.models import EntityInput, ObservationInput

GRANULARITIES = ("session", "turn")
MAPPING_VERSION = 1

# Category numbers of the LoCoMo release. Its evaluation scripts (task_eval/evaluation_stats.py)
# print them in the paper's table order 4, 1, 2, 3, 5 = single-hop, multi-hop, temporal, open-domain,
# adversarial; the data agree (category 2 asks "when", category 5 has adversarial answers).
CATEGORY_NAMES: Mapping[int, str] = {
    1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial",
}

SESSION_TIME_FORMAT = "%I:%M %p on %d %B, %Y"
_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE_ID = re.compile(r"D(\d+):(\d+)")
_EVIDENCE_SEPARATORS = re.compile(r"[;,\s]+")


class LocomoFormatError(ValidationError):
    """The file is not LoCoMo-shaped; the message names the record (conversation, session, turn or question)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance: ``dia_id`` (e.g. ``"D3:7"``), speaker, text and an optional photo caption."""

    dia_id: str
    speaker: str
    text: str
    caption: str | None = None

    @property
    def observation(self) -> str:
        """``"Speaker: text"`` plus ``" [shares a photo: CAPTION]"`` when the turn shares a photo."""
        base = f"{self.speaker}: {self.text}"
        return f"{base} [shares a photo: {self.caption}]" if self.caption else base


@dataclass(frozen=True, slots=True)
class Session:
    """Session ``number`` of a conversation, started at ``started_at`` (UTC unix seconds)."""

    number: int
    started_at: float
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Question:
    """Question ``index`` (0-based, in file order) with its LoCoMo ``category`` and evidence ids as written."""

    index: int
    text: str
    category: int
    evidence: tuple[str, ...]

    @property
    def category_name(self) -> str:
        return CATEGORY_NAMES.get(self.category, f"category {self.category}")


@dataclass(frozen=True, slots=True)
class Conversation:
    """One LoCoMo conversation: its sessions in order and its questions in file order."""

    sample_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]


@dataclass(frozen=True, slots=True)
class LocomoFile:
    """A loaded LoCoMo file: its conversations and the sha256 (hex) of its bytes."""

    path: Path
    sha256: str
    conversations: tuple[Conversation, ...]


def parse_session_time(text: object, where: str) -> float:
    """``"1:56 pm on 8 May, 2023"`` → UTC unix seconds.

    Raises:
        LocomoFormatError: not a string in that format (the message says ``where``).
    """
    if not isinstance(text, str):
        raise LocomoFormatError(f"{where}: the date must be text like '1:56 pm on 8 May, 2023', got {text!r}")
    try:
        moment = datetime.strptime(text.strip(), SESSION_TIME_FORMAT)
    except ValueError:
        raise LocomoFormatError(f"{where}: cannot read the date {text!r} "
                                "(expected a time like '1:56 pm on 8 May, 2023')") from None
    return moment.replace(tzinfo=UTC).timestamp()


def _text(record: Mapping[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise LocomoFormatError(f"{where}: {key!r} must be non-empty text, got {value!r}")
    return value.strip()


def _turn(record: object, where: str) -> Turn:
    if not isinstance(record, dict):
        raise LocomoFormatError(f"{where}: a turn must be an object, got {type(record).__name__}")
    caption = record.get("blip_caption")
    if caption is not None and not isinstance(caption, str):
        raise LocomoFormatError(f"{where}: 'blip_caption' must be text, got {caption!r}")
    return Turn(_text(record, "dia_id", where), _text(record, "speaker", where), _text(record, "text", where),
                caption.strip() or None if caption else None)


def _sessions(conversation: Mapping[str, Any], cid: str) -> tuple[Session, ...]:
    sessions = []
    for key, turns in conversation.items():
        found = _SESSION_KEY.fullmatch(key)
        if not found:
            continue
        where = f"conversation {cid}, {key}"
        if not isinstance(turns, list):
            raise LocomoFormatError(f"{where}: the session must be a list of turns, got {type(turns).__name__}")
        if not turns:
            continue
        started = parse_session_time(conversation.get(f"{key}_date_time"), f"{where}_date_time")
        parsed = tuple(_turn(t, f"{where}, turn {i}") for i, t in enumerate(turns))
        sessions.append(Session(int(found.group(1)), started, parsed))
    if not sessions:
        raise LocomoFormatError(f"conversation {cid}: no session with turns")
    sessions.sort(key=lambda s: s.number)
    seen: set[str] = set()
    for session in sessions:
        for turn in session.turns:
            if turn.dia_id in seen:
                raise LocomoFormatError(f"conversation {cid}, session_{session.number}: turn id {turn.dia_id!r} repeats")
            seen.add(turn.dia_id)
    return tuple(sessions)


def _question(record: object, index: int, cid: str) -> Question:
    where = f"conversation {cid}, question {index}"
    if not isinstance(record, dict):
        raise LocomoFormatError(f"{where}: a question must be an object, got {type(record).__name__}")
    category = record.get("category")
    if isinstance(category, bool) or not isinstance(category, int):
        raise LocomoFormatError(f"{where}: 'category' must be an integer, got {category!r}")
    evidence = record.get("evidence")
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        raise LocomoFormatError(f"{where}: 'evidence' must be a list of turn ids like 'D1:3', got {evidence!r}")
    return Question(index, _text(record, "question", where), category, tuple(evidence))


def _conversation(record: object, index: int) -> Conversation:
    if not isinstance(record, dict):
        raise LocomoFormatError(f"conversation {index}: must be an object, got {type(record).__name__}")
    cid = record.get("sample_id", f"#{index}")
    if not isinstance(cid, str) or not cid.strip():
        raise LocomoFormatError(f"conversation {index}: 'sample_id' must be non-empty text, got {cid!r}")
    conversation, qa = record.get("conversation"), record.get("qa")
    if not isinstance(conversation, dict):
        raise LocomoFormatError(f"conversation {cid}: 'conversation' must be an object with the sessions")
    if not isinstance(qa, list):
        raise LocomoFormatError(f"conversation {cid}: 'qa' must be a list of questions")
    return Conversation(cid.strip(), _sessions(conversation, cid),
                        tuple(_question(q, i, cid) for i, q in enumerate(qa)))


def load_locomo(path: str | Path) -> LocomoFile:
    """Read and validate a LoCoMo-format file (a JSON list of conversations, or one conversation object).

    Raises:
        LocomoFormatError: unreadable file, not JSON, or a record of the wrong shape (named in the message).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LocomoFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LocomoFormatError(f"{path} is not a JSON file: {exc}") from exc
    records = [document] if isinstance(document, dict) else document
    if not isinstance(records, list) or not records:
        raise LocomoFormatError(f"{path}: expected a non-empty list of LoCoMo conversations")
    conversations = tuple(_conversation(r, i) for i, r in enumerate(records))
    ids = [c.sample_id for c in conversations]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise LocomoFormatError(f"{path}: conversation ids repeat: {', '.join(repeated)}")
    return LocomoFile(path, hashlib.sha256(data).hexdigest(), conversations)


def session_entity_name(sample_id: str, number: int) -> str:
    return f"{sample_id} session {number}"


def turn_entity_name(sample_id: str, dia_id: str) -> str:
    return f"{sample_id} {dia_id}"


def memory_entities(conversation: Conversation, granularity: str) -> list[EntityInput]:
    """The entities that hold ``conversation`` at ``granularity`` (``session`` or ``turn``), in order."""
    cid = conversation.sample_id
    if granularity == "session":
        return [
            EntityInput(session_entity_name(cid, s.number), "session",
                        tuple(ObservationInput(t.observation, created_at=s.started_at) for t in s.turns),
                        created_at=s.started_at, updated_at=s.started_at)
            for s in conversation.sessions
        ]
    if granularity == "turn":
        return [
            EntityInput(turn_entity_name(cid, t.dia_id), "turn",
                        (ObservationInput(t.observation, created_at=s.started_at),),
                        created_at=s.started_at, updated_at=s.started_at)
            for s in conversation.sessions for t in s.turns
        ]
    raise ValidationError(f"unknown granularity {granularity!r}; expected one of {', '.join(GRANULARITIES)}")


def turn_holders(conversation: Conversation, granularity: str) -> dict[str, str]:
    """Turn id → name of the entity that holds that turn at ``granularity``."""
    cid = conversation.sample_id
    if granularity == "session":
        return {t.dia_id: session_entity_name(cid, s.number) for s in conversation.sessions for t in s.turns}
    if granularity == "turn":
        return {t.dia_id: turn_entity_name(cid, t.dia_id) for s in conversation.sessions for t in s.turns}
    raise ValidationError(f"unknown granularity {granularity!r}; expected one of {', '.join(GRANULARITIES)}")


def resolve_evidence(evidence: Sequence[str], holders: Mapping[str, str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The names of the entities holding the evidence turns, and the evidence ids that name no turn.

    An evidence string may list several ids separated by ``;``, ``,`` or spaces (LoCoMo writes
    ``"D8:6; D9:17"`` once). Parentheses are ignored, as LoCoMo's own evaluation does.
    """
    relevant: set[str] = set()
    unresolved: list[str] = []
    for item in evidence:
        for piece in _EVIDENCE_SEPARATORS.split(item.replace("(", " ").replace(")", " ")):
            if not piece:
                continue
            holder = holders.get(piece) if _EVIDENCE_ID.fullmatch(piece) else None
            if holder is None:
                unresolved.append(piece)
            else:
                relevant.add(holder)
    if not relevant and not unresolved:
        unresolved.append("")
    return frozenset(relevant), tuple(unresolved)
