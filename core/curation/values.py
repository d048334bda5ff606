"""What two statements can be checked to differ in: values (numbers, versions, regions, times, months,
weekdays), identifiers (paths, file names, code names, command flags), names (capitalised words inside a
sentence) and polarity (a negation).

Two close observations that differ in such a value ("rate limited to 100 requests" / "… 1000 requests") or
in polarity ("likes coffee" / "does not like coffee", "migration needed" / "no migration needed") are not duplicates: they disagree, which is a
contradiction to settle, not a repetition to merge (docs/curation.md "What counts as a duplicate").
:func:`signature` reads the checkable part of one text once; :func:`differ` compares two signatures.
Times are normalised first (``2am``, ``2 a.m.``, ``02:00`` are one value) and thousands separators
dropped (``1,000`` = ``1000``), so that a paraphrase does not differ by its spelling of a value. "No migration
needed" says that nothing is needed, not that something is false: it differs from a text that says a migration is
needed, not from "the schema already supports it".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MONTHS = frozenset({
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
    "septiembre", "octubre", "noviembre", "diciembre"})
WEEKDAYS = frozenset({
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "lunes", "martes",
    "miércoles", "miercoles", "jueves", "viernes", "sábado", "sabado", "domingo"})
NEGATIONS = frozenset({
    "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "without",
    "nunca", "sin", "ningún", "ningun", "ninguna", "nada", "tampoco", "jamás", "jamas"})

NEEDS = frozenset({"need", "needs", "needed", "require", "requires", "required", "necessary", "necesario",
                   "necesaria", "necesita", "requiere"})
_NEED_WORDS = NEEDS | {"need", "necesidad", "necesarios", "necesarias"}
_UNNEEDED = re.compile(r"\b(?:no|not|nothing|sin)\b(?:\s+[\w-]+){0,3}?\s+(?:needed|required|necessary|necesari[oa]s?)\b"
                       r"|\bno(?:\s+\w+)?\s+(?:need|necesidad)\b", re.IGNORECASE)
_TWELVE_HOUR = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\b\.?", re.IGNORECASE)
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_VALUE = re.compile(r"(?<![\w.:/-])[\w.:/-]*\d[\w.:/-]*", re.UNICODE)  # a token holding a digit
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_CODE = re.compile(r"(?<![\w])(?:\w+(?:::\w+)+|\w+:\w[\w:-]*|[~.$]?[\w-]*[/\\][\w./\\*{}$-]*|--?[a-z][\w-]*|[\w-]*[._][\w.-]*\w(?:\(\))?|\w+\(\)|"
                   r"[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)", re.UNICODE)  # paths, flags, dotted/underscored, calls, camelCase, a:b
_NAME = re.compile(r"(?<=[\w,;)] )[A-Z][\w+#-]*", re.UNICODE)  # a capitalised word after a word: inside a sentence
SHOUTING = 4  # a word in capitals this long or longer is emphasis (REPEATEDLY), not a name
_CALENDAR = MONTHS | WEEKDAYS
_EDGES = ".:/-"
_URL = re.compile(r"(?<![\w./-])(?:[a-z][\w+.-]*://)?(?:www\.)?((?:[\w-]+\.)+[a-z]{2,}/[\w./%~+-]*[\w/])",
                  re.IGNORECASE)  # an address: "https://github.com/a/b", "github.com/a/b" (its host, then a path)
_HOST = re.compile(r"^(?:[a-z][\w+.-]*://)?(?:www\.)?(?:[\w-]+\.)+[a-z]{2,}/")  # "https://github.com/", "gitlab.io/"


def _twelve_hour(match: re.Match[str]) -> str:
    hour, minute = int(match.group(1)) % 12, int(match.group(2) or 0)
    return f" {hour + (12 if match.group(3).lower() == 'p' else 0):02d}:{minute:02d} "


def _clock(match: re.Match[str]) -> str:
    return f"{int(match.group(1)):02d}:{match.group(2)}"


@dataclass(frozen=True, slots=True)
class Signature:
    """The checkable part of a text: its ``values`` (lower-cased tokens holding a digit, month and weekday
    names), its ``codes`` (paths, file names, dotted or underscored identifiers, calls, camelCase, a:b, flags), its
    ``names`` (capitalised words inside a sentence, lower-cased), whether it holds a ``negation`` (besides "no …
    needed"), whether it says that something is not needed (``unneeded``) and whether it says that something is
    (``needs``: a word of :data:`NEEDS` outside "no … needed")."""

    values: frozenset[str]
    negation: bool
    codes: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    unneeded: bool = False
    needs: bool = False


def signature(text: str) -> Signature:
    """The :class:`Signature` of ``text``."""
    lowered = _THOUSANDS.sub("", text.lower())
    lowered = _CLOCK.sub(_clock, _TWELVE_HOUR.sub(_twelve_hour, lowered))
    words = set(_WORD.findall(lowered))
    values = {token.strip(_EDGES) for token in _VALUE.findall(lowered)} | (words & _CALENDAR)
    rest, rest_words = lowered, words
    if words & _NEED_WORDS:  # "no … needed" read only where a word of need is
        rest = _UNNEEDED.sub(" ", lowered)
        rest_words = set(_WORD.findall(rest))
    unneeded = rest != lowered
    negation = bool(rest_words & NEGATIONS) or "n't" in rest or "n’t" in rest
    addresses = {m.lower().rstrip("/") for m in _URL.findall(text)}
    codes = ({c.strip(".:/").lower() for c in _CODE.findall(_URL.sub(" ", text))} | addresses) - values - {""}
    names = {n.lower() for n in _NAME.findall(text) if not (n.isupper() and len(n) >= SHOUTING)}
    return Signature(frozenset(values), negation, frozenset(c for c in codes if not c.isdigit()),
                     frozenset(names - codes - values), unneeded, bool(rest_words & NEEDS))


def without_host(code: str) -> str:
    """``code`` (lower case) without a leading scheme and host name: ``github.com/hkuds/lightrag`` →
    ``hkuds/lightrag``; unchanged when it names no host."""
    return _HOST.sub("", code, count=1)


def hosts_left_out(text: str) -> str:
    """``text`` with the scheme and host of each address that has a path left out (``see
    https://github.com/acme/parser`` → ``see acme/parser``): read for its words, the host is part of the address,
    compared as a whole in the :class:`Signature`."""
    return _URL.sub(lambda m: without_host(m.group(1)), text)


def _hosts_aside(x: frozenset[str], y: frozenset[str]) -> frozenset[str]:
    """``x`` with each identifier written with a host name (``github.com/a/b``) written without it when ``y``
    names it so (``a/b``): the host is one more detail of the same identifier, not another identifier."""
    return frozenset(without_host(c) if without_host(c) in y else c for c in x)


def differ(a: Signature, b: Signature) -> bool:
    """Whether two texts differ checkably: both name values or identifiers (compared as one set), or both name
    names, and not the same ones, or one is negated and the other not, or one says that something is not needed
    and the other that something is. A value named on one side only (more detail) is not a difference, nor is
    the host name of an address written on one side only (``github.com/hkuds/lightrag`` / ``hkuds/lightrag``)."""
    if a.unneeded != b.unneeded and (a.needs or b.needs):
        return True
    checked_a, checked_b = a.values | a.codes, b.values | b.codes
    checked_a, checked_b = _hosts_aside(checked_a, checked_b), _hosts_aside(checked_b, checked_a)
    return a.negation != b.negation or any(bool(x) and bool(y) and x != y for x, y in (
        (checked_a, checked_b), (a.names, b.names)))
