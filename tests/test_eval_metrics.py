"""Recall@K and NDCG@K by hand and against scikit-learn; the LoCoMo loader, mapping and evidence ids."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from limbic.core.eval.locomo import (
    LocomoFormatError,
    load_locomo,
    memory_entities,
    parse_session_time,
    resolve_evidence,
    turn_holders,
)
from limbic.core.eval.metrics import ndcg_at_k, recall_at_k, score_question, summarize, summarize_by_category
from limbic.core.eval.runner import branch_ranking
from limbic.core.search.params import ScoringParams

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"


def test_recall_and_ndcg_by_hand():
    ranked = ["a", "b", "c", "d", "e", "f"]
    assert [recall_at_k(ranked, {"c"}, k) for k in (1, 2, 3, 10)] == [0.0, 0.0, 1.0, 1.0]
    assert recall_at_k(ranked, {"z"}, 10) == 0.0
    # one relevant entity at rank 3: DCG = 1/log2(4) = 0.5, IDCG = 1
    assert ndcg_at_k(ranked, {"c"}, 10) == pytest.approx(0.5)
    # relevant at ranks 1 and 3, two relevant: (1 + 0.5) / (1 + 1/log2(3))
    assert ndcg_at_k(ranked, {"a", "c"}, 10) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    # a relevant entity that is not retrieved still counts in the ideal: 1 / (1 + 1/log2 3)
    assert ndcg_at_k(ranked, {"a", "z"}, 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    # beyond K nothing counts
    assert ndcg_at_k(ranked, {"f"}, 5) == 0.0
    assert ndcg_at_k(ranked, set(), 10) == 0.0


def test_ndcg_matches_scikit_learn():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = 30
        names = [f"e{i}" for i in range(n)]
        relevant = {names[i] for i in rng.choice(n, size=int(rng.integers(1, 6)), replace=False)}
        order = rng.permutation(n)
        ranked = [names[i] for i in order[:20]]  # 20 retrieved ≥ K, the rest ranked below them
        y_true = np.array([[1.0 if name in relevant else 0.0 for name in names]])
        y_score = np.zeros((1, n))
        for position, index in enumerate(order[:20]):
            y_score[0, index] = 100 - position
        y_score[0, order[20:]] = -1 - np.arange(n - 20)
        assert ndcg_at_k(ranked, relevant, 10) == pytest.approx(ndcg_score(y_true, y_score, k=10), abs=1e-12)


def test_summaries_average_questions_and_split_categories():
    scores = [score_question(["a", "b"], {"a"}, "single-hop"), score_question(["a", "b"], {"b"}, "temporal"),
              score_question(["a", "b"], {"z"}, "temporal")]
    total = summarize(scores)
    assert total.questions == 3
    assert total.recall == {1: pytest.approx(1 / 3), 5: pytest.approx(2 / 3), 10: pytest.approx(2 / 3)}
    assert total.ndcg == pytest.approx((1 + 1 / math.log2(3)) / 3)
    by = summarize_by_category(scores)
    assert list(by) == ["single-hop", "temporal"]
    assert by["temporal"].recall[1] == 0.0 and by["temporal"].recall[5] == 0.5
    assert summarize([]).questions == 0


def test_branch_rankings_of_a_candidate_set():
    from _scoring_helpers import candidate_set

    cs = candidate_set([
        {"name": "a", "distance": 0.5, "knn_rank": 2, "fts_rank": 1},
        {"name": "b", "distance": None, "knn_rank": 0, "fts_rank": 2},
        {"name": "c", "distance": 0.2, "knn_rank": 1, "fts_rank": 0},
        {"name": "d", "distance": None, "knn_rank": 0, "fts_rank": 3},
    ])
    params = ScoringParams(rrf_k=60)
    assert branch_ranking("knn", cs, params, 10) == ["c", "a"]
    assert branch_ranking("bm25", cs, params, 10) == ["a", "b", "d"]
    # RRF with k = 60: a = 1/62 + 1/61, c = 1/61, b = 1/62, d = 1/63
    assert branch_ranking("rrf", cs, params, 10) == ["a", "c", "b", "d"]
    assert branch_ranking("rrf", cs, params, 2) == ["a", "c"]
    tie = candidate_set([{"name": "fts first", "distance": None, "knn_rank": 0, "fts_rank": 1},
                         {"name": "knn first", "distance": 0.3, "knn_rank": 1, "fts_rank": 0}])
    assert branch_ranking("rrf", tie, params, 10) == ["knn first", "fts first"]  # ties go to the KNN rank


def test_fixture_maps_to_session_and_turn_entities():
    locomo = load_locomo(FIXTURE)
    assert [c.sample_id for c in locomo.conversations] == ["mini-1", "mini-2"]
    first = locomo.conversations[0]
    assert [s.number for s in first.sessions] == [1, 2, 3, 4, 5]  # the empty session 6 is left out
    sessions = memory_entities(first, "session")
    assert [e.name for e in sessions] == [f"mini-1 session {n}" for n in range(1, 6)]
    assert {e.entity_type for e in sessions} == {"session"}
    march = datetime(2024, 3, 3, 9, 15, tzinfo=UTC).timestamp()
    assert sessions[0].created_at == march and sessions[0].observations[0].created_at == march
    assert [o.content for o in sessions[0].observations] == [
        "Ayla: I finally bought a marimba yesterday!",
        "Bram: Lovely! A marimba needs space. Is it loud? [shares a photo: a wooden marimba in a small room]",
        "Ayla: Quite loud. My neighbours complained about my practice.",
    ]
    turns = memory_entities(first, "turn")
    assert len(turns) == 12 and turns[1].name == "mini-1 D1:2" and turns[1].entity_type == "turn"
    assert turns[1].observations[0].content == sessions[0].observations[1].content
    assert turns[3].created_at == datetime(2024, 4, 17, 16, 40, tzinfo=UTC).timestamp()
    assert turn_holders(first, "session")["D3:2"] == "mini-1 session 3"
    assert turn_holders(first, "turn")["D3:2"] == "mini-1 D3:2"


def test_session_times_are_read_as_utc():
    assert parse_session_time("1:56 pm on 8 May, 2023", "x") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()
    assert parse_session_time("12:05 am on 1 January, 2020", "x") == datetime(2020, 1, 1, 0, 5, tzinfo=UTC).timestamp()
    with pytest.raises(LocomoFormatError, match="conv-9, session_2_date_time: cannot read the date '8 May 2023'"):
        parse_session_time("8 May 2023", "conv-9, session_2_date_time")


def test_evidence_ids_resolve_or_are_reported():
    holders = {"D1:3": "s1", "D8:6": "s8", "D9:17": "s9"}
    assert resolve_evidence(["D1:3"], holders) == (frozenset({"s1"}), ())
    assert resolve_evidence(["D8:6; D9:17"], holders) == (frozenset({"s8", "s9"}), ())
    assert resolve_evidence(["(D1:3)", "D", "D:11:26", "D4:4"], holders) == (
        frozenset({"s1"}), ("D", "D:11:26", "D4:4"))
    assert resolve_evidence([], holders) == (frozenset(), ("",))


def _write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return path


def _valid() -> list[dict]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def _broken(change) -> list[dict]:
    document = _valid()
    change(document)
    return document


@pytest.mark.parametrize(("document", "message"), [
    ("{not json", "is not a JSON file"),
    ([], "expected a non-empty list of LoCoMo conversations"),
    (_broken(lambda d: d[0].pop("conversation")), "conversation mini-1: 'conversation' must be an object"),
    (_broken(lambda d: d[1].pop("qa")), "conversation mini-2: 'qa' must be a list"),
    (_broken(lambda d: d[0]["conversation"]["session_2"][1].pop("text")),
     "conversation mini-1, session_2, turn 1: 'text' must be non-empty text"),
    (_broken(lambda d: d[0]["conversation"].update(session_3_date_time="yesterday")),
     "conversation mini-1, session_3_date_time: cannot read the date 'yesterday'"),
    (_broken(lambda d: d[0]["conversation"].pop("session_1_date_time")),
     "conversation mini-1, session_1_date_time: the date must be text"),
    (_broken(lambda d: d[1]["qa"][0].update(category="3")), "conversation mini-2, question 0: 'category' must be an integer"),
    (_broken(lambda d: d[0]["qa"][2].update(evidence="D1:1")), "conversation mini-1, question 2: 'evidence' must be a list"),
    (_broken(lambda d: d[0]["qa"][3].pop("question")), "conversation mini-1, question 3: 'question' must be non-empty"),
    (_broken(lambda d: d[1]["conversation"]["session_1"].append(dict(d[1]["conversation"]["session_1"][0]))),
     "conversation mini-2, session_1: turn id 'D1:1' repeats"),
    (_broken(lambda d: d[1].update(sample_id="mini-1")), "conversation ids repeat: mini-1"),
])
def test_malformed_files_name_the_record(tmp_path, document, message):
    with pytest.raises(LocomoFormatError) as caught:
        load_locomo(_write(tmp_path, document))
    assert message in str(caught.value)


def test_malformed_file_is_one_line_on_the_command_line(tmp_path, capsys):
    from limbic.core.cli.main import main

    path = _write(tmp_path, _broken(lambda d: d[0]["conversation"]["session_2"][1].pop("text")))
    assert main(["eval", "locomo", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("limbic: error: conversation mini-1, session_2, turn 1: 'text' must be non-empty text")
    assert "Traceback" not in err and err.count("\n") == 1
