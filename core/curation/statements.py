"""What two observations of one entity are to each other, read from their words: the same fact said twice,
one more specific than the other, or two different facts. Used with the vectors' similarity by
:mod:`limbic.core.curation.duplicates`; reads text only, never writes.

Agent memory is structured and templated, so a close vector says little by itself (docs/curation.md "What
counts as a duplicate"). :func:`read` reads one text once into a :class:`Statement`; :func:`relation` compares
two of them:

- **fields** — a short ``Key: value`` (``Priority: high``, ``status: to_implement``) repeats another only when
  both name the same key and the same value once normalised (case, white space, punctuation); a field is never
  a duplicate of a sentence;
- **values and polarity** — numbers, versions, identifiers, paths, times (:mod:`limbic.core.curation.values`)
  must agree, and both be negated or neither;
- **labels** — two texts under different labels (``critical_tasks: …`` / ``completed_tasks: …``, list items
  ``avantgar -- URW font pack`` / ``bookman -- URW font pack``) differ;
- **fields and sentences** — a field repeats a sentence only when the sentence is about its key ("Backward
  compatibility: Maintains existing functionality" / "Maintains backward compatibility with existing
  installations"); then both are compared as sentences. A ``Description: …`` field is compared with a field of
  another key by its value ("Description: Configuration for Telescope initialization" / "Configures: Telescope");
- **addresses** — an address with or without its host is one (``github.com/hkuds/lightrag`` / ``hkuds/lightrag``);
- **state** — a plan or task (``Need to add …``, a to-do marker, ``Extract …``, "…추가 예정", "pendiente") is not
  its completion (``Added …``, ``Extracted …``, "…구현", "hecho", "已完成"), work in progress not its end, a
  problem not its fix, broken not working, a rule (``Must …``) not a report of an event
  (:mod:`limbic.core.curation.states`);
- **script** — a text mostly in a script the English model does not read (Chinese, Japanese, Korean, Cyrillic,
  …) is compared by its characters only (character bigrams), since its vector does not carry its meaning;
- **more specific** — when every content word of one is in the other and the other adds two or more (or one more
  item of an enumeration: "text, images, structured data" / "text, images, audio, structured data"), the
  longer one is *more specific*: keeping it loses nothing, but the general one is not a repetition of it;
- **short statements** — when a side has :data:`SHORT_WORDS` content words or fewer, its few words are its
  facts: the two say one fact only when at most one of them adds words other than restating ones
  (:data:`WORDING`): "prefers tabs over spaces" / "likes indenting with tabs rather than spaces" do,
  "enjoys skateboarding" / "enjoys snowboarding" do not;
- **wording** — otherwise two texts say one fact only when they share enough of their content words
  (:data:`SHARED_WORDS`): close vectors of two different preferences of one person share few.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, replace

from limbic.core.curation import states, values
from limbic.core.curation.stop_words import STOP_WORDS

SAME = "same"
MORE_SPECIFIC = "more specific"
DIFFERENT = "different"

FIELD_VALUE_WORDS = 6
"""A ``Key: value`` text is a field when its value has at most this many words (longer: a sentence with a label)."""
LABEL_WORDS = 3
"""A ``Key: …`` (or ``name -- …``) prefix of at most this many words is a label (``Root cause: …``,
``critical_tasks: …``, ``bookman -- …``)."""
FOREIGN_SHARE = 0.3
"""Share of letters outside the Latin script from which a text is compared by its characters only."""
CHARACTER_OVERLAP = 0.6
"""Jaccard overlap of character bigrams from which two such texts say the same."""
SHARED_WORDS = 0.5
"""Share of content words two texts must have in common (shared ÷ (shared + the larger side's own)) to say
one fact: "prefers tabs" / "likes tabs" share enough, "separation of concerns" / "DRY principles" do not."""
SPECIFIC_EXTRA = 2
"""Content words the longer text must add (all of the shorter's being in it) to be more specific."""
DESCRIPTIVE_LABELS = frozenset({"description", "summary", "overview", "descripcion", "descripción", "resumen"})
"""Labels that say only that what follows describes the thing ("Description: Configuration for the camera"):
against a field of another key ("Configures: Camera") such a field is compared by its value, as a sentence."""
OWN_WORDS = 3
"""Content words (wording aside) each of two texts holding this many of its own says a fact of its own (``Scheduled
task runs silently in background …`` / ``Daily updates: Update-GitConfig.ps1 runs automatically at login …``): two
facts, not one fact twice, however many words they share."""
SHORT_WORDS = 4
"""A statement of this many content words or fewer is short: each of its words is one of its facts."""
EMPHASIS = frozenset({
    "absolute", "absolutely", "always", "clarified", "continually", "critical", "existing", "important", "major",
    "mandatory", "must", "never", "note", "really", "reiterated", "reinforces", "repeatedly", "rule", "strictly",
    "strongly", "user", "users", "very"})
"""Words that stress or restate a statement without adding a fact (not counted as what a text adds)."""
_BOILERPLATE = re.compile(
    r"^\s*(?:this|the|these|el|este|esta|estos)\s+(?:package|module|library|tool|crate|plugin|program|application|"
    r"app|utility|project|paquete|módulo|modulo|biblioteca|librería|herramienta)s?\s+(?:provides|contains|"
    r"includes|offers|ships|has|is|are|proporciona|contiene|incluye|ofrece|es)\b(?:\s+(?:a|an|the|un|una|el|la))?",
    re.IGNORECASE)  # "This package provides …": says that the thing exists, not what it is
_FIELD = re.compile(r"^[\s\-*•]*([^\W\d][\w .\-/+]{0,40}?)(?:\s*[:=]|\s+(?:--|—|–))\s+(\S.*)$",
                    re.UNICODE | re.DOTALL)  # "Key: value", "key = value", "name -- what it is" (after a bullet)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CLAUSE = re.compile(r"[;:()\[\]]|[.!?](?:\s|$)")
ITEM_WORDS = 4
"""An item of an enumeration (three or more separated by commas: "text, images, audio and structured data") has
at most this many words."""
_SPACE = re.compile(r"\s+")
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
_NON_LATIN = re.compile(r"[^\W\d_A-Za-z\u00C0-\u024F\u1E00-\u1EFF]", re.UNICODE)  # letters outside Latin blocks


@dataclass(frozen=True, slots=True)
class Statement:
    """One text as compared: its ``field`` (normalised key and value, when it is a short ``Key: value``), its
    ``label`` (the normalised key of any ``Key: …`` of three words or fewer), its
    checkable ``signature`` (values, negation), its content ``words`` (stemmed, no stop words), its ``stage``
    (the state it reports, :func:`limbic.core.curation.states.state`), its first word (``head``), whether it is
    compared by its characters only (``foreign``) and then its character bigrams (``grams``), and, for a field
    whose value is an address, the field without the address's host (``bare``: ``GitHub: github.com/a/b`` is
    ``GitHub: a/b``) and, for a field under a :data:`DESCRIPTIVE_LABELS` label, its value read as a sentence
    (``described``); ``listed``: the content words of the items of its enumerations (:func:`_items`)."""

    field: tuple[str, str] | None
    label: str | None
    signature: values.Signature
    words: frozenset[str]
    stage: str | None
    head: str
    foreign: bool
    grams: frozenset[str]
    bare: tuple[str, str] | None = None
    described: Statement | None = None
    listed: frozenset[str] = frozenset()


def normalised(text: str) -> str:
    """``text`` as compared for sameness: Unicode NFKC, case folded, runs of white space one space, edge
    spaces and ``.;,`` off."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip(" .;,")


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light English stem: plural and verb endings off (``managed``/``management``/``manages`` → ``manag``)."""
    for ending in ("ations", "ation", "ments", "ment", "ings", "ing", "ied", "ies", "ed", "es", "s"):
        if len(word) > len(ending) + 3 and word.endswith(ending):
            word = word[: -len(ending)]
            break
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


WORDING = frozenset(map(stem, (
    "prefer", "prefers", "preferred", "like", "likes", "liked", "enjoy", "enjoys", "enjoyed", "love", "loves",
    "value", "values", "valued", "want", "wants", "favor", "favors", "favour", "favours", "favorite", "favourite",
    "use", "uses", "used", "using", "utilize", "utilizes", "utilise", "utilises", "employs", "clarified",
    "reiterated", "restated", "reinforces", "reinforced", "noted", "note", "mentioned", "said", "says",
    "really", "very", "absolutely", "continually", "existing", "user", "users", "prefiere", "prefieren", "gusta",
    "usa", "usan", "utiliza", "usuario", "usuaria")))
"""Stems of words that restate how a fact is held or said ("prefers" / "values", "user clarified", "reiterated")
rather than add one: a text lacking them lacks no detail. Not "stated": its stem is the stem of "state" ("state
management"), a word that says something."""


def clear_stem_cache() -> None:
    """Forget the stems read so far. After comparing a whole memory's statements the cache holds ~20,000 words (10k
    Debian) whose small objects, made between the comparison's short-lived ones, keep about 30 MB of Python's
    allocator arenas from being given back; the next comparison reads them again (a few milliseconds)."""
    stem.cache_clear()


def foreign(text: str) -> bool:
    """Whether ``text`` is mostly written outside the Latin script (:data:`FOREIGN_SHARE` of its letters or more):
    it is compared by its characters."""
    if text.isascii():
        return False
    letters = len(_LETTER.findall(text))
    return bool(letters) and len(_NON_LATIN.findall(text)) / letters >= FOREIGN_SHARE


def without_boilerplate(text: str) -> str:
    """``text`` without an opening "This package provides …" (or module, library, tool …; Spanish "Este paquete
    contiene …"), which says that a thing exists rather than what it is."""
    return _BOILERPLATE.sub("", text, count=1)


def boilerplate(text: str) -> bool:
    """Whether ``text`` opens with "This package provides …" (or the like) instead of saying what a thing is."""
    return bool(_BOILERPLATE.match(text))


def read(text: str) -> Statement:
    """The :class:`Statement` of ``text`` (an opening "This package provides …" left out:
    :func:`without_boilerplate`; the host of an address left out of its words: :func:`values.hosts_left_out`)."""
    text = without_boilerplate(text)
    plain = normalised(text)
    field = bare = label = described = None
    match = _FIELD.match(plain)
    if match and len(match.group(1).split()) <= LABEL_WORDS:
        label = " ".join(_WORD.findall(match.group(1).replace("_", " ")))
        if label in DESCRIPTIVE_LABELS and (raw := _FIELD.match(text)):
            described = read(raw.group(2))
        if len(match.group(2).split()) <= FIELD_VALUE_WORDS:
            field = (label, " ".join(_WORD.findall(match.group(2).replace("_", " "))))
            hostless = values.without_host(match.group(2))
            if hostless != match.group(2):
                bare = (label, " ".join(_WORD.findall(hostless.replace("_", " "))))
    tokens = _WORD.findall(values.hosts_left_out(plain).replace("_", " "))
    words = frozenset(stem(w) for w in tokens
                      if len(w) > 1 and w not in STOP_WORDS and w not in EMPHASIS and not w.isdigit())
    listed = frozenset(stem(w) for item in _items(plain) for w in _WORD.findall(item.replace("_", " "))
                       if w not in STOP_WORDS)
    is_foreign = foreign(plain)
    squeezed = plain.replace(" ", "")
    grams = frozenset(squeezed[i:i + 2] for i in range(len(squeezed) - 1)) if is_foreign else frozenset()
    return Statement(field, label, values.signature(text), words, states.state(plain),
                     tokens[0] if tokens else "", is_foreign, grams, bare, described, listed)


def _items(plain: str) -> list[str]:
    """The items of the enumerations of ``plain``: in a clause of three parts or more separated by commas whose
    inner parts have :data:`ITEM_WORDS` words or fewer, the inner parts, the last words of the first and the first
    words of the last."""
    found = []
    for clause in _CLAUSE.split(plain):
        parts = [p.split() for p in clause.split(",")]
        if len(parts) >= 3 and all(0 < len(p) <= ITEM_WORDS for p in parts[1:-1]):
            found += [" ".join(p) for p in parts[1:-1]]
            found += [" ".join(parts[0][-ITEM_WORDS:]), " ".join(parts[-1][:ITEM_WORDS])]
    return found


def relation(a: Statement, b: Statement) -> str:
    """:data:`SAME` when ``a`` and ``b`` can say one fact (their vectors decide how close), :data:`MORE_SPECIFIC`
    when one adds facts to all of the other's, :data:`DIFFERENT` when they differ in a field, a value, polarity,
    state, (for short statements) a fact word or (for texts compared by characters) wording. A field under a
    :data:`DESCRIPTIVE_LABELS` label is compared with a field of another key by its value, as a sentence."""
    if a.label is not None and b.label is not None and a.label != b.label and not (a.described or b.described):
        return DIFFERENT  # under two labels, short or long: "answers -- …" / "exercise -- …" are two packages
    if a.field is not None and b.field is not None:
        if a.field == b.field or a.bare == b.field or b.bare == a.field:
            return SAME
        if a.label != b.label and (a.described or b.described):  # "Description: Configuration for the camera"
            return relation(a.described or a, b.described or b)  # / "Configures: Camera"
        return DIFFERENT
    if a.field is not None or b.field is not None:
        field, sentence = (a, b) if a.field is not None else (b, a)
        if not _about_its_key(field, sentence):
            return DIFFERENT
    if values.differ(*_written_names(a, b)):
        return DIFFERENT
    if states.opposite(a.stage, b.stage):
        return DIFFERENT
    if a.head != b.head and stem(a.head) == stem(b.head) and "ed" in (a.head[-2:], b.head[-2:]):
        return DIFFERENT  # "Extract the parser" is the task, "Extracted the parser" its completion
    if a.foreign or b.foreign:
        union = len(a.grams | b.grams)
        return SAME if union and len(a.grams & b.grams) / union >= CHARACTER_OVERLAP else DIFFERENT
    small, large = (a.words, b.words) if len(a.words) <= len(b.words) else (b.words, a.words)
    more = large - small
    if small and small <= large and (len(more) >= SPECIFIC_EXTRA or more & (a.listed | b.listed)):
        return MORE_SPECIFIC  # two words more, or one more item of a list ("text, images, audio")
    if len(small) <= SHORT_WORDS and a.field is None and b.field is None \
            and a.words - b.words - WORDING and b.words - a.words - WORDING:
        return DIFFERENT  # "enjoys skateboarding" / "enjoys snowboarding": each adds a fact of its own
    if len(a.words - b.words - WORDING) >= OWN_WORDS and len(b.words - a.words - WORDING) >= OWN_WORDS:
        return DIFFERENT  # "Scheduled task runs silently … at Windows login" / "Daily updates: … runs … at login"
    return SAME if shared_words(a, b) >= SHARED_WORDS else DIFFERENT


def _written_names(a: Statement, b: Statement) -> tuple[values.Signature, values.Signature]:
    """The signatures of ``a`` and ``b``, a name of one left out when the other's field value opens with it
    (``Missing ViewModels for Lesson, Quiz, …`` / ``Missing ViewModels: Lesson, Quiz, …``: the first word of a
    value is capitalised as a sentence's is, so it is not read as a name there): one name, not two."""
    def kept(x: Statement, y: Statement) -> frozenset[str]:
        first = y.field[1].split()[:1] if y.field is not None else []
        return x.signature.names - (frozenset(first) - y.signature.names)
    return (replace(a.signature, names=kept(a, b)), replace(b.signature, names=kept(b, a)))


def _about_its_key(field: Statement, sentence: Statement) -> bool:
    """Whether ``sentence`` is about the key of ``field`` (every content word of the key is in it)."""
    assert field.label is not None
    key = {stem(w) for w in field.label.split() if w not in STOP_WORDS and w not in EMPHASIS}
    return bool(key) and key <= sentence.words and not sentence.foreign


def shared_words(a: Statement, b: Statement) -> float:
    """``shared ÷ (shared + max(only in a, only in b))`` over content words, 0..1 (1 for two empty sets)."""
    shared = len(a.words & b.words)
    rest = max(len(a.words - b.words), len(b.words - a.words))
    return 1.0 if shared + rest == 0 else shared / (shared + rest)
