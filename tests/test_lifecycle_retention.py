"""Forget and promote: Mnemex ``scoring_algorithm.md``'s tables and worked examples A–D, the review's candidates
(uses are accesses, never impressions; each memory's time its own), what is kept and why (open work,
configuration, what a memory holds, standing rules, goals still ahead, what still runs, the tools something current
uses, the requirements a policy carries), pinning, the forecast of a later date (``limbic gc --at``, the ``at`` of
``consolidation_report``), and ``limbic review`` / ``limbic gc`` (its dry run lists what the real run archives)."""

from __future__ import annotations

import json
import math
import shutil
import time
from datetime import UTC, datetime

import numpy as np
import pytest
from _lifecycle_helpers import DAY, aged_sample, written_ago
from _mcp_helpers import outcome, portal_client

from limbic.core.errors import ValidationError
from limbic.core.lifecycle import keeping
from limbic.core.lifecycle import retention as r
from limbic.core.lifecycle.expiry import parse_moment
from limbic.core.lifecycle.retention import RetentionParams
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.models import RelationInput as R
from limbic.core.search.decay import Decay
from limbic.core.service import forgetting as retention_review
from limbic.core.service import review

MNEMEX = RetentionParams(half_life_hours=math.log(2) / (2.673e-6 * 3600), decay=Decay("exponential"))  # e^(−λΔt), λ = 2.673e-6/s


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
                                    RetentionParams(half_life_hours=MNEMEX.half_life_hours, tau_forget=0.05,
                                                    decay=Decay("exponential")))
    assert until[0] == pytest.approx(math.log(20) / (2.673e-6 * 3600), rel=1e-3)  # e^(−λt) = 0.05: t = ln 20 / λ
    assert until[1] == 0.0 and until[2] == pytest.approx(math.log(40) / (2.673e-6 * 3600), rel=1e-3)
    forever = r.hours_until_forgotten(np.array([1]), np.array([0.0]), np.array([1.0]), RetentionParams(tau_forget=0.0))
    assert math.isinf(forever[0])


def test_the_default_decay_forgets_one_write_after_seven_weeks_and_more_held_later():
    # the power law, Mnemex's default model: (1 + Δt/t0)^(−1.1), half-life 3 days; one write, never used again,
    # falls below τ_forget 0.05 after 48.7 days — past the 30-day grace, so no day of writes ends up on one date
    params = RetentionParams()
    thin, rich = r.hours_until_forgotten(np.array([1, 1]), np.array([0.0, 0.0]), np.array([1.0, 1.5]), params) / 24
    assert thin == pytest.approx(48.66, abs=0.05) and rich == pytest.approx(71.86, abs=0.05)
    assert r.strength(np.array([1.0, 1.0, 1.9]), np.array([0, 3, 5]), np.array([2.0, 0, 0]), params).tolist() == \
        pytest.approx([1.2, 1.3, 2.0])


def test_review_candidates_count_uses_not_impressions(service):
    old = time.time() - 60 * DAY
    service.entities.create_entities([E("stale", "Note", (O("x"),), created_at=old), E("busy", "Note", (O("z"),), created_at=old)])
    written_ago(service, 60)
    service.entities.create_entities([E("fresh", "Note", (O("y"),))])
    for _ in range(5):
        service.usage.mark_used(["busy"])
    for _ in range(20):
        service.search.query("x", record=True)  # impressions only
    service.usage.wait_for_signals()
    service.lifecycle.save_retention_params(RetentionParams(grace_days=0, keep_used_days=0))
    scores = {x.name: x for x in service.lifecycle.retention()}
    assert scores["stale"].decision == "forget" and scores["stale"].uses == 1
    assert scores["fresh"].decision == "keep"
    assert scores["busy"].decision == "promote" and scores["busy"].uses == 6 and scores["busy"].strength == 1.5
    sections = {s.kind: s for s in review.review(service, ["forget", "promote"])}
    assert [d.subjects for d in sections["forget"].items] == [("stale",)]
    assert sections["forget"].items[0].evidence["daysUntilForgotten"] == 0
    edit = review.decide(service, sections["promote"].items[0].key, "pin")
    assert service.entities.get_entity("busy").entity.pinned_at is not None
    assert review.review(service, ["promote"])[0].total == 0
    edit.revert(service)
    assert service.entities.get_entity("busy").entity.pinned_at is None


def test_a_report_reads_the_retention_review_once_and_a_write_after_it_is_seen(service):
    """Forget and promote share one review inside a report; outside it (and in the next report) it is read afresh."""
    old = time.time() - 60 * DAY
    service.entities.create_entities([E("stale", "Note", (O("x"),), created_at=old), E("busy", "Note", (O("z"),), created_at=old)])
    written_ago(service, 60)
    for _ in range(5):
        service.usage.mark_used(["busy"])
    service.usage.wait_for_signals()
    service.lifecycle.save_retention_params(RetentionParams(grace_days=0, keep_used_days=0))
    params, now = service.lifecycle.retention_params(), time.time()
    with retention_review.shared_reviews():
        first = retention_review.review(service.database, params, now)
        again = retention_review.review(service.database, params, now)
        assert again == first and again is not first  # the same review, in a list of its own
        assert [r.name for r in retention_review.review(service.database, params, now + DAY)] == ["stale", "busy"]
    sections = {s.kind: s for s in review.review(service, ["forget", "promote"])}
    assert [d.subjects for d in sections["forget"].items] == [("stale",)]
    assert [d.subjects for d in sections["promote"].items] == [("busy",)]
    service.entities.delete_entities(["stale"])
    assert [r.name for r in retention_review.review(service.database, params, now)] == ["busy"]
    assert review.review(service, ["forget"])[0].total == 0


def test_gc_dry_run_changes_nothing_and_archive_archives_exactly_the_candidates(memory_address, capsys):
    from limbic.core.cli.main import main
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.service import MemoryService

    path = memory_address
    service = MemoryService.open(path, embedder=HashingEmbedder())
    old = time.time() - 90 * DAY
    service.entities.create_entities([E(f"old {i}", "Note", (O(f"fact {i}"),), created_at=old) for i in range(3)])
    written_ago(service, 90)
    service.entities.create_entities([E("new", "Note", (O("recent fact"),))])
    service.lifecycle.set_pinned(["old 2"], True)
    service.lifecycle.save_retention_params(RetentionParams(grace_days=0))
    before = service.history.last_change_id()
    service.close()
    assert main(["--db", path, "gc", "--archive", "--dry-run", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dryRun"] and [c["name"] for c in report["forget"]] == ["old 0", "old 1"]
    service = MemoryService.open(path, embedder=HashingEmbedder())
    assert service.history.last_change_id() == before and {e.status for e in service.entities.read_graph().entities} == {"active"}
    service.close()
    assert main(["--db", path, "gc", "--archive"]) == 0
    assert "2 forget candidates were archived" in capsys.readouterr().out
    service = MemoryService.open(path, embedder=HashingEmbedder())
    assert {e.name: e.status for e in service.entities.read_graph().entities} == {
        "old 0": "archived", "old 1": "archived", "old 2": "active", "new": "active"}
    service.close()
    assert main(["--db", path, "review", "--json", "--set", "tau_forget=0.2", "--set", "grace_days=30"]) == 0
    kinds = {s["kind"]: s for s in json.loads(capsys.readouterr().out)["sections"]}
    assert kinds["forget"]["total"] == 0 and "contradiction" in kinds


def test_the_dry_run_and_the_real_run_archive_the_same_list(tmp_path, capsys):
    # the sample memory 100 days after it was loaded, nobody having used it since, and an observation that expired
    # meanwhile: the real run sweeps it out of the indexes first (a logged write) — that moves nothing
    from limbic.core.cli.main import main
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.service import MemoryService

    first = tmp_path / "first.db"
    service = MemoryService.open(str(first), embedder=HashingEmbedder())
    aged_sample(service, 100)
    since = service.history.last_change_id()
    service.entities.add_observations([("Sentry", [O("quota raised for the launch week", expires_at=time.time() - 90 * DAY)])])
    written_ago(service, 95, since)
    service.close()
    second = tmp_path / "second.db"
    shutil.copyfile(first, second)
    assert main(["--db", str(first), "gc", "--archive", "--dry-run", "--json"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert main(["--db", str(second), "gc", "--archive", "--json"]) == 0
    real = json.loads(capsys.readouterr().out)
    assert real["swept"] == ["Sentry"] and dry["swept"] == ["Sentry"] and real["decision"] is not None
    assert len(dry["forget"]) >= 5
    assert [c["name"] for c in real["forget"]] == [c["name"] for c in dry["forget"]]
    service = MemoryService.open(str(second), embedder=HashingEmbedder())
    try:
        assert sorted(e.name for e in service.entities.read_graph().entities if e.status == "archived") == sorted(
            {c["name"] for c in real["forget"]} | {"Legacy ETL", "Apache Airflow", "Legacy ETL Repository Layout",
                                                    "Incident: Dashboard Down 2025-08-02"})  # archived in the sample
    finally:
        service.close()


def test_a_sweep_and_other_writes_move_no_memorys_time(service):
    aged_sample(service, 100)
    since = service.history.last_change_id()
    service.entities.add_observations([("Sentry", [O("quota raised for the launch week", expires_at=time.time() - 90 * DAY)])])
    written_ago(service, 95, since)
    now = time.time()

    def proposed() -> list[tuple[str, str]]:
        return [(p.retention.name, p.retention.reason) for p in service.lifecycle.forecast(now, now=now).proposed]

    before = proposed()
    assert before and service.lifecycle.sweep_expired(origin="cli").entities == ("Sentry",)
    assert proposed() == before
    service.entities.create_entities([E(f"Other thing {i}", "Note", (O(f"an agent's note about another project, {i}"),))
                             for i in range(20)], origin="mcp:agent")
    service.entities.add_observations([("Other thing 3", [O("written by another agent later")])], origin="mcp:agent")
    assert proposed() == before


def test_open_work_configuration_and_what_a_memory_holds_are_read_from_it():
    kept = keeping.kept
    bug = kept("Bug", "Bug: consumer lag", "active", [("Lag grows after a rebalance", None),
                                                      ("Still happens on pod restarts; blocks the 2.0 release", "event")])
    assert bug.kind == keeping.OPEN_WORK and bug.reason("Bug") == \
        "open work (a Bug): “Still happens on pod restarts; blocks the 2.0 release”"
    assert kept("Task", "Upgrade the database", "active", [("Needs a maintenance window", None)]).kind == keeping.OPEN_WORK
    assert kept("Feature", "Dark mode", "active", [("Status: In progress", None)]).kind == keeping.OPEN_WORK
    assert kept("Component", "Parser", "active", [("Status: open", None)]).kind == keeping.OPEN_WORK
    # done: by its status, or its latest state
    assert kept("Bug", "Bug: flaky test", "active", [("Fails once in 30 runs", None),
                                                     ("Root cause found; fixed with a fixed clock", "event")]) is None
    assert kept("Issue", "Login loop", "active", [("Status: Open", None), ("Status: RESOLVED (by fixing the cookie)",
                                                                           None)]) is None
    assert kept("Bug", "Bug: old", "completed", [("still happens", None)]) is None
    assert kept("Project", "Side project", "paused", [("Paused until winter", "event")]) is None
    # a project's events are about its parts: only its status says it is done
    assert kept("Project", "Dashboard", "active", [("Safari flicker fixed in release 1.4.2", "event")]).kind == \
        keeping.OPEN_WORK
    # configuration: type or name, or what it says
    for entity_type, name, text in [("Config", "Harbor settings", "batch size 500"),
                                    ("Inventory", "Home Lab Inventory", "pve-01 — a small server"),
                                    ("Tool", "Home lab hosts", "three machines"),
                                    ("Tool", "pve", "pve-01: 192.168.50.10"),
                                    ("Tool", "Redpanda", "brokers at redpanda-0.redpanda:9093"),
                                    ("Library", "client", "INGEST_BATCH_SIZE=500 in the deployment"),
                                    ("Place", "Falkenstein", "where the production cluster runs"),
                                    ("Concept", "SLO", "Harbor SLOs: 99.5% of readings within 5 minutes"),
                                    ("Dashboard", "Ingest Health", "lag per partition")]:
        found = kept(entity_type, name, "active", [(text, None)])
        assert found is not None and found.kind == keeping.CONFIGURATION, (entity_type, name, text)
    assert kept("Concept", "Parquet", "active", [("Partitioning used: buoy_id=…/date=…", None)]) is None
    assert kept("Bug", "Bug: staging", "completed", [("late rows go to a staging table in production", None)]) is None
    # what someone prefers or decided, held in another entity's observations
    assert kept("Tool", "Slack", "active", [("Tidewater's chat", None), ("Answers in two blocks a day", "preference")]
                ).kind == keeping.HOLDS
    assert kept("Tool", "Tailscale", "active", [("Never open a port on the router", "decision")]).kind == keeping.HOLDS
    assert kept("Library", "NumPy", "active", [("Used everywhere underneath", None)]) is None


def test_standing_rules_goals_and_what_still_runs_are_read_from_it():
    kept = keeping.kept
    # a standing rule: its type or name (split at case changes) says so, or an observation states one — done or not
    for entity_type, name, status, texts in [
        ("Project", "Data Retention Policy", "completed", ["Outcome: raw payloads 90 days, aggregates forever",
                                                          "Approved by Rui; implemented with retention policies"]),
        ("documentation_standard", "KB spec", "active", ["Primary KB: the memory server; weekly backup"]),
        ("canonical_document", "RelationTypes_Semantic_2025-11-08", "active", ["documents, implements, uses"]),
        ("canonical_document", "Memory_Operation_Checklist", "active", ["unique name, atomic observations"]),
        ("concept", "github_actions_pattern", "active", ["allowed_tools must be listed in CI — no approval there"]),
        ("Note", "Commits", "active", ["One task, one commit; never amend published commits"]),
        ("Bug", "Bug: migration deadlock", "completed", ["Cause: ALTER TABLE locks chunk by chunk",
                                                         "Fixed: run schema changes on hypertables with ingest paused"]),
        ("Note", "Gitmoji", "active", ["PowerShell strips emojis", "Solution: use Git Bash with printf"])]:
        found = kept(entity_type, name, status, [(t, None) for t in texts])
        assert found is not None and found.kind == keeping.RULE, (entity_type, name)
    assert kept("Note", "Commits", "active", [("never amend published commits", None)]).reason("Note") == \
        "a standing rule: “never amend published commits”"
    # not a rule: a failure's description, a code artefact, a rule word in passing, a rule since superseded
    assert kept("Bug", "Bug: leak", "completed", [("Cause: a new client per retry, never closed", None),
                                                 ("Fixed with one shared client per process", None)]) is None
    assert kept("Bug", "Bug: flaky", "completed", [("Fixed by setting run_key to the file name", None)]) is None
    assert kept("database_constraint", "chk_reps_or_time", "active",
                [("either reps or time is set, not both (one must be NULL)", None)]) is None
    assert kept("hosting_platform_issue", "SPA 404", "active", [("Resolved by adding a rewrite rule", None)]) is None
    assert kept("Library", "Python Standard Library", "active", [("ships with Python", None)]) is None
    assert kept("Library", "libkdepim", "active", [("You don't need it unless you cross-compile", None),
                                                   ("the parts that do not depend on Akonadi", None)]) is None
    assert kept("Note", "Release rule", "active", [("Always release on Tuesdays", None),
                                                   ("Superseded by continuous delivery", None)]) is None
    # the configuration of an agent's own tooling
    for entity_type in ("hook", "agent", "command", "skill"):
        assert kept(entity_type, "context-loader.sh", "active", [("reads the memory file", None)]).kind == \
            keeping.CONFIGURATION
    # a goal still ahead: one dated by its year until that year ends
    offsite = [("Team offsite in Sintra", None), ("Rui: Harbor v2 is the main 2026 goal", "event")]
    goal = kept("Meeting", "Offsite", "completed", offsite, year=2026)
    assert goal.kind == keeping.AHEAD and goal.until_year == 2026
    assert goal.reason("Meeting") == "a goal still ahead: “Rui: Harbor v2 is the main 2026 goal”"
    assert kept("Meeting", "Offsite", "completed", offsite, year=2027) is None
    assert kept("Note", "Ideas", "active", [("On the roadmap: offline mode", None)]).until_year is None
    assert kept("Library", "borg", "active", [("The main goal of Borg is efficient, secure backups", None)]) is None
    assert kept("react_component", "Volume.tsx", "active", [("individual goals for Squat (7)", None)]) is None
    # still in use: it runs, and nothing later says it was retired
    model = kept("Project", "Wave Forecast Model", "completed", [("Trained on the reanalysis", None), (
        "Shipped as a Dagster asset refreshed hourly; marked done", "event")])
    assert model.kind == keeping.IN_USE and model.reason("Project").startswith("still in use: “Shipped as a Dagster")
    assert kept("Project", "Old ETL", "completed", [("Runs nightly in Airflow", None),
                                                    ("Decommissioned in March", None)]) is None
    assert kept("Library", "SciPy", "active", [("Signal processing for wave spectra", None)]) is None
    assert keeping.is_resource("Dataset", "Copernicus Wave Reanalysis") and keeping.is_resource("Note", "Training corpus")
    assert not keeping.is_resource("Library", "xarray")


def test_tools_relations_of_use_requirements_and_rules_are_read_from_them():
    assert all(keeping.is_tool(t) for t in ("Library", "Tool", "development_tool", "claude-plugin", "Framework"))
    assert not any(keeping.is_tool(t) for t in ("Project", "react_component", "Dataset", "Meeting"))
    # which end a relation says is used: its target (uses, depends on, read with), its source (used by, used for)
    assert [keeping.used_end(t) for t in ("uses", "DEPENDS_ON", "read_with", "powered_by", "used_by", "used_for",
                                          "is used in")] == [1, 1, 1, 1, 0, 0, 0]
    assert {keeping.used_end(t) for t in ("replaced_by", "replaced_with", "migrated_from", "previously_used", "affects",
                                          "decided_by", "about")} == {None}
    assert keeping.says_dropped("Migrated from Click to Typer in March") and keeping.says_dropped("Polars instead of "
                                                                                                 "pandas")
    assert not keeping.says_dropped("Written with Typer; about 1,200 lines")
    # a need or a bound stated; not a task's "needs to", a failure's description or a code artefact's rule
    need = "Input from Olga: researchers need full resolution for at least 2 years"
    assert keeping.requirement("Meeting", [("Two-hour workshop", None), (need, None)]) == need
    assert keeping.requirement("Meeting", [("Raw payloads must go after 90 days", None)]) is not None
    assert keeping.requirement("Task", [("Needs to be moved to internal/cpu/", None)]) is None
    assert keeping.requirement("Bug", [("Cause: the job must hold a lock per chunk", None)]) is None
    assert keeping.requirement("database_constraint", [("one must be NULL", None)]) is None
    # a rule by its type or name, whatever it says
    assert keeping.is_rule("Project", "Data Retention Policy") and keeping.is_rule("canonical_document",
                                                                                   "RelationTypes_Semantic_2025-11-08")
    assert keeping.is_rule("documentation_standard", "KB spec")
    assert not keeping.is_rule("Library", "Python Standard Library") and not keeping.is_rule("Bug", "Bug: deadlock")


def test_a_tool_something_current_uses_and_a_requirement_a_policy_carries_are_kept(service):
    old = time.time() - 120 * DAY
    service.entities.create_entities([
        E("Ana", "Person", (O("runs field operations"),), created_at=old),
        E("Kelp CLI", "Project", (O("Field tool for registering buoys"), O("Output coloured with Rich"),
                                  O("Migrated from Click to Typer in March")), status="paused", created_at=old),
        E("Typer", "Tool", (O("CLI framework"),), created_at=old),
        E("Rich", "Library", (O("terminal colours"),), created_at=old),
        E("Click", "Library", (O("an older CLI framework"),), created_at=old),
        E("Old talk", "Talk", (O("a demo at a meetup"),), status="completed", created_at=old),
        E("marimo", "Library", (O("reactive notebooks"),), created_at=old),
        E("Scratch note", "Note", (O("tried a dataframe library once"),), created_at=old),
        E("Polars", "Library", (O("dataframes"),), created_at=old),
        E("Retention Policy", "Project", (O("raw payloads 90 days, full resolution 2 years"),), status="completed",
          created_at=old),
        E("Retention Workshop", "Meeting", (O("two-hour workshop"), O("Input from Olga: researchers need full "
                                                                       "resolution for at least 2 years")),
          status="completed", created_at=old),
        E("Kickoff", "Meeting", (O("held in Lisbon"),), status="completed", created_at=old),
        E("Planning", "Meeting", (O("researchers need more dashboards"),), status="completed", created_at=old),
        E("Bug X", "Note", (O("same words"),), created_at=old), E("Bug Y", "Note", (O("same words"),), created_at=old),
        E("Part X", "Note", (O("a part"),), created_at=old), E("Part Y", "Note", (O("a part"),), created_at=old)])
    service.relations.create_relations([
        R("Kelp CLI", "Ana", "used_by"), R("Kelp CLI", "Typer", "uses"), R("Old talk", "marimo", "uses"),
        R("Scratch note", "Polars", "uses"), R("Retention Workshop", "Retention Policy", "about"),
        R("Kickoff", "Retention Policy", "about"), R("Bug X", "Part X", "affects"), R("Part X", "Bug X", "affected_by"),
        R("Bug Y", "Part Y", "affects")])
    written_ago(service, 120)
    later = {x.name: x for x in service.lifecycle.retention()}
    # what a kept, unfinished project uses, by a relation or named in what it says (not what it left)
    assert later["Typer"].guard == "used by a current memory"
    assert later["Typer"].reason == "a Tool used by Kelp CLI (paused): “Kelp CLI uses Typer”"
    assert later["Rich"].reason == "a Library used by Kelp CLI (paused): “Output coloured with Rich”"
    # the requirement a policy in force carries, in a finished meeting; not a meeting without one, nor a need no
    # policy carries
    assert later["Retention Workshop"].guard == "holds a standing rule's requirement"
    assert later["Retention Workshop"].reason == "holds a requirement of Retention Policy (a standing rule): “Input " \
                                                 "from Olga: researchers need full resolution for at least 2 years”"
    assert {n for n, x in later.items() if x.decision == "forget"} >= {
        "Click", "marimo", "Old talk", "Polars", "Scratch note", "Kickoff", "Planning"}
    # a relation and its inverse between the same two are one tie: the same strength as one relation
    assert later["Bug X"].strength == later["Bug Y"].strength == pytest.approx(1.1)


def test_a_goal_keeps_its_memory_until_its_year_ends(service):
    year = datetime.now(UTC).year
    old = time.time() - 100 * DAY
    service.entities.create_entities([
        E("Offsite", "Meeting", (O("Team offsite in Sintra"), O(f"Harbor v2 is the main {year} goal")),
          status="completed", created_at=old),
        E("Kickoff", "Meeting", (O("Kickoff in Lisbon"), O(f"Harbor v1 is the main {year - 1} goal")),
          status="completed", created_at=old)])
    written_ago(service, 100)
    now = time.time()
    today = service.lifecycle.forecast(now, now=now)
    assert [p.retention.name for p in today.proposed] == ["Kickoff"]
    assert {x.name: x.reason for x in today.held} == {"Offsite": f"a goal still ahead: “Harbor v2 is the main {year} "
                                                                 "goal”"}
    ahead = {p.retention.name: p.due for p in service.lifecycle.forecast(now + 400 * DAY, now=now).proposed}
    assert ahead["Kickoff"] == now
    assert ahead["Offsite"] == pytest.approx(datetime(year + 1, 1, 1, tzinfo=UTC).timestamp(), abs=60)


def test_forget_proposals_skip_new_used_pinned_protected_and_what_they_hold(service):
    old = time.time() - 90 * DAY
    service.entities.create_entities([
        E("Stale note", "Note", (O("a note nobody reads"),), created_at=old),
        E("Used note", "Note", (O("read lately"),), created_at=old),
        E("Pinned note", "Note", (O("kept for good"),), created_at=old),
        E("Sofia", "Person", (O("Lives in Lisbon"), O("Surfs in Ericeira on Saturdays")), created_at=old),
        E("Prefers tabs", "preference", (O("tabs over spaces"),), created_at=old),
        E("Lisbon", "Place", (O("capital of Portugal"),), created_at=old),
        E("Ericeira", "Place", (O("a surf town"),), created_at=old),
        E("Helper", "Tool", (O("used with the used note"),), created_at=old),
        E("Bug: lag", "Bug", (O("lag grows after a rebalance"),), created_at=old),
        E("Prod config", "Config", (O("BATCH_SIZE=500"),), created_at=old),
        E("Linter", "Tool", (O("lints the Ingest service"),), created_at=old),
        E("Ingest service", "Project", (O("reads the buoys"),), created_at=old),
        E("Bug: old crash", "Bug", (O("crashed on start"), O("fixed in 1.2")), status="completed", created_at=old)])
    service.relations.create_relations([R("Sofia", "Lisbon", "lives_in"), R("Helper", "Used note", "supports"),
                              R("Bug: old crash", "Ingest service", "affects")])
    # written a moment ago: within the grace period, nothing is proposed
    now = {x.name: x for x in service.lifecycle.retention()}
    assert all(x.decision != "forget" for x in now.values())
    written_ago(service, 90)  # as if written 90 days ago, nobody having used anything since
    service.usage.record_access(["Used note"], at=time.time() - 20 * DAY)
    service.lifecycle.set_pinned(["Pinned note"], True)
    later = {x.name: x for x in service.lifecycle.retention()}
    assert {n for n, x in later.items() if x.decision == "forget"} == {"Stale note", "Bug: old crash"}
    assert later["Stale note"].reason == "never used since it was imported 2 months ago (written 2 months ago)" \
        or later["Stale note"].reason.startswith("never used since it was")
    assert later["Used note"].decision == "keep"
    assert later["Pinned note"].reason == "pinned"
    assert later["Sofia"].reason == "a Person: never proposed for forgetting"
    assert later["Prefers tabs"].reason == "a preference: never proposed for forgetting"
    assert later["Lisbon"].reason == "related to Sofia (a Person)"
    assert later["Ericeira"].reason == "named by Sofia (a Person)"
    assert later["Helper"].reason == "related to Used note, used 2 weeks ago"
    assert later["Bug: lag"].reason == "open work (a Bug): “status active, not marked done”"
    assert later["Prod config"].reason == "configuration: “Config”"
    assert later["Ingest service"].guard == keeping.OPEN_WORK
    assert later["Linter"].reason == "mentions Ingest service (open work)"
    assert later["Stale note"].guard == "" and later["Lisbon"].guard == "tied to a kept memory"
    # the protected types are a setting
    params = RetentionParams(protected_types=("preference",))
    changed = {x.name: x for x in service.lifecycle.retention(params)}
    assert changed["Sofia"].decision == "forget" and changed["Lisbon"].decision == "forget"


def test_the_sample_memory_keeps_what_a_person_would(service):
    aged_sample(service, 0)
    types = {e.name: e.entity_type for e in service.entities.read_graph().entities}
    now = time.time()
    assert not service.lifecycle.forecast(now, now=now).proposed  # loaded a moment ago
    assert not service.lifecycle.forecast(now + 30 * DAY, now=now).proposed  # nothing written 30 days ago fades
    later = service.lifecycle.forecast(now + 90 * DAY, now=now)
    proposed = {p.retention.name: p.retention for p in later.proposed}
    assert 5 <= len(proposed) <= 0.1 * len(types)
    # the employer, the home city, the person, what she prefers or decided; open work, configuration: never proposed
    assert not {"Tidewater Labs", "Lisbon", "Sofia Almeida", "Bug: Redpanda consumer lag after rebalance",
                "Harbor Production Config", "Home Lab Inventory", "Service level objective", "Slack", "ruff",
                "Hetzner Falkenstein"} & set(proposed)
    assert not [n for n in proposed if types[n].lower() in ("preference", "person", "decision")]
    assert all(x.reason.startswith(("never used since it was imported", "not used")) for x in proposed.values())
    held = {x.name: x.reason for x in later.held}
    # a policy in force, a fix that is a standing rule, a finished model still running and the dataset it was
    # trained on, the libraries and tools what is current uses, a finished workshop holding a requirement the policy
    # carries; not a fix whose rule lives in the code, nor a finished upgrade
    assert held["Data Retention Policy"] == "a standing rule: “Data Retention Policy”"
    assert held["Bug: Alembic migration 0042 deadlock"].startswith("a standing rule: “Fixed: run schema changes")
    assert held["Wave Forecast Model"].startswith("still in use: “Shipped as a Dagster asset refreshed hourly")
    assert held["Dataset: Copernicus Wave Reanalysis"] == "related to Wave Forecast Model (still in use)"
    assert held["scikit-learn"] == "a Library used by Wave Forecast Model (still in use): “Wave Forecast Model uses " \
                                   "scikit-learn”"
    assert held["Typer"] == "a Tool used by Kelp CLI (paused): “Kelp CLI uses Typer”"
    assert held["xarray"].startswith("a Library used by Dataset: Copernicus Wave Reanalysis (not done)")
    assert held["SciPy"].startswith("a Library used by Tidal harmonic analysis (not done)")
    assert held["Data Retention Workshop"] == "holds a requirement of Data Retention Policy (a standing rule): " \
                                              "“Input from Olga: researchers need full resolution for at least 2 years”"
    assert {"Bug: Ingest worker memory leak", "Python 3.12 Upgrade"} <= set(proposed)
    assert held["Task: Rotate MinIO access keys"] == "open work (a Task): “Done for ingest; Dagster jobs still use the " \
                                                     "old key”"
    assert held["Hetzner Falkenstein"].startswith("configuration: “Hetzner data centre park in Falkenstein")
    assert held["Slack"].startswith("holds a preference or decision: “Sofia mutes #random")
    # what is used most is kept by its own use for years; by then, what it is keeps it
    years = {x.name: x.reason for x in service.lifecycle.retention(now=now + 5 * 365 * DAY)}
    assert years["Bug: Redpanda consumer lag after rebalance"].startswith("open work (a Bug): “Next step:")
    assert years["Harbor Production Config"] == "configuration: “Config”"
    assert years["Home Lab Inventory"] == "configuration: “Inventory”"
    assert years["Service level objective"].startswith("configuration: “Harbor SLOs: 99.5%")
    # a library only a finished talk used, a tool only what was retired used: their use ends with it
    assert years["marimo"].startswith("not used") and years["Apache Airflow"].startswith("not used")
    assert all("e-" not in x.reason and "score" not in x.reason for x in service.lifecycle.retention(now=now + 90 * DAY))


def test_the_forecast_spreads_over_the_days_and_spares_what_was_written_today(service):
    aged_sample(service, 0)
    now = time.time()
    ahead = service.lifecycle.forecast(now + 90 * DAY, now=now)
    days = [int((p.due - now) // DAY) for p in ahead.proposed]
    assert len(days) >= 5 and all(30 <= d < 90 for d in days)
    assert max(days.count(d) for d in days) <= 0.2 * len(days)  # no cliff: each by its own decay and use
    # the forecast is the review at that date: the same candidates, each from the day its forecast says
    for day in (45, 60, 75, 90):
        then = {x.name for x in retention_review.forget_candidates(service.lifecycle.retention(now=now + day * DAY))}
        assert {p.retention.name for p in ahead.proposed if p.due <= now + day * DAY} == then
    # what an agent writes now: never proposed within 30 days, each later by what it holds
    service.entities.create_entities([E("Deploy note", "Note", (O("deploys go out on Tuesdays"),)),
                             E("Review habit", "Note", (O("reviews happen after lunch, two reviewers for anything "
                                                          "that touches the ingest path"), O("pairs on hard ones"))),
                             E("Build cache", "Concept", (O("the CI cache keys on the lock file"),))])
    written = {p.retention.name: p.due for p in service.lifecycle.forecast(now + 90 * DAY, now=now).proposed
               if p.retention.name in ("Deploy note", "Review habit", "Build cache")}
    assert not set(written) & {p.retention.name for p in service.lifecycle.forecast(now + 30 * DAY, now=now).proposed}
    assert len(written) == 3 and all(due - now > 45 * DAY for due in written.values())
    assert written["Review habit"] > written["Deploy note"]  # it holds more
    with pytest.raises(ValidationError):
        service.lifecycle.forecast(now - DAY, now=now)


def test_what_would_be_proposed_at_a_date_from_the_command_line_and_mcp(service, memory_address, capsys):
    from limbic.core.cli.main import main
    from limbic.core.mcp.server import build_server

    old = time.time() - 40 * DAY
    service.entities.create_entities([E("Old note", "Note", (O("an idea nobody came back to"),), created_at=old),
                             E("Open bug", "Bug", (O("crashes on start"),), created_at=old)])
    written_ago(service, 40)
    assert main(["--db", memory_address, "gc", "--at", "+30d", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in report["proposed"]] == ["Old note"]
    assert report["proposed"][0]["proposedFrom"] < report["at"] and report["proposed"][0]["reason"].startswith(
        "never used since it was")
    assert report["held"] == [{"name": "Open bug", "entityType": "Bug", "keptBy": "open work",
                               "reason": "open work (a Bug): “status active, not marked done”"}]
    assert main(["--db", memory_address, "gc", "--at", "+1d", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["proposed"] == []
    assert main(["--db", memory_address, "gc", "--at", "+30d"]) == 0
    printed = capsys.readouterr().out
    assert "1 forget candidates on " in printed and "Old note: never used since" in printed
    assert "1 kept although their score is low then: 1 open work" in printed
    for bad in (["--at", "yesterday"], ["--at", "2001-01-01"], ["--at", "+30d", "--archive"]):
        assert main(["--db", memory_address, "gc", *bad]) != 0
        assert "Traceback" not in capsys.readouterr().err
    with portal_client(build_server(service)) as (portal, client):
        later = outcome(portal.call(client.call_tool, "consolidation_report", {"kinds": ["forget"], "at": "+30d"}))
        now = outcome(portal.call(client.call_tool, "consolidation_report", {"kinds": ["forget"]}))
        bad = outcome(portal.call(client.call_tool, "consolidation_report", {"kinds": ["forget"], "at": "soon"}))
    [section] = later["structured"]["sections"]
    assert [i["subjects"] for i in section["items"]] == [["Old note"]] and "proposedFrom" in section["items"][0][
        "evidence"] and later["structured"]["at"].endswith("Z")
    assert now["structured"]["sections"][0]["total"] == 0 and "at" not in now["structured"]
    assert bad["error"] and "+N days" in bad["text"]


def test_a_moment_is_a_date_or_days_ahead():
    now = 1_780_000_000.0
    assert parse_moment("+30d", now) == now + 30 * DAY
    assert parse_moment("+12h", now) == now + 12 * 3600 and parse_moment("+2w", now) == now + 14 * DAY
    assert parse_moment("+ 3 days", now) == now + 3 * DAY
    assert parse_moment("2026-06-01", now) == parse_moment("2026-06-01T23:59:59.999Z", now)
    for bad in ("30", "+30x", "", "2020-01-01", "+40000d", None):
        with pytest.raises(ValidationError):
            parse_moment(bad, now)


def test_an_import_is_new_even_under_the_id_of_an_entity_deleted_long_ago(service):
    old = time.time() - 400 * DAY
    service.entities.create_entities([E("first", "Note", (O("a"),), created_at=old)])
    later = {x.name: x for x in service.lifecycle.retention(now=time.time() + 60 * DAY)}
    assert later["first"].decision == "forget"
    first_id = later["first"].entity_id
    written_ago(service, 400)  # as if "first" had been written 400 days ago
    service.entities.delete_entities(["first"])
    service.entities.create_entities([E("second", "Note", (O("b"),), created_at=old)])  # takes the free id again
    [again] = service.lifecycle.retention(RetentionParams(grace_days=90), now=time.time() + 60 * DAY)
    assert again.entity_id == first_id and again.reason == "new: imported 1 month ago; kept at least 90 days"
