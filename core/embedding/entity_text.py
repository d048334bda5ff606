"""The text that represents an entity when it is embedded: its passage vector.

An entity becomes one passage: a header with its name, type and status, then its first live
observations joined with ``" | "``, as many as fit the token budget (the mcp-memory "Architecture"
page budgets 480 tokens). Every live observation also has a vector of its own
(:func:`limbic.core.store.indexing.observation_passage`), so a fact past the budget is still found by
meaning; the passage is the entity's introduction. Tokens are counted with the embedder's own tokenizer
(:meth:`Embedder.count_tokens`), never estimated from characters.
"""

from __future__ import annotations

from collections.abc import Sequence

from limbic.core.embedding.base import Embedder

DEFAULT_TOKEN_BUDGET = 480
"""Upper limit of the passage length in tokens (mcp-memory "Architecture"); the model's own maximum lowers it."""

SEPARATOR = " | "
# Tokens the model adds around every input ([CLS] and [SEP] for BERT).
_SPECIAL_TOKENS = 2


def entity_header(name: str, entity_type: str, status: str) -> str:
    """``"name (entity_type, status)"`` — the first line of every entity passage."""
    return f"{name} ({entity_type}, {status})"


def token_budget(embedder: Embedder, budget: int | None = None) -> int:
    """Tokens available to the header and observations: ``min(budget or 480, max_tokens)`` minus the
    model's special tokens and the passage prefix."""
    limit = min(budget or DEFAULT_TOKEN_BUDGET, int(embedder.max_tokens))
    prefix = embedder.count_tokens(embedder.passage_prefix) if embedder.passage_prefix else 0
    return max(1, limit - _SPECIAL_TOKENS - prefix)


def head_text(name: str, entity_type: str, status: str, observations: Sequence[str], embedder: Embedder,
              *, budget: int | None = None) -> str:
    """The header and the first observations that fit the token budget, in order (at least the first one).

    This passage does not change when an observation is appended to an entity whose head already fills
    the budget, so appending to a long entity never re-embeds its
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
