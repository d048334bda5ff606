"""User text → safe FTS5 MATCH expressions: hostile input is plain text or a clear ValidationError, on FTS5
and on its PostgreSQL counterpart (the same expression, ranked by core/store/postgres/full_text.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from limbic.core.errors import ValidationError
from limbic.core.search.full_text import (
    FTS_TOKENIZER,
    bm25_ceiling,
    fts_match_expression,
    fts_terms,
    informative_terms,
    match_expression,
    quote_term,
)
from limbic.core.store.postgres import full_text as pg_text
from limbic.core.store.postgres.database import PgDatabase
from limbic.core.store.sqlite.connection import SqliteConnection
from limbic.core.store.text_search import document_frequencies, matches, tokenizer

HOSTILE = ['"', '""', '"""', "*", "fts*", "-x", "a:b", "NEAR(", "NEAR(a b)", "a NEAR b", "(", ")", "((a)",
           "a AND", "OR", "NOT b", "^start", "{name}: x", "name:FTS5", "+", "'; DROP TABLE entities; --",
           "\x00", "a\x00b", "😀", "café", "Ünïcödé straße", "日本語の検索", "\ud800", "a" * 2000,
           "  ", "", "- * \" ( ) :"]


ROWS = [(1, "FTS5 configuration", "Tool", "uses a:b syntax | NEAR operator | fts prefix"),
        (2, "Café Müller", "Place", "Straße in Berlin | 日本語の検索"),
        (3, "x-ray", "Device", "DROP TABLE entities"),
        (4, "start", "Word", "AND OR NOT are words here")]


class Fts5Index:
    """An ``entity_fts`` table as the migrations make it, in an in-memory SQLite database."""

    def __init__(self) -> None:
        self.conn = SqliteConnection(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE entity_fts USING fts5(name, entity_type, obs_text, "
                          f"tokenize = '{' '.join(FTS_TOKENIZER)}')")

    def add(self, rows) -> None:
        self.conn.executemany("INSERT INTO entity_fts(rowid, name, entity_type, obs_text) VALUES (?, ?, ?, ?)", rows)

    def ranked(self, expression: str) -> list[int]:
        return [r[0] for r in self.conn.execute(
            "SELECT rowid FROM entity_fts WHERE entity_fts MATCH ? ORDER BY rank", (expression,))]

    def score(self, expression: str, rowid: int) -> float:
        return self.conn.execute("SELECT -bm25(entity_fts) FROM entity_fts WHERE entity_fts MATCH ? AND rowid = ?",
                                 (expression, rowid)).get

    def close(self) -> None:
        self.conn.close()


class PgIndex:
    """The entity index of a new PostgreSQL memory, its documents written directly (no entities)."""

    def __init__(self, address: str) -> None:
        self.database = PgDatabase(address)
        self.conn = self.database.read()

    def add(self, rows) -> None:
        with self.database.maintenance() as conn:
            pg_text.write_documents(conn.raw, pg_text.ENTITY_FTS, [(rowid, texts) for rowid, *texts in rows])

    def ranked(self, expression: str) -> list[int]:
        return [rowid for rowid, _ in matches(self.conn, "entity_fts", expression)]

    def score(self, expression: str, rowid: int) -> float:
        return dict(matches(self.conn, "entity_fts", expression, only_ids=[rowid]))[rowid]

    def close(self) -> None:
        self.database.close()


@pytest.fixture
def index(backend, memory_address):
    """An empty entity full-text index on ``backend``."""
    made = Fts5Index() if backend == "sqlite" else PgIndex(memory_address)
    yield made
    made.close()


@pytest.fixture
def fts_conn(index):
    """The index holding :data:`ROWS`."""
    index.add(ROWS)
    return index


def _match(index, text):
    expression = fts_match_expression(text)
    if expression is None:
        return []
    return index.ranked(expression)


def test_quote_term_doubles_quotes():
    assert quote_term('say "hi"') == '"say ""hi"""'


def test_terms_are_whitespace_pieces_with_a_letter_or_digit():
    assert fts_terms('fts* -x a:b NEAR( "quoted" * - ( )') == ["fts*", "-x", "a:b", "NEAR(", '"quoted"']
    assert fts_terms("a a b") == ["a", "b"]
    assert fts_terms("a\x00b") == ["a", "b"]
    assert fts_terms("") == [] and fts_terms("   ") == [] and fts_terms("😀 ?!") == []
    assert fts_match_expression("") is None
    assert fts_match_expression("a:b NEAR(") == '"a:b" OR "NEAR("'


def test_too_long_or_not_text_is_a_validation_error():
    with pytest.raises(ValidationError, match="2,000"):
        fts_match_expression("a" * 2001)
    with pytest.raises(ValidationError):
        fts_match_expression(None)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_never_raise_database_errors(fts_conn, text):
    _match(fts_conn, text)


def test_operators_are_plain_text(fts_conn):
    assert _match(fts_conn, "a:b") == [1]                  # a phrase "a b", not a column filter
    assert _match(fts_conn, "NEAR(") == [1]
    assert _match(fts_conn, "fts*") == [1]                 # "fts" as a word, not a prefix query
    assert _match(fts_conn, "config*") == []               # no prefix expansion
    assert _match(fts_conn, "configur*") == [1]            # the stem of "configuration", as a word
    assert _match(fts_conn, "-ray") == [3]
    assert _match(fts_conn, "NOT AND") == [4]
    assert _match(fts_conn, "'; DROP TABLE entities; --") == [3]


def test_unicode_and_diacritics(fts_conn):
    assert _match(fts_conn, "cafe") == [2]
    assert _match(fts_conn, "MÜLLER") == [2]
    assert _match(fts_conn, "日本語の検索") == [2]


def test_words_are_joined_with_or_and_ranked(fts_conn):
    assert _match(fts_conn, "berlin unknownword") == [2]
    assert set(_match(fts_conn, "tool place")) == {1, 2}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_any_text_is_safe(index, text):  # the queries only read: one index serves every example
    if not index.ranked('"alpha"'):
        index.add([(1, "alpha", "b", "c")])
    _match(index, text)


def test_tokenizer_is_the_index_tokenizer_stemming_and_without_diacritics():
    tokenize = tokenizer(SqliteConnection(":memory:"))
    assert tokenize("Café-Müller:x") == ["cafe", "muller", "x"]
    assert tokenize("groups Running") == ["group", "run"]
    assert tokenize("日本語の検索") == ["日本語の検索"]
    assert tokenize("?!") == []


def test_stemmed_index_matches_other_forms_of_a_word(fts_conn):
    fts_conn.add([(5, "x", "y", "support groups")])
    assert fts_conn.ranked(fts_match_expression("group supporting")) == [5]


def test_common_pieces_are_left_out_when_a_rarer_one_remains():
    df = {"the": 60, "python": 7, "a": 90, "b": 3}
    tokenize = tokenizer(SqliteConnection(":memory:"))
    assert informative_terms(["the", "python", "zzz"], df, 100, tokenize) == ["python", "zzz"]
    assert informative_terms(["the", "a"], df, 100, tokenize) == ["the", "a"]    # all common: keep them
    assert informative_terms(["a:b", "the"], df, 100, tokenize) == ["a:b"]       # a phrase is as rare as its rarest token
    assert informative_terms(["python"], {"python": 50}, 100, tokenize) == ["python"]  # exactly half: alone, kept


def test_pruning_keeps_the_bm25_order_of_the_other_pieces(index):
    rows = [(i, f"pkg{i}", "Package", "the tool" + (" xml parser" * (i % 3) if i % 4 == 0 else "")) for i in range(1, 41)]
    index.add(rows)
    df = {"the": 40, "tool": 40, "xml": 7, "parser": 7}
    full = index.ranked(match_expression(["the", "xml", "parser"]))
    pruned = index.ranked(match_expression(informative_terms(["the", "xml", "parser"], df, 40, tokenizer(index.conn))))
    assert pruned == full[: len(pruned)] and len(pruned) == 7


def test_bm25_ceiling_is_what_fts5_scores_a_row_of_average_length_matching_each_term_once(index):
    filler = ["red", "green", "blue", "gray"]
    rows = [(i, f"n{i}", "t", f"{filler[i % 4]} stone") for i in range(2, 31)]
    rows.append((1, "n1", "t", "kernel stone"))  # same length as every row: kernel once, stone once
    index.add(rows)
    df = document_frequencies(index.conn, "entity_fts", ["absent", "kernel", "red", "stone"])
    tokenize = tokenizer(index.conn)
    score = index.score(match_expression(["kernel"]), 1)
    assert bm25_ceiling(["kernel"], df, 30, tokenize) == pytest.approx(score)
    assert bm25_ceiling(["kernel", "Reds"], df, 30, tokenize) == pytest.approx(
        math.log((30 - 1 + 0.5) / 1.5) + math.log((30 - df["red"] + 0.5) / (df["red"] + 0.5)))
    assert bm25_ceiling(["kernel", "absent"], df, 30, tokenize) == bm25_ceiling(["kernel"], df, 30, tokenize)
    assert bm25_ceiling(["stone"], df, 30, tokenize) == pytest.approx(1e-6)  # in every row: FTS5's clamp
    assert bm25_ceiling([], df, 30, tokenize) == 0.0
