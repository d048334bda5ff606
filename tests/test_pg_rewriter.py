"""The SQL rewriter of the PostgreSQL connection (core/store/postgres/rewriter.py): the store's shared SQL, written
once in the subset both engines read alike, reaches PostgreSQL with its own placeholders, id lists and NULL
tests, text inside string literals, quoted names and comments is never rewritten, and SQL outside the subset is
refused. Each case is checked on the text and, where it runs, by the rows it gives on a real SQLite and a real
PostgreSQL; so are the SQL pieces each engine spells its own way (``conn.ops``)."""

from __future__ import annotations

import psycopg
import pytest

from limbic.core.store.postgres.connection import PgConnection
from limbic.core.store.postgres.rewriter import UnsupportedSql, bind, translate
from limbic.core.store.sqlite.connection import SqliteConnection


@pytest.mark.parametrize(("sql", "values", "text", "sent"), [
    ("SELECT a FROM t WHERE b = ? AND c = ?", ("x", 2), "SELECT a FROM t WHERE b = $1 AND c = $2", ["x", 2]),
    ("SELECT a FROM t WHERE b = ?1 OR c = ?1", ("x",), "SELECT a FROM t WHERE b = $1 OR c = $1", ["x"]),
    # a bare ? after ?N is numbered as SQLite numbers it: one above the highest so far
    ("SELECT a FROM t WHERE b = ?2 AND c = ?", (1, 2, 3), "SELECT a FROM t WHERE b = $1 AND c = $2", [2, 3]),
    ("SELECT a FROM t WHERE id IN (SELECT value FROM json_each(?1))", ("[1, 2]",),
     "SELECT a FROM t WHERE id = ANY($1)", [[1, 2]]),
    ("SELECT a FROM t WHERE id NOT IN (SELECT value FROM json_each(?))", ("[3]",),
     "SELECT a FROM t WHERE id <> ALL($1)", [[3]]),
    ("SELECT a FROM t ORDER BY a LIMIT ?1", (-1,), "SELECT a FROM t ORDER BY a LIMIT $1", [None]),
    ("SELECT max(a), min(b), CAST(a AS DOUBLE PRECISION) FROM t WHERE +a = 1 AND (+b = 2)", (),
     "SELECT max(a), min(b), CAST(a AS DOUBLE PRECISION) FROM t WHERE a = 1 AND (b = 2)", []),
    ("SELECT id FROM e WHERE lower(name) IN (SELECT value FROM json_each(?1))", ('["cpu package"]',),
     "SELECT id FROM e WHERE lower(name) = ANY($1)", [["cpu package"]]),
])
def test_the_shared_subset_is_bound_as_postgresql_binds_it(sql, values, text, sent):
    assert bind(sql, values) == (text, sent)


def test_an_apostrophe_inside_a_line_comment_is_text():
    sql = "SELECT a FROM t -- the writer's own rows\nWHERE b = ?1"
    assert bind(sql, ("x",)) == ("SELECT a FROM t -- the writer's own rows\nWHERE b = $1", ["x"])
    assert bind("SELECT a /* it's ? and $1 */ FROM t WHERE b = ?", (2,)) == (
        "SELECT a /* it's ? and $1 */ FROM t WHERE b = $1", [2])


def test_a_dollar_number_inside_a_string_literal_is_text():
    # ?1 is unused here: the parameters are numbered again, and the literal must not be
    assert bind("SELECT '$1 and $2', a FROM t WHERE b = ?2", (None, "x")) == (
        "SELECT '$1 and $2', a FROM t WHERE b = $1", ["x"])
    assert bind("SELECT 'it''s ?1', \"odd ? name\" FROM t WHERE a = ?", (5,)) == (
        "SELECT 'it''s ?1', \"odd ? name\" FROM t WHERE a = $1", [5])


def test_a_parameter_used_only_in_is_null_is_decided_before_it_is_sent():
    sql = "SELECT a FROM t WHERE (?1 IS NULL OR b = ?2) AND (?3 IS NOT NULL)"
    assert bind(sql, (None, "x", None)) == ("SELECT a FROM t WHERE (TRUE OR b = $1) AND (FALSE)", ["x"])
    assert bind(sql, ("y", "x", 1)) == ("SELECT a FROM t WHERE (FALSE OR b = $1) AND (TRUE)", ["x"])
    assert bind("SELECT a FROM t WHERE ? IS NULL OR a = ?", (None, 3)) == (
        "SELECT a FROM t WHERE TRUE OR a = $1", [3])
    assert bind("SELECT a FROM t WHERE ?1 IS NULL", (None,)) == ("SELECT a FROM t WHERE TRUE", [])


@pytest.mark.parametrize("sql", [
    "PRAGMA user_version", "SELECT name FROM sqlite_master",
    "SELECT rowid FROM entity_fts WHERE entity_fts MATCH ?", "SELECT bm25(x) FROM x", "SELECT term FROM fts5vocab",
    "SELECT id FROM e WHERE name COLLATE NOCASE = ?", "SELECT instr(a, 'x') FROM t", "SELECT max(a, b) FROM t",
    "SELECT coalesce(min(a, (SELECT 1)), 0) FROM t", "SELECT CAST(a AS REAL) FROM t",
    "SELECT value FROM json_each(?)", "SELECT 1 FROM changes, json_each(changes.entity_ids) j"])
def test_sql_outside_the_shared_subset_is_refused(sql):
    with pytest.raises(UnsupportedSql):
        translate(sql)


def test_refused_words_inside_literals_and_comments_are_text():
    assert bind("SELECT 'PRAGMA instr(a, b) COLLATE' FROM t -- max(a, b)\nWHERE a = ?", (1,)) == (
        "SELECT 'PRAGMA instr(a, b) COLLATE' FROM t -- max(a, b)\nWHERE a = $1", [1])


RUN_ON_BOTH = [
    ("SELECT a FROM t -- the writer's rows\nWHERE b = ?1 ORDER BY a", ("x",)),
    ("SELECT '$1', a FROM t WHERE b = ?2 ORDER BY a", (None, "y")),
    ("SELECT a FROM t WHERE (?1 IS NULL OR b = ?2) ORDER BY a", (None, "x")),
    ("SELECT a FROM t WHERE (?1 IS NULL OR b = ?1) ORDER BY a", ("y",)),
    ("SELECT a FROM t WHERE a IN (SELECT value FROM json_each(?)) AND b <> ? ORDER BY a", ("[1, 2, 3]", "y")),
    ("SELECT a FROM t ORDER BY a LIMIT ?1", (-1,)),
    ("SELECT max(a), 'it''s', count(\"a\") FROM t WHERE ?1 IS NOT NULL", (0,)),
    ("SELECT CAST(a AS DOUBLE PRECISION) / 4, b FROM t WHERE +a > 1 AND a <> 5 ORDER BY b NULLS FIRST", ()),
]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The same small table in a SQLite file and in a PostgreSQL database."""
    from _pg import drop_database, new_database, server_or_skip

    server_or_skip()
    address = new_database("rewriter")
    sqlite = SqliteConnection(str(tmp_path_factory.mktemp("rewriter") / "t.db"))
    pg = PgConnection(psycopg.connect(address))
    rows = [(1, "x"), (2, "y"), (3, "x"), (4, None), (5, "X")]
    for conn in (sqlite, pg):
        conn.execute("CREATE TABLE t (a integer, b text)")
        conn.executemany("INSERT INTO t(a, b) VALUES (?, ?)", rows)
        conn.execute("CREATE TABLE j (id integer, ids text)")
        conn.executemany("INSERT INTO j(id, ids) VALUES (?, ?)", [(1, "[1, 2]"), (2, "[2, 30]"), (3, "[]")])
    yield sqlite, pg
    pg.close()
    sqlite.close()
    drop_database(address)


@pytest.mark.parametrize(("sql", "values"), RUN_ON_BOTH)
def test_the_rewritten_sql_gives_the_rows_sqlite_gives(both, sql, values):
    sqlite, pg = both
    assert pg.execute(sql, values).fetchall() == [tuple(r) for r in sqlite.execute(sql, values)]


def test_rows_whose_null_tests_differ_are_written_one_by_one(both):
    sqlite, pg = both
    sql = "INSERT INTO t(a, b) SELECT ?1, ?2 WHERE ?2 IS NOT NULL"
    for conn in (sqlite, pg):
        conn.executemany(sql, [(10, "z"), (11, None), (12, "z")])
    query = "SELECT a, b FROM t WHERE a >= 10 ORDER BY a"
    assert pg.execute(query).fetchall() == [tuple(r) for r in sqlite.execute(query)] == [(10, "z"), (12, "z")]


OWN_WAYS = [  # (the statement around each engine's own piece, its bindings)
    (lambda ops: f"SELECT a, {ops.greatest('a', '3')}, {ops.least('a', '3')} FROM t ORDER BY a", ()),
    (lambda ops: f"SELECT a FROM t WHERE {ops.ascii_folded('b')} IN (SELECT value FROM json_each(?1)) ORDER BY a",
     ('["x"]',)),
    (lambda ops: f"SELECT a FROM t WHERE {ops.holds_text('b', '?1')} ORDER BY a", ("x",)),
    (lambda ops: f"SELECT id FROM j WHERE {ops.json_ids_contain('j.ids', '?1')} ORDER BY id", (2,)),
    (lambda ops: f"SELECT CAST(e.value AS BIGINT), count(*) FROM j, {ops.json_id_rows('j.ids', 'e')} "
                 "GROUP BY 1 ORDER BY 1", ()),
]


@pytest.mark.parametrize(("statement", "values"), OWN_WAYS)
def test_each_engines_own_pieces_give_the_same_rows(both, statement, values):
    sqlite, pg = both
    assert pg.execute(statement(pg.ops), values).fetchall() == [
        tuple(r) for r in sqlite.execute(statement(sqlite.ops), values)]
