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
:data:`DEFAULT_METHOD` is the better one. Either way the topic names come from TF-IDF: the terms most
characteristic of a topic against the others.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_THRESHOLD = 20
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
    give one topic, silhouette 0. Deterministic (fixed random state)."""
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


def topic_terms(weights: np.ndarray, terms: np.ndarray, labels: np.ndarray, count: int = NAME_TERMS) -> list[list[str]]:
    """The ``count`` most characteristic terms of each topic: highest mean TF-IDF weight inside the topic minus
    the mean weight outside it (``weights`` ``(n, v)``, ``terms`` ``(v,)``). A topic without terms gets none."""
    out: list[list[str]] = []
    for label in range(int(labels.max()) + 1 if len(labels) else 0):
        inside = labels == label
        if not weights.shape[1]:
            out.append([])
            continue
        score = weights[inside].mean(axis=0) - (weights[~inside].mean(axis=0) if (~inside).any() else 0.0)
        best = [i for i in np.argsort(-score, kind="stable")[:count] if score[i] > 0]
        out.append([str(terms[i]) for i in best])
    return out


def topics(texts: Sequence[str], vectors: np.ndarray | None, method: str = DEFAULT_METHOD) -> tuple[np.ndarray, list[list[str]], float, str]:
    """Split ``texts`` into topics: ``(labels (n,) int64, terms per topic, silhouette, method used)``. ``method``
    ``vectors`` clusters ``vectors`` ``(n, d)`` (rows for ``texts``, unit length), ``tfidf`` the TF-IDF rows;
    ``vectors`` without vectors falls back to ``tfidf``."""
    if method not in METHODS:
        raise ValueError(f"unknown split method {method!r}")
    weights, terms = tfidf(texts)
    used = method if method == "tfidf" or vectors is not None else "tfidf"
    points = weights if used == "tfidf" else np.asarray(vectors, dtype=np.float64)
    labels, quality = cluster(points - points.mean(axis=0) if used == "vectors" and len(points) else points)
    return labels, topic_terms(weights, terms, labels), quality, used


def topic_name(entity: str, terms: Sequence[str], index: int, taken: set[str]) -> str:
    """``"<entity> - Term Term"`` (``"<entity> - topic N"`` without terms), made unique against ``taken``
    (compared ignoring case)."""
    base = f"{entity} - {' '.join(t.capitalize() for t in terms)}" if terms else f"{entity} - topic {index + 1}"
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
