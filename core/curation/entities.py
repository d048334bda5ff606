"""Entities that may be one thing under two names: the same name once normalised (case, CamelCase,
snake_case, kebab-case, white space, punctuation, plural, accents: ``CPUPackage`` / ``CPU_Package`` /
``cpu_package`` / ``CPU Package``), an acronym and its expansion (``NYC`` / ``New York City``), or close entity
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
_KEY_SEPARATOR = re.compile(r"(?:[^\w+#.]|_|(?<!\w)\.|\.(?!\w))+", re.UNICODE)  # as _NON_WORD, but "g.data" stays
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")  # CPUPackage → CPU Package
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


def _words(name: str, separator: re.Pattern[str] = _NON_WORD) -> tuple[list[str], bool]:
    """The words of ``name`` (accents removed, CamelCase split, case folded, split at ``separator``: by
    default punctuation but ``+`` and ``#``) and whether it is written as a package name (no white space, and
    ``-``, ``.``, ``+``, ``/``, ``:`` or a digit: its words keep their plurals)."""
    decomposed = unicodedata.normalize("NFKD", _CAMEL.sub(" ", name))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return separator.sub(" ", plain).split(), not any(c.isspace() for c in name.strip()) and bool(_PACKAGED.search(name))


def normalise_name(name: str) -> str:
    """``name`` as read for sameness: accents removed (NFKD), CamelCase split into words, case folded,
    punctuation (but ``+`` and ``#``) and runs of white space turned into one space, each word made singular
    unless the name is written as a package name (``libtest-files-perl`` is not ``libtest-file-perl``).
    ``"Café  Owners!"`` → ``"cafe owner"``, ``"NIMCP_Project"`` → ``"nimcp project"``, ``"CPUPackage"`` →
    ``"cpu package"``, ``"libflac++-dev"`` → ``"libflac++ dev"``. Names are compared by :func:`name_keys`."""
    words, packaged = _words(name)
    return " ".join(words if packaged else (_singular(word) for word in words))


def _joined(words: Sequence[str]) -> str:
    """``words`` joined without spaces, but with one ``-`` where a digit meets the separator: a number or a
    version stays apart from the word before or after it (``libgdk-pixbuf-2.0-0`` → ``libgdkpixbuf-2.0-0``,
    ``libgdk-pixbuf2.0-0`` → ``libgdkpixbuf2.0-0``: two packages)."""
    out = words[0]
    for word in words[1:]:
        out += ("-" if out[-1].isdigit() or word[0].isdigit() else "") + word
    return out


def name_keys(name: str) -> frozenset[str]:
    """The keys under which ``name`` is the same as another name: its words (as :func:`normalise_name` reads
    them, but a dot between two letters or digits kept: ``g.data`` is not ``gdata``, ``2.0`` not ``20``) joined
    without spaces, so that however they were split or joined (``PowerMetrics``, ``Power_Metrics``, ``power
    metrics``, ``IPv6Config`` / ``ipv6_config``) the key is one; and, unless it is written as a package name,
    with its words made singular too (``PowerMetrics`` → ``powermetrics`` and ``powermetric``; ``power-metrics``
    → ``powermetrics``). A separator next to a digit is kept as one mark (:func:`_joined`), whichever it was:
    ``Phase 2`` / ``phase_2`` / ``phase-2`` are one, ``phase2`` another, and ``libgdk-pixbuf-2.0-0`` is not
    ``libgdk-pixbuf2.0-0``."""
    words, packaged = _words(name, _KEY_SEPARATOR)
    if not words:
        return frozenset()
    joined = _joined(words)
    return frozenset({joined}) if packaged else frozenset({joined, _joined([_singular(w) for w in words])})


def same_name_owners(entities: Iterable[tuple[int, str]]) -> dict[int, int]:
    """Each ``(id, name)`` entity's owner: the smallest id among the entities whose names share a key with its
    name, directly or through others (:func:`name_keys`)."""
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[str, int] = {}
    for entity_id, name in entities:
        parent.setdefault(entity_id, entity_id)
        for key in sorted(name_keys(name)):
            other = first.setdefault(key, entity_id)
            a, b = root(other), root(entity_id)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {entity_id: root(entity_id) for entity_id in parent}


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
    """Groups of ``(id, name)`` entities whose names are one once normalised (:func:`same_name_owners`), or where one name is an
    abbreviation in capitals equal to the initials of the other's words (an acronym: ``NYC`` / ``New York
    City``). Each group once, ids ascending, by first id."""
    entities = list(entities)
    by_key: dict[int, list[int]] = defaultdict(list)
    for entity_id, owner in same_name_owners(entities).items():
        by_key[owner].append(entity_id)
    by_initials: dict[str, list[int]] = defaultdict(list)
    abbreviations: dict[str, list[int]] = defaultdict(list)
    for entity_id, name in entities:
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


def pair_similarities(conn: Connection, model: str, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], float]:
    """The cosine similarity of the entity vectors (made by ``model``) of each pair of entity ids; a pair
    missing a vector of that model is left out."""
    wanted = sorted({i for pair in pairs for i in pair})
    if not wanted or vector_dimension(conn, VECTOR_TABLE) is None:
        return {}
    made = set(vector_meta.entities_of_model(conn, model)) & set(wanted)
    unit = {}
    for rowid, blob in vec_rows.read(conn, VECTOR_TABLE, sorted(made)):
        vector = np.frombuffer(blob, dtype=np.float32)
        unit[rowid] = vector / max(float(np.linalg.norm(vector)), 1e-12)
    return {(a, b): float(unit[a] @ unit[b]) for a, b in pairs if a in unit and b in unit}
