"""Packaged look and packaging files: the style sheets parse, the icon renders, the .desktop entry is sane."""

from __future__ import annotations

import configparser
import os
from importlib import resources
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.gui
@pytest.mark.parametrize("name", ["light.qss", "dark.qss"])
def test_style_sheet_parses_and_styles_widgets(qapp, name):
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QLabel, QLineEdit, QMainWindow, QSlider, QTableWidget, QVBoxLayout, QWidget

    text = (resources.files("limbic.resources") / name).read_text(encoding="utf-8")
    messages: list[str] = []
    previous = qInstallMessageHandler(lambda mode, context, message: messages.append(message))
    try:
        qapp.setStyleSheet(text)
        window = QMainWindow()
        central = QWidget()
        layout = QVBoxLayout(central)
        banner = QLabel("full-text only")
        banner.setObjectName("ftsOnlyBanner")
        for widget in (QLineEdit("query"), banner, QSlider(), QTableWidget(2, 2)):
            layout.addWidget(widget)
        window.setCentralWidget(central)
        window.show()
        qapp.processEvents()
        window.close()
    finally:
        qInstallMessageHandler(previous)
        qapp.setStyleSheet("")
    assert not [m for m in messages if "style" in m.lower() or "parse" in m.lower()], messages


@pytest.mark.gui
def test_icon_is_a_valid_svg_that_renders(qapp):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    data = (resources.files("limbic.resources") / "limbic.svg").read_bytes()
    renderer = QSvgRenderer(data)
    assert renderer.isValid()
    image = QImage(64, 64, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    assert image.pixelColor(32, 32).alpha() == 255 and image.pixelColor(0, 0).alpha() == 0


def test_desktop_entry_runs_limbic_with_the_icon():
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(REPO / "packaging" / "limbic-studio.desktop", encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Exec"] == "limbic" and entry["Icon"] == "limbic-studio"
    assert entry["Terminal"] == "false" and entry["Categories"].endswith(";")


def test_pyinstaller_spec_names_files_that_exist():
    spec = (REPO / "packaging" / "limbic.spec").read_text(encoding="utf-8")
    assert "packaging\" / \"pyinstaller_entry.py" in spec
    assert (REPO / "packaging" / "pyinstaller_entry.py").is_file()
    for folder in ("core", "gui", "resources", "core/store/migrations", "resources/sample"):
        assert (REPO / folder).is_dir()
    compile(spec, "limbic.spec", "exec")
