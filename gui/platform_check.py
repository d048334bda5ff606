"""Before Qt starts on Linux: are the system libraries of Qt's xcb (X11) platform plugin installed?

PySide6 ≥ 6.5 ships the xcb plugin but not the xcb utility libraries it links against; on a fresh
Debian desktop ``libxcb-cursor0`` and others are missing and Qt aborts with its own plugin error.
:func:`missing_xcb_libraries` tries to load each library the plugin needs (the list of
``libQt6XcbQpa.so.6``'s X11 dependencies, as Qt's "Qt for X11 Requirements" page names them) and
:func:`xcb_problem` turns the missing ones into one line with the Debian/Ubuntu packages to install.
No Qt is imported here.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Mapping

# soname → Debian/Ubuntu package (checked with ``dpkg -S`` / ``apt-cache show`` on Debian 12)
XCB_LIBRARY_PACKAGES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}
XCB_EXIT_CODE = 3


def uses_xcb(environ: Mapping[str, str], platform: str = sys.platform) -> bool:
    """Whether Qt will start its xcb plugin: on Linux, when ``QT_QPA_PLATFORM`` names xcb first, or is
    unset outside a Wayland session (offscreen, minimal, wayland… need no xcb library)."""
    if not platform.startswith("linux"):
        return False
    requested = environ.get("QT_QPA_PLATFORM", "").strip()
    if requested:
        return requested.split(";")[0].split(":")[0] == "xcb"
    return not (environ.get("WAYLAND_DISPLAY") and environ.get("XDG_SESSION_TYPE") == "wayland")


def missing_xcb_libraries(load: Callable[[str], object] = ctypes.CDLL) -> list[str]:
    """The sonames of :data:`XCB_LIBRARY_PACKAGES` that ``load`` (default: the dynamic loader,
    ``ctypes.CDLL``) cannot open (it raises ``OSError``), in table order."""
    missing = []
    for soname in XCB_LIBRARY_PACKAGES:
        try:
            load(soname)
        except OSError:
            missing.append(soname)
    return missing


def xcb_problem(environ: Mapping[str, str] = os.environ, load: Callable[[str], object] = ctypes.CDLL,
                platform: str = sys.platform) -> str | None:
    """One line naming the missing libraries and the ``apt`` command that installs them, or ``None``
    when Qt will not use xcb or nothing is missing."""
    if not uses_xcb(environ, platform):
        return None
    missing = missing_xcb_libraries(load)
    if not missing:
        return None
    packages = " ".join(XCB_LIBRARY_PACKAGES[soname] for soname in missing)
    return (f"limbic: error: Qt's X11 (xcb) platform needs system libraries that are missing "
            f"({', '.join(missing)}); on Debian/Ubuntu install them with: sudo apt install {packages} "
            f"(or start on Wayland with QT_QPA_PLATFORM=wayland)")
