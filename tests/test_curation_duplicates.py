"""Duplicate observations: the checkable-value, state and statement rules, name normalisation, the exact pair
finders, survivors that keep every detail and merged texts, precision and recall on the hand-labelled pairs from
real agent memory (real model), the threshold as the one similarity floor, fields on many entities, reading
one's own writes, and the duplicate decisions settled and undone exactly."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _duplicate_pairs import BLIND, FIXTURE, load_pairs, score, store_pairs
from _embedder_helpers import real_model_dir

from limbic.core.curation import duplicates, statements, states, survivors, values
from limbic.core.curation.entities import NameGroup, acronym, name_keys, normalise_name, same_names
from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.service import MemoryService, decision_log, review
from limbic.core.service.curating import Member, duplicate_cluster
from limbic.core.service.curation_edits import (
    CombineDuplicates,
    SupersedeDuplicates,
    keep_observations_apart,
    merge_duplicates,
)
from limbic.core.store.backend import open_database

# --- what two statements can differ in --------------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "different"), [
    ("rate limited to 100 requests per minute", "rate limited to 1000 requests per minute", True),
    ("likes coffee", "does not like coffee", True),
    ("likes coffee", "doesn't like coffee", True),
    ("deadline is the end of March", "kicked off in January", True),
    ("runs on AWS in eu-west-1", "runs on AWS in us-east-1", True),
    ("runs every night at 2am UTC", "scheduled nightly at 02:00 UTC", False),
    ("costs 1,000 euros", "costs 1000 euros", False),
    ("lives in Berlin since 2019", "is based in Berlin", False),  # detail on one side only
    ("migrated from Python 2 to Python 3", "was moved from Python 2 to Python 3", False),
    ("prefers dark mode", "likes a dark theme", False),
    ("Used in AddSingleExerciseDialog.tsx", "Used in WorkoutExerciseView.tsx", True),  # file names
    ("Headers in include/core/directives/", "Implementations in src/core/directives/", True),  # paths
    ("calls executeBuyTransaction() on confirm", "calls executeSellTransaction() on confirm", True),  # code names
    ("The developer lived in Ohio.", "The developer lives in New York.", True),  # names inside a sentence
    ("REPEATEDLY violated the Godot rules", "Broke the Godot rules", False),  # capitals for emphasis
    ("Database migration needed", "No database migration needed", True),
    ("Database is already compatible with the new game logic modules",  # "no … needed" is not a negation of it
     "No database migration needed - schema already supports the game logic modules", False),
])
def test_checkable_differences(a, b, different):
    assert values.differ(values.signature(a), values.signature(b)) is different


@pytest.mark.parametrize(("a", "b", "relation"), [
    ("Priority: high", "Priority: low", statements.DIFFERENT),  # one field, two values
    ("Priority: high", "priority:  High.", statements.SAME),  # the same value once normalised
    ("Created: 2026-01-04T10:00:00Z", "Created: 2026-01-05T09:12:44Z", statements.DIFFERENT),
    ("status: planning", "priority: high", statements.DIFFERENT),  # two fields
    ("status: planning", "Comprehensive audit and plan for the documentation", statements.DIFFERENT),
    ("critical_tasks: cleanup of the root folder, changelog", "completed_tasks: changelog, cleanup of the root "
     "folder", statements.DIFFERENT),  # two labels
    ("Extract the parser into its own module", "Extracted the parser into its own module", statements.DIFFERENT),
    ("Need to add the export macros to the header", "Added the export macros to the header", statements.DIFFERENT),
    ("Encountered a linking error in the Windows build", "Fixed the linking error in the Windows build",
     statements.DIFFERENT),
    ("Must always use the Godot tools for scenes", "Ignored the Godot tools for scenes", statements.DIFFERENT),
    ("npm run test:unit", "npm run test:e2e", statements.DIFFERENT),
    ("The user enjoys 3D printing.", "User enjoys 3D printing, smart home technology and bike riding as hobbies.",
     statements.MORE_SPECIFIC),
    ("Values maintainability, extensibility and DRY principles in all code.",
     "Prefers maintainability, extensibility and DRY principles in all code.", statements.SAME),
    ("Organizes code for maintainability with clear separation of concerns.",
     "Values maintainability, extensibility and DRY principles in all code.", statements.DIFFERENT),
    ("路由无冲突", "可以同时提供服务", statements.DIFFERENT),  # compared by characters, not by the English model
    ("路由无冲突", "路由无冲突。", statements.SAME),
    # opposite states, never one fact (real agent memory)
    ("Currently broken in branches after new_features", "Working implementation exists in new_features branch",
     statements.DIFFERENT),
    ("M1 MVP implementation in progress", "M1 MVP implemented", statements.DIFFERENT),
    ("MSVC 호환성 작업 진행", "MSVC 호환성 작업 완료", statements.DIFFERENT),
    ("Debugging test failures in streaming integration tests",
     "Successfully debugged UCRA streaming integration test failures", statements.DIFFERENT),
    # a field and a sentence about its key: one fact reworded
    ("Maintains backward compatibility with existing installations",
     "Backward compatibility: Maintains existing functionality", statements.SAME),
    ("Priority: high", "The parser rewrite is urgent", statements.DIFFERENT),
    # short statements: each word is a fact
    ("The developer enjoys skateboarding.", "The developer enjoys snowboarding.", statements.DIFFERENT),
    ("Prefers tabs over spaces for indentation", "Likes indenting with tabs rather than spaces", statements.SAME),
    # "This package provides …" says that a thing exists, not what it is
    ("Library for parsing JSON documents", "This package provides a library for parsing JSON documents",
     statements.SAME),
    # a description field against a field of another key: compared by what it describes (real agent memory)
    ("Description: Configuration for Telescope initialization", "Configures: Telescope", statements.SAME),
    ("Description: Legacy measurement aggregator", "Uses: Telescope", statements.DIFFERENT),
    ("Description: Error-Reduction Phase Retrieval Iterative Engine", "Classical iterative phase retrieval method",
     statements.DIFFERENT),
    # an address with or without its host is one address; two hosts are two
    ("GitHub: github.com/HKUDS/LightRAG", "GitHub: HKUDS/LightRAG", statements.SAME),
    ("Mirrored at https://github.com/acme/parser", "Mirrored at acme/parser", statements.SAME),
    ("Repository: gitlab.com/acme/parser", "Repository: github.com/acme/parser", statements.DIFFERENT),
    ("Updated backend-api/services/boosterService.js with rate limiting",
     "Updated services/boosterService.js with rate limiting", statements.DIFFERENT),  # two files
    # one more item of an enumeration says more
    ("Supports multi-modal data (text, images, structured data)",
     "Multi-modal support: text, images, audio, structured data", statements.MORE_SPECIFIC),
    ("HippoRAG 2 (ICML 2025) adds continual learning capabilities", "HippoRAG 2 adds continual learning (ICML 2025)",
     statements.SAME),
    # a value's first word is capitalised as a sentence's: the same name as inside a sentence
    ("Missing ViewModels for Lesson, Quiz, Settings, and Profile screens",
     "Missing ViewModels: Lesson, Quiz, Settings, Profile screens", statements.SAME),
    ("This is a backend/Citadel SDK layer issue, not frontend",
     "This is a Citadel SDK layer issue, not internal service layer", statements.DIFFERENT),
    # each says three things of its own: two items of one template
    ("Scheduled task runs silently in background at Windows login to keep repository synced",
     "Daily updates: Update-GitConfig.ps1 runs automatically at login via scheduled task", statements.DIFFERENT),
    # a to-do and its completion
    ("Implement order item addition with modifier validation",
     "COMPLETED: Order item addition with modifier validation implemented", statements.DIFFERENT),
    ("待开发：商品详情页+供应商修改+备注修改", "已完成：商品详情页+供应商修改+备注修改", statements.DIFFERENT),
])
def test_statement_relations(a, b, relation):
    assert statements.relation(statements.read(a), statements.read(b)) == relation
    assert statements.relation(statements.read(b), statements.read(a)) == relation


@pytest.mark.parametrize(("text", "state"), [
    ("Currently broken in branches after new_features", states.PROBLEM),
    ("Working implementation exists in new_features branch", states.WORKING),
    ("Working on the parser", states.PROGRESS),
    ("The build is not working", states.PROBLEM),
    ("Bug fixed in the parser", states.DONE),
    ("Issue resolved: the importer skips empty lines", states.DONE),
    ("Needs to be moved to internal/cpu/", states.PLANNED),
    ("Implement order item addition with modifier validation", states.PLANNED),  # a to-do
    ("Implements order item addition", None),
    ("Fix: typo in the README", None),  # a label, not a to-do
    ("Build Status: all crates compile with warnings", None),  # a noun, not a to-do
    ("Moved implementation files to internal/cpu/darwin/", states.DONE),
    ("Status report: open questions remain", None),
    ("Must always use Godot server tools for scene operations", states.RULE),
    ("v1 Hello World 구현 상태: /state-init skill 생성됨", states.DONE),
    ("다크 모드 추가 예정", states.PLANNED), ("다크 모드 구현", states.DONE), ("다크 모드 구현 예정", states.PLANNED),
    ("모든 MSVC 호환성 문제가 해결됨", states.DONE), ("미해결 이슈 3건", states.PROBLEM),
    ("Exportar a CSV: pendiente", states.PLANNED), ("Exportar a CSV: hecho", states.DONE),
    ("导出功能计划中", states.PLANNED), ("V2 API集成测试完成", states.DONE), ("导出功能未完成", states.PLANNED),
    ("V1 API端点正常工作", states.WORKING), ("Prefers tabs over spaces", None),
])
def test_states_are_read_in_four_languages(text, state):
    assert states.state(text) == state


@pytest.mark.parametrize(("a", "b"), [
    ("Currently broken in branches after new_features", "Working implementation exists in new_features branch"),
    ("Dark mode toggle planned for the settings page", "Dark mode toggle implemented in the settings page"),
    ("Bug: Status open for the login redirect loop", "Bug resolved for the login redirect loop"),
    ("설정 페이지에 다크 모드 추가 예정", "설정 페이지에 다크 모드 추가됨"),
    ("Exportación a CSV pendiente en el panel", "Exportación a CSV hecha en el panel"),
    ("导出功能计划在下个版本", "导出功能已完成在下个版本"),
    ("Search reindexing in progress for the archive", "Search reindexing done for the archive"),
])
def test_opposite_states_are_never_one_fact(a, b):
    assert statements.relation(statements.read(a), statements.read(b)) == statements.DIFFERENT


def test_names_are_normalised_for_case_spacing_punctuation_plurals_and_accents():
    assert normalise_name("  Café   Owners! ") == normalise_name("cafe owner") == "cafe owner"
    assert normalise_name("Libraries") == normalise_name("library")
    assert normalise_name("user_settings") == normalise_name("User Setting")
    assert normalise_name("libtest-files-perl") != normalise_name("libtest-file-perl")
    assert normalise_name("Boxes") == "box" and normalise_name("class") == "class"
    assert acronym("New York City") == "nyc" and acronym("Berlin") is None
    groups = same_names([(1, "NYC"), (2, "New York City"), (3, "Projects"), (4, "project"), (5, "Alice")])
    assert [(g.ids, g.reason) for g in groups] == [((1, 2), "acronym"), ((3, 4), "same name")]


def test_names_spelled_in_camel_snake_kebab_case_or_with_spaces_are_one():
    """Entity names from real agent memory that name one thing, however their words are joined."""
    assert normalise_name("CPUPackage") == normalise_name("CPU_Package") == normalise_name("cpu package") == "cpu package"
    names = ["CPUPackage", "CPU_Package", "cpu_package", "CPU Package", "TestSuite", "test_suite", "PowerMetrics",
             "Power_Metrics", "power-metrics", "libtest-files-perl", "libtest-file-perl", "Alice"]
    groups = same_names(list(enumerate(names)))
    assert [g.ids for g in groups] == [(0, 1, 2, 3), (4, 5), (6, 7, 8)]
    assert name_keys("IPv6Config") & name_keys("ipv6_config")
    assert not name_keys("libtest-files-perl") & name_keys("libtest-file-perl")  # package names keep plurals


def test_a_separator_next_to_a_digit_stays_in_a_name():
    """Two Debian packages of different sources: the hyphen before the version is part of the name."""
    assert not name_keys("libgdk-pixbuf-2.0-0") & name_keys("libgdk-pixbuf2.0-0")
    assert not name_keys("bind9utils") & name_keys("bind9-utils")
    assert name_keys("Phase 2") == name_keys("phase_2") == name_keys("phase-2") != name_keys("phase2")
    assert same_names([(1, "libgdk-pixbuf-2.0-0"), (2, "libgdk-pixbuf2.0-0"), (3, "Phase 2"), (4, "PHASE_2")]) == [
        NameGroup((3, 4), "same name")]


# --- what settling a cluster keeps ------------------------------------------------------------------


def _texts(*contents: str) -> list[survivors.Text]:
    return [survivors.Text(n, text, float(n)) for n, text in enumerate(contents, 1)]


@pytest.mark.parametrize(("kept", "dropped"), [  # each pair: the first holds a detail the second lacks
    ("Release follows an 8-step process with sign-off", "Release follows a careful step by step process with sign-off"),
    ("Builds the desktop bundle for macOS with codesign", "Builds the desktop bundle with codesign and notarisation"),
    ("Request parsing lives in http_handler and pages in page_generation", "Request parsing and page rendering modules"),
    ("Upgrade the CLI with `gorka update self-upgrade`", "Upgrade the CLI with `gorka self-upgrade` when asked"),
    ("Ranking weights are tunable for the discovery feature", "Ranking weights are tunable in the settings panel"),
    ("Telemetry upload is optional", "Telemetry upload happens at startup"),
    ("~/.aim directory now managed via stow symlink", "Aim package configured for GNU Stow management"),
    ("Created duplicate nodes and messy scene files", "Created multiple unnecessary duplicate scene files"),
])
def test_a_survivor_keeps_every_detail_or_there_is_none(kept, dropped):
    """The details of agent memory a survivor must keep — a number, a platform, module names, a command, a
    scope, "optional", a path, what was duplicated — and the merged text that keeps them all instead."""
    texts = _texts(kept, dropped)
    assert not survivors.keeps(survivors.said(dropped), survivors.details(kept))
    found = survivors.survivor(texts)
    assert found is None or found.content == kept
    if found is None:
        merged = survivors.merged_text(texts)
        for text in (kept, dropped):
            assert survivors.keeps(survivors.said(merged), survivors.details(text)), merged
        written = set(re.findall(r"[^\W_]+", kept + " " + dropped))
        assert set(re.findall(r"[^\W_]+", merged)) <= written  # never a word no member wrote


@pytest.mark.parametrize(("texts", "survivor"), [
    (("Values maintainability, extensibility, and DRY principles in all code and content.",
      "Prefers maintainability, extensibility, and DRY principles in all code and content."),
     "Prefers maintainability, extensibility, and DRY principles in all code and content."),  # "values": wording
    (("Astro is one of the user's favorite pieces of software. This is a high-priority personal preference and "
      "should be respected and emphasized in all recommendations, framework/tool choices, and project discussions.",
      "User has reiterated that Astro is one of their favorite pieces of software. This reinforces the existing "
      "high-priority personal preference and should be continually emphasized in all recommendations, "
      "framework/tool choices, and project discussions."),
     "Astro is one of the user's favorite pieces of software. This is a high-priority personal preference and "
     "should be respected and emphasized in all recommendations, framework/tool choices, and project discussions."),
    (("This package provides a library for parsing JSON documents", "Library for parsing JSON documents"),
     "Library for parsing JSON documents"),  # what it does, not "This package provides"
    (("* DNS root hints and DNSSEC trust anchor", "DNS root hints and DNSSEC trust anchor"),
     "DNS root hints and DNSSEC trust anchor"),  # the sentence, not the bullet
])
def test_the_survivor_is_the_definitional_text_that_keeps_every_detail(texts, survivor):
    assert survivors.survivor(_texts(*texts)).content == survivor


def test_merged_text_starts_from_the_definition_and_adds_what_the_others_hold():
    assert survivors.merged_text(_texts("* Root Hints (root.hints) for the resolver",
                                        "DNS root hints and DNSSEC trust anchor")) == \
        "DNS root hints and DNSSEC trust anchor (root.hints for the resolver)"
    assert survivors.merged_text(_texts(
        "Failed to follow mandatory Godot server MCP requirements",
        "REPEATEDLY violated mandatory Godot server MCP requirements",
        "MAJOR INCIDENT: Direct disobedience of mandatory Godot server MCP requirements")) == \
        "MAJOR INCIDENT: Direct disobedience of mandatory Godot server MCP requirements (REPEATEDLY violated; " \
        "Failed to follow)"


def test_a_cluster_without_survivor_suggests_keeping_both_and_offers_the_merged_text():
    members = [Member(1, "Dotfiles", "Aim package configured for GNU Stow management", None, 1.0),
               Member(2, "Dotfiles", "~/.aim directory now managed via stow symlink", None, 2.0)]
    cluster = duplicate_cluster(members, 2, ((1, 2, 0.8),), 0.8, 0.8)
    assert cluster.survivor is None and cluster.options == ("keep", "combine")
    assert cluster.merged == "Aim package configured for GNU Stow management (~/.aim directory, symlink)"
    assert cluster.to_dict()["keeps"] is None and "each adds a detail the others lack" in cluster.reason
    whole = duplicate_cluster([members[0], Member(3, "Dotfiles", "The aim package is configured for GNU Stow "
                                                                 "management", None, 3.0)], 2, ((1, 3, 0.9),), 0.9, 0.9)
    assert whole.survivor is not None and whole.merged is None and whole.options == ("supersede", "merge", "keep")


def test_the_pair_finder_is_exact_in_blocks(monkeypatch):
    monkeypatch.setattr(duplicates, "ROW_BLOCK", 7)
    monkeypatch.setattr(duplicates, "COLUMN_BLOCK", 11)
    rng = np.random.default_rng(3)
    base = rng.standard_normal((12, 16)).astype(np.float32)
    unit = np.repeat(base, 4, axis=0) + 0.25 * rng.standard_normal((48, 16)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    full = unit @ unit.T
    expected = {(i, j) for i in range(48) for j in range(i + 1, 48) if full[i, j] >= 0.8}
    a, b, sims = duplicates.similar_pairs(unit, 0.8)
    assert set(zip(a.tolist(), b.tolist(), strict=True)) == expected and len(a) == len(expected)
    assert np.allclose(sims, full[a, b], atol=1e-5)
    queries = np.array([0, 5, 9])
    a, b, _ = duplicates.similar_pairs(unit, 0.8, queries)
    assert set(zip(a.tolist(), b.tolist(), strict=True)) == {p for p in expected if p[0] in queries or p[1] in queries}


def test_owner_pairs_compares_within_each_owner_exactly():
    rng = np.random.default_rng(3)
    unit = rng.standard_normal((30, 8)).astype(np.float32)
    unit[10:20] = unit[0] + 0.05 * rng.standard_normal((10, 8)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    owners = np.arange(30) % 3
    full = unit @ unit.T
    expected = {(i, j) for i in range(30) for j in range(i + 1, 30) if owners[i] == owners[j] and full[i, j] >= 0.8}
    a, b, sims = duplicates.owner_pairs(unit, owners, 0.8)
    assert set(zip(a.tolist(), b.tolist(), strict=True)) == expected and len(a) == len(expected)
    assert np.allclose(sims, full[a, b], atol=1e-5)
    a, b, _ = duplicates.owner_pairs(unit, owners, 0.8, np.array([10]))
    assert set(zip(a.tolist(), b.tolist(), strict=True)) == {p for p in expected if 10 in p}


# --- with the real model ------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=[FIXTURE, BLIND], ids=["corpus", "blind"])
def labelled(request, tmp_path_factory):
    """Each file of labelled pairs stored once with the real model (SQLite): ``(service, pairs, ids)``."""
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    service = MemoryService(open_database(str(tmp_path_factory.mktemp("pairs") / "pairs.db")),
                            OnnxEmbedder(real_model_dir()))
    pairs = load_pairs(request.param)
    yield service, pairs, store_pairs(service, pairs)
    service.close()


def test_the_labelled_pairs_are_real_and_enough():
    pairs = load_pairs()
    labels = [p["label"] for p in pairs]
    assert len(pairs) >= 200 and labels.count("duplicate") >= 15
    blind = load_pairs(BLIND)
    assert len(blind) >= 140 and [p["label"] for p in blind].count("duplicate") >= 10
    assert all(p["note"] and p["sampled"] for p in blind)
    assert not {frozenset((p["text_a"], p["text_b"])) for p in blind} & {frozenset((p["text_a"], p["text_b"]))
                                                                           for p in pairs}
    assert {p["band"] for p in pairs} == {"<0.70", "0.70-0.80", "0.80-0.90", "0.90-0.95", ">=0.95"}
    assert any(p["same_entity"] for p in pairs) and any(not p["same_entity"] for p in pairs)
    assert all(p["note"] and p["label"] in ("duplicate", "specific", "shared", "different") for p in pairs)


def test_default_threshold_reaches_precision_and_recall_on_real_agent_memory(labelled):
    """Precision ≥ 0.8 and recall ≥ 0.6 at the default setting on each file of hand-labelled pairs from real agent
    memory (docs/curation.md "Calibration"); the counts are in the message."""
    service, pairs, ids = labelled
    found = score(service, pairs, ids)
    assert found.threshold == duplicates.DEFAULT_THRESHOLD
    assert found.precision >= 0.8 and found.recall >= 0.6, (found.to_dict(), found.false_positives, found.missed)


def test_fields_of_many_tasks_are_not_duplicates_but_a_reworded_fact_is(memory_address):
    """16 tasks with ``Priority: high|medium|low`` and ``Created: <time>`` give no duplicate cluster (each task's
    own field; the shared values are reported as shared facts); two rewordings of one fact inside one entity
    are one cluster, found by a call made right after writing them."""
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    service = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    try:
        priorities = ["high"] * 8 + ["medium"] * 4 + ["low"] * 4
        service.entities.create_entities([EntityInput(f"Task {n}", "task", (
            ObservationInput(f"Priority: {priority}"), ObservationInput(f"Created: 2026-11-{10 + n % 9:02d}T0{n % 10}:15:00Z"),
            ObservationInput(f"Implement step {n} of the importer"))) for n, priority in enumerate(priorities)])
        report = service.curation.find_duplicate_observations(limit=100)
        assert report.total == 0 and report.complete and report.compared == 48
        assert {f.text: f.count for f in report.shared} == {"Priority: high": 8, "Priority: medium": 4, "Priority: low": 4}
        assert report.shared[0].to_dict()["reason"] == "the same text on 8 entities — each entity's own, not duplicates"
        with service.search.deferred_vectors():  # the vectors of what follows are still pending when the finder is asked
            service.entities.add_observations([("Task 3", (
                ObservationInput("Database is already compatible with the new game logic modules"),
                ObservationInput("The database already supports the new game logic modules")))])
        assert service.vectors.pending() == 1
        report = service.curation.find_duplicate_observations(limit=100)
        assert report.complete and report.pending == 0
        [cluster] = report.clusters
        assert cluster.relation == "duplicate" and cluster.entities == ("Task 3",) and cluster.size == 2
        assert cluster.survivor is None and cluster.options == ("keep", "combine")  # "compatible" / "supports"
        assert cluster.merged == "Database is already compatible with the new game logic modules (already supports)"
        assert service.curation.find_duplicate_observations(entity_name="Task 5").total == 0
    finally:
        service.close()


def test_paraphrases_are_found_unrelated_ones_not_and_settling_undoes_exactly(memory_address):
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    service = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    try:
        service.entities.create_entities([
            EntityInput("User", "person", tuple(ObservationInput(t) for t in (
                "Prefers tabs over spaces for indentation", "Likes indenting with tabs rather than spaces",
                "Is allergic to peanuts", "Drinks coffee every morning", "Plays chess on weekends"))),
            EntityInput("Acme", "company", (ObservationInput("Makes widgets in Ohio"),)),
        ])
        service.relations.create_relations([RelationInput("User", "Acme", "works_at")])
        report = service.curation.find_duplicate_observations()
        assert [[m.content for m in c.members] for c in report.clusters] == [
            ["Prefers tabs over spaces for indentation", "Likes indenting with tabs rather than spaces"]]
        assert service.curation.find_duplicate_observations(entity_name="Acme").total == 0
        assert service.curation.find_duplicate_observations(entity_name="User").total == 1
        before = service.entities.read_graph(include_ended=True)
        [section] = review.review(service, kinds=["duplicate"])
        assert section.total == 1 and section.items[0].options == ("supersede", "merge", "keep")
        for option in ("merge", "supersede", "keep"):
            edit = review.decide(service, section.items[0].key, option)
            assert service.curation.find_duplicate_observations().total == 0
            edit.revert(service)
            assert service.entities.read_graph(include_ended=True) == before, option
            assert service.curation.find_duplicate_observations().total == 1
        with pytest.raises(ValidationError):
            review.decide(service, section.items[0].key, "explode")
        with pytest.raises(NotFoundError):
            review.decide(service, "duplicate:1-999", "merge")
    finally:
        service.close()


def test_the_threshold_is_the_one_similarity_floor(memory_address):
    """A pair of short statements (four content words or fewer) is listed at any threshold up to its
    similarity and at none above it: no hidden margin. The pairs at or above the threshold are counted, listed
    or not (two that differ in their words are not)."""
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    service = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    try:
        service.entities.create_entities([EntityInput("User", "person", tuple(ObservationInput(t) for t in (
            "Prefers tabs over spaces for indentation", "Likes indenting with tabs rather than spaces",
            "The developer enjoys skateboarding.", "The developer enjoys snowboarding.")))])
        [cluster] = service.curation.find_duplicate_observations(threshold=0.5).clusters
        similarity = cluster.best
        assert {m.content for m in cluster.members} == {"Prefers tabs over spaces for indentation",
                                                        "Likes indenting with tabs rather than spaces"}
        below = service.curation.find_duplicate_observations(threshold=round(similarity - 0.005, 4))
        above = service.curation.find_duplicate_observations(threshold=round(similarity + 0.005, 4))
        assert below.total == 1 and above.total == 0
        assert below.pairs > above.pairs >= 0 and below.to_dict()["pairsAtThreshold"] == below.pairs
    finally:
        service.close()


def test_a_rewording_is_found_and_opposite_states_never_are(memory_address):
    """Real agent writes: a field that rewords a sentence about its key is one cluster; close statements of one
    thing in opposite states (broken / working, planned / implemented, in progress / resolved, in English and
    Korean) are in none, at any threshold."""
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    service = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    try:
        service.entities.create_entities([
            EntityInput("Installer", "component", (
                ObservationInput("Maintains backward compatibility with existing installations"),
                ObservationInput("Backward compatibility: Maintains existing functionality"))),
            EntityInput("Feature Branch", "branch", (
                ObservationInput("Currently broken in branches after new_features"),
                ObservationInput("Working implementation exists in new_features branch"))),
            EntityInput("Build", "task", (
                ObservationInput("MSVC 호환성 작업 진행"), ObservationInput("모든 MSVC 호환성 문제가 해결됨"),
                ObservationInput("설정 화면에 다크 모드 추가 예정"), ObservationInput("설정 화면에 다크 모드 구현")))])
        report = service.curation.find_duplicate_observations(threshold=0.5)
        assert [(c.entities, c.relation) for c in report.clusters] == [(("Installer",), "duplicate")]
        assert report.clusters[0].merged == ("Maintains backward compatibility with existing installations "
                                             "(functionality)")
        assert report.pairs >= 4  # the opposite states were compared, and kept apart by their words
    finally:
        service.close()


def test_one_entity_under_spellings_of_its_name_is_found_with_evidence_two_projects_are_not(memory_address):
    """``CPUPackage`` / ``CPU_Package`` / ``cpu_package`` / ``CPU Package``, ``PowerMetrics`` / ``Power_Metrics``
    are candidates; two projects' ``git_workflow`` (a workflow) and ``GitWorkflow`` (infrastructure, its own
    observations and relations: real agent memory) share nothing and are not proposed."""
    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    service = MemoryService(open_database(memory_address), OnnxEmbedder(real_model_dir()))
    try:
        service.entities.create_entities([
            EntityInput("CPUPackage", "struct", (ObservationInput("Per-package CPU power and temperature readings"),
                                                 ObservationInput("Defined in pkg/metrics/types.go"))),
            EntityInput("CPU_Package", "struct", (ObservationInput("Holds package power in watts"),)),
            EntityInput("cpu_package", "metric", (ObservationInput("CPU package power sampled every second"),)),
            EntityInput("CPU Package", "component", (ObservationInput("Package temperature from SMC sensors"),)),
            EntityInput("PowerMetrics", "tool", (ObservationInput("macOS powermetrics sampler wrapper"),)),
            EntityInput("Power_Metrics", "tool", (ObservationInput("Runs powermetrics with sudo"),)),
            EntityInput("git_workflow", "workflow", tuple(ObservationInput(t) for t in (
                "Two-branch strategy: main (stable, tagged releases) and develop (active development)",
                "PowerShell strips UTF-8 emojis when passing to Git"))),
            EntityInput("GitWorkflow", "infrastructure", tuple(ObservationInput(t) for t in (
                "Branch model: master/develop/feature/fix/release/hotfix",
                "Unity CI via GitHub Actions (.github/workflows/unity-ci.yml)",
                "Local git setup: Tools/git/setup-local-git.ps1"))),
            EntityInput("VeilBreakers3D", "project", ())])
        service.relations.create_relations([RelationInput("GitWorkflow", "VeilBreakers3D", "supports")])
        total, found = service.curation.find_duplicate_entities()
        assert {frozenset(g.names) for g in found} == {
            frozenset({"CPUPackage", "CPU_Package", "cpu_package", "CPU Package"}),
            frozenset({"PowerMetrics", "Power_Metrics"})} and total == 2
        assert all(g.reason == "same name" for g in found)
    finally:
        service.close()


# --- edits and decisions with the hashing embedder ---------------------------------------------------------


def test_supersede_merge_and_keep_undo_exactly_and_hostile_arguments(service):
    service.entities.create_entities([EntityInput("A", "t", (ObservationInput("the blue widget is made in Ohio"),)),
                             EntityInput("B", "t", (ObservationInput("the blue widget is made in Ohio"),
                                                    ObservationInput("the blue widget is built in Ohio"),
                                                    ObservationInput("something else entirely")))])
    report = service.curation.find_duplicate_observations(threshold=0.6)
    [cluster] = report.clusters  # within B; A's copy is A's own (a shared fact)
    assert cluster.entities == ("B",) and cluster.size == 2 and report.shared_total == 1
    assert report.shared[0].entities == ("A", "B")
    before = service.entities.read_graph()
    edit = SupersedeDuplicates(cluster.members)
    edit.apply(service)
    live = {e.name: [o.content for o in e.live_observations] for e in service.entities.read_graph().entities}
    assert sum("the blue widget is made in Ohio" in texts for texts in live.values()) == 1
    edit.revert(service)
    assert service.entities.read_graph() == before
    merge = merge_duplicates(cluster.members)
    merge.apply(service)
    merge.revert(service)
    assert service.entities.read_graph() == before
    keep = keep_observations_apart(cluster.members)
    keep.apply(service)
    assert service.curation.find_duplicate_observations(threshold=0.6).total == 0
    keep.revert(service)
    assert service.curation.find_duplicate_observations(threshold=0.6).total == 1
    for bad in (0.2, 1.5, "0.9", True, float("nan")):
        with pytest.raises(ValidationError):
            service.curation.find_duplicate_observations(threshold=bad)
    with pytest.raises(ValidationError):
        service.curation.find_duplicate_observations(limit=-1)
    with pytest.raises(NotFoundError):
        service.curation.find_duplicate_observations(entity_name="Nobody")
    with pytest.raises(ValidationError):
        merge_duplicates(cluster.members[:1])


def test_combining_writes_the_merged_text_and_undoes_exactly(service):
    """A cluster where each member holds a detail the other lacks: keep both is suggested, combine writes the
    merged text and makes the members its history; undone exactly, over the review queue and as an edit."""
    service.entities.create_entities([EntityInput("Widget", "product", (
        ObservationInput("the blue widget is assembled in the Ohio plant by hand"),
        ObservationInput("the blue widget is assembled in the Ohio plant with care")))])
    before = service.entities.read_graph(include_ended=True)
    [cluster] = service.curation.find_duplicate_observations(threshold=0.6).clusters
    assert cluster.survivor is None and cluster.merged == "the blue widget is assembled in the Ohio plant with care (by hand)"
    [section] = review.review(service, kinds=["duplicate"])
    [decision] = section.items
    assert decision.options == ("keep", "combine") and "each with a detail of its own" in decision.title
    edit = review.decide(service, decision.key, "combine")
    widget = service.entities.get_entity("Widget").entity
    assert [o.content for o in widget.live_observations] == [cluster.merged]
    assert {o.content for o in widget.observations} == {cluster.merged, *(m.content for m in cluster.members)}
    edit.revert(service)
    assert service.entities.read_graph(include_ended=True) == before
    review.decide(service, decision.key, "combine")
    decision_log.undo(service)  # the logged decision, read back from its record (as `limbic undo`)
    assert service.entities.read_graph(include_ended=True) == before
    own = CombineDuplicates(cluster.members, cluster.merged)
    own.apply(service)
    own.revert(service)
    assert service.entities.read_graph(include_ended=True) == before
    with pytest.raises(ValidationError):
        CombineDuplicates(cluster.members[:1], "x")
    with pytest.raises(ValidationError):
        CombineDuplicates(cluster.members, "x", entity="Nobody")


def test_duplicate_entities_by_name_merge_and_keep_undo_exactly(service):
    service.entities.create_entities([EntityInput("NYC", "city", (ObservationInput("big apple"),)),
                             EntityInput("New York City", "city", (ObservationInput("five boroughs"),
                                                                    ObservationInput("on the Hudson"))),
                             EntityInput("Café Owners", "group", ()), EntityInput("cafe owner", "group", ()),
                             EntityInput("Alice", "person", ())])
    service.relations.create_relations([RelationInput("Alice", "NYC", "lives_in")])
    service.usage.record_access(["NYC"])
    total, found = service.curation.find_duplicate_entities()
    assert total == 2
    assert {(g.names, g.reason) for g in found} == {(("New York City", "NYC"), "acronym"),
                                                    (("Café Owners", "cafe owner"), "same name")}
    before = service.entities.read_graph(include_ended=True)
    sections = review.review(service, kinds=["duplicate_entity"])
    key = next(d.key for d in sections[0].items if "NYC" in d.subjects)
    edit = review.decide(service, key, "merge")
    merged = service.entities.get_entity("New York City")
    assert [o.content for o in merged.entity.observations] == ["five boroughs", "on the Hudson", "big apple"]
    assert merged.access_count == 1 and [r.source for r in merged.relations] == ["Alice"]
    edit.revert(service)
    assert service.entities.read_graph(include_ended=True) == before
    assert service.entities.get_entity("NYC").access_count == 1
    keep = review.decide(service, key, "keep")
    assert service.curation.find_duplicate_entities()[0] == 1
    keep.revert(service)
    assert service.curation.find_duplicate_entities()[0] == 2


def test_the_review_queue_compares_statements_without_importing_scikit_learn(tmp_path):
    """scikit-learn (about 100 MB resident with SciPy) is for the split panel's clustering only: the app's review
    queue, which reads statements at start, must not load it (a fresh process, as the app is)."""
    import subprocess
    import sys

    script = f"""
import sys
from limbic.core.embedding.base import HashingEmbedder
from limbic.core.models import EntityInput, ObservationInput
from limbic.core.service import MemoryService, decision_log, review
from limbic.core.store.backend import open_database
service = MemoryService(open_database({str(tmp_path / "memory.db")!r}), HashingEmbedder(), origin="cli")
service.entities.create_entities([EntityInput("Ada", "person", (ObservationInput("likes strong coffee"),
                                                       ObservationInput("likes strong coffee a lot")))])
service.search.wait_for_vectors()
review.review(service)
service.close()
print("sklearn" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(("texts", "kept"), [  # Debian's package descriptions, as the 10,000-package memory holds them
    (("DNS root hints and DNSSEC trust anchor", "* Root Hints (root.hints) * Root Trust Anchors (root.key, root.ds)"),
     None),  # the bullet holds every word of the summary but is no definition: keep both (merged text offered)
    (("DNS root hints and DNSSEC trust anchor", "* DNS root hints (root.hints) and DNSSEC trust anchor (root.key)"),
     None),  # the bullet says it all and more, yet replacing the definition by it would lose the sentence
    (("node-babel plugin to regenerate polyfills", "This package provides babel-plugin-polyfill-regenerator"), None),
    (("Zulu hyphenation patterns", "This package contains the Zulu hyphenation patterns."), "Zulu hyphenation patterns"),
    (("Mono System.Messaging library (for CLI 4.0)", "This package contains the Mono System.Messaging library for CLI 4.0."),
     "Mono System.Messaging library (for CLI 4.0)"),
])
def test_a_bullet_or_this_package_provides_a_name_never_survives_the_definitional_sentence(texts, kept):
    found = survivors.survivor(_texts(*texts))
    assert (found.content if found else None) == kept
    if found is None:
        assert survivors.merged_text(_texts(*texts)).startswith(texts[0])  # built on the definition


def test_list_items_under_two_names_are_two_things_whatever_their_length():
    """Debian's texlive-latex-extra lists its CTAN packages one a line; a short and a long item are still two."""
    a = statements.read("answers -- Setting questions (or exercises) and answers")
    b = statements.read("exercise -- Typeset exercises, problems, etc. and their answers")
    assert statements.relation(a, b) == statements.DIFFERENT
    assert statements.relation(statements.read("ctie -- C version of tie (merging Web change files)"),
                               statements.read("tie -- Allow multiple web change files")) == statements.DIFFERENT


@pytest.mark.parametrize(("texts", "kept"), [  # judged on Debian's 10,000 packages: superseding loses nothing
    (("Mono System.Web.WebPages (for CLI 4.0)", "This package contains the Mono System.Web.WebPages library for CLI 4.0."),
     "This package contains the Mono System.Web.WebPages library for CLI 4.0."),  # the qualifier in brackets or not
    (("web browser", "This package contains the web browser component."),
     "This package contains the web browser component."),
    (("shared library for ffmpegthumbnailer", "This package contains the shared library for ffmpegthumbnailer framework."),
     "This package contains the shared library for ffmpegthumbnailer framework."),
    (("transitional dummy package (gsfonts -> fonts-urw-base35)",
      "This package is a dummy package to enable the gsfonts to fonts-urw-base35 transition. It can be safely removed."),
     "This package is a dummy package to enable the gsfonts to fonts-urw-base35 transition. It can be safely removed."),
    (("Babel plugin to inject imports to regenerator-runtime",
      "This package provides babel-plugin-polyfill-regenerator, a Babel plugin to inject imports to regenerator-runtime"),
     "This package provides babel-plugin-polyfill-regenerator, a Babel plugin to inject imports to regenerator-runtime"),
    (("Data Plane Development Kit (librte-baseband-fpga-5gnr-fec runtime library)",
      "This package contains the runtime libraries for librte-baseband-fpga-5gnr-fec."),
     "Data Plane Development Kit (librte-baseband-fpga-5gnr-fec runtime library)"),  # "libraries" is "library"
])
def test_a_this_package_contains_sentence_that_keeps_every_detail_survives(texts, kept):
    assert survivors.survivor(_texts(*texts)).content == kept


def test_a_word_is_kept_in_any_of_its_forms_and_a_hyphenated_name_whole():
    assert survivors.keeps(survivors.said("runtime libraries for librte-net-af-packet"),
                           survivors.details("librte-net-af-packet runtime library"))
    assert survivors.keeps(survivors.said("dummy package for the gsfonts transition"),
                           survivors.details("transitional dummy package for gsfonts"))
    assert survivors.keeps(survivors.said("a command line tool for JSON"), survivors.details("command-line tool for JSON"))
    assert not survivors.keeps(survivors.said("node-babel plugin to regenerate polyfills"),  # a name, not its words
                               survivors.details("This package provides babel-plugin-polyfill-regenerator"))
    assert not survivors.keeps(survivors.said("Runtime library for GNU Fortran applications"),  # run / runtime: no
                               survivors.details("Library needed to run GNU Fortran applications"))


def test_state_is_a_detail_though_stated_is_wording():
    # "stated" restates how a fact is held; "state" (one stem with it) says what the fact is about
    assert statements.stem("state") in survivors.details("Added state management architecture diagram").words
    assert statements.stem("restated") not in survivors.details("User restated the rule").words
