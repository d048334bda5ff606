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


@pytest.fixture
def service(tmp_path):
    """A MemoryService on a new database file with the deterministic hashing embedder (closed afterwards)."""
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.service import MemoryService
    from limbic.core.store.database import Database

    svc = MemoryService(Database(tmp_path / "memory.db"), HashingEmbedder(), origin="cli")
    yield svc
    svc.close()


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


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One in-process MCP client on a fresh service, shared by a module's hostile-input tests."""
    from _mcp_helpers import portal_client

    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.mcp.server import build_server
    from limbic.core.service import MemoryService
    from limbic.core.store.database import Database

    service = MemoryService(Database(tmp_path_factory.mktemp("hostile") / "memory.db"), HashingEmbedder())
    with portal_client(build_server(service)) as (portal, client):
        yield service, portal, client
    service.close()
