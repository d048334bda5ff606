"""The text that represents an entity when it is embedded (mcp-memory "Architecture", "Head+Tail+Diversity").

An entity becomes one passage: a header with its name, type and status, then its live observations
joined with ``" | "``. When that passage is longer than the token budget, the observations kept are

1. the *head*: the first observations (how the entity was introduced),
2. the *tail*: the last observations (what was learnt most recently),
3. the *most diverse* of the middle ones, picked greedily farthest-first: each step takes the
   observation whose highest word-overlap (Jaccard similarity of lower-cased word sets) with the
   observations already kept is lowest, so near-duplicates do not crowd out distinct facts.

Tokens are counted with the embedder's own tokenizer (:meth:`Embedder.count_tokens`), never
estimated from characters. The kept observations stay in their original order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from limbic.core.embedding.base import Embedder

DEFAULT_TOKEN_BUDGET = 480
"""Upper limit of the passage length in tokens (mcp-memory "Architecture"); the model's own maximum lowers it."""

HEAD_COUNT = 2
TAIL_COUNT = 2
SEPARATOR = " | "
# Tokens the model adds around every input ([CLS] and [SEP] for BERT).
_SPECIAL_TOKENS = 2
_WORD = re.compile(r"\w+", re.UNICODE)


def entity_header(name: str, entity_type: str, status: str) -> str:
    """``"name (entity_type, status)"`` — the first line of every entity passage."""
    return f"{name} ({entity_type}, {status})"


def token_budget(embedder: Embedder, budget: int | None = None) -> int:
    """Tokens available to the header and observations: ``min(budget or 480, max_tokens)`` minus the
    model's special tokens and the passage prefix."""
    limit = min(budget or DEFAULT_TOKEN_BUDGET, int(embedder.max_tokens))
    prefix = embedder.count_tokens(embedder.passage_prefix) if embedder.passage_prefix else 0
    return max(1, limit - _SPECIAL_TOKENS - prefix)


def entity_text(
    name: str,
    entity_type: str,
    status: str,
    observations: Sequence[str],
    embedder: Embedder,
    *,
    budget: int | None = None,
) -> str:
    """Build the passage embedded for one entity.

    Args:
        name, entity_type, status: the entity's fields, all shown in the header.
        observations: the *live* observation contents, oldest first (the caller drops superseded
            and expired ones). Blank ones are ignored.
        embedder: gives the token counts (``count_tokens``) and the model's ``max_tokens``.
        budget: token budget; default 480 (mcp-memory "Architecture"), never more than the model's maximum.

    Returns:
        ``"name (type, status): obs1 | obs2 | ..."`` (just the header when there are no observations),
        at most the budget in tokens unless a single head observation alone is longer (the
        tokenizer then truncates it).
    """
    header = entity_header(name, entity_type, status)
    contents = [text.strip() for text in observations if text and text.strip()]
    if not contents:
        return header
    available = token_budget(embedder, budget) - embedder.count_tokens(header + ":")
    separator_cost = embedder.count_tokens(SEPARATOR)
    costs = [embedder.count_tokens(text) + separator_cost for text in contents]
    if sum(costs) - separator_cost <= available:
        kept = contents
    else:
        kept = [contents[i] for i in select_observations(contents, costs, available + separator_cost)]
    return f"{header}: {SEPARATOR.join(kept)}"


def head_text(name: str, entity_type: str, status: str, observations: Sequence[str], embedder: Embedder,
              *, budget: int | None = None) -> str:
    """The header and the first observations that fit the token budget, in order (at least the first one).

    Unlike :func:`entity_text` this passage does not change when an observation is appended to an
    entity whose head already fills the budget, so appending to a long entity never re-embeds its
    passage; a short entity's passage (all of it fits) is embedded again, at most
    budget tokens. Every observation is searched through its own vector as well. Measured against
    the first two observations only: that loses paraphrase matches (tests/test_semantic_corpus.py).
    Tokens are counted only for the observations that may fit.
    """
    header = entity_header(name, entity_type, status)
    contents = [text.strip() for text in observations if text and text.strip()]
    if not contents:
        return header
    remaining = token_budget(embedder, budget) - embedder.count_tokens(header + ":")
    separator_cost = embedder.count_tokens(SEPARATOR)
    kept = [contents[0]]
    remaining -= embedder.count_tokens(contents[0])
    for text in contents[1:]:
        cost = embedder.count_tokens(text) + separator_cost
        if cost > remaining:
            break
        kept.append(text)
        remaining -= cost
    return f"{header}: {SEPARATOR.join(kept)}"


def select_observations(contents: Sequence[str], costs: Sequence[int], budget: int) -> list[int]:
    """Indices (ascending) of the observations kept by Head+Tail+Diversity within ``budget`` tokens.

    ``costs[i]`` is the token cost of ``contents[i]`` including its separator. The first observation
    is always kept, even alone over budget (truncated later by the tokenizer), so no entity is
    embedded from its header only.
    """
    count = len(contents)
    chosen: list[int] = []
    remaining = budget

    def take(index: int) -> None:
        nonlocal remaining
        if index not in chosen and costs[index] <= remaining:
            chosen.append(index)
            remaining -= costs[index]

    head = list(range(min(HEAD_COUNT, count)))
    tail = list(range(max(len(head), count - TAIL_COUNT), count))
    if costs[0] > remaining:
        return [0]
    for index in head + tail[::-1]:
        take(index)
    middle = [i for i in range(count) if i not in head and i not in tail]
    words = {i: set(_WORD.findall(contents[i].lower())) for i in range(count)}
    closest = {i: max((_jaccard(words[i], words[j]) for j in chosen), default=0.0) for i in middle}
    while middle and remaining > 0:
        affordable = [i for i in middle if costs[i] <= remaining]
        if not affordable:
            break
        best = min(affordable, key=lambda i: (closest[i], i))
        take(best)
        middle.remove(best)
        for i in middle:
            closest[i] = max(closest[i], _jaccard(words[i], words[best]))
    return sorted(chosen)


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
