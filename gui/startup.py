"""The app's start-up work off the UI thread, in one order on one thread (the app's start-up runner).

1. :func:`open_service` — open the database, read the parameters and counts (a fraction of a second:
   the embedding model loads lazily), so the window can be shown at once, also on the first run.
2. :func:`seed_sample` — on the first run, import ``resources/sample/`` (about a second), reporting
   progress to the window.
3. :func:`import_mcp_modules` — the MCP SDK with pydantic, which is not safe to import from two threads
   at once (lazily loaded submodules: a second importer can get a partially initialised module), and
   uvicorn's protocol modules; then the MCP server starts on the same runner (``McpHost``), so the SDK
   is used on the thread that imported it, and start-up goes on once it serves (or failed).
4. :func:`import_dialog_modules` — networkx for the import/export dialog, and the model dialog (onnx is imported
   only to install a model).
   Only then does the warm-up thread start (the model and the vector copy), so every module that is
   slow or unsafe to import from two threads is imported once, on this thread, before other workers.
While entities wait for vectors (the sample just imported, a model just installed, or a start after either) the
window shows how far the embedding is (:func:`embedding_state`, read twice a second) until every vector landed.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

from PySide6.QtCore import QObject, Signal

AUTO = object()  # "the active installed model" (``MemoryService.open``'s default)

MCP_MODULES = (
    "pydantic", "pydantic._migration", "pydantic._internal._validators", "mcp", "mcp.server",
    "uvicorn", "uvicorn.protocols.http.auto", "uvicorn.lifespan.on", "uvicorn.loops.auto",
    "starlette.applications", "limbic.gui.mcp_host",
)
DIALOG_MODULES = ("limbic.gui.dialogs.import_export", "limbic.gui.dialogs.model")
SEEDING_TEXT = "First run: importing the sample memory graph…"
EMBEDDING_TEXT = "Embedding the memory for search by meaning (search ranks on full text meanwhile)…"


class Progress(QObject):
    """Carries ``(done, total, message)`` from the start-up thread to the window (a queued signal)."""

    advanced = Signal(int, int, str)


def open_service(db_path: str | None, embedder: Any) -> dict[str, Any]:
    """Worker: open the service and read what the window shows first (``service``, ``params``, ``stats``,
    ``open_seconds``)."""
    from limbic.core.service import MemoryService

    started = time.perf_counter()
    options: dict[str, Any] = {"origin": "gui", "background_vectors": True}
    if embedder is not AUTO:
        options["embedder"] = embedder
    service = MemoryService.open(db_path, **options)
    return {"service": service, "params": service.search.scoring_params(), "stats": service.entities.stats(),
            "open_seconds": time.perf_counter() - started}


def seed_sample(service: Any, progress: Progress) -> bool:
    """Worker: import the sample graph into an empty database (progress: records and sessions done).
    Returns whether it did."""
    from limbic.core.io.sample import seed_if_empty

    if service.entities.stats().entities:
        return False
    progress.advanced.emit(0, 1, SEEDING_TEXT)
    return seed_if_empty(service, lambda done, total, _message: progress.advanced.emit(done, total, SEEDING_TEXT))


def import_mcp_modules() -> Any:
    """Worker: import the MCP SDK stack in a fixed order on this thread; returns ``limbic.gui.mcp_host``."""
    for name in MCP_MODULES:
        module = importlib.import_module(name)
    return module


def import_dialog_modules() -> None:
    """Worker: import the dialogs' modules (networkx) so that opening one is instant."""
    for name in DIALOG_MODULES:
        importlib.import_module(name)


def embedding_state(service: Any) -> tuple[int, tuple[int, int] | None]:
    """Worker: ``(entities waiting for vectors, (entities embedded, entities))`` from the database
    (``MemoryService.search.pending_vectors`` and ``embedding_progress``; the second is ``None`` without a model)."""
    return service.search.pending_vectors(), service.search.embedding_progress()
