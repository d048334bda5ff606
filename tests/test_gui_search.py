"""Search panel on a real database: debounced search off the UI thread, stale answers dropped,
selecting a result fills the scoring inspector, FTS-only banner without a model."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.io.importer import import_file
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.core.store.database import Database
from limbic.gui.controller import AppController
from limbic.gui.main_window import MainWindow
from limbic.gui.search.results_model import COLUMNS

pytestmark = pytest.mark.gui

CORPUS = Path("/work/shared/corpus/HankofallTrades__STRATOS__.cursor_memory.jsonl")


class ThreadRecorder:
    """Wraps ``Database.read`` / ``Database.write`` to record which threads ran SQL."""

    def __init__(self, database: Database, monkeypatch) -> None:
        self.threads: set[int] = set()
        read, write = database.read, database.write

        def recording_read():
            self.threads.add(threading.get_ident())
            return read()

        def recording_write(*args, **kwargs):
            self.threads.add(threading.get_ident())
            return write(*args, **kwargs)

        monkeypatch.setattr(database, "read", recording_read)
        monkeypatch.setattr(database, "write", recording_write)


def _open(tmp_path, embedder) -> MemoryService:
    service = MemoryService(open_database(tmp_path / "memory.db"), embedder, origin="gui")
    report = import_file(service, CORPUS)
    assert len(report.entities_created) > 20
    return service


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    service = _open(tmp_path, HashingEmbedder())
    recorder = ThreadRecorder(service.database, monkeypatch)
    controller = AppController(service)
    win = MainWindow(controller)
    qtbot.addWidget(win)
    win.sql_threads = recorder.threads
    yield win
    controller.shutdown()
    service.close()


def test_typing_searches_after_debounce_and_selection_fills_inspector(qtbot, window):
    panel, controller = window.search_panel, window.controller
    with qtbot.waitSignal(controller.search_finished, timeout=10_000) as finished:
        qtbot.keyClicks(panel.query, "exercise muscle groups")
    outcome = finished.args[0]
    assert outcome.candidate_set.query == "exercise muscle groups"
    assert outcome.mode == "hybrid"
    names = [r.name for r in panel.model.results()]
    assert names == [r.name for r in outcome.results] and names
    assert "public.exercise_muscle_groups" in names
    assert not panel.banner.isVisible()
    assert threading.get_ident() not in window.sql_threads  # the search ran in a worker
    assert window.sql_threads

    row = names.index("public.exercise_muscle_groups")
    panel.table.selectRow(row)
    assert controller.selection == ["public.exercise_muscle_groups"]
    explanation = window.inspector.explanation
    result = outcome.results[row]
    assert explanation is not None and explanation.name == result.name
    values = {f.label: f.value for f in explanation.factors}
    assert values["final"] == result.final_score and values["limbic"] == result.limbic_score
    assert values["temporal ×"] == result.temporal_factor
    text = window.inspector.text.toPlainText()
    assert f"= {result.final_score:.4f}" in text and f"= {result.limbic_score:.4f}" in text
    assert f"cosine {1 - result.distance:.4f}" in text  # the default preset fuses cosine and BM25
    assert result.name in window.inspector.title.text()
    assert [m[0] for m in window.decay_plot.marked()] == [result.name]


def test_enter_searches_at_once_and_stale_answers_are_dropped(qtbot, window):
    panel, controller = window.search_panel, window.controller
    answers = []
    controller.search_finished.connect(answers.append)
    controller.search("SQL function", 5)
    controller.search("database table", 5)  # the first answer is now stale
    qtbot.waitUntil(lambda: controller.runner.pending() == 0, timeout=10_000)
    assert [a.candidate_set.query for a in answers] == ["database table"]
    assert len(panel.model.results()) <= 5

    panel.query.setText("archetype")
    with qtbot.waitSignal(controller.search_finished, timeout=10_000):
        qtbot.keyClick(panel.query, Qt.Key.Key_Return)
    assert not panel.debounce.isActive()
    assert answers[-1].candidate_set.query == "archetype"
    assert all("archetype" in " ".join((r.name, *r.observations)).lower() or r.distance is not None
               for r in panel.model.results())
    assert "lifted" not in panel.summary.text()
    with qtbot.waitSignal(controller.search_finished, timeout=10_000):
        controller.search("archetype changes in June 2025", 5)
    assert panel.summary.text().endswith(" · memories of 2025-06 lifted")

    panel.query.clear()
    controller.search("")
    assert panel.model.rowCount() == 0 and controller.last_outcome is None


def test_fts_only_banner_without_model(qtbot, tmp_path):
    service = _open(tmp_path, None)
    controller = AppController(service)
    win = MainWindow(controller)
    qtbot.addWidget(win)
    win.show()
    try:
        with qtbot.waitSignal(controller.search_finished, timeout=10_000) as finished:
            controller.search("muscle", 10)
        assert finished.args[0].mode == "fts_only"
        assert win.search_panel.banner.isVisible()
        assert "full-text search only" in win.model_label.text()
        assert win.install_button.isVisibleTo(win) and win.search_panel.install_button.isVisibleTo(win)
        model = win.search_panel.model
        assert model.rowCount() > 0
        assert all(r.distance is None for r in model.results())
        base = model.index(0, COLUMNS.index("base"))
        assert model.data(base, Qt.ItemDataRole.FontRole).italic()
        tip = model.data(base, Qt.ItemDataRole.ToolTipRole)
        assert "found by full text only" in tip and "RRF" not in tip  # RRF is given in hybrid mode only
    finally:
        controller.shutdown()
        service.close()


def test_inspector_writes_out_the_scorers_numbers():
    import math

    from _scoring_helpers import DAY, NOW, candidate_set

    from limbic.core.search.pipeline import rerank
    from limbic.core.search.presets import preset
    from limbic.core.search.scoring import explain
    from limbic.gui.search.inspector import describe

    params = preset("seed")
    rows = [  # mcp-memory "The Limbic System" worked example: 10 accesses (max 20), 8 relations, 5 days (max 10), 30 days ago
        {"name": "FastMCP", "distance": 0.35, "access_count": 10, "access_days": 5, "degree": 8,
         "last_access": NOW - 30 * DAY},
        {"name": "Other", "distance": 0.5, "access_count": 20, "access_days": 10, "last_access": NOW},
        {"name": "Text only", "distance": None, "fts_rank": 1},
    ]
    candidates = candidate_set(rows, pairs=[(0, 1, 5, NOW)])
    result = next(r for r in rerank(candidates, params) if r.name == "FastMCP")
    text = "\n".join(describe(candidates, params, 0).lines)
    access = math.log2(11) / math.log2(21)
    consolidation = math.log2(6) / math.log2(11)
    assert f"access = log₂(1+10) / log₂(1+20) = {access:.4f}" in text
    assert f"degree = min(8, 15) / 15 = {8 / 15:.4f}" in text
    assert f"consolidation = log₂(1+5) / log₂(1+10) = {consolidation:.4f}" in text
    assert f"= <b>{result.importance:.4f}</b>" in text
    assert f"{access * (1 + 0.15 * 8 / 15) * (1 + 0.2 * consolidation):.4f}" == f"{result.importance:.4f}"
    assert "720 h" in text and f"<b>{math.exp(-1e-4 * 720):.4f}</b>" in text
    assert f"co-occurrence = 1 + 0.01 × {math.log2(6):.4f}" in text
    product = (result.base_relevance * result.salience_boost * result.temporal_factor
               * (1 + params.gamma * result.cooc_boost) * result.status_multiplier * result.metadata_penalty)
    assert product == pytest.approx(result.limbic_score) and f"<b>{result.limbic_score:.4f}</b>" in text

    fts = next(r for r in rerank(candidates, params) if r.name == "Text only")
    assert fts.name == "Text only" and "found by full text only" in describe(candidates, params, 2).lines[0]
    fresh = candidate_set([{"name": "a", "distance": 0.2}, {"name": "b", "distance": 0.3}])
    assert any("no candidate of this search has been accessed yet" in line
               for line in describe(fresh, params, 0).lines)

    default = preset("default")  # the fused base and the ratio normalisation are written out too
    lines = describe(candidates, default, 0).lines
    scored = next(r for r in rerank(candidates, default) if r.name == "FastMCP")
    assert lines[0].startswith("entity = 0.5 × cosine 0.6500 / best 0.6500 + 0.5 × BM25 0 (not found by full text)")
    assert lines[1].startswith("own = 0.6 × entity 0.5000 + 0.4 × best observation 0.5000 = ")  # no keyword hit
    assert lines[2].startswith("base = own + 0.5 × max(0, context 0.0000 − own) = ")  # no neighbour among them
    keyword = next(i for i, r in enumerate(candidates.fts_rank) if r > 0)
    shown = explain(candidates, default, keyword)
    assert f"× BM25 ({shown['bm25']:.3f} / {shown['bm25_denominator']:.3f})^2 = " in describe(candidates, default, keyword).lines[0]
    assert lines[0].endswith(f"= <b>{scored.base_relevance:.4f}</b>")
    assert "(limbic / max limbic)" in lines[-1] and lines[-1].endswith(f"<b>{scored.final_score:.4f}</b>")


def test_the_summary_says_when_the_knn_graph_proposed_the_candidates(qtbot, window):
    panel, controller = window.search_panel, window.controller
    with qtbot.waitSignal(controller.search_finished, timeout=10_000):
        controller.search("database table", 5)
    assert "HNSW" not in panel.summary.text()  # a small memory is scanned exactly
    service = controller.service
    service.index.graphs.min_rows = 10  # as a memory past 100,000 vectors would
    with qtbot.waitSignal(controller.search_finished, timeout=10_000):
        controller.search("database table", 5)
    qtbot.waitUntil(lambda: service.index.graphs._thread is None, timeout=30_000)
    with qtbot.waitSignal(controller.search_finished, timeout=10_000) as answer:
        controller.search("database table", 5)
    assert answer.args[0].knn == "graph"
    assert panel.summary.text().endswith(" · KNN through the HNSW graph")
