"""head_text: the passage embedded for an entity (its header and first observations within the token budget)."""

from __future__ import annotations

import re

from limbic.core.embedding.entity_text import entity_header, head_text, token_budget


class WordCounter:
    """A stand-in embedder whose tokens are words and punctuation marks (like BERT's pre-tokenizer)."""

    name = "word-counter"
    dimension = 8
    query_prefix = ""

    def __init__(self, max_tokens: int = 256, passage_prefix: str = "") -> None:
        self.max_tokens = max_tokens
        self.passage_prefix = passage_prefix

    def count_tokens(self, text: str) -> int:
        return len(re.findall(r"\w+|[^\w\s]", text))


def test_small_entity_keeps_everything_in_order():
    observations = ["Works on the memory server", "Prefers Python", "Lives in Lisbon"]
    text = head_text("Ana", "person", "active", observations, WordCounter())
    assert text == "Ana (person, active): Works on the memory server | Prefers Python | Lives in Lisbon"


def test_no_observations_gives_the_header():
    assert head_text("Ana", "person", "paused", [], WordCounter()) == entity_header("Ana", "person", "paused")
    assert head_text("Ana", "person", "paused", ["", "   "], WordCounter()) == "Ana (person, paused)"


def test_budget_is_the_smaller_of_480_and_the_model_maximum():
    assert token_budget(WordCounter(max_tokens=256)) == 254  # [CLS] and [SEP]
    assert token_budget(WordCounter(max_tokens=512)) == 478
    assert token_budget(WordCounter(max_tokens=512), budget=100) == 98
    assert token_budget(WordCounter(max_tokens=512, passage_prefix="passage :")) == 476


def test_long_entity_keeps_the_first_observations_that_fit_in_order():
    counter = WordCounter(max_tokens=60)
    observations = [f"fact {i} about topic{i} alpha beta" for i in range(30)]
    text = head_text("Big", "project", "active", observations, counter)
    assert counter.count_tokens(text) <= 58
    kept = text.split(": ", 1)[1].split(" | ")
    assert kept == observations[: len(kept)] and 1 < len(kept) < len(observations)


def test_appending_to_a_full_entity_leaves_its_passage_unchanged():
    counter = WordCounter(max_tokens=60)
    observations = [f"fact {i} about topic{i} alpha beta" for i in range(30)]
    before = head_text("Big", "project", "active", observations, counter)
    assert head_text("Big", "project", "active", [*observations, "a new fact"], counter) == before


def test_a_single_oversized_first_observation_is_still_kept():
    counter = WordCounter(max_tokens=20)
    huge = " ".join(["word"] * 100)
    text = head_text("X", "note", "active", [huge, "small one"], counter)
    assert text.startswith("X (note, active): word word") and "small one" not in text
