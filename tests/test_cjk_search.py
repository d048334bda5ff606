"""Keyword search in Chinese, Japanese and Korean (docs/scoring.md "Chinese, Japanese and Korean").

FTS5's ``unicode61`` keeps a run of Han, kana or Hangul characters as one token; ``entity_cjk_fts`` makes each
such character a token, so a word is found inside a run, however short. Measured on three real memory files
(two Chinese, one Korean; their labelled questions in tests/fixtures/multilingual), on SQLite and PostgreSQL,
which rank alike; English text never reaches the new index.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest
from _backends import BACKENDS, address_on, on_postgres

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.io.importer import import_files
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.search import full_text
from limbic.core.service import MemoryService
from limbic.core.store import text_search
from limbic.core.store.backend import open_database
from limbic.core.store.text_search import CJK_TABLE

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "multilingual"
QUERIES = json.loads((FIXTURES / "queries.json").read_text(encoding="utf-8"))
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
FILES = sorted({CORPUS / q["file"] for q in QUERIES})
needs_corpus = pytest.mark.skipif(not all(f.is_file() for f in FILES),
                                  reason="the real memory files (../shared/corpus) are not beside the repository")


def keyword_names(service: MemoryService, text: str, count: int = 3, *, cjk: bool = True) -> list[str]:
    """The names of the ``count`` best entities of the full-text branch for ``text``; without ``cjk``, from
    ``entity_fts`` alone (what the search did before ``entity_cjk_fts``)."""
    conn = service.database.read()
    with conn:
        query = full_text.full_text_query(conn, text)
        ids, _ = full_text.ranked_matches(conn, query if cjk else replace(query, cjk_expression=None), count)
    names = {e.id: e.name for e in service.entities.read_graph().entities}
    return [names[i] for i in ids]


def cjk_rows(service: MemoryService) -> int:
    conn = service.database.read()
    sql = "SELECT count(*) FROM fts_docs WHERE ix = 4" if on_postgres(conn) else f"SELECT count(*) FROM {CJK_TABLE}"
    return int(conn.execute(sql).fetchone()[0])


@needs_corpus
def test_labelled_questions_find_their_entity_by_keyword(memory_address, tmp_path):
    """Each file in a memory of its own; every question's entity among the keyword branch's first three, where
    ``entity_fts`` alone finds 9 of 26 (docs/evaluation.md "Chinese and Korean keywords")."""
    found, before = [], []
    for file in FILES:
        address = memory_address if memory_address.startswith("postgresql") else str(tmp_path / f"{file.stem}.db")
        service = MemoryService(open_database(address), HashingEmbedder(), origin="cli")
        try:
            import_files(service, [file])
            for q in (q for q in QUERIES if q["file"] == file.name):
                found.append(q["expected"] in keyword_names(service, q["query"]))
                before.append(q["expected"] in keyword_names(service, q["query"], cjk=False))
            service.entities.delete_entities([e.name for e in service.entities.read_graph().entities])
        finally:
            service.close()
    assert len(found) == len(QUERIES) and all(found)
    assert sum(before) == 9


def test_a_word_inside_a_run_is_found_however_short(service):
    service.entities.create_entities([
        E("系统提示词外置化", "Feature", (O("把系统提示词移到配置文件"),)),
        E("前端Token显示", "Feature", (O("在前端显示每次对话的Token数"),)),
        E("对话实时增量存档", "Feature", (O("每轮对话结束后写入增量"),)),
        E("東京タワーの見学", "Plan", (O("来週の土曜日に行く"),)),
        E("고양이 사료", "Note", (O("고양이는 매일 두 번 먹는다"),)),
    ])
    assert keyword_names(service, "提示词")[0] == "系统提示词外置化"
    assert keyword_names(service, "存档")[0] == "对话实时增量存档"
    assert keyword_names(service, "档") == ["对话实时增量存档"]
    assert keyword_names(service, "タワー") == ["東京タワーの見学"]
    assert keyword_names(service, "고양이") == ["고양이 사료"]
    assert keyword_names(service, "Token显示")[0] == "前端Token显示"  # a piece mixing scripts: its words in order
    assert keyword_names(service, "提词") == []  # characters that never stand together match nothing


def test_english_text_leaves_the_cjk_index_empty(service):
    service.entities.create_entities([E("Ada", "Person", (O("Wrote the first program"),))])
    assert cjk_rows(service) == 0
    service.entities.add_observations([("Ada", [O("会说中文")])])
    assert cjk_rows(service) == 1
    assert keyword_names(service, "中文") == ["Ada"]
    service.entities.delete_observations([("Ada", ["会说中文"])])
    assert cjk_rows(service) == 0 and keyword_names(service, "中文") == []
    service.entities.create_entities([E("小明", "Person")])
    service.entities.delete_entities(["小明"])
    assert cjk_rows(service) == 0


def test_text_that_expired_is_not_found(service):
    service.entities.create_entities([
        E("临时笔记", "Note", (O("服务器维护窗口", expires_at=time.time() - 60), O("plain text"))),
        E("长期笔记", "Note", (O("服务器维护窗口",),)),
    ])
    service.search.query("维护", 5, record=False)
    assert keyword_names(service, "维护") == ["长期笔记"]


@needs_corpus
def test_stored_entities_are_indexed_by_the_migration(memory_address):
    database = open_database(memory_address)
    service = MemoryService(database, HashingEmbedder(), origin="cli")
    try:
        import_files(service, FILES)
        written = cjk_rows(service)
        with database.maintenance() as conn:  # the memory as schema 15 left it: no CJK index (and no use log)
            conn.execute("DROP TABLE use_events")
            if on_postgres(conn):
                for table in ("fts_postings", "fts_docs", "fts_terms", "fts_totals"):
                    conn.execute(f"DELETE FROM {table} WHERE ix = 4")
                conn.execute("DROP FUNCTION use_events_rowid()")
                conn.execute("DELETE FROM limbic_schema WHERE version >= 16")
            else:
                conn.execute(f"DROP TABLE {CJK_TABLE}")
                conn.execute("PRAGMA user_version = 15")
    finally:
        service.close()
    service = MemoryService(open_database(memory_address), HashingEmbedder(), origin="cli")
    try:
        assert cjk_rows(service) == written > 0
        assert keyword_names(service, "看门狗")[0] == "流水灯少一个灯(搁置)"
    finally:
        service.close()


@pytest.fixture(scope="module")
def memories(tmp_path_factory):
    """The three files imported into a SQLite memory and into a PostgreSQL one (the same ids)."""
    services = []
    for backend in BACKENDS:
        address = address_on(backend, tmp_path_factory.mktemp(backend) / "memory.db")
        service = MemoryService(open_database(next(address)), HashingEmbedder(), origin="cli")
        import_files(service, FILES)
        services.append((service, address))
    yield [service for service, _ in services]
    for service, address in services:
        service.close()
        next(address, None)


@needs_corpus
def test_both_engines_rank_the_cjk_index_alike(memories):
    sqlite, postgres = memories
    for text in [q["query"] for q in QUERIES] + ["监控 蓝牙", "Ymodem 蓝牙", "测试", "AI 설계"]:
        ranked = []
        for service in (sqlite, postgres):
            conn = service.database.read()
            with conn:
                query = full_text.full_text_query(conn, text)
                ranked.append((text_search.matches(conn, CJK_TABLE, query.cjk_expression), query.ceiling,
                               full_text.ranked_matches(conn, query, 10)))
        (lite, lite_ceiling, lite_best), (pg, pg_ceiling, pg_best) = ranked
        assert lite == pg and lite, text  # the same ids, order and scores, bit for bit
        assert lite_ceiling == pg_ceiling and lite_best == pg_best, text


@needs_corpus
def test_search_with_the_real_model_finds_the_word(model, tmp_path):
    service = MemoryService(open_database(tmp_path / "memory.db"), model, origin="cli")
    try:
        import_files(service, [CORPUS / "MrHuang-0110__LBS-NEXT-AI__.memory_memory.jsonl"])
        outcome = service.search.query("看门狗", 3, record=False)
        assert outcome.mode == "hybrid"  # found by its words too, not by the English model alone
        assert outcome.results[0].name == "流水灯少一个灯(搁置)"
    finally:
        service.close()
