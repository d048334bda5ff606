"""``MEMORY_FILE_PATH``, honoured as the reference server does: it names where the memory lives.

The reference server keeps its graph in the JSONL file that ``MEMORY_FILE_PATH`` names. ``limbic mcp``
(without ``--db``) keeps it in a database beside that file: ``memory.jsonl`` → ``memory.limbic.db`` (a
path ending in ``.db`` is the database itself). The JSONL found there is imported once, when the
database first adopts it, with a note on stderr; afterwards the database is the memory and the JSONL
file is neither read nor written again. Two processes given the same ``MEMORY_FILE_PATH`` open the same
database, so they share one memory. A relative path is taken from the current directory (the
reference resolves it against its own install directory).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from limbic.core.errors import ValidationError
from limbic.core.io.importer import import_file
from limbic.core.store.backend import checked_address, is_postgres, masked

__all__ = ["ENV_VAR", "adopt_memory_file", "memory_database"]

ENV_VAR = "MEMORY_FILE_PATH"
_ADOPTED_KEY = "mcp.memory_file_imported"


def memory_file(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The absolute path ``MEMORY_FILE_PATH`` names, or None when it is unset or empty.

    Raises:
        ValidationError: the value is a database address, or looks like one (``postgresql:/…``: see
            :func:`~limbic.core.store.backend.checked_address`), rather than a file: one line, the password masked.
    """
    value = environ.get(ENV_VAR, "").strip()
    if not value:
        return None
    if is_postgres(value):
        raise ValidationError(f"{ENV_VAR}: {masked(value)}: this variable names a file; give a PostgreSQL memory "
                              "with --db")
    try:
        checked_address(value)
    except ValueError as exc:
        raise ValidationError(f"{ENV_VAR}: {exc}") from None
    return Path(value).expanduser().resolve()


def memory_database(path: Path) -> Path:
    """The database that holds the memory named by ``path`` (see the module docstring)."""
    return path if path.suffix == ".db" else path.with_name(f"{path.stem}.limbic.db")


def adopt_memory_file(service, path: Path) -> str | None:
    """Import the JSONL memory file ``path`` into ``service`` once (one transaction: all or nothing).

    Returns the note to print on stderr after an import, None when there was nothing to do (no file,
    a database file, or already imported by this or another process).

    Raises:
        limbic.core.errors.ImportFormatError: the file exists but cannot be read as a memory file.
    """
    if path.suffix == ".db" or not path.is_file() or path.stat().st_size == 0:
        return None
    if service.setting(_ADOPTED_KEY) is not None:
        return None
    with service.transaction("adopt_memory_file", origin="import"):
        if service.setting(_ADOPTED_KEY) is not None:
            return None
        report = import_file(service, path)
        service.save_setting(_ADOPTED_KEY, str(path), origin="import")
    return (f"limbic: imported {path} once into {memory_database(path)} "
            f"({len(report.entities_created)} entities, "
            f"{report.observations_added} observations, {report.relations_created} relations); from now on the "
            "database is the memory and the JSONL file is not read or written")
