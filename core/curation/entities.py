"""Entities that may be one thing under two names: the same name once normalised (case, white space,
punctuation, plural, accents), an acronym and its expansion (``NYC`` / ``New York City``), or close entity
vectors *and* shared evidence (an observation said alike and a neighbour in common). Two different names
written as identifiers (:func:`identifier`: ``libreoffice-l10n-lt`` / ``libreoffice-l10n-pl``,
``libgcc-12-dev-mips64-cross`` / ``libgcc-12-dev-sh4-cross``, ``soapdenovo`` / ``soapdenovo2``) are *siblings*:
alike by design, never proposed as one by their vectors (only by the same normalised name). Detection only:
nothing here writes.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from limbic.core.curation.duplicates import similar_pairs
from limbic.core.store import Connection, vec_rows, vector_meta
from limbic.core.store.schema import VECTOR_TABLE, vector_dimension

ENTITY_THRESHOLD = 0.92
"""Cosine similarity of two entity (passage) vectors from which the entities are proposed as one; an entity
vector embeds the name, type and observations, so two entities this close say nearly the same things."""

_NON_WORD = re.compile(r"[^\w+#]+|_+", re.UNICODE)  # "+" and "#" stay: C++ is not C, libflac++ not libflac
_SEPARATED = re.compile(r"[-_.:/+\d]")
_PACKAGED = re.compile(r"[-.+/:\d]")


def _singular(word: str) -> str:
    """An English or Spanish plural made singular by its ending (``libraries`` → ``library``, ``boxes`` →
    ``box``, ``cats`` → ``cat``, ``canciones`` → ``cancion``); short words and ``-ss`` stay."""
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes", "ones")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def normalise_name(name: str) -> str:
    """``name`` as compared for sameness: accents removed (NFKD), case folded, punctuation (but ``+`` and ``#``)
    and runs of white space turned into one space, each word made singular unless the name is written as an
    :func:`identifier` (``libtest-files-perl`` is not ``libtest-file-perl``). ``"Café  Owners!"`` → ``"cafe owner"``,
    ``"NIMCP_Project"`` → ``"nimcp project"``, ``"libflac++-dev"`` → ``"libflac++ dev"``."""
    decomposed = unicodedata.normalize("NFKD", name)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    words = _NON_WORD.sub(" ", plain).split()
    packaged = not any(c.isspace() for c in name.strip()) and bool(_PACKAGED.search(name))
    return " ".join(words if packaged else (_singular(word) for word in words))


def acronym(name: str) -> str | None:
    """The initials of a name of two or more words separated by spaces (``"New York City"`` → ``"nyc"``), None
    for one word (``"new-york"`` is one word: identifiers joined by hyphens or underscores are not phrases)."""
    words = [normalise_name(word) for word in name.split()]
    return "".join(w[0] for w in words if w) if len([w for w in words if w]) >= 2 else None


def is_abbreviation(name: str) -> bool:
    """Whether ``name`` is written as an abbreviation: 2 to 8 letters (and digits), the letters all capitals."""
    text = name.strip()
    return 2 <= len(text) <= 8 and text.isalnum() and text.isupper()


@dataclass(frozen=True, slots=True)
class NameGroup:
    """Entity ids (ascending) that name one thing, and why: ``"same name"`` (normalised), ``"acronym"`` or
    ``"close vectors"`` (with the best cosine similarity in ``similarity``)."""

    ids: tuple[int, ...]
    reason: str
    similarity: float | None = None


def same_names(entities: Iterable[tuple[int, str]]) -> list[NameGroup]:
    """Groups of ``(id, name)`` entities whose names are equal once normalised, or where one name is an
    abbreviation in capitals equal to the initials of the other's words (an acronym: ``NYC`` / ``New York
    City``). Each group once, ids ascending, by first id."""
    by_key: dict[str, list[int]] = defaultdict(list)
    by_initials: dict[str, list[int]] = defaultdict(list)
    abbreviations: dict[str, list[int]] = defaultdict(list)
    for entity_id, name in entities:
        key = normalise_name(name)
        if key:
            by_key[key].append(entity_id)
        initials = acronym(name)
        if initials is not None and len(initials) >= 2:
            by_initials[initials].append(entity_id)
        if is_abbreviation(name):
            abbreviations[name.casefold()].append(entity_id)
    groups = [NameGroup(tuple(sorted(ids)), "same name") for ids in by_key.values() if len(ids) > 1]
    for initials, expanded in by_initials.items():
        short = abbreviations.get(initials, [])
        if short:
            groups.append(NameGroup(tuple(sorted({*short, *expanded})), "acronym"))
    return sorted(groups, key=lambda g: g.ids)


def identifier(name: str) -> bool:
    """Whether ``name`` is written as an identifier: no white space, and a separator (``-``, ``_``, ``.``, ``:``,
    ``/``, ``+``), a digit, or lower case only (``libreoffice-l10n-lt``, ``soapdenovo2``, ``jellyfish``; not
    ``Alice``, ``NYC`` or ``New York City``). Two different identifiers were chosen to name two things: a
    language, an architecture or a version apart they are siblings, never one entity by their vectors."""
    text = name.strip()
    if not text or any(c.isspace() for c in text):
        return False
    return bool(_SEPARATED.search(text)) or text.islower()


def close_vectors(conn: Connection, model: str, threshold: float = ENTITY_THRESHOLD,
                  only: Sequence[int] | None = None) -> list[NameGroup]:
    """Pairs of entities whose entity vectors (made by ``model``) have a cosine similarity of at least
    ``threshold``; with ``only`` (entity ids), the pairs touching them. Most similar first."""
    if vector_dimension(conn, VECTOR_TABLE) is None:
        return []
    ids = np.array(vector_meta.entities_of_model(conn, model), dtype=np.int64)
    if len(ids) < 2:
        return []
    unit = np.zeros((len(ids), vector_dimension(conn, VECTOR_TABLE) or 0), dtype=np.float32)
    found = np.zeros(len(ids), dtype=bool)
    for rowid, blob in vec_rows.scan(conn, VECTOR_TABLE):
        at = int(np.searchsorted(ids, rowid))
        if at < len(ids) and ids[at] == rowid:
            unit[at], found[at] = np.frombuffer(blob, dtype=np.float32), True
    ids, unit = ids[found], unit[found]
    unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    queries = None if only is None else np.flatnonzero(np.isin(ids, np.asarray(only, dtype=np.int64)))
    a, b, sims = similar_pairs(unit, threshold, queries)
    order = np.lexsort((a, -sims))
    return [NameGroup((int(ids[a[k]]), int(ids[b[k]])), "close vectors", float(sims[k])) for k in order]
