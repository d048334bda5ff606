"""Contradiction warnings on the shapes real agent memory has: lines of a list are sets, a related module's own
``Path:`` is never compared, a status or a count that changed is; the suggested option hides no fact; an import
raises the same warnings as the same memory written through MCP. Real model, real SQLite file and PostgreSQL."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _mcp_helpers import portal_client

from limbic.core.io.importer import import_file
from limbic.core.lifecycle import contradictions as c
from limbic.core.mcp.server import build_server
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.models import RelationInput as R
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.core.store.conflicts import name_spellings, subject_names


@pytest.mark.parametrize(("old", "new"), [
    ("npm run test:unit", "npm run test:e2e"),
    ("Phase 1: set up the repository", "Phase 2: write the parser"),
    ("UPDATED: src/app.ts", "UPDATED: src/server.ts"),
    ("Coding standard: use tabs", "Coding standard: no default exports"),
    ("Imports from core/utils", "Imports from core/models"),
    ("Sprint 4 planned for March 3", "Sprint 3 finished with 18 points"),
    ("All tests passing (244 passed, 3 skipped) after the responsive fixes",
     "All tests passing (286 passed, 3 skipped) after the database fix"),
    ("✅ Subtask 15.2 COMPLETED: folder structure established", "✅ Subtask 15.3 COMPLETED: TypeScript configured"),
    ("Requires Node >= 18", "Team uses Node 20.11 locally"),
    ("Standup is on Mondays and Thursdays", "Standup starts at 9:30am"),
    ("The developer lived in Puerto Rico.", "The developer lived in Ohio."),
    ("Scope: UI components, CRUD, remove/adapt legacy UI logic", "Acceptance: legacy UI logic removed, CRUD updated"),
    ("v2.2.0 released March 3", "v2.3.0 released April 20"),
    ("Components must be ≤50 lines", "Fixed text overlap and progress calculation"),  # a rule, not a plan
    ("Was flaky on CI in March", "Flakiness fixed on April 2"),  # history
    ("Airflow migration planned for Q3", "✅ Metrics dashboard moved to Grafana"),
    ("4월 8일 시작", "스프린트 6은 4월 5일에 종료됨"),  # a start and another thing's end
    ("UPDATED: src/app.ts", "Updated the docs for the app now"),  # the key is the change itself
    ("Video UI components: VideoSizeSelector (resolution), DurationSelector (auto/fixed), AudioToggle",
     "All components strict: Header, PromptInput updated to accept SeaDreamModel"),  # a list, not a value
    ("Switched from Docker deployment to Node.js service deployment on Render",
     "After deployment, API will be 100% functional with no Firebase errors"),
    ("Uses React for UI", "Now uses Zustand for state"),
    ("The backend team has 8 people", "The frontend team has 5 people"),  # two teams
    ("ml-service uses TensorFlow 2.15", "ml-service uses NumPy 1.26"),  # two versions, not an amount
    ("Moved to Berlin in 2019", "Lived in Munich 2015–2019 before that"),  # two dated moves
    ("LightRAG ranked best for self-hosted speed-critical use (8/10)",
     "CORRECTED COMPARISON: All three (LightRAG, HippoRAG, Cognee) offer local/embedded options"),
    ("5 PostToolUse hooks in hooks/: run-typecheck.sh, run-axe.sh",
     "run-typecheck.sh: checks package.json for a typecheck script — exits 0 always"),
    ("Added signal.SIGINT handler to prevent Tkinter KeyboardInterrupt exceptions",
     "Keyboard hooks cleaned up in finally block for all exit paths"),
    ("Validates: prompt required, max 10 images, seed >= -1", "Image size limit updated to 14 MB"),
    ("Version: 2.3.1", "billing-service client SDK bumped to 2.4.0"),  # a dependency's version, not its own
    ("Version 1.2.0", "Upgraded React to 18.2"),  # another product's
    ("Has two kids", "His second son started school"),  # a child already counted
    ("MISSING FOR REASONING:", "Phases completed: 0-8"),  # a heading: its items are other observations
    ("Modal system now closes every modal after its action", "All modal flows now store modal IDs"),  # both: now
    ("Each modal is closed by its specific ID", "All modal flows now store modal IDs"),  # one word, twice
    ("Each modal is closed by its specific ID", "Fixed Edit.tsx: handleEdit now stores childModalId"),  # code
    ("Components: B cells, T cells, antibodies, cytokines",
     "Fix: CYTOKINE_* replaced with BRAIN_CYTOKINE_* for enum type safety"),  # renamed, still there
    ("Removes or replaces all legacy Item UI with UnifiedItem views",
     "All legacy Item UI was removed or replaced with UnifiedItem views"),  # the same change, twice
    ("Kept the RecentFoodRecord and RecentFoodInput types for the table",
     "Eliminated the RecentFood domain entity; now uses Template objects"),  # a stem, not a word, in common
    ("Commit 2eeef1c0: fixed bridge errors - 21 files, 204 insertions",
     "61 files changed, 5880 insertions in the orchestrator commit"),  # two commits
    ("Travel policy: meals up to €40/day", "Travel policy: hotels up to €180/night"),  # two items, one heading
    ("prod-k8s: 18 nodes m6i.2xlarge baseline", "prod-k8s: cluster-autoscaler max set to 40 nodes"),
    ("Priority 1 focuses on code simplification: icons", "Priority 2 emphasizes content expansion: blog"),  # items
    ("Bot 日誌記錄所有執行結果", "支援 Bot 啟用/停用控制"),  # an enable/disable control, not a removal
    ("Fixed the P2P timeout flakiness on Linux", "Windows P2P flakiness eliminated by the socket fix"),  # a problem
    ("NO LONGER using Tauri - all Tauri references removed", "Connect page fixed by removing Tauri dependencies"),
    ("Sync handler checks for 'not found'", "Async handler checks for 'not found' or 'Not a member'"),  # two things
    ("Moved types to pkg/metrics/types", "Moved implementation files to internal/cpu/darwin/"),  # two moves
    ("Migrated console.log/warn/error to debugLog() in layout", "All console statements removed from processed files"),
    ("Local path: $env:USERPROFILE/Documents/Scripts/gitconfig", "All file paths in the docs updated"),  # no path
    ("Next.js 16.2 with App Router, React 19.2", "Auth: Clerk (@clerk/nextjs 7.0)"),  # a scoped package's version
    ("Build fully compliant with Gradle 8 best practices", "Project completion increased from 98% to 99.5%"),
    ("Successfully completed Phase 1 of the UI consolidation",
     "Ready to continue with the remaining consolidation steps"),  # the next piece of work, not this one undone
    ("users 테이블 마이그레이션 완료", "orders 테이블 마이그레이션 진행 중 (약 60%)"),
    ("Hydration error occurred due to Math.random() producing different results",
     "Technical details: replaced Math.random() with a seeded generator"),  # a report stays true
    ("Confirmed the food refactoring (Issues #931-935) was successful",
     "The refactoring eliminated the RecentFood entity and now uses Template objects"),
    ("Does not have the .db files for lesson and quiz data",
     "Requests to skip the ViewModel work due to missing .db files for lessons and quiz data"),  # both: missing
    ("Successfully completed Phase 1 of the UI directory consolidation",
     "All legacy ui/ directories removed with a successful build"),  # the legacy part, not the thing
    ("PUT /api/orders/{id}/items/{itemId}/restore：恢复待办行", "PUT /api/orders/{id}/complete-all：全部完成"),  # endpoints
    ("Flaky P2P tests are network-related - pass on retry",
     "If hole punch succeeds, P2P connection is upgraded; if it fails, TURN continues working"),  # a condition
    ("86개 서브태스크 중 84개 완료 (97.67%)", "2개 서브태스크가 지연됨 (FFTS/FFTW 백엔드)"),  # parts of a whole
    ("Status: Open", "Tests added: test_event_history_storage, test_get_events_since"),  # a step, not the end
])
def test_lines_of_a_list_and_two_things_are_not_contradictions(old, new):
    assert c.judge(old, new, 0.9) is None


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("Status: Proposed", "Status: Completed", "status: Proposed → Completed"),
    ("Status: Open", "Status: RESOLVED (by fixing the parser)", "status: Open → RESOLVED (by fixing the parser)"),
    ("Priority: medium", "Priority: high", "priority: medium → high"),
    ("6 content components", "7 content components", "content components: 6 → 7"),
    ("JSON config file support", "No configuration files", "negated: No configuration files"),
    ("Released version 2.2.0", "Current version is v2.4.0", "version: 2.2.0 → 2.4.0"),
    ("MSVC 호환성 작업 진행", "모든 MSVC 호환성 문제가 해결됨", "state: in progress → done"),
    ("Needs to be moved to internal/cpu/", "Moved implementation files to internal/cpu/darwin/",
     "state: planned → done"),
    ("M1 MVP implementation in progress", "Milestone 1 MVP implemented", "state: in progress → done"),
    ("27개 단위 테스트로 검증", "36개 단위 테스트로 검증 (기존 27개 + 9개)", "개 단위: 27 → 36"),
    ("React 17 사용", "React 18로 업그레이드 완료", "version: React 17 → 18"),
    ("使用 RabbitMQ", "已全部迁移到 Kafka，RabbitMQ 下线", "removed: RabbitMQ"),
    ("Javier vive en Madrid", "Javier se mudó a Valencia el mes pasado", "moved: Madrid → Valencia"),
    ("Uses Webpack for bundling", "Bundler switched to Vite; webpack.config.js deleted", "replaced: Webpack"),
    ("Search is powered by Elasticsearch", "Search now runs on OpenSearch after the migration",
     "switched: Elasticsearch → OpenSearch"),
    ("Session token stored in localStorage", "Tokens now live in an httpOnly cookie", "switched: localStorage → httpOnly"),
    ("Login bug fixed in 2.3", "Login bug is open again after the upgrade", "state: done → open"),
    ("Status: PENDING - high priority architectural cleanup required",
     "✅ COMPLETED - Successfully consolidated duplicate DTOs", "state: planned → done"),  # the entity's own status
    ("CI run 22042015172 queued — awaiting runner availability", "CI run 22042015172 completed: 38/40",
     "state: in progress → done"),  # a label that is a state names no other thing
    ("Need to add: GetTicketDetailsAsync(Guid id), GetAllTicketsAsync()",
     "Added missing methods: GetTicketDetailsAsync(Guid id) and GetAllTicketsAsync()", "state: planned → done"),
    ("상품 인덱스 재색인 취소", "상품 인덱스 재색인 진행 중, 40% 완료", "state: cancelled → in progress"),
    ("Budget: $40k", "Budget: $25k", "amount: $40k → $25k"),
    ("Config path: config/app.yaml", "Config path moved to settings/app.toml",
     "config path: config/app.yaml → Config path moved to settings/app.toml"),
    ("Rate limit: 100 requests per minute", "Rate limit: 300 requests per minute", "requests: 100 → 300"),
    ("Validates: prompt required, max 10 images, seed >= -1", "Max reference images validation updated to 14",
     "amount: 10 → 14"),
    ("Added columns: batch_mode (boolean), output_images (JSONB)", "Migration 004: Dropped output_images column",
     "removed: output_images"),
    ("Version 2.3.0, MIT license, authored by hanzili", "v3.0.0 uses a dedicated browser instance on port 9223",
     "version: 2.3.0 → 3.0.0"),
    ("Primarily cloud/SaaS service but can be self-hosted", "CORRECTED: it is primarily a LOCAL/EMBEDDED library",
     "corrected: cloud → local"),
    ("Preferred: E drive (E:\\MCPKU or E:\\.kilo)",
     "Previous restriction to E:\\MCPKU and E:\\.kilo is superseded by this broader rule", "corrected by the newer"),
    ("Redis holds user sessions", "Sessions are kept in Postgres; Redis was removed", "removed: Redis"),
    ("Migration to Airflow planned for Q3", "✅ Airflow migration complete, old cron jobs deleted",
     "state: planned → done"),
    ("미해결, 원인 파악 중", "해결됨: 세션 만료 처리 로직 수정", "state: open → done"),
    ("Draft, not shared yet", "Published to the team wiki on 5/12", "state: open → done"),
    ("定在周三下午两点", "改到周四上午十点", "date: 下午两点 → 上午十点"),
    ("每周三下午游泳", "陈晨的游泳课改到周五晚上", "date: 周三 → 周五"),
    ("매주 화요일 저녁 7시 PT 수업", "PT 목요일 8시로 변경됨", "date: 7시 → 8시"),
    ("Los lunes a las 10:00", "Pasó a los martes a las 11", "date: 10:00 → 11"),
    ("Log retention: 30 days", "Retention bumped to 90d for compliance",
     "log retention: 30 days → Retention bumped to 90d for compliance"),
    ("负责人：张伟", "用户服务现由刘洋负责", "负责人: 张伟 → 用户服务现由刘洋负责"),
    ("Owner: Ana", "Raj took over maintenance", "owner: Ana → Raj took over maintenance"),
    ("Version: 2.3.1", "Running v2.4.0 in prod since Tuesday", "version: 2.3.1 → 2.4.0"),
    ("CI runs on Jenkins", "CI fully moved to GitHub Actions", "switched: Jenkins → GitHub Actions"),
    ("캐시 TTL 300초", "cache_ttl: 60s 로 낮춤", "amount: 300s → 60s"),
    ("new_checkout enabled for 10% of users", "new_checkout at 100% rollout", "amount: 10% → 100%"),
    ("Per-client rate limit set to 100 req/s", "rate_limit_per_client=250", "amount: 100 → 250"),
    ("Staging runs 3 nodes", "Staging now runs a single node", "node: 3 → 1"),
    ("目前有 8 个服务", "合并后只剩 6 个服务", "个服务: 8 → 6"),
    ("Works as a nurse at St. Vincent's Hospital.", "Started a new job as a UX designer at Figma last month.",
     "employer changed: St. → Figma"),
    ("Current status (2026-02-25): Database partially set up", "Database ready for production use",
     "state: in progress → done"),
    ("P1A-3 产物未提交（工作树唯一副本），待用户批准检查点提交", "2026-07-31 全部工作已提交并 push origin/main",
     "state: not yet → all done (提交)"),
    ("Changes not yet deployed to staging", "All services deployed", "state: not yet → all done (deploy)"),
    ("Estado: en desarrollo", "[HECHO] Orión lanzado a producción el 12/05/2024", "state: in progress → done"),
    ("2FA optional for the internal admin panel", "Admin panel enforces 2FA for every account",
     "opposite: optional → enforces"),
    ("Node.js 16 사용", "런타임 Node 20으로 업그레이드함", "version: Node 16 → 20"),
    ("Currently learning Spanish on Duolingo", "Emma gave up on Duolingo in January and deleted the app",
     "removed: Duolingo"),
    ("Error message displays: 'URL must end with .jpg, .jpeg, or .png'", "Error messages updated to list all formats",
     "error message displays: URL must end with .jpg, .jpeg, or .png → Error messages updated to list all form…"),
    ("Not truly local/embedded - still API-based architecture", "CORRECTED: it is primarily a LOCAL/EMBEDDED library",
     "corrected: not embedded → embedded"),
])
def test_changes_agents_write_are_found_with_a_reason(old, new, reason):
    assert c.judge(old, new, 0.8) == reason


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("Cluster version 1.27", "Upgraded the EKS control plane to 1.29 yesterday", "version: 1.27 → 1.29"),
    ("Versión 1.8.2 desplegada", "Se actualizó api-facturas a la 2.0.0", "version: 1.8.2 → 2.0.0"),
    ("Tiene cita con el cardiólogo el 3 de junio", "Le cambiaron la cita del cardiólogo al 17/06",
     "date: 3 de junio → 17/06"),
    ("Uses Webpack for bundling", "Bundler switched to Vite; webpack.config.js deleted", "replaced: Webpack"),
    ("Drinks tea every morning, doesn't like coffee", "Switched to coffee, gave up tea entirely", "replaced: tea"),
    ("Has two kids", "James and his wife just welcomed their third child, a boy named Leo", "children: 2 → 3"),
    ("자녀 한 명 (딸)", "지호 씨 둘째 아들 태어남", "children: 1 → 2"),
    ("Single, not dating anyone", "Liam got engaged to Noor in May", "relationship: single → engaged"),
    ("Soltera", "Se casó en mayo con Andrés", "relationship: single → married"),
    ("单身", "上个月订婚了", "relationship: single → engaged"),
])
def test_people_and_project_changes_said_in_other_words(old, new, reason):
    """An upgrade to a version of the thing's own, a date moved, a thing switched away from and given up, a child
    born after the older counted them, someone's standing with a partner."""
    assert c.judge(old, new, 0.7) == reason


@pytest.mark.parametrize(("old", "new"), [
    ("Priya can't have gluten.", "Priya loves her gluten-free pasta."),  # "-free" agrees with the negation
    ("Omar went to a Star Wars-themed bar in London a few years ago.",
     "Omar enjoys sci-fi films and shares favorites with Lena."),  # a trip, and a name in no such slot
    ("Omar went to a Star Wars-themed bar in London a few years ago.", "Omar asked Lena for book recommendations."),
    ("Divorced in 2019", "Single and happy"),  # both true
    ("Uses a single node", "Users engaged with the feature"),  # no one's partner
    ("Marco has been working on a project lately.",
     "Marco finished a slide deck for the investors on Friday."),  # only the person in common
])
def test_notes_about_a_person_that_share_only_the_person_are_not_contradictions(old, new):
    """People's memories name their person in every note: that name, a trip, a thing left out (``gluten-free``)
    say nothing that contradicts."""
    assert c.judge(old, new, 0.6) is None


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("未决：迁移 20+21 云上 deploy 待用户确认；science-worker 疑似无消费 sandbox_jobs 的代码",
     "2026-08-06 云上 migrate deploy 完成：迁移 19/20/21 已应用于生产库，列级验证通过", "state: open → done (迁移20)"),
    ("遗留疑点（未修）：getSandboxArtifact 不按 jobId 过滤；rate-limit 是否生效未核实",
     "2026-08-06 四项遗留修复已提交 8ed6f3b：artifact jobId 过滤、迁移 21", "state: open → done (jobid)"),
    ("Release checklist drafted. Deploy of billing-api v2 still pending; docs to follow",
     "billing-api v2 deployed to production. Docs updated", "state: planned → done (billing-api)"),
    ("2026-07-24：task-master 模型迁移到 MiniMax-M2.7（OpenAI 兼容端点 https://api.minimax.chat/v1）",
     "2026-07-24 更正：.taskmaster/config.json 的 baseURL 已从 api.minimax.chat 直连改为本地代理", "corrected by the newer"),
])
def test_a_passage_is_read_clause_by_clause(old, new, reason):
    assert c.judge(old, new, 0.7) == reason


@pytest.mark.parametrize(("old", "new"), [
    ("2026-07-24 parse-prd 实测通过：10 个任务生成成功（测试产物，未动 tasks.json）",
     "2026-07-28 tasks.json 修复完成：已备份两份；55 个 parentId 补齐"),  # untouched is not work left to do
    ("Phase 0 审计产出：ADR-001 草案待确认；Phase 1A 待开始", "Phase 1B 已完成；ADR-002 已接受"),  # two numbered things
    ("docs/decisions/ADR-002.md 待确认；其余待定", "docs/handoff/2026-07-28.md 已刷新；收尾完成"),  # one folder, two files
])
def test_clauses_about_two_things_are_not_contradictions(old, new):
    assert c.judge(old, new, 0.7) is None


def test_a_line_of_a_list_written_a_line_at_a_time_is_never_a_new_value():
    older = ["Components to migrate: MenuBuilder, MenuItemCard, CategoryTreeView",
             "- MenuBuilder.razor → Replaced by MenuBuilderOrganism",
             "- MenuItemCard.razor → Replaced by MenuItemCardMolecule"]
    new = "- CategoryTreeView.razor → Replaced by CategoryTreeMolecule"
    assert c.shape(new) in c.templates([new, *older])
    vectors = np.eye(len(older), 8, dtype=np.float32)
    assert c.find(new, np.ones(8, dtype=np.float32) / np.sqrt(8), list(enumerate(older)), vectors) == []
    assert not c.possible(new, older)
    # work further along is still told, however the lines begin
    steps = ["- Status: in progress", "- Owner: Ana", "- Needs review"]
    assert c.possible("- Status: done", steps)


def test_a_key_the_entity_holds_as_a_list_is_never_a_conflict():
    others = [(1, "Coding standard: use tabs"), (2, "Coding standard: no default exports")]
    assert c.lists(["Coding standard: prefer composition", *(t for _, t in others)]) == {"coding standard"}
    assert c.lists(["Status: open", "Status: in progress", "Status: done"]) == frozenset()  # a status is one


def test_the_suggested_option_hides_no_fact():
    assert c.options_for("Status: Open", "Status: RESOLVED", same_entity=True)[0] == "supersede"  # further along
    assert c.options_for("Lives in Berlin", "Moved to Munich in May", same_entity=True)[0] == "supersede"  # a cue
    assert c.options_for("Deploys go to us-east-1", "Deploys go to us-west-2", same_entity=True)[0] == "keep_both"
    assert c.options_for("Status: Open", "Status: RESOLVED", same_entity=False)[0] == "keep_both"  # another entity
    assert set(c.options_for("a", "b", True)) == set(c.OPTIONS)


def test_spellings_of_one_name():
    assert set(name_spellings("CPUPackage")) == set(name_spellings("CPU_Package")) == set(name_spellings("cpu package"))
    assert "powermetrics" in name_spellings("Power_Metrics") and "test_suite" in name_spellings("TestSuite")


def test_a_version_of_a_name_is_the_same_subject_and_a_number_alone_is_not():
    assert "user-preference-allowed-dirs" in subject_names("user-preference-allowed-dirs-v2")
    assert "user_preference_allowed_dirs_v3" in subject_names("user-preference-allowed-dirs")
    assert "sprint 4" not in subject_names("Sprint 3") and "sprint" not in subject_names("Sprint 3")


@pytest.fixture
def memory(model, memory_address):
    service = MemoryService(open_database(memory_address), model)
    yield service
    service.close()


def test_only_the_same_subject_is_compared(memory):
    memory.entities.create_entities([E("CPU Types", "module", (O("Path: pkg/metrics/types.go"),)),
                            E("CPU API", "module", (O("Path: api/metrics/cpu.go"),)),
                            E("CPUPackage", "module", (O("Status: in progress"),)),
                            E("Billing", "service", (O("Status: in progress"),))])
    memory.relations.create_relations([R("CPU API", "CPU Types", "imports"), R("Billing", "CPUPackage", "depends_on")])
    memory.search.wait_for_vectors()
    memory.entities.create_entities([E("cpu_package", "module", (O("Status: done"),))])
    memory.search.wait_for_vectors()
    memory.lifecycle.check_conflicts()
    _, rows = memory.lifecycle.open_conflicts()
    assert [(r.entity, r.other_entity, r.reason) for r in rows] == [
        ("cpu_package", "CPUPackage", "status: in progress → done")]  # not Billing's, not the modules' paths


def test_a_conflict_over_mcp_says_what_it_suggests(memory):
    memory.entities.create_entities([E("deploys", "Fact", (O("Status: Open"),))])
    memory.search.wait_for_vectors()
    with portal_client(build_server(memory)) as (portal, client):
        result = portal.call(client.call_tool, "add_observations", {"observations": [
            {"entityName": "deploys", "contents": ["Status: RESOLVED (fixed by the retry)"]}]})
    [conflict] = result.structured_content["conflicts"]
    assert conflict["options"][0] == "supersede" and conflict["suggestion"].startswith("the newer says it replaces")


def test_an_import_raises_what_the_same_writes_raise(model, memory_address, tmp_path):
    lines = [{"type": "entity", "name": "Auth refactor", "entityType": "task",
              "observations": ["Status: in progress", "Owner: Ana", "npm run test:unit", "npm run test:e2e",
                               "Status: done"]},
             {"type": "entity", "name": "Auth module", "entityType": "module", "observations": ["Path: src/auth.ts"]},
             {"type": "entity", "name": "Billing module", "entityType": "module", "observations": ["Path: src/bill.ts"]},
             {"type": "relation", "from": "Auth module", "to": "Billing module", "relationType": "imports"}]
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    imported = MemoryService(open_database(memory_address), model)
    try:
        before = imported.lifecycle.newest_observation()
        import_file(imported, path)
        imported.search.wait_for_vectors()
        imported.lifecycle.check_conflicts()
        found = sorted((r.content, r.other_content) for r in imported.lifecycle.open_conflicts()[1])
        assert imported.lifecycle.conflicts_since(before) == len(found) == 1
    finally:
        imported.close()
    written = MemoryService(open_database(str(tmp_path / "written.db")), model)
    try:
        written.entities.create_entities([E("Auth refactor", "task", ())])
        written.entities.add_observations([("Auth refactor", [O(t) for t in lines[0]["observations"]])])
        written.search.wait_for_vectors()
        written.lifecycle.check_conflicts()
        assert sorted((r.content, r.other_content) for r in written.lifecycle.open_conflicts()[1]) == found
    finally:
        written.close()
    assert found == [("Status: done", "Status: in progress")]


def test_a_write_that_cannot_conflict_is_not_encoded_and_a_writer_in_between_is_still_checked(memory):
    memory.entities.create_entities([E("task", "task", (O("Owner: Ana"), O("npm run test:unit")))])
    memory.search.wait_for_vectors()
    assert memory.lifecycle.written_vectors("add_observations", "mcp", [("task", "npm run test:e2e")]) is None  # a list line
    assert memory.lifecycle.written_vectors("add_observations", "mcp", [("task", "Owner: Raj")])  # may conflict: encoded
    gate = memory.lifecycle.written_vectors

    def another_writer_in_between(op, origin, texts):
        vectors = gate(op, origin, texts)  # read before the write: "Status: done" contradicts nothing there yet
        memory.lifecycle.written_vectors = gate
        memory.entities.add_observations([("task", [O("Status: in progress")])], origin="another agent")
        return vectors

    memory.lifecycle.written_vectors = another_writer_in_between
    memory.entities.add_observations([("task", [O("Status: done")])])
    memory.search.wait_for_vectors()
    memory.lifecycle.check_conflicts()
    assert [(r.content, r.other_content) for r in memory.lifecycle.open_conflicts()[1]] == [("Status: done", "Status: in progress")]


def test_digits_that_are_not_decimal_are_read_without_error():
    # "①" and "²" are digits to str.isdigit() but not numbers int() reads: a real memory holds such lists
    assert c.judge("Release planned for March ①", "Release planned for March ②", 0.9) is None
    assert c.judge("Reunión a las ²", "Reunión a las ³", 0.9) is None
