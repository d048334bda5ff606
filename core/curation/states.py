"""The state a statement reports — planned, in progress, done, a problem, working, or a rule — read from cue
words in English, Spanish, Korean and Chinese (lists of cues, not translation). Two statements of one thing in
different states are two moments of it ("Currently broken in branches after new_features" / "Working
implementation exists in new_features branch"; "…추가 예정" *planned* / "…구현" *implemented*; "pendiente" /
"hecho"; "计划" / "已完成"): never duplicates, never merged (docs/curation.md "What counts as a duplicate").

:func:`state` reads one text. Words are matched whole in a text written with spaces between words, the first
cue deciding ("Fixed the broken build" is done: an English or Spanish sentence says its state first), but a
problem followed by its fix is fixed ("Bug fixed in the parser", "Issue resolved: …"); Korean and
Chinese cues are matched inside the text, the last one deciding (their state ends the sentence: "구현 예정" is
planned, "구현 완료" done). Rules (``must``, ``should``, ``always``, ``debe``) and the weaker cues of a plan (``need``,
``will``, ``next``) count in the first :data:`HEAD_WORDS` words only, where a sentence says what it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

PLANNED = "planned"
PROGRESS = "in progress"
DONE = "done"
PROBLEM = "problem"
WORKING = "working"
RULE = "rule"

HEAD_WORDS = 4
"""Words from the start of a text in which a rule or a weak cue of a plan counts."""

_PHRASES: dict[str, tuple[str, ...]] = {
    PROGRESS: ("in progress", "in-progress", "work in progress", "working on", "under way", "underway", "ongoing",
               "en progreso", "en curso", "en desarrollo", "trabajando en"),
    PLANNED: ("to do", "not yet", "yet to", "to be done", "to be added", "to be implemented", "por hacer",
              "hay que", "falta por", "todavía no", "aún no"),
    PROBLEM: ("not working", "does not work", "doesn't work", "no longer works", "not work", "no funciona",
              "still open", "remains open", "is open", "unresolved"),
}
"""Cues of several words, matched before single words ("working on" is in progress, "not working" a problem)."""

_WORDS: dict[str, frozenset[str]] = {
    PLANNED: frozenset((
        "planned", "planning", "plan", "plans", "todo", "to-do", "upcoming", "proposed", "propose", "pending",
        "scheduled", "backlog", "tbd", "pendiente", "pendientes", "planeado", "planeada", "planificado",
        "planificada", "previsto", "prevista", "propuesto", "propuesta", "próximamente")),
    PROGRESS: frozenset((
        "wip", "started", "debugging", "investigating", "trying", "partially", "iniciado", "empezado")),
    DONE: frozenset((
        "done", "completed", "complete", "finished", "fixed", "resolved", "implemented", "successfully", "added",
        "created", "merged", "shipped", "released", "debugged", "extracted", "removed", "deployed", "closed",
        "solved", "migrated", "moved", "updated", "refactored", "renamed", "replaced", "integrated", "hecho", "hecha", "completado", "completada", "terminado", "terminada",
        "implementado", "implementada", "resuelto", "resuelta", "corregido", "corregida", "arreglado",
        "arreglada", "añadido", "añadida", "agregado", "agregada", "creado", "creada", "desplegado", "desplegada",
        "finalizado", "finalizada", "listo", "lista")),
    PROBLEM: frozenset((
        "problem", "encountered", "issue", "bug", "failing", "fails", "broken", "blocker", "blocked", "crash",
        "crashes", "crashing", "regression", "roto", "rota", "falla", "fallando", "fallo", "bloqueado",
        "bloqueada")),
    WORKING: frozenset((
        "working", "works", "functional", "operational", "passing", "funcionando", "funcional", "operativo",
        "operativa")),
}
"""Single words of each state, matched anywhere in the text."""

_HEAD: dict[str, frozenset[str]] = {
    PLANNED: frozenset(("need", "needs", "will", "next", "necesita", "necesitamos", "próximo", "siguiente")),
    RULE: frozenset(("must", "should", "always", "only", "debe", "deben", "siempre", "nunca")),
}
"""Cues that count only among the first :data:`HEAD_WORDS` words: a rule, or a plan's weaker words."""

_CHARACTERS: tuple[tuple[str, str], ...] = tuple((cue, kind) for kind, cues in (
    (PLANNED, ("예정", "계획", "할 것", "필요", "해야", "추가할", "구현할", "计划", "待办", "待完成", "待实现", "将要",
               "准备", "需要", "尚未", "未完成", "规划", "待开发", "待处理", "待修复", "待测试", "待上线", "待部署")),
    (PROGRESS, ("진행 중", "진행중", "진행", "작업 중", "작업중", "개발 중", "개발중", "구현 중", "구현중", "进行中", "正在",
                "开发中")),
    (DONE, ("완료", "구현됨", "구현했", "구현 완료", "구현", "추가됨", "추가했", "추가 완료", "해결됨", "해결했", "해결",
            "수정됨", "수정했", "수정 완료", "적용됨", "적용 완료", "됐", "되었", "已完成", "完成", "已实现", "实现了",
            "已修复", "修复了", "已解决", "解决了", "已添加", "添加了", "已上线", "已部署", "已合并")),
    (PROBLEM, ("미해결", "오류", "에러", "실패", "버그", "문제", "깨짐", "작동하지 않", "동작하지 않", "안 됨", "안됨", "失败", "错误",
               "报错", "异常", "损坏", "无法")),
    (WORKING, ("정상 작동", "정상작동", "정상 동작", "작동함", "동작함", "작동 확인", "동작 확인", "正常工作", "正常运行",
               "正常")),
) for cue in cues)
"""Korean and Chinese cues, matched inside the text; where several match, the one ending last decides (and
of two ending at one place, the longer: "구현 완료" is done, "구현 예정" planned)."""

_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)
_HANGUL_HAN = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af\u3400-\u4dbf\u4e00-\u9fff]")

COMPATIBLE = frozenset({frozenset((DONE, WORKING))})
"""Pairs of different states that can describe one moment (what was done works)."""


def _by_first_word(phrases: dict[str, tuple[str, ...]]) -> dict[str, list[tuple[tuple[str, ...], str]]]:
    """``{first word: [(the phrase's words, its state), …]}`` of the cue phrases."""
    found: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for kind, cues in phrases.items():
        for cue in cues:
            words = tuple(cue.split())
            found.setdefault(words[0], []).append((words, kind))
    return found


_BY_FIRST = _by_first_word(_PHRASES)
_KIND = {word: kind for kind, words in _WORDS.items() for word in words}
_HEAD_KIND = {word: kind for kind, words in _HEAD.items() for word in words}


def _phrase_at(tokens: list[str], start: int) -> tuple[str, int] | None:
    for words, kind in _BY_FIRST.get(tokens[start], ()):
        if tuple(tokens[start:start + len(words)]) == words:
            return kind, len(words)
    return None


_TO_DO = re.compile(r"^\W*(?:implement|add|fix|remove|create|update|refactor|migrate|write|enhance|integrate|delete|"
                    r"replace|rename|download|investigate|convert|extract|set up|clean up)\b(?!\s*[:：]|\s+(?:for|to)\b)")
"""A text opening with a verb of work in its base form is a to-do (``Implement order item addition …``, ``Add
special instructions …``, ``Remove Class parameters from atoms``), not ``Added …``, ``Implements …``, a ``Fix:``
label or a noun (``Fix for the login bug merged``, ``Update to v2 complete``); words as often nouns as verbs at the
start of a note (``Build``, ``Push``, ``Move``, ``Document``) are left out."""


def state(text: str) -> str | None:
    """The state ``text`` reports (:data:`PLANNED`, :data:`PROGRESS`, :data:`DONE`, :data:`PROBLEM`,
    :data:`WORKING` or :data:`RULE`), None when it reports none. ``text`` is read lower-cased."""
    lowered = text.casefold()
    if _TO_DO.match(lowered):
        return PLANNED
    if _HANGUL_HAN.search(lowered):
        found = None
        for cue, kind in _CHARACTERS:
            at = lowered.rfind(cue)
            if at >= 0:
                key = (at + len(cue), len(cue))
                if found is None or key > found[0]:
                    found = (key, kind)
        if found is not None:
            return found[1]
    first = None
    for kind in _cues(_WORD.findall(lowered.replace("’", "'"))):
        if first is None:
            first = kind
            if kind != PROBLEM:
                return kind
        elif kind == DONE:
            return DONE
    return first


def _cues(tokens: list[str]) -> Iterator[str]:
    """The states cued in ``tokens``, in order (a phrase once, its words not again)."""
    index = 0
    while index < len(tokens):
        phrase = _phrase_at(tokens, index)
        if phrase is not None:
            yield phrase[0]
            index += phrase[1]
            continue
        token = tokens[index]
        if token in _KIND:
            yield _KIND[token]
        if index < HEAD_WORDS and token in _HEAD_KIND:
            yield _HEAD_KIND[token]
        index += 1


def opposite(a: str | None, b: str | None) -> bool:
    """Whether two states cannot be one moment of one thing: both known and different (but done and working),
    or a rule against a statement reporting none (a rule is not a report of what happened)."""
    if a == b:
        return False
    if a is None or b is None:
        return RULE in (a, b)
    return frozenset((a, b)) not in COMPATIBLE
