"""Where Limbic keeps its files (platformdirs), all movable with the ``LIMBIC_HOME`` environment variable.

Without ``LIMBIC_HOME``: the database in ``user_data_dir("limbic")/memory.db``, models in
``user_cache_dir("limbic")/models``, settings and the MCP token in ``user_config_dir("limbic")``
(docs/architecture.md "Data model"). With ``LIMBIC_HOME=X``: ``X/data``, ``X/cache``, ``X/config``.
Directories are created on first use.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import platformdirs

APP_NAME = "limbic"


def _home() -> Path | None:
    value = os.environ.get("LIMBIC_HOME")
    return Path(value).expanduser() if value else None


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    """Directory of the default database."""
    home = _home()
    return _ensure(home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME)))


def cache_dir() -> Path:
    """Directory of downloads and installed models."""
    home = _home()
    return _ensure(home / "cache" if home else Path(platformdirs.user_cache_dir(APP_NAME)))


def config_dir() -> Path:
    """Directory of settings (active model) and the MCP bearer token."""
    home = _home()
    return _ensure(home / "config" if home else Path(platformdirs.user_config_dir(APP_NAME)))


def default_db_path() -> Path:
    """The embedded default database file: ``data_dir()/memory.db``."""
    return data_dir() / "memory.db"


def models_dir() -> Path:
    """Installed embedding models, one directory each: ``cache_dir()/models``."""
    return _ensure(cache_dir() / "models")


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def database_address(text: str) -> str:
    """Check a ``--db`` address before anything is opened or created: a file path (``~`` expanded) or a
    PostgreSQL URL (``postgresql://`` or ``postgres://``, returned as given).

    Raises:
        ValueError: ``text`` is empty or a URL of another scheme (``ftp://…``): it must never become a local
            directory named after its scheme. The message names the scheme only, never the rest of the
            address (it may hold a password).
    """
    if not text or not text.strip():
        raise ValueError("the database address is empty")
    found = _SCHEME.match(text.strip())
    if found:
        if found.group(1).lower() in ("postgresql", "postgres"):
            return text.strip()
        raise ValueError(f"{found.group(1)}:// addresses are not supported; give the path of a database file "
                         "or a postgresql:// address")
    return str(Path(text).expanduser())
