"""What settling a duplicate cluster keeps: the member that says every detail of the others (its *survivor*),
or, when none does, one text that keeps them all (its *merged text*). Reads text only, never writes.

A detail of a text (:func:`details`) is each of its words that carries a fact — a value, a name, a path, a
number, a qualifier ("optional", "only", "for macOS", "for the discovery feature"), a command — and each literal
it holds (numbers and versions, identifiers and paths, a name of three words or more joined by hyphens, a command
between backticks), compared exactly (in a name, a hyphen may be written as a space or left out). A word is kept
in any of its forms (:func:`_derived`: "libraries" / "library", "transitional" / "transition"). Words that only
restate (:data:`~limbic.core.curation.statements.WORDING`: "prefers" / "values", "user clarified",
"reiterated") are not details. A member *keeps* another (:func:`keeps`) when every detail of the other is in it;
a survivor keeps every other member (:func:`survivor`), so settling on it loses nothing. When none does,
:func:`merged_text` writes the members as one text conservatively — the preferred member, then what each other
member adds that it lacks, taken word for word from that member with the word that ties it to its sentence
("by hand", "for macOS"; in parentheses, or the whole member after "; " when it adds most of itself): never a
word that no member wrote.

Which member is preferred (:func:`preference`): a definitional sentence over a fragment or a bullet ("DNS root
hints and DNSSEC trust anchor" over "* Root Hints (root.hints)…"), what a thing does over "This package provides
…", then the one with the most details, the longest, the oldest. A bullet, a fragment or a "This package provides
<name>" with nothing but a name (:func:`form`) is never the survivor of a cluster holding a better-written member
(that member would be lost): such a cluster has no survivor, and its merged text starts from the definitional
sentence. A "This package contains the X library for Y" that keeps every detail of the others is a survivor when
no better-written member is.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from limbic.core.curation import statements, values
from limbic.core.curation.stop_words import STOP_WORDS

QUALIFIERS = frozenset((
    "all", "only", "every", "each", "none", "no", "not", "never", "nothing", "without", "except", "before", "after",
    "until", "since", "most", "least", "more", "less", "few", "several", "many", "full", "whole", "part", "first",
    "last", "third", "once", "again", "already", "still", "always", "often", "sometimes", "one", "two", "three",
    "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "fifteen", "twenty", "forty",
    "fifty", "sixty", "hundred", "both", "either", "neither", "optional", "todos", "todas", "cada", "solo", "sólo",
    "solamente", "sin", "nunca", "ninguno", "ninguna", "antes", "menos", "más", "mas", "dos", "siempre", "todavía"))
"""Words of the stop lists that still restrict or count what a text says: a survivor must keep them."""
MOST_OF = 0.6
"""Share of a member's words from which what it adds is written whole (after "; ") rather than in parentheses."""
GAP_WORDS = 2
"""Words between two added details still taken as one piece ("nodes and messy")."""
NAME_PARTS = 3
"""Parts from which a word joined by hyphens is a name, kept whole (:func:`_name`)."""
SUFFIX_LETTERS = 3
"""Letters two stems may differ by at their end and still be one word (:func:`_derived`)."""
ROOT_LETTERS = 5
"""Letters two such stems must share from their start at least."""

_BULLET = re.compile(r"^\s*(?:[*•·▪◦‣>#-]|\d+[.)]|[a-z][.)])\s")
_BACKTICK = re.compile(r"`([^`]+)`")
_HYPHENATED = re.compile(r"(?<![\w-])[^\W_]+(?:-[^\W_]+)+(?![\w-])")  # a name: "babel-plugin-polyfill-regenerator"
_TOKEN = re.compile(r"\S+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SPACE = re.compile(r"\s+")
_EDGE = " ,;:.!?"


@dataclass(frozen=True, slots=True)
class Details:
    """The details of one text: its ``words`` (stems of content words and qualifiers), its ``literals``
    (values, identifiers, paths, commands between backticks, lower-cased) and, for a text compared by its
    characters (:attr:`~limbic.core.curation.statements.Statement.foreign`), its character ``grams``."""

    words: frozenset[str]
    literals: frozenset[str]
    grams: frozenset[str]


@dataclass(frozen=True, slots=True)
class Said:
    """All a text says, as checked for a detail of another: every word's stem, the literals, the character
    bigrams and the lower-cased text with single spaces."""

    stems: frozenset[str]
    literals: frozenset[str]
    grams: frozenset[str]
    lowered: str


def _grams(text: str) -> frozenset[str]:
    squeezed = "".join(_WORD.findall(statements.normalised(text)))
    return frozenset(squeezed[i:i + 2] for i in range(len(squeezed) - 1))


@functools.lru_cache(maxsize=1024)
def details(text: str) -> Details:
    """The :class:`Details` of ``text`` (a leading "This package provides …" is not one). The last 1,024 are
    kept: a cluster's members are read by the survivor, the order of preference and the merged text."""
    body = statements.without_boilerplate(text)
    plain = statements.normalised(body)
    words = set()
    for token in _WORD.findall(plain.replace("_", " ")):
        if token in QUALIFIERS:
            words.add(token)
        elif len(token) > 1 and token not in STOP_WORDS and not token.isdigit():
            stem = statements.stem(token)
            if stem not in statements.WORDING:
                words.add(stem)
    signature = values.signature(body)
    literals = set(signature.values | signature.codes)
    literals |= {_SPACE.sub(" ", span.strip().casefold()) for span in _BACKTICK.findall(body) if span.strip()}
    literals |= {name for name in map(str.casefold, _HYPHENATED.findall(body)) if _name(name)}
    return Details(frozenset(words), frozenset(literals), _grams(body) if statements.foreign(body) else frozenset())


@functools.lru_cache(maxsize=1024)
def said(text: str) -> Said:
    """The :class:`Said` of ``text`` (the last 1,024 kept, as :func:`details`)."""
    plain = statements.normalised(text)
    stems = {statements.stem(token) for token in _WORD.findall(plain.replace("_", " "))}
    signature = values.signature(text)
    return Said(frozenset(stems | set(_WORD.findall(plain.replace("_", " ")))),
                frozenset(signature.values | signature.codes), _grams(text), _SPACE.sub(" ", plain))


def _name(hyphenated: str) -> bool:
    """Whether a word joined by hyphens is a name (``babel-plugin-polyfill-regenerator``) rather than a compound
    of prose (``command-line``, ``state-of-the-art``, ``electron-to-chromium``): :data:`NAME_PARTS` parts or more,
    none a stop word."""
    parts = hyphenated.split("-")
    return len(parts) >= NAME_PARTS and not any(part in STOP_WORDS for part in parts)


def _has_literal(where: Said, literal: str) -> bool:
    """Whether ``where`` holds ``literal`` as a whole; in a name joined by hyphens, a hyphen written as a hyphen,
    a space or nothing ("command-line" / "command line" / "commandline"; a flag ``--all`` exactly)."""
    if literal in where.literals:
        return True
    parts = literal.split("-") if _HYPHENATED.fullmatch(literal) else [literal]
    pattern = r"[-\s]?".join(re.escape(part) for part in parts)
    return re.search(r"(?<!\w)" + pattern + r"(?!\w)", where.lowered) is not None


def _derived(word: str, stems: frozenset[str]) -> bool:
    """Whether one of ``stems`` is ``word`` in another form the light stem leaves apart: the two share their
    first :data:`ROOT_LETTERS` letters or more and differ only in their last :data:`SUFFIX_LETTERS` letters or
    fewer (``librar`` of "libraries" / ``library``, ``transitional`` / ``transition``, ``regenerat`` of
    "regenerate" / ``regenerator``)."""
    for stem in stems:
        shared = 0
        for x, y in zip(word, stem, strict=False):
            if x != y:
                break
            shared += 1
        if shared >= ROOT_LETTERS and max(len(word), len(stem)) - shared <= SUFFIX_LETTERS:
            return True
    return False


def missing(keeper: Said, other: Details) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The details of ``other`` that ``keeper`` lacks: ``(words, literals, grams)``; a word the keeper holds in
    another form (:func:`_derived`: "libraries" / "library") is not lacking."""
    words = frozenset(w for w in other.words - keeper.stems if not _derived(w, keeper.stems))
    return (words, frozenset(x for x in other.literals if not _has_literal(keeper, x)), other.grams - keeper.grams)


def keeps(keeper: Said, other: Details) -> bool:
    """Whether ``keeper`` says every detail of ``other``."""
    return not any(missing(keeper, other))


def fragment(text: str) -> bool:
    """Whether ``text`` is a bullet or a fragment rather than a sentence of its own: a list marker first, or an
    ellipsis or a colon last."""
    stripped = text.strip()
    return bool(_BULLET.match(stripped)) or stripped.endswith(("…", "...", ":"))


def preference(text: str, created_at: float, ident: int) -> tuple[bool, bool, int, int, float, int]:
    """The sort key of a member as the text to keep, best first: a sentence before a fragment or bullet, what
    a thing does before "This package provides …", more details, longer, older, smaller id."""
    found = details(text)
    return (fragment(text), statements.boilerplate(text), -(len(found.words) + len(found.literals)), -len(text), created_at,
            ident)


@dataclass(frozen=True, slots=True)
class Text:
    """One member as :func:`survivor` and :func:`merged_text` read it: its ``id``, ``content`` and creation time."""

    id: int
    content: str
    created_at: float


def _ordered(members: Sequence[Text]) -> list[Text]:
    return sorted(members, key=lambda m: preference(m.content, m.created_at, m.id))


def name_only(text: str) -> bool:
    """Whether ``text`` only says that something of a name exists: "This package provides …" (or the like,
    :func:`~limbic.core.curation.statements.boilerplate`) followed by one word or name and nothing else ("This
    package provides babel-plugin-polyfill-regenerator"). "This package contains the Mono System.Web.WebPages
    library for CLI 4.0." says what the thing is."""
    if not statements.boilerplate(text):
        return False
    return len(statements.without_boilerplate(text).strip(_EDGE).split()) <= 1


def form(text: str) -> tuple[bool, bool]:
    """How a text is written, as :func:`survivor` ranks it: ``(a fragment or bullet, only a name)``
    (:func:`fragment`, :func:`name_only`); ``(False, False)`` is a sentence saying what a thing is (a "This
    package contains the X library for Y" too)."""
    return fragment(text), name_only(text)


def survivor(members: Sequence[Text]) -> Text | None:
    """The member that keeps every detail of every other (the most preferred of those that do), None when
    none does — or when the only ones that do are written worse (:func:`form`) than the best-written member: a
    bullet or a "This package provides <name>" never replaces the definitional sentence (the merged text keeps
    both). A "This package contains …" sentence that keeps every detail of the others is a survivor when no
    better-written member does (nothing is lost: "This package contains the Mono System.Web.WebPages library for
    CLI 4.0." over "Mono System.Web.WebPages (for CLI 4.0)")."""
    found = {m.id: details(m.content) for m in members}
    ordered = _ordered(members)
    best = form(ordered[0].content)
    for candidate in ordered:
        if form(candidate.content) > best:
            return None
        where = said(candidate.content)
        if all(keeps(where, found[m.id]) for m in members if m.id != candidate.id):
            return candidate
    return None


def merged_text(members: Sequence[Text]) -> str:
    """One text keeping every detail of ``members``: the most preferred member, then what each other adds (most
    preferred first), word for word from it — its missing details with the words between them (at most
    :data:`GAP_WORDS`) in parentheses, several pieces separated by "; ", or the whole member after "; " when
    that is most of it (:data:`MOST_OF`) or the pieces would not keep every detail."""
    ordered = _ordered(members)
    base = ordered[0].content.strip()
    end = "." if base.endswith(".") and not base.endswith("..") else ""
    text = base[:-1] if end else base
    added: list[str] = []
    for member in ordered[1:]:
        current = said(" ".join([text, *added]))
        found = details(member.content)
        words, literals, grams = missing(current, found)
        if not (words or literals or grams):
            continue
        piece = _pieces(member.content, words, literals) if not grams else None
        if piece is not None:
            trial = said(" ".join([text, *added, piece]))
            if keeps(trial, found):
                added.append(piece)
                continue
        text = f"{text}; {member.content.strip().rstrip('.')}"
    if added:
        text = f"{text} ({'; '.join(added)})"
    return text + end


def _pieces(content: str, words: frozenset[str], literals: frozenset[str]) -> str | None:
    """The spans of ``content`` holding the missing ``words`` and ``literals`` (each with the stop word just
    before it), joined by ", "; None when they make most of it."""
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(content)]
    lowered = content.casefold()
    marked: set[int] = set()
    for index, (start, end) in enumerate(tokens):
        token = statements.normalised(content[start:end]).replace("_", " ")
        if any(statements.stem(w) in words or w in words for w in _WORD.findall(token)):
            marked.add(index)
    for literal in literals:
        at = lowered.find(literal)
        if at < 0:
            return None
        marked |= {i for i, (start, end) in enumerate(tokens) if start < at + len(literal) and end > at}
    if not marked or len(marked) >= MOST_OF * len(tokens):
        return None
    for index in sorted(marked):  # the word that ties a detail to the sentence: "by hand", "for macOS"
        before = _WORD.findall(content[tokens[index - 1][0]:tokens[index - 1][1]].casefold()) if index else []
        if before and all(w in STOP_WORDS for w in before) and index - 1 not in marked:
            marked.add(index - 1)
    spans: list[list[int]] = []
    for index in sorted(marked):
        if spans and index - spans[-1][1] - 1 <= GAP_WORDS:
            spans[-1][1] = index
        else:
            spans.append([index, index])
    if sum(b - a + 1 for a, b in spans) >= MOST_OF * len(tokens):
        return None
    return ", ".join(_tidy(content[tokens[a][0]:tokens[b][1]]) for a, b in spans)


def _tidy(piece: str) -> str:
    """A piece without the punctuation that joined it to the rest of its sentence, without round brackets (it is
    put in brackets) and without an unpaired bracket or quote at either end."""
    piece = piece.replace("(", "").replace(")", "").strip(_EDGE)
    for opening, closing in (("[", "]"), ("«", "»"), ("“", "”")):
        if piece.count(opening) != piece.count(closing):
            piece = piece.strip(opening + closing)
    return piece
