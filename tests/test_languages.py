"""A memory's languages, told from its letters: one text's language, the profile of two real memory files (one
Chinese, one Korean) and of the English sample, and what ``limbic stats`` and
``limbic doctor`` say of them (the multilingual model named when much of a memory is not English)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from limbic.core.embedding.languages import MULTILINGUAL_MODEL, advice, language_of, profile, summary
from limbic.core.io.importer import import_files

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
KOREAN = CORPUS / "6329ksu-cmyk__ai_memory__memory.jsonl"
CHINESE = CORPUS / "MrHuang-0110__LBS-NEXT-AI__.memory_memory.jsonl"
needs_corpus = pytest.mark.skipif(not (KOREAN.is_file() and CHINESE.is_file()),
                                  reason="the real memory files (../shared/corpus) are not beside the repository")
SAMPLE = Path(__file__).resolve().parents[1] / "resources" / "sample" / "graph.jsonl"


@pytest.mark.parametrize(("text", "language"), [
    ("The deploy script moved to the new server and the tests pass", "English"),
    ("修复两个Bug(脚本sleep时监控停止 + 0xB6启动死机), 根因已确认并修复", "Chinese"),
    ("来週の土曜日に東京タワーへ行く", "Japanese"),
    ("홈랩 2대 동기화: Google Drive 실시간 공유", "Korean"),
    ("Сервер перенесён в новый дата-центр", "Russian"),
    ("El servidor se movió a un nuevo centro de datos para la migración", "Spanish"),
    ("Máy chủ đã được chuyển sang trung tâm dữ liệu mới", "Vietnamese"),
    ("Servidor migrado para o novo centro de dados, não há mais falhas", "Portuguese"),
    ("src/core/main.py --port 8080", None),
    ("", None),
])
def test_one_text(text, language):
    assert language_of(text)[0] == language


def _texts(path: Path) -> list[str]:
    texts = []
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        record = json.loads(line)
        if record.get("type") == "entity":
            texts += [record["name"], *(o if isinstance(o, str) else o["text"] for o in record["observations"])]
    return texts


@needs_corpus
def test_real_memories():
    korean = profile(_texts(KOREAN))
    assert summary(korean) == "Korean 81%, English 19%" and korean.texts == 34
    chinese = profile(_texts(CHINESE))
    assert next(iter(chinese.shares)) == "Chinese" and chinese.not_english > 0.5
    assert MULTILINGUAL_MODEL in (advice(korean) or "") and MULTILINGUAL_MODEL in (advice(chinese) or "")
    english = profile(_texts(SAMPLE))
    assert english.shares["English"] > 0.9 and advice(english) is None


def _limbic(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "limbic.gui.launcher", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "LIMBIC_HOME": str(home)}, check=True)


@needs_corpus
def test_stats_and_doctor_name_the_languages_and_the_model(memory_address, tmp_path):
    from limbic.core.service import MemoryService

    service = MemoryService.open(memory_address, embedder=None)
    try:
        import_files(service, [KOREAN])
        assert summary(service.entities.languages()) == "Korean 81%, English 19%"
    finally:
        service.close()
    stats = _limbic("--db", memory_address, "stats", home=tmp_path).stdout
    assert "languages     Korean 81%, English 19%" in stats and MULTILINGUAL_MODEL in stats
    doctor = json.loads(_limbic("--db", memory_address, "doctor", "--json", home=tmp_path).stdout)
    assert doctor["model"] is None and doctor["languages"] == {"Korean": 0.812, "English": 0.188}
    assert MULTILINGUAL_MODEL in doctor["model_advice"]
