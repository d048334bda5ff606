"""Shared fixtures: an isolated LIMBIC_HOME for every test, a fresh service, the real corpus location."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"


@pytest.fixture(autouse=True)
def limbic_home(tmp_path_factory, monkeypatch):
    """Point every path (database, models, settings, token) at a fresh temporary directory.

    The model tests read the installed model through LIMBIC_TEST_MODEL_DIR, which is kept.
    """
    home = tmp_path_factory.mktemp("limbic_home")
    monkeypatch.setenv("LIMBIC_HOME", str(home))
    return home


BACKENDS = ("sqlite", "postgresql")


def pytest_terminal_summary(terminalreporter):
    """One line when the PostgreSQL half was skipped, with the reason (a run without it is not a full run)."""
    from _pg import SKIP_PREFIX

    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        if reason.startswith(SKIP_PREFIX):
            reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in reasons.items():
        terminalreporter.write_line(f"limbic: {count} PostgreSQL tests skipped: {reason}", yellow=True, bold=True)
SQLITE_ONLY_MODULES = ("test_gui_",)  # the app's views run on the service, whose suites run on both backends


def pytest_generate_tests(metafunc):
    """Every test that asks for ``backend`` (directly or through ``memory_address``/``service``) runs on SQLite
    and on PostgreSQL; the GUI's modules run on SQLite."""
    chosen = any("backend" in str(m.args[0]) for m in metafunc.definition.iter_markers("parametrize"))
    if "backend" in metafunc.fixturenames and not chosen:  # a test may name its backend itself
        module = metafunc.module.__name__.rsplit(".", 1)[-1]
        kinds = ["sqlite"] if module.startswith(SQLITE_ONLY_MODULES) else list(BACKENDS)
        metafunc.parametrize("backend", kinds, indirect=True)


@pytest.fixture
def backend(request):
    """``"sqlite"`` or ``"postgresql"``; the PostgreSQL half skips, with the reason, when no server can run."""
    if request.param == "postgresql":
        from _pg import server_or_skip

        server_or_skip()
    return request.param


@pytest.fixture
def memory_address(backend, tmp_path):
    """The address of a new, empty memory on ``backend``: a file path or a ``postgresql://`` URL."""
    if backend == "sqlite":
        yield str(tmp_path / "memory.db")
        return
    from _pg import drop_database, new_database

    address = new_database()
    yield address
    drop_database(address)


@pytest.fixture
def pg_address():
    """A new, empty PostgreSQL memory (dropped afterwards) for tests about that backend; skips without a server."""
    from _pg import drop_database, new_database, server_or_skip

    server_or_skip()
    address = new_database()
    yield address
    drop_database(address)


@pytest.fixture
def service(memory_address):
    """A MemoryService on a new memory (each backend) with the deterministic hashing embedder (closed afterwards)."""
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    svc = MemoryService(open_database(memory_address), HashingEmbedder(), origin="cli")
    yield svc
    svc.close()


@pytest.fixture(scope="session")
def model():
    """The real all-MiniLM-L6-v2 (fp32), loaded once for the tests about the model (skipped without it)."""
    from _embedder_helpers import real_model_dir

    from limbic.core.embedding.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder(real_model_dir())


@pytest.fixture
def controller(qtbot, service):
    """The GUI's AppController on ``service``, with in-process changes bridged to it (GUI tests)."""
    from _widgets_helpers import open_controller

    yield from open_controller(service)


@pytest.fixture
def corpus_dir() -> Path:
    """The real memory files in ../shared/corpus; tests using it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"real corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory):
    """All of ../shared/corpus imported once per module (hashing embedder); tests copy it before writing."""
    from _explorer_helpers import corpus_database, corpus_or_skip

    return corpus_database(corpus_or_skip(), tmp_path_factory.mktemp("corpus") / "memory.db")


@pytest.fixture(scope="module", params=BACKENDS)
def served(request, tmp_path_factory):
    """One in-process MCP client on a fresh service, shared by a module's hostile-input tests (each backend)."""
    from _mcp_helpers import portal_client

    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.mcp.server import build_server
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    if request.param == "postgresql":
        from _pg import drop_database, new_database, server_or_skip

        server_or_skip()
        address = new_database("hostile")
    else:
        address = str(tmp_path_factory.mktemp("hostile") / "memory.db")
    service = MemoryService(open_database(address), HashingEmbedder())
    with portal_client(build_server(service)) as (portal, client):
        yield service, portal, client
    service.close()
    if request.param == "postgresql":
        drop_database(address)
