"""``limbic eval locomo`` end to end on an authored LoCoMo-shaped fixture: figures computed by hand,
replays that record (or not) usage, and the cache of scratch databases."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.errors import ValidationError
from limbic.core.eval import scratch
from limbic.core.eval.locomo import LocomoFormatError, load_locomo
from limbic.core.eval.metrics import summarize, summarize_by_category
from limbic.core.eval.runner import (
    EvalOptions,
    ask_questions,
    plan_passes,
    questions_to_ask,
    run_locomo,
)
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"
SECOND = 1 / math.log2(3)  # discount of rank 2

# BM25 by hand. Words of each question occur only where written below (checked when the fixture was
# authored); the FTS5 branch returns exactly these sessions, in this order:
#   mini-1 q0 single-hop "sourdough starter died" → [s2]; evidence s2            R@1 1, NDCG 1
#   mini-1 q1 temporal   "marimba": s1 three times, s2 once → [s1, s2]; evid. s2  R@1 0, R@5 1, NDCG 1/log2 3
#   mini-1 q2 multi-hop  "volcano" (a caption) → [s3]; evidence s1 and s3         R@1 1, NDCG 1/(1 + 1/log2 3)
#   mini-1 q3 adversarial "sourdough" → [s2]; evidence s3                          0
#   mini-1 q4 evidence D9:9 names no turn                                          skipped
#   mini-1 q5 temporal   "neighbours complained" → [s1]; evidence D1:3 (and "D")  R@1 1, NDCG 1
#   mini-2 q0 open-domain "ferret escaped again" → [s1]; evidence s1               R@1 1, NDCG 1
NDCG = {"single-hop": 1.0, "temporal": (SECOND + 1.0) / 2, "multi-hop": 1 / (1 + SECOND),
        "adversarial": 0.0, "open-domain": 1.0}


def _options(**changes) -> EvalOptions:
    return EvalOptions(**{"variants": ("default", "knn", "bm25", "rrf", "seed"), **changes})


def test_bm25_figures_by_hand_and_every_variant_scored():
    result = run_locomo(load_locomo(FIXTURE), _options(), HashingEmbedder())
    assert result.conversations == ("mini-1", "mini-2")
    assert result.asked == 6
    assert [(s.conversation, s.index) for s in result.skipped] == [("mini-1", 4)]
    assert result.unresolved == (("mini-1", 4, "D9:9"), ("mini-1", 5, "D"))
    assert result.modes == {"hybrid": 12}  # one search per question for each distinct preset (default, seed)
    bm25 = summarize(result.scores["bm25"])
    assert bm25.recall == {1: pytest.approx(4 / 6), 5: pytest.approx(5 / 6), 10: pytest.approx(5 / 6)}
    assert bm25.ndcg == pytest.approx((1 + SECOND + 1 / (1 + SECOND) + 0 + 1 + 1) / 6)
    by = summarize_by_category(result.scores["bm25"])
    assert {name: s.questions for name, s in by.items()} == {
        "single-hop": 1, "temporal": 2, "multi-hop": 1, "adversarial": 1, "open-domain": 1}
    assert {name: s.ndcg for name, s in by.items()} == pytest.approx(NDCG)
    assert by["temporal"].recall == {1: 0.5, 5: 1.0, 10: 1.0}
    assert set(result.scores) == {"default", "knn", "bm25", "rrf", "seed"}
    assert all(len(scores) == 6 for scores in result.scores.values())
    # The KNN branch of the hashing embedder sees every session, so R@10 is 1 in this small haystack.
    assert summarize(result.scores["knn"]).recall[10] == 1.0


def test_default_variant_is_the_product_search():
    locomo = load_locomo(FIXTURE)
    result = run_locomo(locomo, _options(variants=("default",), conversations=("mini-1",)), HashingEmbedder())
    with scratch.open_copy(result.scratch.databases["mini-1"], HashingEmbedder()) as service:
        outcome = service.search.query("Which volcano got climbed?", 10, record=False)
    # q2's evidence is s1 and s3: its NDCG@10 follows from where the product ranks them.
    ranks = [r.rank for r in outcome.results if r.name in {"mini-1 session 1", "mini-1 session 3"}]
    expected = sum(1 / math.log2(r + 1) for r in ranks) / (1 + SECOND)
    assert result.scores["default"][2].ndcg == pytest.approx(expected)


def test_command_line_json_without_a_model_runs_fts_only(capsys):
    from limbic.core.cli.main import main

    assert main(["eval", "locomo", str(FIXTURE), "--variant", "bm25", "--variant", "default", "--json"]) == 0
    captured = capsys.readouterr()
    assert "FTS-only" in captured.err
    document = json.loads(captured.out)
    assert document["model"] == "none" and document["search_modes"] == {"fts_only": 6}
    assert document["questions"] == 6 and len(document["skipped_questions"]) == 1
    assert list(document["variants"]) == ["bm25", "default"]
    assert document["variants"]["bm25"]["R@1"] == pytest.approx(4 / 6, abs=1e-4)
    assert document["variants"]["bm25"]["categories"]["temporal"]["NDCG@10"] == pytest.approx(NDCG["temporal"], abs=1e-4)
    assert document["timings"]["databases_built"] == 2


def test_text_report_lists_variants_and_categories(capsys):
    from limbic.core.cli.main import main

    assert main(["eval", "locomo", str(FIXTURE), "--questions", "2", "--conversations", "mini-1"]) == 0
    out = capsys.readouterr().out
    assert "2 questions in 1 conversation(s); 0 skipped" in out
    for name in ("default", "knn", "bm25", "rrf", "seed", "single-hop (1)", "temporal (1)"):
        assert name in out


def _access_total(service: MemoryService) -> int:
    return service.database.read().execute("SELECT COALESCE(SUM(access_count), 0) FROM entity_access").fetchone()[0]


def _search_events(service: MemoryService) -> int:
    return service.database.read().execute("SELECT count(*) FROM search_events").fetchone()[0]


@pytest.mark.parametrize("embedder", [None, HashingEmbedder()], ids=["fts-only", "hashing"])
def test_replay_records_usage_only_when_asked(tmp_path, embedder):
    conversation = load_locomo(FIXTURE).conversations[0]
    built = tmp_path / "mini-1.db"
    scratch.build_database(built, conversation, "session", embedder)
    asked = questions_to_ask(conversation, "session", None, [], [])
    totals = {}
    for replay in ("none", "impressions", "use"):
        options = _options(variants=("default",), replay=replay)
        scores = {"default": []}
        with scratch.open_copy(built, embedder) as service:
            ask_questions(service, asked, plan_passes(options.variants), options, scores, [], {})
            totals[replay] = (_access_total(service), _search_events(service))
        assert len(scores["default"]) == len(asked) == 5
    assert totals["none"] == (0, 0)
    assert totals["impressions"][1] == totals["use"][1] == 5  # every replayed search is logged
    # `use` adds one access per evidence entity of every question to whatever searches record.
    assert totals["use"][0] == totals["impressions"][0] + sum(len(a.relevant) for a in asked)


def _digest(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def test_cache_is_reused_never_written_and_invalidated_by_a_changed_file(tmp_path):
    embedder = HashingEmbedder()
    first = run_locomo(load_locomo(FIXTURE), _options(variants=("bm25",)), embedder)
    assert first.scratch.built == 2 and first.scratch.directory.is_relative_to(scratch.paths.cache_dir())
    files = _digest(first.scratch.directory)
    assert len(files) == 2 and all(name.endswith(".db") for name in files)  # no -wal, -shm or partial files

    again = run_locomo(load_locomo(FIXTURE), _options(replay="use"), embedder)
    assert again.scratch.built == 0 and again.scratch.key == first.scratch.key
    assert _digest(first.scratch.directory) == files  # replays ran on copies
    assert summarize(again.scores["bm25"]).recall == summarize(first.scores["bm25"]).recall

    assert run_locomo(load_locomo(FIXTURE), _options(variants=("bm25",), rebuild=True), embedder).scratch.built == 2

    changed = tmp_path / "changed.json"
    changed.write_text(FIXTURE.read_text(encoding="utf-8").replace("Our ferret", "My ferret"), encoding="utf-8")
    other = run_locomo(load_locomo(changed), _options(variants=("bm25",)), embedder)
    assert other.scratch.built == 2 and other.scratch.key != first.scratch.key
    assert run_locomo(load_locomo(FIXTURE), _options(variants=("bm25",), granularity="turn"),
                      embedder).scratch.key not in {first.scratch.key, other.scratch.key}


def test_built_database_holds_the_mapping(tmp_path):
    conversation = load_locomo(FIXTURE).conversations[1]
    path = tmp_path / "mini-2.db"
    scratch.build_database(path, conversation, "turn", HashingEmbedder())
    service = MemoryService(open_database(path), HashingEmbedder())
    try:
        graph = service.entities.read_graph()
        assert [(e.name, e.entity_type) for e in graph.entities] == [("mini-2 D1:1", "turn"), ("mini-2 D1:2", "turn")]
        assert [o.content for o in graph.entities[1].observations] == ["Dev: Check under that sofa."]
        assert service.entities.stats().embedded_entities == 2
        assert len(service.history.changes_since(0)) == 1  # one transaction of data (its vectors land in their own)
    finally:
        service.close()


@pytest.mark.parametrize(("changes", "message"), [
    ({"limit": 5}, "--limit must be between 10 and 1000"),
    ({"variants": ("best",)}, "unknown variant best"),
    ({"replay": "twice"}, "unknown replay 'twice'"),
    ({"granularity": "word"}, "unknown granularity 'word'"),
    ({"questions": 0}, "--questions must be at least 1"),
])
def test_bad_options_are_refused(changes, message):
    with pytest.raises(ValidationError, match=message):
        _options(**changes)


def test_text_the_product_refuses_names_its_conversation(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(FIXTURE.read_text(encoding="utf-8").replace("Our ferret", "Our \\u0001ferret"), encoding="utf-8")
    with pytest.raises(LocomoFormatError, match="conversation mini-2: observation contains control characters"):
        run_locomo(load_locomo(bad), _options(variants=("bm25",)), None)
    assert not any(scratch.cache_directory(scratch.cache_key(load_locomo(bad).sha256, "session", None)).glob("*mini-2*"))


def test_unknown_conversation_is_refused():
    with pytest.raises(ValidationError, match="unknown conversation conv-99; the file has mini-1, mini-2"):
        run_locomo(load_locomo(FIXTURE), _options(conversations=("conv-99",)), None)


@pytest.mark.parametrize("replay", ["none", "use"])
def test_the_questions_asked_of_postgresql_score_as_on_sqlite(replay):
    """``limbic --db postgresql://… eval locomo``: each conversation copied to a schema of its own on the server
    (dropped afterwards), the same figures for every variant, with and without replayed use."""
    from _pg import server_or_skip

    server = server_or_skip()
    import psycopg

    options = _options(replay=replay)
    on_file = run_locomo(load_locomo(FIXTURE), options, HashingEmbedder())
    on_server = run_locomo(load_locomo(FIXTURE), replace(options, server=server), HashingEmbedder())
    assert on_server.scores == on_file.scores  # every question's recall and NDCG, per variant
    with psycopg.connect(server) as conn:  # nothing is left on the server
        assert not conn.execute("SELECT 1 FROM pg_namespace WHERE nspname LIKE 'limbic_eval_%'").fetchall()
