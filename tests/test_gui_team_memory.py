"""The app on a PostgreSQL memory: the MCP panel names the memory with its password masked, and the stdio
snippet an agent copies carries the address without the password (libpq reads it from PGPASSWORD or .pgpass)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from _widgets_helpers import open_controller

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.mcp_panel import McpPanel

pytestmark = pytest.mark.gui


@pytest.fixture
def team_service(pg_address):
    from _pg import with_password

    service = MemoryService(open_database(with_password(pg_address, "pw-s3cret")), HashingEmbedder())
    yield service
    service.close()


def test_the_panel_masks_the_password_and_the_snippet_leaves_it_out(qtbot, team_service):
    for controller in open_controller(team_service):
        panel = McpPanel(controller)
        qtbot.addWidget(panel)
        assert panel.memory_field.text().startswith("postgresql://postgres:***@")
        assert "pw-s3cret" not in panel.memory_field.text()
        panel.transport_box.setCurrentIndex(panel.transport_box.findData(False))  # stdio
        panel.refresh_snippet()
        shown = panel.snippet.toPlainText()
        assert "pw-s3cret" not in shown and "pw-s3cret" not in panel._snippet
        assert "postgresql://postgres@" in panel._snippet
