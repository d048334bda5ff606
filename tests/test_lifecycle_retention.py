"""Forget and promote: Mnemex ``scoring_algorithm.md``'s tables and worked examples A–D, the review's candidates
(uses are accesses, never impressions), pinning, and ``limbic review`` / ``limbic gc``."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest
from _scoring_helpers import DAY

from limbic.core.lifecycle import retention as r
from limbic.core.lifecycle.retention import RetentionParams
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.models import RelationInput as R
from limbic.core.service import review

MNEMEX = RetentionParams(half_life_hours=math.log(2) / (2.673e-6 * 3600))  # λ = 2.673e-6 per second (3 days)


def test_the_decay_table():
    # The table's rows at 0 h, 3 days (the half-life) and 30 days follow from its formula e^(−λΔt) with the 3-day
    # half-life; its 12 h, 1 day, 7 and 14 days rows (0.917, 0.841, 0.210, 0.044) do not — the formula gives
    # 2^(−Δt/3 days) = 0.891, 0.794, 0.199, 0.039 there, as the worked examples A–D (below) do.
    hours = np.array([0, 72, 720], dtype=float)
    assert np.round(r.fading(hours, MNEMEX), 3).tolist() == [1.0, 0.5, 0.001]
    hours = np.array([12, 24, 168, 336], dtype=float)
    assert np.round(r.fading(hours, MNEMEX), 3).tolist() == [0.891, 0.794, 0.199, 0.039]


def test_the_use_count_table():
    # n^0.6 for 1, 5, 10 as the table says; for 50 it is 10.46 (the table's 11.45 is not 50^0.6)
    assert np.round(np.array([1, 5, 10, 50], dtype=float) ** MNEMEX.beta, 2).tolist() == [1.0, 2.63, 3.98, 10.46]


@pytest.mark.parametrize(("uses", "hours", "strength", "expected", "decision"), [
    (1, 6, 1.0, 0.944, "keep"),  # A: low use, recent
    (6, 48, 1.0, 1.84, "promote"),  # B: frequent use, mildly stale
    (3, 120, 1.5, 0.91, "promote"),  # C: high strength, older
    (1, 504, 1.0, 0.0078, "forget"),  # D: rarely used, very old
], ids=["A", "B", "C", "D"])
def test_the_worked_examples(uses, hours, strength, expected, decision):
    score = r.score(np.array([uses]), np.array([hours]), np.array([strength]), MNEMEX)
    assert score[0] == pytest.approx(expected, rel=0.005)
    assert r.decide(score, np.array([uses]), np.array([0]), MNEMEX)[0][0] == decision


def test_the_usage_rule_and_the_time_until_forgotten():
    # scenario 2: five uses within 14 days promote whatever the score
    assert r.decide(np.array([0.3]), np.array([5]), np.array([5]), MNEMEX)[0] == ("promote", "used 5 times in the last 14 days")
    until = r.hours_until_forgotten(np.array([1, 1, 1]), np.array([0.0, 600.0, 0.0]), np.array([1.0, 1.0, 2.0]),
                                    RetentionParams(half_life_hours=MNEMEX.half_life_hours, tau_forget=0.05))
    assert until[0] == pytest.approx(math.log(20) / (2.673e-6 * 3600), rel=1e-3)  # e^(−λt) = 0.05: t = ln 20 / λ
    assert until[1] == 0.0 and until[2] == pytest.approx(math.log(40) / (2.673e-6 * 3600), rel=1e-3)
    forever = r.hours_until_forgotten(np.array([1]), np.array([0.0]), np.array([1.0]), RetentionParams(tau_forget=0.0))
    assert math.isinf(forever[0])


def test_review_candidates_count_uses_not_impressions(service):
    old = time.time() - 60 * DAY
    service.create_entities([E("stale", "Note", (O("x"),), created_at=old), E("fresh", "Note", (O("y"),)),
                             E("busy", "Note", (O("z"),), created_at=old)])
    for _ in range(5):
        service.mark_used(["busy"])
    for _ in range(20):
        service.search("x", record=True)  # impressions only
    service.wait_for_signals()
    service.save_retention_params(RetentionParams(grace_days=0, keep_used_days=0))
    scores = {x.name: x for x in service.retention()}
    assert scores["stale"].decision == "forget" and scores["stale"].uses == 1
    assert scores["fresh"].decision == "keep"
    assert scores["busy"].decision == "promote" and scores["busy"].uses == 6 and scores["busy"].strength == 1.5
    sections = {s.kind: s for s in review.review(service, ["forget", "promote"])}
    assert [d.subjects for d in sections["forget"].items] == [("stale",)]
    assert sections["forget"].items[0].evidence["daysUntilForgotten"] == 0
    edit = review.decide(service, sections["promote"].items[0].key, "pin")
    assert service.get_entity("busy").entity.pinned_at is not None
    assert review.review(service, ["promote"])[0].total == 0
    edit.revert(service)
    assert service.get_entity("busy").entity.pinned_at is None


def test_gc_dry_run_changes_nothing_and_archive_archives_exactly_the_candidates(memory_address, capsys):
    from limbic.core.cli.main import main
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.service import MemoryService

    path = memory_address
    service = MemoryService.open(path, embedder=HashingEmbedder())
    old = time.time() - 90 * DAY
    service.create_entities([E(f"old {i}", "Note", (O(f"fact {i}"),), created_at=old) for i in range(3)]
                            + [E("new", "Note", (O("recent fact"),))])
    service.set_pinned(["old 2"], True)
    service.save_retention_params(RetentionParams(grace_days=0))
    before = service.last_change_id()
    service.close()
    assert main(["--db", path, "gc", "--archive", "--dry-run", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dryRun"] and [c["name"] for c in report["forget"]] == ["old 0", "old 1"]
    service = MemoryService.open(path, embedder=HashingEmbedder())
    assert service.last_change_id() == before and {e.status for e in service.read_graph().entities} == {"active"}
    service.close()
    assert main(["--db", path, "gc", "--archive"]) == 0
    assert "2 forget candidates were archived" in capsys.readouterr().out
    service = MemoryService.open(path, embedder=HashingEmbedder())
    assert {e.name: e.status for e in service.read_graph().entities} == {
        "old 0": "archived", "old 1": "archived", "old 2": "active", "new": "active"}
    service.close()
    assert main(["--db", path, "review", "--json", "--set", "tau_forget=0.2", "--set", "grace_days=30"]) == 0
    kinds = {s["kind"]: s for s in json.loads(capsys.readouterr().out)["sections"]}
    assert kinds["forget"]["total"] == 0 and "contradiction" in kinds


def test_forget_proposals_skip_new_used_pinned_protected_and_what_they_hold(service):
    old = time.time() - 90 * DAY
    service.create_entities([
        E("Stale note", "Note", (O("a note nobody reads"),), created_at=old),
        E("Used note", "Note", (O("read lately"),), created_at=old),
        E("Pinned note", "Note", (O("kept for good"),), created_at=old),
        E("Sofia", "Person", (O("Lives in Lisbon"), O("Surfs in Ericeira on Saturdays")), created_at=old),
        E("Prefers tabs", "preference", (O("tabs over spaces"),), created_at=old),
        E("Lisbon", "Place", (O("capital of Portugal"),), created_at=old),
        E("Ericeira", "Place", (O("a surf town"),), created_at=old),
        E("Helper", "Tool", (O("used with the used note"),), created_at=old)])
    service.create_relations([R("Sofia", "Lisbon", "lives_in"), R("Helper", "Used note", "supports")])
    service.record_access(["Used note"], at=time.time() - 20 * DAY)
    service.set_pinned(["Pinned note"], True)
    # everything was written a moment ago: within the grace period, nothing is proposed
    now = {x.name: x for x in service.retention()}
    assert all(x.decision != "forget" for x in now.values())
    assert now["Stale note"].reason.startswith("new: imported less than a minute ago") and "kept at least 30 days" in now["Stale note"].reason
    # 40 days on, with nobody using the memory meanwhile (its clock stopped at its last activity)
    later = {x.name: x for x in service.retention(now=time.time() + 40 * DAY)}
    assert {n for n, x in later.items() if x.decision == "forget"} == {"Stale note"}
    assert later["Stale note"].reason == "never used since it was imported 1 month ago (written 4 months ago)"
    assert later["Used note"].reason == "used 2 weeks ago"
    assert later["Pinned note"].reason == "pinned"
    assert later["Sofia"].reason == "a Person: never proposed for forgetting"
    assert later["Prefers tabs"].reason == "a preference: never proposed for forgetting"
    assert later["Lisbon"].reason == "related to Sofia (a Person)"
    assert later["Ericeira"].reason == "named by Sofia (a Person)"
    assert later["Helper"].reason == "related to Used note, used 2 weeks ago"
    # the protected types are a setting
    params = RetentionParams(protected_types=("preference",))
    assert {n for n, x in zip(later, service.retention(params, now=time.time() + 40 * DAY), strict=True)
            if x.decision == "forget"} >= {"Stale note"}
    changed = {x.name: x for x in service.retention(params, now=time.time() + 40 * DAY)}
    assert changed["Sofia"].decision == "forget" and changed["Lisbon"].decision == "forget"


def test_the_sample_memory_keeps_what_a_person_would(tmp_path):
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.io.sample import seed_sample_graph
    from limbic.core.service import MemoryService
    from limbic.core.service import retention as retention_review

    service = MemoryService.open(str(tmp_path / "sample.db"), embedder=HashingEmbedder())
    try:
        seed_sample_graph(service)
        types = {e.name: e.entity_type for e in service.read_graph().entities}
        assert not retention_review.forget_candidates(service.retention())  # imported a moment ago
        later = service.retention(now=time.time() + 31 * DAY)  # past the grace period, nobody used it meanwhile
        proposed = {x.name: x for x in retention_review.forget_candidates(later)}
        assert 0 < len(proposed) <= 0.15 * len(types)
        # the employer, the home city, what Sofia lives by: never proposed
        assert not {"Tidewater Labs", "Lisbon", "Sofia Almeida"} & set(proposed)
        assert not [n for n in proposed if types[n].lower() in ("preference", "person", "decision")]
        assert all(x.reason.startswith(("never used since it was imported", "not used for")) for x in proposed.values())
        assert all("e-" not in x.reason and "score" not in x.reason for x in later)
    finally:
        service.close()


def test_an_import_is_new_even_under_the_id_of_an_entity_deleted_long_ago(service):
    old = time.time() - 400 * DAY
    service.create_entities([E("first", "Note", (O("a"),), created_at=old)])
    later = {x.name: x for x in service.retention(now=time.time() + 40 * DAY)}
    assert later["first"].decision == "forget"
    first_id = later["first"].entity_id
    with service.database.write("cli", "backdate") as txn:  # as if "first" had been written 400 days ago
        txn.conn.execute("UPDATE changes SET at = ?", (old,))
    service.delete_entities(["first"])
    service.create_entities([E("second", "Note", (O("b"),), created_at=old)])  # takes the free id again
    [again] = service.retention(now=time.time() + 10 * DAY)
    assert again.entity_id == first_id and again.reason.startswith("new: imported")
