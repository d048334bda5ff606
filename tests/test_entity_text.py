"""entity_text: the passage embedded for an entity (mcp-memory "Architecture", "Head+Tail+Diversity")."""

from __future__ import annotations

import re

from limbic.core.embedding.entity_text import entity_header, entity_text, select_observations, token_budget


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
    text = entity_text("Ana", "person", "active", observations, WordCounter())
    assert text == "Ana (person, active): Works on the memory server | Prefers Python | Lives in Lisbon"


def test_no_observations_gives_the_header():
    assert entity_text("Ana", "person", "paused", [], WordCounter()) == entity_header("Ana", "person", "paused")
    assert entity_text("Ana", "person", "paused", ["", "   "], WordCounter()) == "Ana (person, paused)"


def test_budget_is_the_smaller_of_480_and_the_model_maximum():
    assert token_budget(WordCounter(max_tokens=256)) == 254  # [CLS] and [SEP]
    assert token_budget(WordCounter(max_tokens=512)) == 478
    assert token_budget(WordCounter(max_tokens=512), budget=100) == 98
    assert token_budget(WordCounter(max_tokens=512, passage_prefix="passage :")) == 476


def test_long_entity_keeps_head_tail_and_fits_the_budget():
    counter = WordCounter(max_tokens=60)
    observations = [f"fact {i} about topic{i} alpha beta" for i in range(30)]
    text = entity_text("Big", "project", "active", observations, counter)
    assert counter.count_tokens(text) <= 58
    kept = text.split(": ", 1)[1].split(" | ")
    assert kept[:2] == observations[:2] and kept[-2:] == observations[-2:]
    assert kept == [o for o in observations if o in kept]  # original order


def test_diverse_middle_observations_beat_near_duplicates():
    counter = WordCounter(max_tokens=44)
    duplicates = [f"the deploy script runs on host number {i}" for i in range(6)]
    distinct = ["customer prefers invoices by email", "quarterly budget frozen until march"]
    observations = ["project started in 2023", "owned by the platform team", *duplicates[:3], distinct[0],
                    *duplicates[3:], distinct[1], "latest: migrated to kubernetes", "next review in june"]
    text = entity_text("Ops", "project", "active", observations, counter)
    assert distinct[0] in text and distinct[1] in text
    assert sum(d in text for d in duplicates) <= 1
    assert counter.count_tokens(text) <= 42


def test_a_single_oversized_first_observation_is_still_kept():
    counter = WordCounter(max_tokens=20)
    huge = " ".join(["word"] * 100)
    text = entity_text("X", "note", "active", [huge, "small one"], counter)
    assert text.startswith("X (note, active): word word")


def test_select_observations_returns_sorted_indices_within_budget():
    contents = ["a b", "c d", "e f", "g h", "i j", "k l"]
    chosen = select_observations(contents, [3] * 6, budget=12)
    assert chosen == [0, 1, 4, 5]
