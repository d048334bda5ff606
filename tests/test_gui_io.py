"""Import and export dialogs: a real ../shared/corpus file imported through the dialog (progress,
report, entities stored, graph view updated live), exports in the three formats read back."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import networkx as nx
import pytest
from _store_helpers import project_files
from _widgets_helpers import build_small_graph

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.io.importer import import_files
from limbic.core.io.parsers import parse_file
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.gui.dialogs.import_export import ExportDialog, ImportDialog
from limbic.gui.graph.view import GraphView

pytestmark = pytest.mark.gui
CORPUS_FILE = "HankofallTrades__STRATOS__.cursor_memory.jsonl"  # 40 entities, 47 relations, extra fields


def test_import_corpus_file_through_the_dialog(qtbot, controller, service, corpus_dir):
    path = corpus_dir / CORPUS_FILE
    if not path.is_file():
        pytest.skip(f"{CORPUS_FILE} is not in the corpus")
    expected = {e.name for e in parse_file(path).entities}
    assert len(expected) >= 30
    view = GraphView(controller)
    qtbot.addWidget(view)
    view.set_mode("global")
    dialog = ImportDialog(controller)
    qtbot.addWidget(dialog)
    dialog.set_paths([path])
    with qtbot.waitSignal(dialog.finished_import, timeout=30_000) as done:
        dialog.import_button.click()
    report = done.args[0]
    assert report.ok and dialog.report is report
    assert expected <= set(service.entities.entity_names())
    assert report.totals()["entities_created"] >= len(expected)
    assert report.totals()["relations_created"] > 0
    assert dialog.progress_bar.value() == dialog.progress_bar.maximum()
    assert CORPUS_FILE in dialog.report_view.toPlainText()
    assert "entities created" in dialog.progress_label.text()
    qtbot.waitUntil(lambda: expected <= set(view.shown_names()), timeout=10_000)  # live, no reload asked


def test_unreadable_file_is_reported_not_raised(qtbot, controller, tmp_path):
    bad = tmp_path / "binary.jsonl"
    bad.write_bytes(bytes(range(256)) * 4)
    dialog = ImportDialog(controller)
    qtbot.addWidget(dialog)
    dialog.set_paths([bad])
    with qtbot.waitSignal(dialog.finished_import, timeout=10_000):
        dialog.start_import()
    assert not dialog.report.ok
    assert "NOT imported" in dialog.progress_label.text()
    assert "NOT IMPORTED" in dialog.report_view.toPlainText()


@pytest.mark.parametrize("fmt", ["jsonl", "graphml", "gexf"])
def test_export_formats_read_back(qtbot, controller, service, tmp_path, fmt):
    build_small_graph(service)
    dialog = ExportDialog(controller)
    qtbot.addWidget(dialog)
    dialog.format_box.setCurrentIndex(dialog.format_box.findData(fmt))
    target = tmp_path / f"out.{fmt}"
    dialog.path.setText(str(target))
    with qtbot.waitSignal(dialog.finished_export, timeout=10_000) as done:
        dialog.export_button.click()
    assert done.args[0].entities == 7 and target.is_file()
    assert not list(tmp_path.glob(".*.partial"))
    names = set(service.entities.entity_names())
    if fmt == "jsonl":
        copy = MemoryService(open_database(tmp_path / "copy.db"), HashingEmbedder())
        try:
            assert import_files(copy, [target]).ok
            assert set(copy.entities.entity_names()) == names
            assert copy.entities.get_entity("Legacy ETL").entity.status == "archived"  # an extra field came back
        finally:
            copy.close()
    else:
        graph = (nx.read_graphml if fmt == "graphml" else nx.read_gexf)(target)
        assert set(graph.nodes) == names and graph.number_of_edges() == 6


def test_export_failure_is_shown(qtbot, controller, tmp_path):
    dialog = ExportDialog(controller)
    qtbot.addWidget(dialog)
    dialog.path.setText(str(tmp_path / "missing-dir" / "out.jsonl"))
    dialog.export_button.click()
    qtbot.waitUntil(lambda: dialog.message.text().startswith("Export failed"), timeout=5000)
    assert dialog.export_button.isEnabled()


def test_the_import_dialog_gives_each_file_its_project(qtbot, controller, service, tmp_path):
    paths = project_files(tmp_path)
    dialog = ImportDialog(controller)
    qtbot.addWidget(dialog)
    dialog.show()
    box = dialog.project_box  # wide enough for a project's name, not a sliver
    assert box.width() >= box.fontMetrics().horizontalAdvance("weather-station-2026") + 10
    dialog.set_paths(paths)
    dialog.files.topLevelItem(0).setSelected(True)
    dialog.set_project("alpha")
    dialog.files.clearSelection()
    dialog.files.topLevelItem(1).setSelected(True)
    dialog.project_box.setEditText("beta")
    dialog.set_project(dialog.project_box.currentText())
    assert dialog.projects() == ["alpha", "beta"]
    with qtbot.waitSignal(dialog.finished_import, timeout=10_000):
        dialog.import_button.click()
    assert dialog.report.ok
    for project in ("alpha", "beta"):
        with service.scoped(project):
            entity = service.entities.get_entity("Notes").entity
        assert entity.project == project and [o.content for o in entity.observations] == [f"{project} notes"]
