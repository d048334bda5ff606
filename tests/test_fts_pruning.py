"""Scoring only the rows that match a rare word first (MaxScore, core/search/full_text.py ranked_matches):
the same top rows and scores as FTS5 ranking every match, and the fall-back when the bound does not hold.
On PostgreSQL, which ranks every match itself, the same rows and scores as FTS5 on a SQLite copy."""

from __future__ import annotations

import math

import pytest
from _backends import on_postgres

from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.search import full_text as branch
from limbic.core.search.full_text import split_common
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore"


def test_split_common_by_hand():
    tokenize = lambda term: term.lower().split()  # noqa: E731
    frequency = {"alpha": 50, "zeta": 2, "beta": 10, "new": 40, "york": 30}
    rare, bound = split_common(["alpha", "zeta", "beta", "new york"], frequency, 100, tokenize)
    # alpha (50 of 100 rows) and beta (10) are common; zeta (2) is rare; a phrase is never common
    assert rare == ["zeta", "new york"]
    assert bound == pytest.approx(2.2 * 1e-6 + 2.2 * math.log(90.5 / 10.5))
    assert split_common(["alpha", "beta"], frequency, 100, tokenize) == ([], 0.0)  # nothing rare
    assert split_common(["zeta"], frequency, 100, tokenize) == ([], 0.0)  # nothing common


def graph(service, rare_text):
    """500 entities: 100 hold the common word "alpha" three times in a short text, 20 the rare word "zeta"
    in ``rare_text``, the rest neither."""
    entities = [E(f"common {i}", "T", (O("alpha alpha alpha"),)) for i in range(100)]
    entities += [E(f"rare {i}", "T", (O(rare_text),)) for i in range(20)]
    entities += [E(f"other {i}", "T", (O(FILLER),)) for i in range(380)]
    service.entities.create_entities(entities)


FTS5_RANKING = "SELECT rowid, -rank FROM entity_fts WHERE entity_fts MATCH ? ORDER BY rank LIMIT ?"


def fts5_ranking(rare_text, expression, count, folder):
    """FTS5's own ranking of every match, on a SQLite memory holding the same graph (the same ids)."""
    svc = MemoryService(open_database(folder / "fts5.db"), None)
    try:
        graph(svc, rare_text)
        return svc.database.read().execute(FTS5_RANKING, (expression, count)).fetchall()
    finally:
        svc.close()


def ranked(service, query, count, rare_text, folder):
    """``ranked_matches``'s answer, checked against FTS5's own ranking of every match, and whether the rare rows
    alone were scored (None on PostgreSQL, which has no such shortcut)."""
    conn = service.database.read()
    statements = []
    pruned = None
    if not on_postgres(conn):
        conn.exec_trace = lambda cursor, sql, bindings: statements.append(sql) or True
    try:
        with conn:
            full_text = branch.full_text_query(conn, query)
            ids, scores = branch.ranked_matches(conn, full_text, count)
            if not on_postgres(conn):
                pruned = not any("ORDER BY rank" in sql for sql in statements)
                truth = conn.execute(FTS5_RANKING, (full_text.expression, count)).fetchall()
    finally:
        if not on_postgres(conn):
            conn.exec_trace = None
    if on_postgres(conn):
        truth = fts5_ranking(rare_text, full_text.expression, count, folder)
    assert full_text.rare == '"zeta"'
    assert ids == [rowid for rowid, _ in truth]
    assert [scores[i] for i in ids] == pytest.approx([score for _, score in truth], abs=1e-9)
    return ids, pruned


def test_rare_rows_scoring_above_the_bound_are_the_top_rows(service, tmp_path):
    rare = "zeta zeta zeta"  # short and repeated: above what "alpha" alone can score
    graph(service, rare)
    ids, pruned = ranked(service, "alpha zeta", 10, rare, tmp_path)
    assert pruned in (True, None)
    names = {e.id: e.name for e in service.entities.read_graph().entities}
    assert all(names[i].startswith("rare") for i in ids)


def test_common_rows_that_could_win_make_it_score_every_match(service, tmp_path):
    rare = "zeta " + " ".join([FILLER] * 8)  # one zeta in a long text: below the bound
    graph(service, rare)
    ids, pruned = ranked(service, "alpha zeta", 10, rare, tmp_path)
    assert pruned in (False, None)
    names = {e.id: e.name for e in service.entities.read_graph().entities}
    assert all(names[i].startswith("common") for i in ids)


def test_too_few_rare_rows_make_it_score_every_match(service, tmp_path):
    rare = "zeta zeta zeta"
    graph(service, rare)
    ids, pruned = ranked(service, "alpha zeta", 30, rare, tmp_path)  # 20 rare rows cannot fill 30
    assert pruned in (False, None)
