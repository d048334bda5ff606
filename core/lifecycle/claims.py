"""What a short observation claims about its subject, read for the contradiction check: a single-valued field
(``Status: open``, ``우선순위: 높음``), a state of work (planned, in progress, open, done…), the attribute a sentence
gives a value to (where someone lives, who owns something, a count of things, a version, a date), what it says
was removed or replaced, and the words that name its topic.

Agent memory is structured: most observations of an entity are items of lists (commands, phases, files, imports,
rules), which are sets, never contradictions. Two observations can contradict only when they speak of the same
attribute of the same thing, and the attribute holds one value at a time. The cue lists below are English,
Spanish, Korean and Chinese words for those attributes and states (cue lists, not translation); Korean and
Chinese are matched as substrings, other languages as words.

Pure functions over text; nothing here reads the store or a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from limbic.core.lifecycle.frames import STOP, Fact, read, stem

# --- states of work -------------------------------------------------------------------------------------------
PLANNED, ACTIVE, OPEN, DONE, CANCELLED = "planned", "in progress", "open", "done", "cancelled"
STATE_CUES: dict[str, tuple[str, ...]] = {
    PLANNED: ("planned", "plan to", "plans to", "todo", "to do", "to-do", "need to", "needs to", "not started",
              "proposed", "pending", "backlog", "upcoming", "will be", "should be", "must be", "has to be", "not yet",
              "[ ]", "pendiente", "planeado", "planeada", "planificado", "planificada", "propuesto", "propuesta",
              "previsto", "prevista", "por hacer", "hay que", "falta",
              "remaining", "left to do", "예정", "계획", "할 일", "필요", "남은", "计划", "待办", "待实现", "待完成",
              "待用户", "待确认", "待定", "打算", "准备", "需要", "方可", "才能", "剩余", "剩", "预留"),
    ACTIVE: ("in progress", "in-progress", "in review", "under review", "partially", "partly", "working on", "ongoing", "wip", "underway", "in development", "being implemented",
             "halfway", "started", "blocked", "on hold", "waiting on", "waiting for", "awaiting",
             "en progreso", "en curso", "trabajando en", "en desarrollo", "bloqueado",
             "진행 중", "진행중", "진행", "작업 중", "개발 중", "보류", "대기",
             "进行中", "开发中", "正在", "处理中", "阻塞", "等待"),
    OPEN: ("unresolved", "broken", "failing", "flaky", "not working", "missing", "draft",
           "abierto", "sin resolver", "roto", "미해결", "오류 발생", "실패", "未解决", "失败", "故障", "有问题"),
    DONE: ("done", "completed", "complete", "finished", "implemented", "resolved", "fixed", "closed", "merged",
           "shipped", "deployed", "released", "published", "accepted", "approved", "unblocked", "landed", "moved", "migrated", "removed",
           "added", "created", "debugged", "refactored", "ported", "integrated", "upgraded", "successfully",
           "live in production", "live in prod", "went live", "is live", "ready for production", "production-ready", "✅", "[x]", "hecho", "hecha",
           "completado", "completada", "terminado", "terminada", "resuelto", "resuelta", "implementado",
           "implementada", "desplegado", "desplegada", "listo", "lista", "migrado", "migrada", "publicado",
           "publicada", "lanzado", "lanzada", "완료", "해결", "구현", "배포", "수정됨", "이전함", "이동함",
           "已完成", "完成", "已解决", "解决", "已上线", "上线", "已实现", "实现", "已修复", "修复", "已迁移", "已发布",
           "已提交", "已推送", "已接受", "已批准", "已成功", "成功", "已部署", "已应用", "已同步", "已删除", "已合并", "已修正", "已验证", "全绿"),
    CANCELLED: ("cancelled", "canceled", "abandoned", "wontfix", "won't do", "rejected", "descartado", "descartada",
                "cancelado", "cancelada", "不可用", "无法使用", "已失效",
                "취소", "폐기", "取消", "放弃"),
}
"""Words of each state of work. ``blocked`` / ``waiting`` count as in progress: started, not finished."""
_NOT_DONE = ("미해결", "未解决", "未完成", "미완료", "not done", "not completed", "not implemented", "not fixed",
             "not resolved", "not finished", "unfinished", "incomplete", "sin terminar", "no implementado")
"""Phrases that hold a word of :data:`DONE` and say the opposite (``미해결`` holds ``해결``)."""
_CJK_VERBS = ("修复", "修", "做", "完成", "解决", "实现", "提交", "推送", "推", "部署", "上线", "合并", "迁移", "同步",
              "验证", "核实", "确认", "决定", "决", "接线", "处理", "测试", "轮换", "更新", "生效", "复制", "开始",
              "启动", "发布", "明确", "批准", "commit", "push", "deploy", "merge", "review", "test")
_CJK_NOT_DONE = re.compile(rf"(?:(?:尚|仍|还|并|暂)?(?:未|没有?)(?:能|在[^，；。]{{0,8}}?|[\u4e00-\u9fff]{{1,3}}?)?|是否)\s*"
                           rf"(?:{'|'.join(_CJK_VERBS)})")
"""Chinese ``未`` / ``没`` before a verb of work: not done (``仍未修``, ``未做``, ``未 commit``, ``没有提交``,
``未在本次纠正中明确``, ``尚未云上 deploy``); ``是否`` (whether to) before one: not decided."""
_CJK_PLANNED = re.compile(r"待(?!遇)[\u4e00-\u9fff]")
"""Chinese ``待`` before a verb: still to do (``待用户批准``, ``待核实``, ``待换``)."""
STATE_RANK = {PLANNED: 0, ACTIVE: 1, OPEN: 1, DONE: 2, CANCELLED: 2}
"""How far along work is: two states of one rank (done / cancelled, in progress / open) do not contradict."""
_VALUE_STATES = {"open": OPEN, "new": PLANNED, "todo": PLANNED, "active": ACTIVE, "paused": ACTIVE,
                 "abierto": OPEN, "nuevo": PLANNED}
"""A field's value that names a state by itself (``Status: open``)."""


def value_state(value: str) -> str | None:
    """The state of work a field's value names (``Open``, ``RESOLVED (by …)``, ``진행 중``), else ``None``."""
    low = " ".join(_SPLIT_DIGITS.sub(" ", value.lower()).split())
    first = re.split(r"[\s(,;:.-]+", low, maxsplit=1)[0]
    return _VALUE_STATES.get(first) or state_of(low)[0]

# --- single-valued fields -------------------------------------------------------------------------------------
FIELD_KEYS: dict[str, tuple[str, ...]] = {
    "status": ("status", "state", "current status", "current state", "estado", "상태", "진행 상태", "状态", "狀態",
               "进度"),
    "priority": ("priority", "prioridad", "우선순위", "优先级", "優先級"),
    "version": ("version", "current version", "latest version", "versión", "버전", "版本", "当前版本"),
    "owner": ("owner", "assignee", "assigned to", "maintainer", "responsible", "lead", "manager", "responsable",
              "dueño", "담당자", "담당", "책임자", "负责人", "负责", "owner/maintainer"),
    "location": ("location", "located", "file location", "home", "city", "based in", "ubicación", "ciudad",
                 "위치", "파일 위치", "거주지", "位置", "所在地", "城市"),
    "due": ("due", "due date", "deadline", "target", "target date", "eta", "release date", "launch date",
            "start date", "start", "starts", "fecha límite", "fecha", "마감", "마감일", "시작일", "截止", "截止日期",
            "上线日期", "开始时间"),
    "phase": ("current phase", "phase actual", "현재 단계", "当前阶段"),
    "employer": ("employer", "company", "works at", "empresa", "회사", "직장", "公司"),
    "role": ("role", "title", "position", "rol", "cargo", "직책", "역할", "职位", "角色"),
}
"""Keys a memory gives one value at a time, by what they mean (``Status``, ``상태``, ``状态`` are one key)."""
_KEY_OF = {word: key for key, words in FIELD_KEYS.items() for word in words}
_FIELD = re.compile(r"^\s*[-*•]?\s*([^\W\d][\w ./'-]{0,60}?)\s*(?:\([^)]{0,40}\))?\s*[:：=](?![\\/])\s*(\S.*)$",
                    re.UNICODE | re.DOTALL)
_LIST_ITEM = re.compile(r"^\s*[-*•]?\s*([^\W\d][\w .+/'-]{0,40}?)\s+(?:--|—|–)\s+(\S.*)$", re.UNICODE | re.DOTALL)
"""An item of a list as agents and packages write them: ``name -- what it is`` (its label is the name)."""
_LABEL_STATES = {"issue": OPEN, "bug": OPEN, "problem": OPEN, "error": OPEN, "blocker": OPEN, "문제": OPEN,
                 "버그": OPEN, "问题": OPEN, "todo": PLANNED, "next": PLANNED, "pending": PLANNED, "fixed": DONE,
                 "resolved": DONE, "done": DONE, "completed": DONE}
"""Labels that state a state of work by themselves (``Minor issue: …``, a to-do label, ``Fixed: …``)."""
STATE_WORDS = frozenset(cue for cues in STATE_CUES.values() for cue in cues) | frozenset(_LABEL_STATES)
"""Every word of a state of work, and every label that states one."""
CORRECTION_CUES = ("supersedes earlier", "supersedes the earlier", "supersedes previous", "supersedes the previous",
                   "replaces earlier", "replaces the earlier", "previously stated", "(superseded)", "is superseded by",
                   "are superseded by", "is now superseded", "reemplaza a la anterior", "取代之前", "이전 내용을 대체")
"""Words that say a text corrects or supersedes an earlier one anywhere in it (``(supersedes earlier three-agent
wording)``); :data:`CORRECTION_HEADS` say so at its start."""
CORRECTION_HEADS = re.compile(r"^\s*(?:(?i:corrected|correction|erratum|更正|纠正|정정|corrección|corregido)\s*[:：]"
                              r"|CORRECTED\b|CORRECTION\b)", re.UNICODE)
"""A text that opens by saying it corrects (``CORRECTED: …``, ``Correction: …``, ``更正：…``, after a date
``2026-07-24 更正：…``); not a fix named so (French ``Correction des erreurs …``)."""
DATED = re.compile(r"^\s*\[?\d{4}-\d{2}-\d{2}\]?\s*[:：]?\s*")
"""A date a text opens with (``2026-07-24 …``, ``[2026-07-24]: …``)."""

# --- attributes of a sentence ---------------------------------------------------------------------------------
SLOT_CUES: dict[str, tuple[str, ...]] = {
    "home": ("lives in", "living in", "based in", "resides in", "moved to", "relocated to", "moved back to",
             "vive en", "se mudó a", "reside en", "se fue a vivir a", "에 거주", "에서 거주", "거주", "이사",
             "住在", "搬到", "搬去", "定居", "居住"),
    "employer": ("works at", "works for", "working at", "employed by", "joined", "job at", "hired by",
                 "engineer at", "developer at", "manager at", "designer at", "nurse at", "teacher at", "analyst at",
                 "consultant at", "scientist at", "researcher at", "intern at", "trabaja en", "trabaja para",
                 "entró a", "se unió a", "ahora es", "에서 근무", "근무", "이직", "입사", "在", "加入", "入职", "跳槽"),
    "owner": ("owned by", "maintained by", "managed by", "manager is", "reports to", "assigned to",
              "ownership transferred to", "handed over to", "took over", "takes over", "owner is", "owner de",
              "responsable", "담당자", "담당", "负责人", "负责", "交给",
              "移交"),
}
"""Phrases that say which attribute a sentence gives a value to (where someone lives, works, who owns it)."""
SLOT_WORDS = tuple(cue for cues in SLOT_CUES.values() for cue in cues)
"""Every phrase of :data:`SLOT_CUES`."""
CHANGE_CUES = ("now", "no longer", "switched", "changed", "moved", "migrated", "replaced", "upgraded", "updated to",
               "bumped", "raised", "lowered", "increased", "decreased", "cut to", "reduced", "scaled", "slipped",
               "postponed", "rescheduled", "pushed", "transferred", "relocated", "instead", "supersedes",
               "superseded", "previously", "formerly", "again", "ahora", "cambió", "pasó", "migrado",
               "actualizado", "ya no", "antes", "변경", "전환", "이직", "이사", "업그레이드", "증설", "축소",
               "바뀜", "기존", "改到", "改为", "换成", "升级", "迁移", "搬到", "调整", "之前", "原来", "现在", "现由",
               "改由", "took over", "takes over", "taken over", "handed over", "rolled out to", "낮춤", "높임", "늘림", "줄임",
               "올림", "내림", "降到", "提高到", "增加到", "减少到")
"""Words that say a value was replaced."""
_CHANGE_STEMS = frozenset(stem(cue) for cue in CHANGE_CUES if " " not in cue and cue.isascii()) - {"now"}
REMOVAL_CUES = ("removed", "eliminated", "cleaned up", "deleted", "dropped", "shut down", "decommissioned",
                "retired", "deprecated", "gave up", "replaced", "uninstalled", "sunset", "eliminado", "dado de baja",
                "retirado", "종료", "제거", "삭제", "폐기", "下线", "删除", "移除", "弃用", "停用", "cancelled", "canceled",
                "archived", "turned off", "switched off", "phased out", "ripped out", "got rid of", "discontinued",
                "cancelado", "cancelada", "eliminada", "eliminamos", "archivado", "desinstalado", "dimos de baja",
                "걷어냄", "꺼버림", "껐", "해지", "废弃", "取消", "关停", "关掉", "撤掉", "去掉")
"""Words that say a thing is gone (``Heroku app shut down``, ``RabbitMQ 下线``)."""
_CHILD = (r"(?:child(?:ren)?|kids?|sons?|daughters?|bab(?:y|ies)|hij[oa]s?|beb[eé]s?|자녀|아이|아들|딸|孩子|儿子|女儿|宝宝)")
_KIDS_COUNTED = re.compile(
    rf"\b(one|two|three|four|five|\d)\s+{_CHILD}|\b(?:only|single)\s+{_CHILD}|{_CHILD}\s+(?:único|única)|"
    rf"\b(un|una|dos|tres|cuatro)\s+{_CHILD}|{_CHILD}\s*(한|두|세|네|\d)\s*명|(외동)|(独生)|([一两二三四\d])\s*个\s*{_CHILD}",
    re.IGNORECASE)
_ORDINAL_CHILD = re.compile(
    rf"\b(second|third|fourth|fifth|segund[oa]|tercer[oa]?|cuart[oa]|quint[oa])\s+(?:\w+\s+)?{_CHILD}|"
    rf"(둘째|셋째|넷째|다섯째)|(老二|老三|老四|二胎|三胎|第二个孩子|第三个孩子)", re.IGNORECASE)
_HOW_MANY = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "un": 1, "una": 1, "dos": 2, "tres": 3,
             "cuatro": 4, "한": 1, "두": 2, "세": 3, "네": 4, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "second": 2,
             "third": 3, "fourth": 4, "fifth": 5, "segundo": 2, "segunda": 2, "tercer": 3, "tercero": 3,
             "tercera": 3, "cuarto": 4, "cuarta": 4, "quinto": 5, "quinta": 5, "둘째": 2, "셋째": 3, "넷째": 4,
             "다섯째": 5, "老二": 2, "老三": 3, "老四": 4, "二胎": 2, "三胎": 3, "第二个孩子": 2, "第三个孩子": 3}


_AFTER_STAGE = r"(?=\s*(?:[,.;:]|$|and\b|again\b|now\b))"
_PARTNERED = (
    ("single", (rf"^single\b{_AFTER_STAGE}|\b(?:is|still|currently|now|remains|stays)\s+single\b{_AFTER_STAGE}",
                "soltero", "soltera", "솔로", "미혼", "单身")),
    ("dating", (r"\b(?:is|started|been|now|began)\s+dating\b|\bin a relationship\b|\bhas a (?:boy|girl)friend\b",
                "tiene novio", "tiene novia", "사귀", "연애 중", "恋爱", "男朋友", "女朋友")),
    ("engaged", (r"\b(?:got|is|now|became|are)\s+engaged\b|\bengaged to\b", "comprometido", "comprometida",
                 "약혼", "订婚")),
    ("married", (r"\b(?:got|is|now|been|was|are|were|gets|getting)\s+married\b|\bmarried (?:to|since|in)\b|^married\b",
                 "casado", "casada", "se casó", "se casaron", "결혼", "结婚", "已婚")),
    ("divorced", (r"\b(?:got|is|now|was|recently|are|were)\s+divorced\b|\bdivorced (?:from|in|since)\b|^divorced\b",
                  "divorciado", "divorciada", "se divorció", "이혼", "离婚")),
)
"""Where someone stands with a partner, first English phrases said of a person (``is single``, ``got married``;
not ``a single node``), then Spanish, Korean and Chinese words."""
_NEGATED_BEFORE = re.compile(r"(?:\bnot|\bno|\bnever|\bnunca|\bsin|안|못|不|没|未)\s*\S*\s*$", re.IGNORECASE)


@lru_cache(maxsize=8192)
def partnered(text: str) -> str | None:
    """Where someone stands with a partner (``single``, ``dating``, ``engaged``, ``married``, ``divorced``;
    :data:`_PARTNERED`): the first stage said and not negated (``Single, not dating anyone``: ``single``), else
    ``None``."""
    low = " ".join(text.lower().split())
    found = []
    for stage, (english, *words) in _PARTNERED:
        matches = [*re.finditer(english, low), *(m for w in words for m in re.finditer(re.escape(w), low))]
        found += [(m.start(), stage) for m in matches if not _NEGATED_BEFORE.search(low[max(0, m.start() - 12): m.start()])]
    return min(found)[1] if found else None


@lru_cache(maxsize=8192)
def children(text: str) -> tuple[int | None, int | None]:
    """How many children ``text`` says someone has (``Has two kids``, ``Only child is Maya``, ``자녀 한 명``,
    ``两个孩子``) and the rank of a child it names (``welcomed their third child``, ``둘째 아들 태어남``), each
    ``None`` when not said: a newer child of a higher rank than the older count changes the count."""
    count = rank = None
    found = _KIDS_COUNTED.search(text)
    if found is not None:
        said = next((g for g in found.groups() if g), None)
        count = 1 if said is None or said in ("외동", "独生") else int(said) if said.isdecimal() else _HOW_MANY.get(
            said.lower())
    ranked = _ORDINAL_CHILD.search(text)
    if ranked is not None:
        rank = _HOW_MANY.get(next(g for g in ranked.groups() if g).lower())
    return count, rank


SWITCH_CUES = ("switched to", "switched over to", "moved to", "migrated to", "replaced with", "replaced by", "now uses",
               "cambió a", "cambiamos a", "se pasó a", "migró a", "migramos a", "reemplazado por", "reemplazada por",
               "전환", "교체", "换成", "改用", "切换到", "切到", "替换为", "迁移到", "迁到")
"""Phrases that say one thing took another's place (``Bundler switched to Vite``, ``GitHub Actions로 전환``)."""
REMOVING = REMOVAL_CUES + ("remove", "removes", "removing", "removal", "eliminate", "eliminates", "eliminating",
                          "replaces", "replacing", "cleanup", "clean-up", "migrated", "converted", "loại bỏ", "xóa",
                          "gỡ bỏ")
"""Words of removal or replacement, done or to do (English; Vietnamese ``loại bỏ``, ``xóa``): an older text that
holds one speaks of a removal (``remove/adapt legacy UI logic``, ``adding, editing and removing accounts``,
``Removes or replaces all legacy …``, ``Migrated console.log to debugLog()``), not of a thing still there; a newer
removal says the same change again."""
REOPEN_CUES = ("again", "reopened", "re-opened", "regressed", "reverted", "rolled back", "broke", "broken again",
               "came back", "no longer works", "de nuevo", "otra vez", "reabierto", "reabierta", "revertido", "다시",
               "재발", "재오픈", "되돌림", "再次", "重新打开", "回退", "又出现")
"""Words that say finished work is undone (``Login bug reopened``, ``de nuevo roto``, ``다시 발생``): only with one
does a newer text in an earlier state (open, in progress, planned) contradict an older one saying it done."""
REPORT_CUES = ("occurred", "caused by", "due to", "confirmed", "identified", "discovered", "noticed", "diagnosed",
               "investigated", "passed", "failed", "was resolved", "were resolved", "ocurrió", "se detectó",
               "confirmado", "identificado", "발생", "발견", "확인됨", "出现", "发现", "确认")
"""Words that make a text a report of what happened (``Hydration error occurred due to Math.random()``, ``Confirmed
the refactoring … was successful``, ``CI run … passed``), not a statement of what holds: a later switch away from
a thing it names does not make it untrue."""
_NUMBER_WORDS = {w: i for i, group in enumerate((
    ("zero", "cero"), ("one", "uno", "una", "single"), ("two", "dos"), ("three", "tres"), ("four", "cuatro"),
    ("five", "cinco"), ("six", "seis"), ("seven", "siete"), ("eight", "ocho"), ("nine", "nueve"),
    ("ten", "diez"), ("eleven", "once"), ("twelve", "doce"))) for w in group}
_COUNTED_WORD = re.compile(rf"(?<![\w-])({'|'.join(sorted(_NUMBER_WORDS, key=len, reverse=True))})\s+([^\W\d_][\w-]*)")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
_SPLIT_DIGITS = re.compile(r"(?<=[\dA-Za-z])(?=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])|"
                           r"(?<=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])(?=[\dA-Za-z])")
_COUNT = re.compile(r"(?<![\w.:/-])(\d[\d,]*)(?:\s+|(?=[개대명건个台名项条次人家种]))"
                    r"(?![월일년시분月日年号点时分])([^\W\d_][\w-]*(?:\s+[^\W\d_][\w-]*)?)", re.UNICODE)
_COUNTERS = frozenset("개대명건个台名项条次人家种")
_IDENTIFIED = frozenset((
    "sprint", "phase", "step", "stage", "milestone", "epic", "version", "release", "week", "issue", "ticket",
    "pr", "port", "task", "part", "chapter", "level", "tier", "round", "iteration", "day", "item", "option",
    "section", "line", "lines", "page", "room", "floor", "build", "run", "test", "story", "subtask", "sub-task",
    "bug", "rule", "requirement", "figure", "table", "adr", "rfc", "module", "lesson", "unit", "scenario", "type",
    "level", "layer", "grade", "class", "category", "tier", "channel", "slot", "stage", "wave", "season", "episode",
    "priority", "스프린트", "단계"))
"""Words a number after them names (``Sprint 4``, ``Phase 2``, ``port 9000``): an identifier, not a count."""
_OUTCOMES = frozenset(("pass", "fail", "skipp", "skip", "error", "warni", "succe"))
_MEASURES = frozenset(("am", "pm", "h", "s", "ms", "min", "mins", "k", "m", "gb", "mb", "tb", "kb", "px", "x",
                       "hours", "hour", "minutes", "seconds", "days", "weeks", "months", "years", "percent"))
_PARTICLES = ("으로", "를", "을", "이", "가", "은", "는", "의", "로", "에", "와", "과", "도")
_NOT_ITSELF = frozenset(("duplicate", "duplicated", "unused", "redundant", "dead", "old", "stale", "extra",
                         "debug", "temporary", "obsolete", "legacy", "manual", "hardcoded", "hard-coded", "mock",
                         "placeholder", "dummy", "fake"))
_PROBLEMS = frozenset(("flakiness", "flaky", "bug", "bugs", "error", "errors", "issue", "issues", "warning", "warnings",
                       "crash", "crashes", "leak", "leaks", "hang", "hangs", "regression", "regressions", "problem",
                       "problems", "failure", "failures", "conflict", "conflicts", "spike", "spikes", "noise",
                       "latency", "lag", "bottleneck", "vulnerability", "vulnerabilities"))
"""Problems: one said eliminated or removed is fixed (``Windows P2P flakiness eliminated``), not a thing gone."""
_MILESTONE = re.compile(r"(?<![\w-])[Mm](\d{1,2})(?![\w.])")
"""``M1``: milestone 1, as agents abbreviate it."""
_TIME_STEMS = frozenset(stem(w) for w in (
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february", "march",
    "april", "june", "july", "august", "september", "october", "november", "december", "into", "onto", "today",
    "yesterday", "tomorrow", "week", "month", "year", "last", "next", "ago", "q1", "q2", "q3", "q4", "enero",
    "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre",
    "diciembre"))
_PLACES = frozenset(("in", "from", "on", "at", "with", "by", "since", "for", "after", "en", "de", "desde"))
_AUXILIARIES = frozenset(("is", "was", "are", "were", "been", "be", "got", "has", "have", "had", "now", "fully",
                          "entirely", "completely", "all"))
_GENERIC = frozenset(("task", "featu", "work", "item", "thing", "issue", "implementation", "imple", "project",
                      "proje", "code", "updat", "curre", "statu", "alrea", "still", "yet", "now", "last", "week",
                      "month", "year", "today", "yesterday", "tuesday", "friday", "monday", "up", "use"))


@dataclass(frozen=True, slots=True)
class Claim:
    """One observation as the check reads it: ``fact`` (its frame and values), ``field`` (canonical key, the key
    as written, the value as written) for a ``Key: value`` text, the ``label`` of any short ``Key:`` prefix,
    ``state`` of work it states (``None`` when none), the ``slot`` it gives a value to with that value,
    ``counts`` (unit, number, unit as written), whether it states a ``change``, what it says was ``removed``, ``topic``: the
    stems (or, for Chinese, Japanese and Korean, the character pairs) that name what it is about, its
    ``specifics`` (identifiers and names), whether it says it is a ``correction`` of an earlier text and whether it
    speaks of ``removing`` something at all."""

    text: str
    fact: Fact
    field: tuple[str, str, str] | None
    label: str | None
    state: str | None
    slot: tuple[str, str] | None
    counts: tuple[tuple[str, int, str], ...]
    change: bool
    removed: frozenset[str]
    topic: frozenset[str]
    specifics: frozenset[str]
    correction: bool = False
    removing: bool = False






@lru_cache(maxsize=64)
def _any(cues: tuple[str, ...]) -> re.Pattern[str]:
    """One expression for all of ``cues`` (the longest first; words as words, Korean and Chinese as substrings):
    a text is read once per cue list, not once per cue."""
    ordered = sorted(cues, key=len, reverse=True)
    latin = "|".join(re.escape(c) for c in ordered if not _CJK.search(c))
    cjk = "|".join(re.escape(c) for c in ordered if _CJK.search(c))
    parts = ([rf"(?<![\w-])(?:{latin})(?![\w-])"] if latin else []) + ([f"(?:{cjk})"] if cjk else [])
    return re.compile("|".join(parts) or r"(?!)")


def cjk_pairs(text: str) -> set[str]:
    """The pairs of adjacent Chinese, Japanese or Korean characters of ``text`` (a particle at a run's end left
    out): the words it is about, as far as characters without spaces tell."""
    pairs: set[str] = set()
    for run in _CJK_RUN.findall(text):
        for particle in _PARTICLES:
            if run.endswith(particle) and len(run) > len(particle) + 1:
                run = run[: -len(particle)]
                break
        pairs.update(run[i:i + 2] for i in range(len(run) - 1))
    return pairs


_UNDER_WAY = frozenset(("debugging", "implementing", "fixing", "refactoring", "migrating", "investigating",
                        "porting", "upgrading", "integrating", "building", "developing"))
"""Verbs that open a text to say work is under way (``Debugging test failures…``); elsewhere (``after
implementing …``) they tell of the past."""


_TAG_STATES = {"open": OPEN, "todo": PLANNED, "wip": ACTIVE, "blocked": ACTIVE, "done": DONE, "fixed": DONE,
               "closed": DONE, "resolved": DONE, "hecho": DONE, "completado": DONE, "pendiente": PLANNED,
               "已完成": DONE, "完成": DONE, "进行中": ACTIVE, "待办": PLANNED, "완료": DONE, "진행중": ACTIVE}
_TAG = re.compile(r"^\s*[\[【(]\s*([^\]】)]{1,12}?)\s*[\]】)]")
_STILL_OPEN = re.compile(r"(?:\b(?:is|still|remains|stays)\s+open\b|\bopen\s*$)")


def state_of(low: str) -> tuple[str | None, str]:
    """The state of work ``low`` (lowercased text) states and the text with its state words taken out. A plan
    outranks the verb it plans (``needs to be moved``: planned), work under way outranks a partial result
    (``halfway done``: in progress), and a result outranks the trouble it ended (``fixed the flaky test``: done)."""
    rest, state = low, None
    tag = _TAG.match(low)
    if tag and tag.group(1) in _TAG_STATES:  # [OPEN] …, [HECHO] …, 【已完成】…
        state, rest = _TAG_STATES[tag.group(1)], low[tag.end():]
    elif _STILL_OPEN.search(low):
        state, rest = OPEN, _STILL_OPEN.sub(" ", low)
    first = rest.split(maxsplit=1)
    if state is None and first and first[0] in _UNDER_WAY:
        state, rest = ACTIVE, first[1] if len(first) > 1 else ""
    not_done = _any(_NOT_DONE)
    if not_done.search(rest):
        state, rest = OPEN, not_done.sub(" ", rest)
    if _CJK_NOT_DONE.search(rest):
        state, rest = state or OPEN, _CJK_NOT_DONE.sub(" ", rest)
    if _CJK_PLANNED.search(rest):
        state = state or PLANNED
    for candidate in (PLANNED, ACTIVE, DONE, CANCELLED, OPEN):
        cues = _any(STATE_CUES[candidate])
        if cues.search(rest):
            state = state or candidate
            rest = cues.sub(" ", rest)
    return state, rest


_ALL_DONE = re.compile(r"(?:全部|所有|均已|都已|\ball\b|\beverything\b)[^，；。;,]{0,12}?(?:已|\b)(提交|推送|部署|合并|上线|发布|"
                       r"commit|push|deploy|merg|releas)", re.IGNORECASE)
_NOT_YET = re.compile(r"(?:未|待[^，；。;,]{0,8}?|not (?:yet )?|un)(提交|推送|部署|合并|上线|发布|commit|push|deploy|merg|releas)",
                      re.IGNORECASE)


def all_done(text: str) -> frozenset[str]:
    """The verbs of work ``text`` says were done for everything (``全部工作已提交并 push``: ``提交``; ``All changes
    committed``: ``commit``)."""
    return frozenset(m.group(1).lower() for m in _ALL_DONE.finditer(text))


def not_yet(text: str) -> frozenset[str]:
    """The verbs of work ``text`` says are not done yet (``产物未提交``, ``待用户批准提交``: ``提交``; ``not yet
    deployed``, ``uncommitted``: ``deploy``, ``commit``)."""
    return frozenset(m.group(1).lower() for m in _NOT_YET.finditer(text))


@lru_cache(maxsize=8192)
def headline(text: str) -> str | None:
    """The state of work ``text`` opens with — its label (``해결됨: …``, ``Fixed: …``), a tag (``[HECHO] …``,
    ``✅ …``) or its first two words (``Closed 8812 — …``, ``Published to the team wiki``) — else ``None``: the
    state it gives the thing it is written about."""
    label, _ = labelled(text)
    low = " ".join(text.lower().split())
    words = low.split()[:2]
    if label is None and len(words) == 2 and not state_of(words[0])[0] and words[0] not in _AUXILIARIES:
        words = words[:1]  # "Caroline created a mural": a subject first, not a text that opens with its result
    head = label if label is not None else " ".join(words)
    return state_of(head)[0] or (state_of(low)[0] if _TAG.match(low) else None)


def _topic(text: str) -> frozenset[str]:
    """The stems of ``text``'s content words (no numbers, generic, time or change words) and its Chinese,
    Japanese and Korean character pairs: what it is about."""
    words = {stem(w) for w in re.split(r"[\s_/\\.:;,()\[\]{}'\"=+<>-]+", text) if w and w[0].isalnum()
             and w not in STOP and not _CJK.search(w) and not w.isdigit() and w not in _NUMBER_WORDS}
    return frozenset((words - _GENERIC - _CHANGE_STEMS - _TIME_STEMS) | cjk_pairs(text))


def _specifics(fact: Fact) -> frozenset[str]:
    """Identifiers and names that pin down a thing (paths, code names, capitalised names): two texts naming two
    different ones speak of two things."""
    return frozenset(v.key for v in fact.values if v.kind == "named" and not v.text[:1].isdigit()
                     and (re.search(r"[/_.#]|\w[A-Z]", v.text) or " " not in v.key))


def _counts(text: str) -> tuple[tuple[str, int, str], ...]:
    """The counts ``text`` gives: ``(unit, number, unit as written)`` for a number (digits or a number word)
    followed by what it counts (``27 unit tests``, ``four services``, ``노드 3대``, ``8 个服务``); a number after a
    word that names by number (``Sprint 4``), followed by a measure (``6am``, ``30 s``) or by a run's outcome
    (``244 passed``) is not a count."""
    out = []
    low = " ".join(_SPLIT_DIGITS.sub(" ", text.lower()).split())
    for match in _COUNTED_WORD.finditer(low):
        if match.group(2) not in STOP and match.group(2) not in _MEASURES:
            out.append((stem(match.group(2)), _NUMBER_WORDS[match.group(1)], match.group(2)))
    for match in _COUNT.finditer(low):
        raw = match.group(1).replace(",", "")
        before = low[: match.start()].split()
        if len(raw) > 6 or (before and (before[-1] in _IDENTIFIED or before[-1].startswith("#"))):
            continue
        if before and all(w in ("*", "-", "•") for w in before):
            continue  # "* 5153  Duty or tax …": a list item's code, not a count
        tail = match.group(2).split()
        if tail[0][0] in _COUNTERS:  # 3대, 8 个服务: a counter, then (Chinese) the noun after or (Korean) the one before
            counter, rest = tail[0][0], tail[0][1:]
            noun = (cjk_pairs(rest) if _CJK.search(rest) and not re.search(r"[\uac00-\ud7af]", rest) else
                    cjk_pairs(before[-1]) if before and _CJK.search(before[-1]) else set())
            out.append((counter + "".join(sorted(noun)[:1]), int(raw), " ".join(tail)))
            continue
        if tail[0] in _MEASURES or tail[0] in STOP or any(stem(w) in _OUTCOMES for w in tail):
            continue  # "6am", "(244 passed, 3 skipped)": a measure, or a run's outcome, not things counted
        kept = [w for w in tail if w not in STOP and not _CJK.search(w)][:2]
        if kept:
            out.append((" ".join(stem(w) for w in kept), int(raw), " ".join(kept)))
    return tuple(out)


def _slot(low: str, shown: str) -> tuple[str, str] | None:
    """The attribute ``low`` gives a value to and that value as ``shown`` writes it (``("home", "Valencia")``)."""
    if _any(SLOT_WORDS).search(low) is None:
        return None
    for slot, cues in SLOT_CUES.items():
        for cue in sorted(cues, key=len, reverse=True):
            if _CJK.search(cue):
                at = low.find(cue)
                if at < 0:
                    continue
                after = cue in ("住在", "搬到", "搬去", "加入", "入职", "跳槽", "交给", "移交", "在", "负责人", "负责")
                runs = [v.lstrip("了：") for v in _CJK_RUN.findall(low[at + len(cue):] if after else low[:at])]
                runs = [v for v in runs if v]
                runs = runs if after else runs[-1:]
                if runs and (cue != "在" or any(w in low for w in ("工作", "做", "上班", "任职"))):
                    return slot, runs[0][:6]
                continue
            match = re.search(rf"(?<![\w-]){re.escape(cue)}\s+(?:the\s+|la\s+|el\s+)?([\w.&'-]+)", low)
            if match:
                word = match.group(1)
                if word in STOP or word[0].isdigit():
                    continue
                return slot, shown[match.start(1):match.end(1)] if len(shown) == len(low) else word
    return None


@lru_cache(maxsize=8192)
def labelled(text: str) -> tuple[str | None, str]:
    """The label of ``text`` (``Key: …``, ``name -- …``; four words at most, lowercased, ``_`` read as a space)
    and what follows it; ``(None, text)`` when it has none."""
    match = _FIELD.match(text.strip()) or _LIST_ITEM.match(text.strip())
    if match is None or len(match.group(1).split()) > 4:
        return None, text
    return " ".join(match.group(1).lower().replace("_", " ").split()), match.group(2).strip()


def _label_state(label: str | None) -> str | None:
    """The state a short label states by itself (``Minor issue``, ``Fixed``), else ``None``."""
    return _LABEL_STATES.get(label.split()[-1]) if label is not None and 0 < len(label.split()) <= 2 else None


@lru_cache(maxsize=8192)
def is_correction(text: str) -> bool:
    """Whether ``text`` says it corrects or supersedes an earlier one (:data:`CORRECTION_CUES`,
    :data:`CORRECTION_HEADS`)."""
    return _any(CORRECTION_CUES).search(text.lower()) is not None or CORRECTION_HEADS.match(DATED.sub("", text)) is not None


@lru_cache(maxsize=8192)
def stated(text: str) -> str | None:
    """The state of work ``text`` states (:func:`state_of`, or its label's), read without the rest of a
    :class:`Claim`: the clauses of a passage are read so."""
    spaced = _MILESTONE.sub(r"milestone \1", _SPLIT_DIGITS.sub(" ", text))
    return state_of(" ".join(spaced.lower().split()))[0] or _label_state(labelled(text)[0])


_LEAVES_WORK = tuple(c for s in (PLANNED, ACTIVE, OPEN) for c in STATE_CUES[s]) + _NOT_DONE
_SAYS_DONE = STATE_CUES[DONE] + STATE_CUES[CANCELLED]


@lru_cache(maxsize=8192)
def may_leave_work(text: str) -> bool:
    """Whether ``text`` holds a word of work still to do (planned, in progress, open), cheaply: a passage
    without one has no clause that does."""
    low = text.lower()
    return bool(_any(_LEAVES_WORK).search(low) or _CJK_NOT_DONE.search(low) or _CJK_PLANNED.search(low))


@lru_cache(maxsize=8192)
def may_say_done(text: str) -> bool:
    """Whether ``text`` holds a word of work done or cancelled, cheaply."""
    return _any(_SAYS_DONE).search(text.lower()) is not None


@lru_cache(maxsize=8192)
def claim(text: str) -> Claim:
    """``text`` read as a :class:`Claim` (cached: a new observation is compared with many)."""
    spaced = _MILESTONE.sub(r"milestone \1", _SPLIT_DIGITS.sub(" ", text))
    fact = read(spaced)
    low = " ".join(spaced.lower().split())
    field = None
    label, value = labelled(text)
    if label is not None:
        words = label.split()
        key = _KEY_OF.get(label) or (_KEY_OF.get(words[-1]) if words and len(words) <= 3 else None)
        if key is not None:
            field = (key, label, value)
    state, body = state_of(low)
    state = state or _label_state(label)
    topic = _topic(body) | _identifiers(low)
    removed = frozenset(stem(w) for found in _any(REMOVAL_CUES).finditer(low) if not _alternative(low, found)
                        for w in re.split(r"[\s/.:;,()'\"-]+", _near(low, found)) if w and w not in STOP
                        and not _CJK.search(w))
    removing = bool(removed) or _any(REMOVING).search(low) is not None
    change = _any(CHANGE_CUES).search(low) is not None
    correction = is_correction(text)
    return Claim(text, fact, field, label, state, _slot(low, " ".join(spaced.split())), _counts(text), change, removed, topic,
                 _specifics(fact), correction, removing)


def _alternative(low: str, at: re.Match[str]) -> bool:
    """Whether the cue found ``at`` is one of two alternatives (``啟用/停用控制``, ``add/remove``): a control, not a
    removal."""
    return low[at.start() - 1: at.start()] == "/" or low[at.end(): at.end() + 1] == "/"


def _near(low: str, at: re.Match[str]) -> str:
    """What ``low`` says the cue found ``at`` removed: the words after it (``removed lodash``, ``replaced print
    calls``), or the words before it when nothing or a place follows (``Heroku app shut down``, ``X is deprecated
    in v1``) and always in Korean and Chinese, where the thing removed comes first."""
    cue = at.group(0)
    after = []
    tail = low[at.end():]
    if tail[:1] in (".", ";", ":", ","):
        tail = ""  # "This package is deprecated. Net::SMTP …": the sentence ended, what was removed came before
    words = re.split(r"(?<=[,;])\s*|\s+", tail.strip())
    if words[:1] == ["on"] and cue in ("gave up", "given up"):
        words = words[1:]  # "gave up on Duolingo": what was given up follows "on"
    for word in words[:3]:
        if not word or word in _PLACES:
            break
        after.append(word.rstrip(",;"))
        if word.endswith((",", ";")):
            break
    if any(word in _NOT_ITSELF for word in after):
        return ""  # "removed the unused RecentFood entity", "all legacy modal files": a part of it, not the thing
    if any(word.rstrip(",;") in _PROBLEMS for word in after):
        return ""  # "eliminated the flakiness": a problem fixed, not a thing removed
    if after and not _CJK.search(cue):
        return " ".join(after)
    clause = re.split(r"[;,:，、；。]", low[: at.start()])[-1]  # "Sessions are kept in Postgres; Redis was removed"
    before = [w for w in clause.split() if w not in _AUXILIARIES]
    if any(w in _NOT_ITSELF or w in _PROBLEMS for w in before[-4:]):
        return ""  # "All legacy ui/ directories removed": the legacy part, not the thing
    return " ".join(before[-2:])


def _identifiers(low: str) -> frozenset[str]:
    """Things named by number in ``low`` (``sprint 4``, ``phase 2``): part of what a text is about."""
    named = {f"{m.group(1)} {m.group(2)}" for m in re.finditer(r"(?<![\w-])(\w+)\s+#?(\d+)(?![\w.])", low)
             if m.group(1) in _IDENTIFIED}
    return frozenset(named | {m.group(0) for m in re.finditer(r"(?<![\w&])#\d+\b", low)})


_CLAUSE = re.compile(r"[；;。！？!?\n]+|[，、]|(?<=[\w)\]])\.\s+")
MAX_CLAUSES = 24
"""Clauses of a passage read at most (the first ones)."""


@lru_cache(maxsize=4096)
def clauses(text: str) -> tuple[str, ...]:
    """The clauses of a passage (a day's log, a summary): its parts between ``；`` ``;`` ``。`` ``，`` ``、``, ends of
    sentences and lines, each read as a short text of its own (at most :data:`MAX_CLAUSES`)."""
    return tuple(part.strip() for part in _CLAUSE.split(text) if part.strip())[:MAX_CLAUSES]


_NAMED_BY_NUMBER = re.compile(
    r"(?<![\w.-])(?:[A-Za-z][\w-]*\d[\w.-]*\w|[A-Za-z][\w-]*\d|\d+(?:\.\d+)+)(?!\w)"
    r"|[\u4e00-\u9fff]{1,2}\s?\d+(?![\w.])")
_NUMBERED_WORD = re.compile(r"(?<![\w-])([a-z]+)\s+#?(\d+[a-z]?)(?![\w.])")
_NAMED_AS_CODE = re.compile(r"(?<![\w./-])(?:[A-Za-z_]\w*[._/-][\w./-]*[A-Za-z0-9]|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*"
                            r"|[A-Za-z]+_\w+)(?!\w)")
_URL = re.compile(r"https?://([\w.-]+)\S*")
_MORE_NUMBERS = re.compile(r"^[/+、,]\s?(\d+)(?![\d.])")
_ISO = re.compile(r"^\d{4}-\d{2}(?:-\d{2})?$|^\d{1,2}/\d{1,2}$")


def first_numbered(text: str) -> str | None:
    """The first thing ``text`` names by number (:func:`names`), lowercased: what a clause is about when it names
    two (``ADR-001 预留 Phase 0 目标架构``: ``adr-001``)."""
    numbered = names(text)[0]
    found = [(text.lower().replace(" ", "").find(n), n) for n in numbered]
    return min((at, n) for at, n in found if at >= 0)[1] if any(at >= 0 for at, _ in found) else None


@lru_cache(maxsize=8192)
def names(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """What ``text`` names as code would: things named by number (``P1A-3``, ``ADR-001``, ``phase 0``, ``2.3``
    of ``task-master 2.2/2.3``, ``迁移 20``, ``任务1``; never a date) and code names (``tasks.json``,
    ``parentId``, ``science-worker``, ``CurrentUser``, ``src/app.ts`` and its file name, a URL's host), lowercased: ``(numbered, coded)``."""
    numbered: set[str] = set()
    for m in _NAMED_BY_NUMBER.finditer(text):
        if _ISO.match(m.group(0)):
            continue
        numbered.add(re.sub(r"\s+", "", m.group(0)).lower())
        prefix, end = re.sub(r"[\d\s]+$", "", m.group(0)), m.end()
        while prefix and _CJK.search(prefix) and (more := _MORE_NUMBERS.match(text[end:])):
            numbered.add(prefix + more.group(1))  # 迁移 19/20/21, 迁移 20+21: each of them
            end += more.end()
    numbered |= {f"{m.group(1)}{m.group(2)}" for m in _NUMBERED_WORD.finditer(text.lower())
                 if m.group(1) in _IDENTIFIED or m.group(1) in ("task", "migration", "adr", "rfc", "pr")}
    coded = {m.group(1).lower() for m in _URL.finditer(text)}
    for m in _NAMED_AS_CODE.finditer(_URL.sub(" ", text)):
        name = m.group(0).lower().rstrip("./-")
        if name in numbered or _ISO.match(name) or any(p in STOP for p in name.split("-")):
            continue
        coded.update(p for p in (name, name.rsplit("/", 1)[-1]) if len(p) >= 4)
    return frozenset(numbered), frozenset(coded)


_IN_CODE = re.compile(r"\b[a-z]+[A-Z]|\w_\w|\w\.\w|/|\(\)")
_PATH = re.compile(r"^\s*(?:\$[A-Za-z{(]|~|\.{0,2}/|[A-Za-z]:\\)|/[^/\s]+/")


def in_code(text: str) -> bool:
    """Whether ``text`` is written as code is (``childModalId``, ``kb_sync``, ``app.state``, ``src/``,
    ``onClose()``). Stricter than the code names of :func:`names`: a product's name with a capital inside
    (``OpenSearch``, ``GitHub``) is not, so that a tool switched for another is still two values of one slot."""
    return _IN_CODE.search(text) is not None


def is_path(text: str) -> bool:
    """Whether ``text`` is a file system path (``$env:USERPROFILE/Documents``, ``~/.config``, ``src/api/v2/``;
    not ``offset/limit``, nor ``$10``)."""
    return _PATH.search(text) is not None


def topic_overlap(a: Claim, b: Claim) -> float:
    """Shared topic ÷ the smaller topic (0..1; 0 when either has none)."""
    if not a.topic or not b.topic:
        return 0.0
    return len(a.topic & b.topic) / min(len(a.topic), len(b.topic))


def other_things(a: Claim, b: Claim) -> bool:
    """Whether ``a`` and ``b`` name two different things: both carry identifiers or names and share none (the
    path of one is a prefix of the other's: one thing), or they sit under two different labels."""
    if a.label is not None and b.label is not None and a.label != b.label and not (
            state_of(a.label)[0] or state_of(b.label)[0]):
        return True  # "Missing: …" / "COMPLETED: …": a label that is a state tags the text, it names no thing
    named = {i.split()[0]: i for i in a.topic if " " in i}
    if any(i.split()[0] in named and named[i.split()[0]] != i for i in b.topic if " " in i):
        return True  # Sprint 4 / Sprint 3
    if a.specifics and b.specifics and not (a.specifics & b.specifics):
        return not any(x.startswith(y) or y.startswith(x) for x in a.specifics for y in b.specifics)
    return False




SCHEDULE_CUES = ("planned for", "scheduled", "starts", "start", "due", "deadline", "target", "moved to", "slipped",
                 "postponed", "rescheduled", "pushed to", "set for", "will be on", "programado", "para el", "pasó a",
                 "예정", "시작", "변경", "마감", "定在", "改到", "计划", "安排在", "截止", "delayed", "pushed back", "moved up",
                 "pospuesto", "pospuesta", "aplazado", "aplazada", "reprogramado", "reprogramada", "cambiaron", "연기",
                 "미뤄", "미룸", "당겨", "推迟", "延期", "延后", "提前到", "改期")
"""Words that make a date a plan (a plan's date can change; two past events' dates cannot)."""
_WHEN = re.compile(
    r"(\d{1,2})\s*월\s*(\d{1,2})\s*일|(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]|(周|星期)([一二三四五六日天])|"
    r"(上午|下午|晚上|早上)?([一二三四五六七八九十两]+|\d{1,2})\s*点|(\d{1,2})\s*시|([월화수목금토일])요일|"
    r"(\d{1,2})\s*(?:月(?:初|中旬|中|底|末|份)?|월\s*(?:초|중순|말)?)(?![\d일日号])|"
    r"(?:(?<=\bal )|(?<=\bel )|(?<=\bon )|(?<=\bby )|(?<=\bto ))(\d{1,2}/\d{1,2}(?:/\d{2,4})?)(?![\d/])", re.UNICODE)


def has_any(low: str, cues: tuple[str, ...]) -> bool:
    """Whether the lowercased ``low`` holds one of ``cues`` (substrings in Korean and Chinese, words elsewhere)."""
    return _any(cues).search(low) is not None


@lru_cache(maxsize=8192)
def when(text: str) -> dict[str, str]:
    """The dates, weekdays and times ``text`` names: ``{"<kind> <normalised>": as written}`` (``date 2025-03-15``:
    ``March 15, 2025``; ``date 4월8일``; ``weekday 周三``; ``time 10:00``)."""
    fact = read(_SPLIT_DIGITS.sub(" ", text))
    found = {f"{v.kind} {v.key}": v.text for v in fact.values if v.kind in ("date", "weekday", "time")}
    for match in _WHEN.finditer(text):
        kind = "date" if match.group(1) or match.group(3) or match.group(11) or match.group(12) else \
            "weekday" if match.group(5) or match.group(10) else "time"
        found[f"{kind} {match.group(0).replace(' ', '')}"] = match.group(0)
    return found


_QUANTITY = re.compile(r"(?<![\w.])[$€£]?\d[\d,]*(?:\.\d+)?\s?(?:k|m|%|ms|s|h|d|w|min|gb|mb|tb|x)?(?![\w.])",
                       re.IGNORECASE)
_CJK_UNITS = re.compile(r"(\d)\s*(?:(초|秒)|(분|分钟)|(시간|小时))")
"""A number and a Chinese or Korean unit of time, read as ``s``, ``min``, ``h`` (``300초``, ``30 分钟``)."""


@lru_cache(maxsize=8192)
def quantities(text: str) -> list[str]:
    """The amounts ``text`` states (``$40k``, ``300``, ``10s``, ``100%``), normalised; dates, versions and
    numbers that name a thing (``Sprint 4``) left out."""
    low = _CJK_UNITS.sub(lambda m: m.group(1) + ("s" if m.group(2) else "min" if m.group(3) else "h") + " ", text.lower())
    out = []
    for match in _QUANTITY.finditer(low):
        before = low[: match.start()].split()
        if before and before[-1] in _IDENTIFIED:
            continue
        if low[match.end(): match.end() + 1] == ")" or _YEAR.match(match.group(0)):
            continue  # "1) …", "2) …": the items of a list; a year is a date
        out.append(match.group(0).replace(",", "").replace(" ", ""))
    return out


_PRODUCT_VERSION = re.compile(r"(?<![\w./@-])([A-Z][\w+#.-]*[A-Za-z+#]|[a-z][\w-]*[a-z])\s+v?(\d+(?:\.\d+)*)(?![\w.])")
_BARE_VERSION = re.compile(r"(?<![\w.-])v(\d+(?:\.\d+)+)(?![\w.])|(?:version|versión|버전|版本)[:：]?\s*v?(\d+(?:\.\d+)+)",
                           re.IGNORECASE)
_NOT_PRODUCTS = _IDENTIFIED | {w + "s" for w in _IDENTIFIED} | frozenset((
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "q", "top",
    "last", "next", "first", "every", "version", "versión", "at", "to", "of", "in", "on", "for", "v", "has", "have",
    "with", "and", "only", "all", "since", "until", "by", "year", "fy", "through", "between", "than", "about",
    "around", "over", "under", "after", "before", "via", "up", "down", "into", "from"))
_YEAR = re.compile(r"^(?:19|20)\d\d$")


_UPGRADED = re.compile(r"(?:\b(?:upgraded|updated|bumped|actualiz[óoa]\w*|subi[óo])\b|升级|업그레이드)[^,;，；。]{0,40}?"
                       r"(?:\bto\b|\ba(?:\s+la)?\b|到|至|으로|로)\s*v?(\d+(?:\.\d+)+)(?![\w.])", re.IGNORECASE)
"""A version something was raised to (``Upgraded the EKS control plane to 1.29``, ``Se actualizó api-facturas a la
2.0.0``, ``升级到 3.2``)."""


_DEPENDENCY = re.compile(r"\b(?:sdk|client|librar(?:y|ies)|lib|package|dependenc(?:y|ies)|plugin|driver|module|crate|gem|"
                         r"image|librería|paquete|dependencia)s?\b|라이브러리|패키지|의존성|依赖|库|包", re.IGNORECASE)
"""Words that name a dependency (``client SDK bumped to 2.4.0``): its version, not the thing's own."""


@lru_cache(maxsize=8192)
def upgraded(text: str) -> frozenset[str]:
    """The versions ``text`` says its thing was upgraded to (:data:`_UPGRADED`); a dependency's (:data:`_DEPENDENCY`)
    and a named product's left out (``upgraded React to 18.2``: that is React's, :func:`versions`)."""
    if _DEPENDENCY.search(text):
        return frozenset()
    found = frozenset(m.group(1) for m in _UPGRADED.finditer(_SPLIT_DIGITS.sub(" ", text)))
    return found - frozenset(versions(text)[0].values()) if found else found


@lru_cache(maxsize=8192)
def versions(text: str) -> tuple[dict[str, str], frozenset[str]]:
    """The versions ``text`` names: ``{product: version}`` for a capitalised name with a number after it
    (``Python 3.12``, ``React 18로``, ``Node 18``; never ``Sprint 4`` or ``March 3``, nor the last part of a
    scoped package, ``@clerk/nextjs 7.0``, which is not Next.js), and the bare versions
    (``v2.4.0``, ``version 2.2.0``, ``Version: 2.3.1``)."""
    spaced = _SPLIT_DIGITS.sub(" ", text)
    products: dict[str, str] = {}
    for match in _PRODUCT_VERSION.finditer(spaced):
        name = match.group(1)
        if name.lower() in _NOT_PRODUCTS or name.lower() in STOP or (name.islower() and "." not in match.group(2)) or _YEAR.match(
                match.group(2)):
            continue  # "Sprint 4", "Dec 2024", "python 3": a thing named by number, a date, a plain number
        products[re.sub(r"\.?js$", "", name.lower()) or name.lower()] = match.group(2)  # Node.js 16 / Node 20
    bare = frozenset((m.group(1) or m.group(2)) for m in _BARE_VERSION.finditer(spaced))
    return products, bare


@lru_cache(maxsize=8192)
def words_long(text: str) -> int:
    """How many words ``text`` holds, a Chinese, Japanese or Korean character counting as half a word."""
    return len(re.findall(r"[^\W\d_]+|\d+", _CJK.sub(" ", text))) + len(_CJK.findall(text)) // 2


_ANCHOR = re.compile(r"\b(?:after|since|as of)\s+(?:the\s+)?[\w-]+|\b\d{4}-\d{2}-\d{2}\b|"
                     r"\bcommit\s+[0-9a-f]{7,40}\b|\b(?:in|of)\s+(?:the\s+)?[\w-]+\s+commit\b|"
                     r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b", re.IGNORECASE)


@lru_cache(maxsize=8192)
def anchored(text: str) -> str | None:
    """The moment ``text`` ties itself to (``after the database function fix``, ``on July 3, 2025``,
    ``2026-02-25``, ``commit 2eeef1c0``, ``in the orchestrator commit``), lowercased, else ``None``: a text so
    anchored tells of that moment, history."""
    match = _ANCHOR.search(text)
    return match.group(0).lower() if match else None
