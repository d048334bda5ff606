"""Query routing: choose how much the final score trusts the cosine vs. the limbic score.

mcp-memory "The Limbic System", "Query Routing" / "Detection Algorithm", with English
equivalents added (docs/scoring.md "Score and blend"). Each keyword found adds its weight (a keyword that contains another,
such as "relación entre" ⊃ "relación", scores both, as in the seed's reference implementation):

* factual (+2): "qué es", "definición", "cómo funciona", "es un", "es una";
  "what is", "definition", "how does … work", "is a", "is an"
* intermediate (+1): "relación", "diferencia", "ejemplos", "comparar";
  "relationship", "difference", "examples", "compare"
* exploratory (−2): "explícame", "relación entre", "dime todo", "qué piensas";
  "explain", "relationship between", "tell me everything", "what do you think"
* ≤ 3 words: +1; ≥ 10 words: −1.  limit ≤ 3: +1; limit ≥ 10: −1.

Score ≥ 2 → ``cosine_heavy``; ≤ −2 → ``limbic_heavy``; otherwise ``hybrid_balanced``. Matching is
case-insensitive, ignores accents ("que es" = "qué es") and respects word boundaries.
"""

from __future__ import annotations

import re
import unicodedata

COSINE_HEAVY = "cosine_heavy"
LIMBIC_HEAVY = "limbic_heavy"
HYBRID_BALANCED = "hybrid_balanced"

FACTUAL = ("qué es", "definición", "cómo funciona", "es un", "es una",
           "what is", "definition", "how does … work", "is a", "is an")
INTERMEDIATE = ("relación", "diferencia", "ejemplos", "comparar",
                "relationship", "difference", "examples", "compare")
EXPLORATORY = ("explícame", "relación entre", "dime todo", "qué piensas",
               "explain", "relationship between", "tell me everything", "what do you think")

_WEIGHTS = ((FACTUAL, 2), (INTERMEDIATE, 1), (EXPLORATORY, -2))


def fold(text: str) -> str:
    """Lower-case ``text`` and strip accents (NFKD, combining marks removed)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _pattern(keyword: str) -> re.Pattern[str]:
    parts = [r"\s+".join(re.escape(word) for word in fold(part).split()) for part in keyword.split("…")]
    return re.compile(r"\b" + r"\b.*?\b".join(parts) + r"\b")


_PATTERNS = tuple((keyword, _pattern(keyword), weight) for group, weight in _WEIGHTS for keyword in group)


def routing_score(query: str, limit: int) -> tuple[int, list[str]]:
    """The routing score of ``query`` for a top-``limit`` search and the keywords that matched."""
    folded = fold(query)
    score = 0
    matched = []
    for keyword, pattern, weight in _PATTERNS:
        if pattern.search(folded):
            score += weight
            matched.append(keyword)
    words = len(query.split())
    if words <= 3:
        score += 1
    elif words >= 10:
        score -= 1
    if limit <= 3:
        score += 1
    elif limit >= 10:
        score -= 1
    return score, matched


def detect_query_type(query: str, limit: int) -> str:
    """Routing strategy for ``query`` and ``limit``: ``"cosine_heavy"``, ``"limbic_heavy"`` or ``"hybrid_balanced"``."""
    score, _ = routing_score(query, limit)
    if score >= 2:
        return COSINE_HEAVY
    if score <= -2:
        return LIMBIC_HEAVY
    return HYBRID_BALANCED
