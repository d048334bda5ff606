"""``migrate``: import a memory file named by a client (MCP), from the folders the server may read only.

mcp-memory's ``migrate`` imports a reference-format JSONL file, idempotently (mcp-memory docs
"Architecture", "migrate.py"). Here it is the importer (:mod:`.importer`: every shape of the reference
server and its forks, one transaction per file, a second import adds nothing) behind a path check: the path
must be absolute (or start with ``~``) and, once every symbolic link is resolved, name a regular file under
the user's home folder or Limbic's data folder. Anything else is refused with a clear error before a byte
is read.
"""

from __future__ import annotations

from pathlib import Path

from limbic.core.errors import NotFoundError, ValidationError
from limbic.core.io.importer import import_file
from limbic.core.io.report import FileReport
from limbic.core.paths import data_dir

MAX_PATH = 4096
MAX_BYTES = 1 << 30  # 1 GiB


def allowed_folders() -> tuple[Path, ...]:
    """The folders ``migrate`` may read under: the user's home and Limbic's data folder (resolved)."""
    return tuple(dict.fromkeys(p.resolve() for p in (Path.home(), data_dir())))


def checked_path(path: object) -> Path:
    """``path`` resolved, once it is known to name a readable regular file under :func:`allowed_folders`.

    Raises:
        ValidationError: not a string, empty, relative, too long, a NUL byte, not a regular file, too large
            (over 1 GiB), or outside the allowed folders.
        NotFoundError: no such file.
    """
    if not isinstance(path, str):
        raise ValidationError(f"path must be a string, got {type(path).__name__}")
    text = path.strip()
    if not text or len(text) > MAX_PATH or "\x00" in text:
        raise ValidationError("path must be a non-empty file path of at most 4,096 characters")
    given = Path(text).expanduser()
    if not given.is_absolute():
        raise ValidationError(f"path must be absolute (or start with ~): {text!r}")
    try:
        resolved = given.resolve(strict=True)
    except FileNotFoundError as exc:
        raise NotFoundError(f"no such file: {text}", [text]) from exc
    except (OSError, RuntimeError) as exc:
        raise ValidationError(f"cannot read {text}: {getattr(exc, 'strerror', None) or 'unreadable path'}") from exc
    folders = allowed_folders()
    if not any(resolved.is_relative_to(folder) for folder in folders):
        raise ValidationError(f"migrate reads files under {' or '.join(map(str, folders))} only; "
                              f"{text} is outside them")
    if not resolved.is_file():
        raise ValidationError(f"not a regular file: {text}")
    if resolved.stat().st_size > MAX_BYTES:
        raise ValidationError(f"{text} is larger than 1 GiB; import it with `limbic import` instead")
    return resolved


def migrate(service, path: object) -> FileReport:
    """Import the memory file at ``path`` (checked by :func:`checked_path`) into ``service`` in one transaction;
    returns its report (importing it again adds nothing).

    Raises what :func:`checked_path` raises, and ImportFormatError when the file is not a memory file."""
    return import_file(service, checked_path(path))
