"""Package discovery for setuptools; every other setting is in pyproject.toml.

``package-dir`` (pyproject.toml) maps ``limbic.core`` to ``core/``, ``limbic.gui`` to ``gui/`` and
``limbic.resources`` to ``resources/``. setuptools' ``packages.find`` cannot prefix what it finds with
``limbic.``, so the sub-packages are found here: a new sub-package reaches the wheel and the
PyInstaller bundle without editing a list. Namespace discovery also takes the data folders
(``store/migrations``, ``resources/sample``), as setuptools asks.
"""

from setuptools import find_namespace_packages, setup

ROOTS = {"limbic.core": "core", "limbic.gui": "gui", "limbic.resources": "resources"}

setup(packages=[f"{name}.{sub}" if sub else name
                for name, folder in ROOTS.items() for sub in ["", *find_namespace_packages(folder, exclude=["*__pycache__*"])]])
