"""Light and dark themes: the Fusion palette, ``resources/light.qss`` / ``dark.qss`` on top, and pyqtgraph's
background and text colours, switched live (every open plot and the graph canvas follow).

:func:`apply_palette` needs Qt alone: the starting window (``gui/starting.py``) takes the theme before
pyqtgraph is imported.
"""

from __future__ import annotations

from importlib import resources

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

PLOT_COLOURS = {False: ("#ffffff", "#303030"), True: ("#1e1f22", "#d0d0d0")}  # dark → (background, foreground)


def load_style(dark: bool) -> str:
    """The Qt style sheet ``resources/dark.qss`` or ``light.qss`` ("" when the file is absent)."""
    name = "dark.qss" if dark else "light.qss"
    resource = resources.files("limbic.resources") / name
    return resource.read_text(encoding="utf-8") if resource.is_file() else ""


def dark_palette() -> QPalette:
    """A dark Fusion palette (the style sheet, when present, refines it)."""
    palette = QPalette()
    colours = {
        QPalette.ColorRole.Window: "#2b2d30", QPalette.ColorRole.WindowText: "#dcdcdc",
        QPalette.ColorRole.Base: "#1e1f22", QPalette.ColorRole.AlternateBase: "#26282b",
        QPalette.ColorRole.ToolTipBase: "#2b2d30", QPalette.ColorRole.ToolTipText: "#dcdcdc",
        QPalette.ColorRole.Text: "#dcdcdc", QPalette.ColorRole.Button: "#33363a",
        QPalette.ColorRole.ButtonText: "#dcdcdc", QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Highlight: "#2f65ca", QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#6aa6ff", QPalette.ColorRole.PlaceholderText: "#8a8a8a",
    }
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f6f6f"))
    return palette


def apply_palette(app: QApplication, dark: bool) -> None:
    """Fusion with the light or dark palette and style sheet (the widgets' part of :func:`apply_theme`)."""
    app.setStyle("Fusion")
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
    app.setStyleSheet(load_style(dark))


def apply_theme(app: QApplication, dark: bool, window: QWidget | None = None) -> None:
    """Fusion with the light or dark palette and style sheet, and pyqtgraph colours to match; the plots
    already open inside ``window`` take the new colours at once."""
    import pyqtgraph as pg  # here: the starting window's palette comes before pyqtgraph is imported

    apply_palette(app, dark)
    background, foreground = PLOT_COLOURS[dark]
    pg.setConfigOptions(background=background, foreground=foreground)
    if window is None:
        return
    for view in window.findChildren(pg.GraphicsView):
        view.setBackground(background)
    for plot in window.findChildren(pg.PlotWidget):
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen(foreground)
            axis.setTextPen(foreground)
