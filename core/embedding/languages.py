"""The languages a memory is written in, and whether its embedding model reads them.

The shipped model (all-MiniLM-L6-v2) was trained on English: Chinese, Korean or Russian text gets vectors that
say little about its meaning, and search then rests on the full text alone (docs/scoring.md "Chinese, Japanese
and Korean"). :func:`language_of` tells one text's language from its letters: the script of most of them (Han,
kana, Hangul, Cyrillic, Greek, Arabic, Hebrew, Thai, Devanagari), and for Latin letters Vietnamese's own
letters (``ơ ư ă đ`` and the stacked tone marks) or the most frequent short words of each language
(:data:`STOPWORDS`). :func:`profile` weighs the texts of a memory by their letters; when at least
:data:`NOT_ENGLISH_SHARE` of them are not English, :func:`advice` names :data:`MULTILINGUAL_MODEL`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

MULTILINGUAL_MODEL = "paraphrase-multilingual-MiniLM-L12-v2 (when installable)"
"""The embedding model to suggest for a memory much of which is not English: the one place that names it."""
NOT_ENGLISH_SHARE = 0.3
"""Share of a memory's letters in texts that are not English from which :func:`advice` suggests the
multilingual model."""

SCRIPTS = {
    "Chinese": ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F)),
    "Japanese": ((0x3040, 0x30FF), (0x31F0, 0x31FF)),
    "Korean": ((0x1100, 0x11FF), (0x3130, 0x318F), (0xAC00, 0xD7AF)),
    "Russian": ((0x0400, 0x04FF),),
    "Greek": ((0x0370, 0x03FF),),
    "Arabic": ((0x0600, 0x06FF),),
    "Hebrew": ((0x0590, 0x05FF),),
    "Thai": ((0x0E00, 0x0E7F),),
    "Hindi": ((0x0900, 0x097F),),
}
"""The letters of each script, by code point ranges, named by the language a memory most likely uses it for
(Cyrillic as Russian, Devanagari as Hindi). Kana makes a text Japanese even among Han characters."""

STOPWORDS = {
    "English": "the and of to is in for with that this on are be it as was not or from by an",
    "Spanish": "el la los las de que y en un una es por con para del al se lo como más pero su",
    "Portuguese": "os de que em um uma é por com para da dos das não ao mais são também",
    "French": "le la les de des et en un une est pour dans que qui du au sur pas par avec",
    "German": "der die das und ist nicht mit den ein eine zu von für auf im dem sich auch",
    "Indonesian": "yang dan di ini itu dengan untuk dari tidak ada ke akan pada juga dalam atau",
}
"""Frequent short words of the languages written in Latin letters that :func:`language_of` tells apart (words
that are also common English words, such as Portuguese ``as``, ``do`` and ``e``, are left out)."""
_STOPWORDS = {language: set(words.split()) for language, words in STOPWORDS.items()}
_VIETNAMESE = re.compile("[ơưăđạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]+")


_SCRIPT_LETTERS = {language: re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in ranges) + "]")
                   for language, ranges in SCRIPTS.items()}
_LATIN = re.compile("[A-Za-z\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]")
READ_CHARACTERS = 1000
"""Characters of a text read to tell its language (its beginning: a long text keeps its language)."""


def language_of(text: str) -> tuple[str | None, int]:
    """``(language, letters)`` of ``text``: the language of most of its letters (:data:`SCRIPTS`), or for Latin
    letters Vietnamese (two of its own letters or more) or the language of :data:`STOPWORDS` with the most of
    its words (English on a tie); ``None`` when nothing tells (no letters, or Latin words none of them common:
    names, paths, code). ``letters`` counts the letters of ``text``; only its first :data:`READ_CHARACTERS`
    characters are read."""
    text = text[:READ_CHARACTERS]
    latin = len(_LATIN.findall(text))
    scripts: Counter[str] = Counter() if text.isascii() else Counter(
        {language: n for language, letters in _SCRIPT_LETTERS.items() if (n := len(letters.findall(text)))})
    letters = latin + sum(scripts.values())
    if scripts and scripts.most_common(1)[0][1] >= latin:
        if scripts["Japanese"] and scripts["Japanese"] + scripts["Chinese"] >= scripts.most_common(1)[0][1]:
            return "Japanese", letters
        return scripts.most_common(1)[0][0], letters
    if not latin:
        return None, letters
    if len(_VIETNAMESE.findall(text)) >= 2:
        return "Vietnamese", letters
    words = [w.lower() for w in _WORD.findall(text)]
    hits = {language: sum(w in listed for w in words) for language, listed in _STOPWORDS.items()}
    best = max(hits.values())
    if best == 0:
        return None, letters
    return ("English" if hits["English"] == best else max(hits, key=lambda k: hits[k])), letters


@dataclass(frozen=True, slots=True)
class LanguageProfile:
    """The languages of a set of texts: ``shares`` maps each language to its share of the letters of the texts
    whose language is told (largest first; they add up to 1), ``texts`` counts the texts read and ``told`` those
    whose language :func:`language_of` tells."""

    shares: dict[str, float]
    texts: int
    told: int

    @property
    def not_english(self) -> float:
        """Share of the told letters that are in another language than English (0.0 when none is told)."""
        return 1.0 - self.shares.get("English", 0.0) if self.shares else 0.0


def profile(texts: Iterable[str]) -> LanguageProfile:
    """The :class:`LanguageProfile` of ``texts`` (each weighed by its letters)."""
    letters: Counter[str] = Counter()
    count = told = 0
    for text in texts:
        count += 1
        language, weight = language_of(text)
        if language is not None and weight:
            told += 1
            letters[language] += weight
    total = sum(letters.values())
    shares = {language: n / total for language, n in letters.most_common()} if total else {}
    return LanguageProfile(shares, count, told)


def summary(found: LanguageProfile, at_most: int = 4) -> str:
    """The languages of ``found`` as one line, largest first, each with its share in percent
    (``"Chinese 71%, English 29%"``); ``"unknown"`` when none is told."""
    if not found.shares:
        return "unknown"
    return ", ".join(f"{language} {share:.0%}" for language, share in list(found.shares.items())[:at_most]
                     if share >= 0.01) or "unknown"


def advice(found: LanguageProfile) -> str | None:
    """One sentence suggesting :data:`MULTILINGUAL_MODEL` when at least :data:`NOT_ENGLISH_SHARE` of ``found`` is
    not English, else None."""
    if found.not_english < NOT_ENGLISH_SHARE:
        return None
    return (f"{found.not_english:.0%} of this memory is not English ({summary(found)}); the English model's vectors "
            f"miss its meaning: install a multilingual model, {MULTILINGUAL_MODEL}")
