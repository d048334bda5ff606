"""The SQLite and PostgreSQL schemas are one schema: a memory migrated to the newest version on each backend has
the same tables, columns (name, type family, NOT NULL, default, primary key), indexes (columns, unique,
partial), unique constraints, foreign keys and CHECK constraints. A migration written for one backend and not
the other fails here, whatever its number.

What differs on purpose is left out by rule, not by name: each backend's own full-text and vector storage
(SQLite's virtual tables and their shadow tables; PostgreSQL's ``fts_*`` tables of core/store/postgres/
full_text.py and text_index.py, ``limbic_schema`` where its versions are kept), index names, triggers (PostgreSQL's give an id left NULL the
next one, as SQLite's rowid does), and how a type or an expression is spelled (``bigint`` is SQLite's
``INTEGER``, ``double precision`` its ``REAL``; a unique index on ``md5(content)`` is one on ``content``,
one on ``lower(name)`` SQLite's on ``name COLLATE NOCASE``)."""

from __future__ import annotations

import re

import psycopg
import pytest

from limbic.core.store.backend import open_database
from limbic.core.store.postgres.database import PgDatabase
from limbic.core.store.postgres.full_text import SCHEMA as PG_FULL_TEXT_SCHEMA

PG_OWN_TABLES = {"limbic_schema", *re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", PG_FULL_TEXT_SCHEMA)}
TYPE_FAMILIES = {"integer": "integer", "int": "integer", "bigint": "integer", "smallint": "integer",
                 "real": "real", "double precision": "real", "float": "real", "double": "real",
                 "text": "text", "character varying": "text", "blob": "blob", "bytea": "blob"}


def _family(declared: str) -> str:
    return TYPE_FAMILIES.get(declared.strip().lower(), declared.strip().lower() or "any")


def _default(value: str | None) -> str | None:
    """A column default without casts, parentheses or a text collation: ``'x'::text`` and ``'x'`` are one."""
    if value is None:
        return None
    text = re.sub(r"::[a-z ]+(\[\])?", "", str(value))
    text = text.replace("(", "").replace(")", "").strip()
    return "NULL" if text.upper() == "NULL" else text


def _top_level(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for at, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:at])
            start = at + 1
    return [*parts, text[start:]]


def _index_columns(text: str) -> tuple[str, ...]:
    """Column names of an index or constraint definition; ``md5(c)`` and ``lower(c)`` (PostgreSQL's spelling of
    a unique long text and of SQLite's ``COLLATE NOCASE``) count as ``c``, any other expression as ``expr`` (as
    SQLite's ``PRAGMA index_info`` names it)."""
    columns = []
    for part in _top_level(text):
        column = re.sub(r"^(?:md5|lower)\((\w+)\)$", r"\1", part.strip().split(" COLLATE ")[0].strip()).strip('"')
        columns.append(column if re.fullmatch(r"\w+", column) else "expr")
    return tuple(columns)


def sqlite_schema(path) -> dict:
    database = open_database(path)
    conn = database.read()
    try:
        virtual = [n for n, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
                   if sql and sql.upper().startswith("CREATE VIRTUAL TABLE")]
        tables = {}
        for (name, sql) in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                                        "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall():
            if name in virtual or any(name.startswith(f"{v}_") for v in virtual):
                continue
            info = conn.execute(f"PRAGMA table_info({name})").fetchall()
            columns = {c[1]: (_family(c[2]), bool(c[3]) or bool(c[5]), _default(c[4]), bool(c[5])) for c in info}
            indexes, uniques = {}, set()
            for _, index, unique, origin, partial in conn.execute(f"PRAGMA index_list({name})").fetchall():
                cols = tuple(r[2] or "expr" for r in conn.execute(f"PRAGMA index_info({index})"))
                if origin == "c":
                    indexes[cols] = (bool(unique), bool(partial))
                elif origin == "u":
                    uniques.add(cols)
            keys = {}
            for row in conn.execute(f"PRAGMA foreign_key_list({name})").fetchall():
                keys.setdefault(row[0], [row[2], [], [], row[6].upper()])
                keys[row[0]][1].append(row[3])
                keys[row[0]][2].append(row[4] or next(c for c, v in columns.items() if v[3]))
            foreign = {(tuple(k[1]), k[0], tuple(k[2]), k[3]) for k in keys.values()}
            checks = len(re.findall(r"\bCHECK\s*\(", sql, re.IGNORECASE))
            tables[name] = {"columns": columns, "indexes": indexes, "unique": uniques, "foreign": foreign,
                            "checks": checks}
        return tables
    finally:
        database.close()


def pg_schema(address: str) -> dict:
    PgDatabase(address).close()  # migrated to the newest version
    with psycopg.connect(address) as conn:
        here = "current_schema()"
        names = [r[0] for r in conn.execute(
            f"SELECT table_name FROM information_schema.tables WHERE table_schema = {here} "
            "AND table_type = 'BASE TABLE' ORDER BY 1") if r[0] not in PG_OWN_TABLES
            and not r[0].startswith("fts_") and not r[0].endswith("_embeddings")]
        tables = {}
        for name in names:
            pk = {r[0] for r in conn.execute(
                "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary", (name,))}
            columns = {r[0]: (_family(r[1]), r[2] == "NO", _default(r[3]), r[0] in pk) for r in conn.execute(
                f"SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns "
                f"WHERE table_schema = {here} AND table_name = %s", (name,))}
            constraint_indexes = {r[0] for r in conn.execute(
                "SELECT conindid::regclass::text FROM pg_constraint WHERE conrelid = %s::regclass AND conindid <> 0",
                (name,))}
            indexes = {_index_columns(re.search(r"USING \w+ \((.*?)\)(?: WHERE|$)", r[1]).group(1)): (r[2], r[3])
                       for r in conn.execute(
                "SELECT c.relname, pg_get_indexdef(i.indexrelid), i.indisunique, i.indpred IS NOT NULL FROM pg_index i "
                "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = %s::regclass", (name,))
                if r[0] not in constraint_indexes}
            uniques = {_index_columns(r[0]) for r in conn.execute(
                "SELECT substring(pg_get_constraintdef(oid) from '\\((.*)\\)') FROM pg_constraint "
                "WHERE conrelid = %s::regclass AND contype = 'u'", (name,))}
            foreign = set()
            for (definition,) in conn.execute(
                    "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass "
                    "AND contype = 'f'", (name,)):
                found = re.match(r"FOREIGN KEY \((.*?)\) REFERENCES (\w+)\((.*?)\)(?: ON DELETE ([A-Z ]+))?",
                                 definition)
                assert found, definition
                foreign.add((_index_columns(found.group(1)), found.group(2), _index_columns(found.group(3)),
                             (found.group(4) or "NO ACTION").strip()))
            checks = conn.execute("SELECT count(*) FROM pg_constraint WHERE conrelid = %s::regclass "
                                  "AND contype = 'c'", (name,)).fetchone()[0]
            tables[name] = {"columns": columns, "indexes": indexes, "unique": uniques, "foreign": foreign,
                            "checks": checks}
        return tables


@pytest.fixture(scope="module")
def schemas(tmp_path_factory):
    from _pg import drop_database, new_database, server_or_skip

    server_or_skip()
    address = new_database("schema")
    try:
        yield sqlite_schema(tmp_path_factory.mktemp("schema") / "memory.db"), pg_schema(address)
    finally:
        drop_database(address)


def test_both_backends_have_the_same_tables(schemas):
    on_sqlite, on_pg = schemas
    assert sorted(on_sqlite) == sorted(on_pg)


@pytest.mark.parametrize("part", ["columns", "indexes", "unique", "foreign", "checks"])
def test_every_table_has_the_same_parts_on_both_backends(schemas, part):
    on_sqlite, on_pg = schemas
    differ = {name: {"sqlite": on_sqlite[name][part], "postgresql": on_pg[name][part]}
              for name in sorted(set(on_sqlite) & set(on_pg)) if on_sqlite[name][part] != on_pg[name][part]}
    assert not differ, differ


def test_both_backends_are_at_the_same_schema_version(tmp_path, pg_address):
    sqlite = open_database(tmp_path / "memory.db")
    pg = PgDatabase(pg_address)
    try:
        assert sqlite.schema_version == pg.schema_version
    finally:
        sqlite.close()
        pg.close()
