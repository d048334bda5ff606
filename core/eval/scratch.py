"""One embedded scratch database per conversation, built through ``MemoryService`` and cached.

A question searches only its own conversation's memory (LoCoMo's retrieval setting), so each
conversation gets its own database file. Building embeds every entity with the product's model,
which is the slow part, so the built files are kept under
``paths.cache_dir()/eval/locomo/<key>/`` where ``key`` hashes the file's sha256, the granularity,
the model name (with its variant, e.g. ``all-MiniLM-L6-v2@int8``), the schema version,
:data:`~limbic.core.eval.locomo.MAPPING_VERSION` and a fingerprint of the indexing code
(:func:`index_code_fingerprint`): a change to any of them builds anew. A file is
built under a temporary name and renamed into place, so an interrupted build leaves nothing that
looks complete. Searches and replays always run on a copy (:func:`open_copy`): the cache is
never written after it is built.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from tqdm import tqdm

from limbic.core import embedding, paths
from limbic.core.embedding.base import Embedder
from limbic.core.errors import ValidationError
from limbic.core.eval.locomo import MAPPING_VERSION, Conversation, LocomoFormatError, memory_entities
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database, scratch_schema
from limbic.core.store.copying import copy_memory
from limbic.core.store.schema import latest_schema_version
from limbic.core.validation import MAX_ITEMS
from limbic.core.vectors.turns import turn_file

BUILD_ORIGIN = "import"
NO_MODEL = "none"


@dataclass(frozen=True, slots=True)
class ScratchSet:
    """The cached databases of one run: ``databases`` maps a conversation id to its file.

    ``built`` counts the files built by this call (the others came from the cache); ``seconds`` is
    the wall time of building them.
    """

    key: str
    directory: Path
    databases: dict[str, Path]
    built: int
    seconds: float


def model_name(embedder: Embedder | None) -> str:
    """The name recorded with the vectors, or ``"none"`` when search runs FTS-only."""
    return embedder.name if embedder is not None else NO_MODEL


def index_code_fingerprint() -> str:
    """sha256 (hex) of the code that decides what a build writes: every source and migration file of
    ``limbic.core.store``, ``limbic.core.vectors`` and ``limbic.core.embedding``, and the ``mutations`` and ``inputs`` modules.

    Worktrees and versions of the product share the user cache; two whose schema versions agree can
    still index differently. Where no source ships (a frozen app), the package version stands in.
    """
    from limbic.core import store, vectors
    from limbic.core.service import inputs, mutations

    files = [Path(inputs.__file__), Path(mutations.__file__)]
    for package in (store, vectors, embedding):
        for root in map(Path, package.__path__):
            files += [f for f in root.rglob("*") if f.suffix in (".py", ".sql")]
    digest = hashlib.sha256()
    readable = [f for f in sorted(set(files)) if f.is_file()]
    for file in readable:
        digest.update(file.name.encode("utf-8") + b"\0" + file.read_bytes() + b"\0")
    if not readable:
        digest.update(metadata.version("limbic-studio").encode("utf-8"))
    return digest.hexdigest()


def cache_key(file_sha256: str, granularity: str, embedder: Embedder | None) -> str:
    """A short hex key of everything the built databases depend on (see the module docstring)."""
    parts = [file_sha256, granularity, model_name(embedder), latest_schema_version(), MAPPING_VERSION,
             index_code_fingerprint()]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:24]


def cache_directory(key: str) -> Path:
    """``paths.cache_dir()/eval/locomo/<key>`` (respects ``LIMBIC_HOME``)."""
    return paths.cache_dir() / "eval" / "locomo" / key


def _file_name(sample_id: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", sample_id)[:60]
    return f"{safe}-{hashlib.sha256(sample_id.encode('utf-8')).hexdigest()[:8]}.db"


def build_database(path: Path, conversation: Conversation, granularity: str, embedder: Embedder | None) -> None:
    """Write ``conversation``'s entities into a new database at ``path`` in one transaction.

    Entities go through ``MemoryService.entities.create_entities`` (validation, FTS rows and vectors as for any
    write); vectors still stale afterwards (a model that embeds in the background) are re-embedded
    before the file is closed. Raises ValidationError when a turn breaks the product's input limits.
    """
    entities = memory_entities(conversation, granularity)
    service = MemoryService(open_database(path), embedder, origin=BUILD_ORIGIN)
    try:
        with service.transaction("eval_locomo_build"):
            for start in range(0, len(entities), MAX_ITEMS):
                service.entities.create_entities(entities[start : start + MAX_ITEMS])
        if embedder is not None and service.search.stale_vectors():
            service.search.reembed()
    finally:
        service.close()


def _remove(path: Path) -> None:
    """A partial database and its side files (SQLite's, and the embedding turn's lock file)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    turn_file(path, "embed").unlink(missing_ok=True)


def prepare(file_sha256: str, conversations: Sequence[Conversation], granularity: str,
            embedder: Embedder | None, *, rebuild: bool = False, progress: bool = False) -> ScratchSet:
    """The cached database of every conversation, building those that are missing (all with ``rebuild``).

    ``progress`` shows a tqdm bar on stderr while building.

    Raises:
        LocomoFormatError: a turn the product refuses (e.g. control characters), naming its conversation.
    """
    key = cache_key(file_sha256, granularity, embedder)
    directory = cache_directory(key)
    directory.mkdir(parents=True, exist_ok=True)
    databases = {c.sample_id: directory / _file_name(c.sample_id) for c in conversations}
    missing = [c for c in conversations if rebuild or not databases[c.sample_id].is_file()]
    started = time.perf_counter()
    bar = tqdm(missing, desc=f"building {granularity} memories", unit="conversation",
               disable=not progress or not missing, leave=False)
    for conversation in bar:
        final = databases[conversation.sample_id]
        partial = final.with_name(f".{final.name}.{os.getpid()}.partial")
        _remove(partial)
        try:
            build_database(partial, conversation, granularity, embedder)
            os.replace(partial, final)
        except ValidationError as exc:
            raise LocomoFormatError(f"conversation {conversation.sample_id}: {exc}") from exc
        finally:
            _remove(partial)
    return ScratchSet(key, directory, databases, len(missing), time.perf_counter() - started)


@contextmanager
def open_copy(cached: Path, embedder: Embedder | None, *, origin: str = "mcp",
              server: str | None = None) -> Iterator[MemoryService]:
    """A ``MemoryService`` on a temporary copy of ``cached`` (deleted on exit; the cache stays untouched).

    With ``server`` (a ``postgresql://`` address) the copy is made on that server instead, in a schema of its
    own in the database named (``limbic db copy``'s copy: the same rows, vectors and full text), dropped on
    exit: the questions are then asked of the PostgreSQL backend.
    """
    if server is not None:
        with _server_copy(cached, embedder, origin, server) as service:
            yield service
        return
    with tempfile.TemporaryDirectory(prefix="limbic-eval-") as scratch:
        copy = Path(scratch) / cached.name
        shutil.copyfile(cached, copy)
        service = MemoryService(open_database(copy), embedder, origin=origin)
        try:
            yield service
        finally:
            service.close()


@contextmanager
def _server_copy(cached: Path, embedder: Embedder | None, origin: str, server: str) -> Iterator[MemoryService]:
    schema = f"limbic_eval_{os.getpid()}_{secrets.token_hex(4)}"
    with scratch_schema(server, schema) as address:
        source = open_database(cached)
        try:
            target = open_database(address)
            copy_memory(source, target)
        finally:
            source.close()
        service = MemoryService(target, embedder, origin=origin)
        try:
            yield service
        finally:
            service.close()
