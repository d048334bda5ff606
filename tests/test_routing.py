"""Query routing (mcp-memory "The Limbic System", "Detection Algorithm", plus English keywords)."""

from __future__ import annotations

import pytest

from limbic.core.search.routing import detect_query_type, routing_score


@pytest.mark.parametrize(("query", "limit", "strategy"), [
    # factual: keyword +2 (plus short query / small k)
    ("qué es FastMCP", 10, "cosine_heavy"),          # +2 keyword +1 short −1 k≥10 = 2
    ("que es FastMCP", 10, "cosine_heavy"),          # accents are optional
    ("¿Cómo funciona el sistema límbico de la memoria?", 5, "cosine_heavy"),
    ("definición de RRF", 5, "cosine_heavy"),
    ("what is FastMCP", 10, "cosine_heavy"),
    ("How does hybrid search work in the memory server?", 5, "cosine_heavy"),
    ("definition of reciprocal rank fusion", 5, "cosine_heavy"),
    ("FastMCP", 3, "cosine_heavy"),                  # +1 short +1 small k
    # exploratory: keyword −2
    ("explícame el proyecto SofIA y sus decisiones", 10, "limbic_heavy"),
    ("dime todo sobre el proyecto", 5, "limbic_heavy"),
    ("explain the architecture of the memory server", 10, "limbic_heavy"),
    ("tell me everything about the limbic scoring project", 5, "limbic_heavy"),
    ("what do you think about the new routing strategy", 5, "limbic_heavy"),
    # balanced
    ("diferencia entre KNN y BM25 en la búsqueda", 5, "hybrid_balanced"),   # +1
    ("compare sqlite-vec with faiss for vectors", 5, "hybrid_balanced"),    # +1
    ("memory server architecture notes", 5, "hybrid_balanced"),             # 0
    ("relación entre FastMCP y el servidor", 5, "hybrid_balanced"),         # +1 −2 = −1
])
def test_routing_decisions(query, limit, strategy):
    assert detect_query_type(query, limit) == strategy


def test_keyword_scores_add_up():
    assert routing_score("qué es un grafo", 5) == (2 + 2 + 0, ["qué es", "es un"])  # 4 words: no length point
    score, matched = routing_score("explain the relationship between search and scoring in detail please", 10)
    assert matched == ["relationship", "explain", "relationship between"]
    assert score == 1 - 2 - 2 - 1 - 1 + 0  # 10 words → −1; k = 10 → −1


def test_word_boundaries_and_case():
    assert routing_score("THIS A", 5)[1] == []           # "is a" needs its own word
    assert routing_score("WHAT IS it", 5)[1] == ["what is"]
    assert routing_score("explained", 5)[1] == []         # not the keyword "explain"
    assert routing_score("how does the ranking work", 5)[1] == ["how does … work"]
    assert routing_score("how does it fail", 5)[1] == []


@pytest.mark.parametrize(("words", "limit", "delta"), [(3, 5, 1), (4, 5, 0), (9, 5, 0), (10, 5, -1),
                                                        (5, 3, 1), (5, 4, 0), (5, 9, 0), (5, 10, -1)])
def test_length_and_limit_rules(words, limit, delta):
    assert routing_score(" ".join(["word"] * words), limit)[0] == delta


def test_routing_thresholds():
    assert detect_query_type("alpha beta gamma delta", 3) == "hybrid_balanced"   # +1
    assert detect_query_type("alpha beta", 3) == "cosine_heavy"                  # +2
    assert detect_query_type(" ".join(["w"] * 12), 20) == "limbic_heavy"         # −2
