"""Entity splitting: when an entity holds more observations than its type should, group them into topics, each
a proposed sub-entity named from its top terms (mcp-memory docs "Architecture", "Entity Splitting": thresholds
``Sesion`` 15, ``Proyecto`` 25, 20 otherwise; TF-IDF with stop words and a minimum word length of 4; the
parent ``contiene`` / ``parte_de`` its parts). Detection only: nothing here writes.

Topics are clusters of the observations (scikit-learn ``SpectralClustering`` over a graph of each observation's
nearest neighbours; the number of topics, 2 to :data:`MAX_TOPICS` with at least :data:`MIN_TOPIC_SIZE`
observations each, is the one with the best cosine silhouette), either of their TF-IDF vectors
(``TfidfVectorizer``, English and Spanish stop words, words of 4 letters or more) or of their stored embedding
vectors, centred (an entity's observation vectors all embed its name: the shared part is taken out). Both were
measured on the labelled entities of ``tests/fixtures/split_entities.json`` (docs/curation.md "Splitting");
:data:`DEFAULT_METHOD` is the better one. Either way a part is named by its distinctive terms, by class-based
TF-IDF (c-TF-IDF, as BERTopic names its topics): each topic's observations are one document, a term's weight is its
frequency in that document times ``log(1 + A / f)`` (``A`` the average number of words per topic, ``f`` the term's
count in all topics), words and two-word phrases, keeping only terms found in at least two of the topic's
observations (in one when no such term fits); of the best, a name takes one phrase or two words that are not forms of one another nor of the
entity's own name, nor words that say what was done rather than what about (:data:`DEED_WORDS`), written as the
observations write them (``GitHub``, ``CMakeLists``).
"""

from __future__ import annotations

import os
import re
import unicodedata
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from limbic.core.curation import statements
from limbic.core.curation.stop_words import STOP_WORDS

DEFAULT_THRESHOLD = 20
QUALITY_FLOOR = 0.40
"""Silhouette (cosine) from which a split is suggested: below it the topics do not stand apart (read on real
memories, docs/curation.md "Entity splitting")."""
TYPE_THRESHOLDS: dict[str, int] = {"sesion": 15, "session": 15, "proyecto": 25, "project": 25}
"""Observations an entity of a type may hold before it is proposed for splitting (keys: normalised types)."""
MIN_WORD_LENGTH = 4
MAX_TOPICS = 6
MIN_TOPIC_SIZE = 3
NEIGHBOURS = 6  # neighbours of an observation in the graph spectral clustering cuts
NAME_TERMS = 2
METHODS = ("vectors", "tfidf")
DEFAULT_METHOD = "vectors"
_WORD = rf"(?u)\b[^\W\d_]{{{MIN_WORD_LENGTH},}}\b"
PHRASE_BONUS = 1.25
"""A two-word phrase is preferred to its words when it is about as frequent (``GitHub Actions``, not ``Actions
GitHub``)."""
_NAME_WORD = r"(?u)\b[^\W\d_][\w]{2,}\b"  # a name may take a word of three letters or more (API, CLI, SQL)
DEED_WORDS = frozenset("""
add added adding adds change changed changes completed create created creates creating done enjoy enjoys fix
fixed fixes fixing implement implemented implementing improved include included includes including like likes
made make makes need needed needs remove removed removes set sets update updated updates use used uses using
work worked working works want wants tried try alongside via within without etc also based new now
añade añadió añadido añadir arregla arregló cambia cambió crea creó creado usa usó usar actualiza actualizó
""".split())
"""Words that say what was done to something rather than what it is about: never a part's name."""


def type_key(entity_type: str) -> str:
    """An entity type as thresholds are looked up: accents removed, case folded (``Sesión`` → ``sesion``)."""
    decomposed = unicodedata.normalize("NFKD", entity_type.strip())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def threshold_for(entity_type: str, thresholds: Mapping[str, int] | None = None) -> int:
    """The observation threshold of ``entity_type``: ``thresholds`` (normalised type → count, with ``"*"`` the
    default) over :data:`TYPE_THRESHOLDS` and :data:`DEFAULT_THRESHOLD`."""
    merged = {**TYPE_THRESHOLDS, **{type_key(k): int(v) for k, v in (thresholds or {}).items()}}
    return merged.get(type_key(entity_type), merged.get("*", DEFAULT_THRESHOLD))


# scikit-learn (with SciPy's statistics) is imported where it is used: importing it costs seconds and ~100 MB,
# which every program that opens a memory (the app's start, the MCP server) would otherwise pay.


def tfidf(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The TF-IDF matrix ``(n, v) float64`` (rows L2-normalised, sublinear term frequency) of ``texts`` and its
    terms ``(v,)``; no terms at all gives a ``(n, 0)`` matrix."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from limbic.core.curation.stop_words import STOP_WORDS

    vectorizer = TfidfVectorizer(token_pattern=_WORD, stop_words=sorted(STOP_WORDS), sublinear_tf=True)
    try:
        matrix = vectorizer.fit_transform(texts)
    except ValueError:  # no term of 4 letters or more that is not a stop word
        return np.zeros((len(texts), 0)), np.empty(0, dtype=object)
    return matrix.toarray(), vectorizer.get_feature_names_out()


def cluster(points: np.ndarray, max_topics: int = MAX_TOPICS) -> tuple[np.ndarray, float]:
    """Topic labels ``(n,) int64`` of the rows of ``points`` ``(n, d)`` and their cosine silhouette: spectral
    clustering of the rows' nearest-neighbour graph, with the number of topics (2..``max_topics``, each of at
    least :data:`MIN_TOPIC_SIZE` rows) that has the best silhouette. Too few rows (or rows with no direction)
    give one topic, silhouette 0. Deterministic (fixed random state). Runs on one thread: k-means' thread pool
    on a loaded machine cost 2.3 s for an entity of 30 observations, 0.07 s on one thread (same labels)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # an entity's few hundred points: threads cost more than they save
        return _cluster(points, max_topics)


def _cluster(points: np.ndarray, max_topics: int) -> tuple[np.ndarray, float]:
    from sklearn.cluster import SpectralClustering
    from sklearn.metrics import silhouette_score

    n = len(points)
    usable = np.linalg.norm(points, axis=1) > 0 if points.size else np.zeros(n, dtype=bool)
    best_labels, best_score = np.zeros(n, dtype=np.int64), 0.0
    if usable.sum() < 2 * MIN_TOPIC_SIZE:
        return best_labels, best_score
    rows = points[usable] / np.linalg.norm(points[usable], axis=1, keepdims=True)
    for k in range(2, min(max_topics, len(rows) // MIN_TOPIC_SIZE) + 1):
        model = SpectralClustering(n_clusters=k, affinity="nearest_neighbors", random_state=0,
                                   n_neighbors=min(NEIGHBOURS, len(rows) - 1))
        with warnings.catch_warnings():  # a neighbour graph in pieces is a clear topic split, not a problem
            warnings.filterwarnings("ignore", message="Graph is not fully connected")
            found = model.fit_predict(rows)
        sizes = np.bincount(found, minlength=k)
        if sizes.min() < MIN_TOPIC_SIZE:
            continue
        score = float(silhouette_score(rows, found, metric="cosine"))
        if score > best_score:
            best_labels = np.zeros(n, dtype=np.int64)
            best_labels[usable] = found
            best_score = score
    return _ordered(best_labels), best_score


def _ordered(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered by first appearance (topic 0 holds the first observation)."""
    first = {label: i for i, label in reversed(list(enumerate(labels.tolist())))}
    order = {label: rank for rank, label in enumerate(sorted(first, key=first.__getitem__))}
    return np.array([order[label] for label in labels.tolist()], dtype=np.int64)


def _stem(word: str) -> str:
    word = word.casefold()
    for ending in ("ations", "ation", "ings", "ing", "ies", "es", "ed", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def _alike(a: str, b: str) -> bool:
    """Two words are forms of one another: equal stems, or a shared beginning of at least 4 letters that leaves
    at most 2 of the shorter one (``immune`` / ``immunity``, ``integrate`` / ``integration``)."""
    x, y = _stem(a), _stem(b)
    shared = len(os.path.commonprefix([a.casefold(), b.casefold()]))
    return x == y or shared >= max(4, min(len(a), len(b)) - 2)


def _surface(term: str, texts: Sequence[str]) -> str:
    """``term`` (lower case) as the texts write it most often; capitalised when they write it in lower case."""
    pattern = r"\s+".join(re.escape(w) for w in term.split())
    found = re.findall(rf"(?<!\w){pattern}(?!\w)", " ".join(texts), re.IGNORECASE)
    best = max(set(found), key=lambda f: (found.count(f), f), default=term) if found else term
    best = " ".join(best.split())
    return best if best != best.lower() else " ".join(w.capitalize() for w in best.split())


_ADDRESS = re.compile(r"(?i)\b(?:https?://|www\.)\S+|\b\S+@\S+\.\w+")


def named_from(text: str) -> str:
    """``text`` as a part's name is read from: web addresses and e-mail addresses left out (their pieces,
    ``https``, ``com``, ``stripe``, are not what a topic is about)."""
    return _ADDRESS.sub(" ", text)


def topic_terms(texts: Sequence[str], labels: np.ndarray, entity: str = "", count: int = NAME_TERMS) -> list[list[str]]:
    """The name terms of each topic of ``texts`` (``labels`` ``(n,)``): by c-TF-IDF (module docstring), at most
    ``count`` words in all (one two-word phrase, or words), none a form of another or of a word of ``entity``, none
    of :data:`DEED_WORDS`, none from a web address (:func:`named_from`); each as the texts write it. A topic
    without such terms gets none."""
    from sklearn.feature_extraction.text import CountVectorizer  # scikit-learn is imported where it is used

    k = int(labels.max()) + 1 if len(labels) else 0
    texts = [named_from(t) for t in texts]
    docs = [" ".join(t for t, label in zip(texts, labels.tolist(), strict=True) if label == i) for i in range(k)]
    vectorizer = CountVectorizer(token_pattern=_NAME_WORD, stop_words=sorted(STOP_WORDS | DEED_WORDS),
                                 ngram_range=(1, 2), lowercase=True)
    try:
        counts = vectorizer.fit_transform(docs).toarray().astype(np.float64)
        support = vectorizer.transform(texts) > 0  # sparse: dense, it took 100+ MB for an entity of thousands
    except ValueError:  # no word of three letters or more that is not a stop word
        return [[] for _ in range(k)]
    terms = vectorizer.get_feature_names_out()
    words = counts[:, [i for i, t in enumerate(terms) if " " not in t]].sum(axis=1)
    frequency = counts / np.maximum(words, 1.0)[:, None]
    weight = frequency * np.log1p(words.mean() / np.maximum(counts.sum(axis=0), 1.0))[None, :]
    weight *= np.array([PHRASE_BONUS if " " in t else 1.0 for t in terms])[None, :]
    own = [w for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", entity) if len(w) >= 3]  # CamelCase, snake_case
    out = []
    for i in range(k):
        inside = labels == i
        seen = np.asarray(support[np.flatnonzero(inside)].sum(axis=0)).ravel()
        chosen: list[str] = []
        for least in sorted({min(2, int(inside.sum())), 1}, reverse=True):  # terms of one observation if need be
            for j in np.argsort(-(weight[i] * (seen >= least)), kind="stable"):
                if seen[j] < least or weight[i, j] <= 0 or len(" ".join(chosen).split()) >= count:
                    break
                parts = str(terms[j]).split()
                if len(parts) > count - len(" ".join(chosen).split()) or len(set(map(_stem, parts))) < len(parts) \
                        or any(_alike(p, o) for p in parts for o in own + " ".join(chosen).split()):
                    continue
                chosen.append(str(terms[j]))
            if chosen:
                break
        topic_texts = [t for t, label in zip(texts, labels.tolist(), strict=True) if label == i]
        out.append([_surface(t, topic_texts) for t in chosen])
    return out


def topics(texts: Sequence[str], vectors: np.ndarray | None, method: str = DEFAULT_METHOD,
           entity: str = "") -> tuple[np.ndarray, list[list[str]], float, str]:
    """Split ``texts`` into topics: ``(labels (n,) int64, name terms per topic, silhouette, method used)``.
    ``method`` ``vectors`` clusters ``vectors`` ``(n, d)`` (rows for ``texts``, unit length), ``tfidf`` the TF-IDF
    rows; ``vectors`` without vectors falls back to ``tfidf``. ``entity``: the name the parts' names leave out."""
    if method not in METHODS:
        raise ValueError(f"unknown split method {method!r}")
    used = method if method == "tfidf" or vectors is not None else "tfidf"
    points = tfidf(texts)[0] if used == "tfidf" else np.asarray(vectors, dtype=np.float64)
    labels, quality = cluster(points - points.mean(axis=0) if used == "vectors" and len(points) else points)
    return labels, topic_terms(texts, labels, entity), quality, used


_OWN_FIELD = re.compile(r"^[^\W\d_][\w .\-/]{0,30}:\s+\S")


def about_itself(texts: Sequence[str]) -> np.ndarray:
    """``(n,) bool``: which of an entity's observations ``texts`` (oldest first) say what the entity itself is,
    and stay on it when it is split: the first (what it was written as) and its fields (``Status: done``,
    ``Homepage: …``; a list item ``x -- y`` or a bullet is not one: :func:`_field`). An observation that names the
    entity is not thereby about all of it ("postgres backups run nightly")."""
    return np.array([i == 0 or _field(text) for i, text in enumerate(texts)], dtype=bool)


def _field(text: str) -> bool:
    """Whether ``text`` is a field of its entity: ``Key: value``, a key of at most
    :data:`~limbic.core.curation.statements.LABEL_WORDS` words and a short value (at most
    :data:`~limbic.core.curation.statements.FIELD_VALUE_WORDS` words, or a list of single terms:
    ``Debtags: role::program, use::typesetting``) — not a note that happens to open with a word and a colon
    (``Fix: the parser now …``)."""
    text = text.strip()
    if not _OWN_FIELD.match(text):
        return False
    key, value = text.split(":", 1)
    items = [item.split() for item in value.split(",")]
    return len(key.split()) <= statements.LABEL_WORDS and (
        len(value.split()) <= statements.FIELD_VALUE_WORDS or all(len(item) == 1 for item in items))


def topic_name(entity: str, terms: Sequence[str], index: int, taken: set[str]) -> str:
    """``"<entity> - Term Term"`` (``"<entity> - topic N"`` without terms), made unique against ``taken``
    (compared ignoring case)."""
    base = f"{entity} - {' '.join(terms)}" if terms else f"{entity} - topic {index + 1}"
    name, extra = base, 2
    while name.casefold() in taken:
        name, extra = f"{base} {extra}", extra + 1
    taken.add(name.casefold())
    return name


def relation_topic(other: str, topic_texts: Sequence[Sequence[str]]) -> int | None:
    """The topic a relation with entity ``other`` belongs to: the one whose observations mention ``other`` most
    often (as a whole word, ignoring case); None when none does or two tie (the relation stays)."""
    pattern = re.compile(rf"(?<!\w){re.escape(other.casefold())}(?!\w)")
    counts = [sum(len(pattern.findall(text.casefold())) for text in texts) for texts in topic_texts]
    best = max(counts, default=0)
    return counts.index(best) if best and counts.count(best) == 1 else None


@dataclass(frozen=True, slots=True)
class TopicSplit:
    """How an entity's observations divide: ``labels`` (one topic per observation), the ``terms`` of each topic,
    the silhouette ``quality`` (cosine, −1..1) and the ``method`` used."""

    labels: np.ndarray
    terms: list[list[str]]
    quality: float
    method: str
